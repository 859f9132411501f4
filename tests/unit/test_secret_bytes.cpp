// SPDX-License-Identifier: MIT
// Unit tests of lib/secret_bytes: constant-time comparison, random bytes, wiping.
#include "lib/secret_bytes.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion {
namespace {

TEST(ConstantTimeEqual, ComparesBytesAndLengths) {
    EXPECT_TRUE(constant_time_equal("", ""));
    EXPECT_TRUE(constant_time_equal(std::string("a\0b", 3), std::string("a\0b", 3)));
    EXPECT_FALSE(constant_time_equal(std::string("a\0b", 3), std::string("a\0c", 3)));
    EXPECT_FALSE(constant_time_equal("abc", "ab"));
}

TEST(RandomBytes, FillsAndDiffers) {
    auto a = random_bytes(1000);
    auto b = random_bytes(1000);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->size(), 1000U);
    EXPECT_NE(*a, *b);
    EXPECT_EQ(random_bytes(0).value_or("?"), "");
}

TEST(Wipe, EmptiesTheString) {
    std::string secret = "hunter2";
    wipe(secret);
    EXPECT_TRUE(secret.empty());
}

} // namespace
} // namespace sion
