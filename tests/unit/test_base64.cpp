// SPDX-License-Identifier: MIT
// Unit tests of lib/base64: RFC 4648's vectors, the url alphabet, strict decoding.
#include "lib/base64.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace sion {
namespace {

// RFC 4648, section 10.
TEST(Base64, Rfc4648Vectors) {
    const std::pair<const char*, const char*> vectors[] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (const auto& [plain, encoded] : vectors) {
        EXPECT_EQ(base64_encode(plain), encoded);
        auto decoded = base64_decode(encoded);
        ASSERT_TRUE(decoded) << encoded << ": " << decoded.error().message();
        EXPECT_EQ(*decoded, plain);
    }
}

TEST(Base64, UrlAlphabetWithoutPadding) {
    std::string bytes("\xfb\xff\xbf\xff\xfe", 5);
    EXPECT_EQ(base64_encode(bytes), "+/+///4=");
    EXPECT_EQ(base64url_encode(bytes), "-_-___4");
    EXPECT_EQ(base64url_encode("f"), "Zg");
    EXPECT_EQ(base64url_encode("foobar"), "Zm9vYmFy");
    for (const char* text : {"-_-___4", "-_-___4="}) {
        auto decoded = base64url_decode(text);
        ASSERT_TRUE(decoded) << text << ": " << decoded.error().message();
        EXPECT_EQ(*decoded, bytes);
    }
    EXPECT_EQ(base64url_decode("Zg").value_or("?"), "f");
    EXPECT_EQ(base64url_decode("Zg==").value_or("?"), "f");
    std::string all;
    for (int c = 0; c < 256; ++c)
        all += static_cast<char>(c);
    EXPECT_EQ(base64url_decode(base64url_encode(all)).value_or("?"), all);
    EXPECT_EQ(base64_decode(base64_encode(all)).value_or("?"), all);
}

TEST(Base64, BadInputIsAnErrorNamingTheOffset) {
    for (const char* bad : {"Zg", "Zg=", "Zg===", "Z===", "Zm9v!", "Zm 9v", "Zm9v\n",
                            "=Zg=", "Zg==Zg==", "Zh==", "Zm9=", "-_-_", "Zm9vYg=\xff"}) {
        auto decoded = base64_decode(bad);
        ASSERT_FALSE(decoded) << "accepted '" << bad << "'";
        EXPECT_EQ(decoded.error().exit(), Exit::data);
        EXPECT_EQ(decoded.error().message().rfind("cannot decode base64: ", 0), 0U)
            << decoded.error().message();
    }
    EXPECT_EQ(base64_decode("Zm9v!AAA").error().message(),
              "cannot decode base64: invalid character at offset 4");
    for (const char* bad : {"Z", "Zg=", "Zg===", "+/+/", "Zh", "Zm9vY", "Zm9vYg=", "Z m9"}) {
        auto decoded = base64url_decode(bad);
        ASSERT_FALSE(decoded) << "accepted '" << bad << "'";
        EXPECT_EQ(decoded.error().exit(), Exit::data);
    }
}

} // namespace
} // namespace sion
