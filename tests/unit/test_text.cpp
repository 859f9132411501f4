// SPDX-License-Identifier: MIT
// Unit tests of lib/text's ASCII case helpers: only 'A' to 'Z' change, whatever else the bytes are.
#include "lib/text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion {
namespace {

TEST(AsciiLower, LowersOnlyAsciiLetters) {
    static_assert(ascii_lower('Q') == 'q');
    static_assert(ascii_lower('q') == 'q');
    static_assert(ascii_lower('@') == '@' && ascii_lower('[') == '[');
    EXPECT_EQ(ascii_lower(""), "");
    EXPECT_EQ(ascii_lower("Content-Type: TEXT/Plain 0-9 _~"), "content-type: text/plain 0-9 _~");
    EXPECT_EQ(ascii_lower("\xc3\x89T\xc3\x89"), "\xc3\x89t\xc3\x89") << "UTF-8 bytes are kept";
    EXPECT_EQ(ascii_lower(std::string("A\0B", 3)), std::string("a\0b", 3));
}

TEST(AsciiIequals, ComparesButForAsciiCase) {
    EXPECT_TRUE(ascii_iequals("", ""));
    EXPECT_TRUE(ascii_iequals("HTTPS:", "https:"));
    EXPECT_TRUE(ascii_iequals("x-Api-KEY", "X-aPI-key"));
    EXPECT_FALSE(ascii_iequals("https", "http"));
    EXPECT_FALSE(ascii_iequals("a-b", "a_b"));
    EXPECT_FALSE(ascii_iequals("@", "`")) << "not a letter, though one case bit apart";
    EXPECT_FALSE(ascii_iequals("\xc3\xa9", "\xc3\x89")) << "UTF-8 is not folded";
}

} // namespace
} // namespace sion
