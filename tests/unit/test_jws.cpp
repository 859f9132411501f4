// SPDX-License-Identifier: MIT
// Unit tests of lib/jws: ES256 keys signing and verifying with their public point, and the JWK
// and its thumbprint.
#include "lib/jws.hpp"

#include "lib/base64.hpp"
#include "lib/hash.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion {
namespace {

TEST(Es256Key, SignsAndVerifiesWithItsPublicPoint) {
    auto key = es256_generate();
    ASSERT_TRUE(key) << key.error().message();
    EXPECT_NE(key->find("-----BEGIN EC PRIVATE KEY-----"), std::string::npos);
    auto point = es256_public(*key);
    ASSERT_TRUE(point) << point.error().message();
    EXPECT_EQ(point->x.size(), 32U);
    EXPECT_EQ(point->y.size(), 32U);
    auto signature = es256_sign(*key, "data");
    ASSERT_TRUE(signature);
    EXPECT_TRUE(*es256_verify(*point, "data", *signature));
    EXPECT_FALSE(*es256_verify(*point, "other data", *signature));
    EcPoint off_curve{point->x, std::string(32, '\x01')};
    auto refused = es256_verify(off_curve, "data", *signature);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::data);
    EXPECT_NE(*es256_generate(), *key) << "two keys made alike";
}

TEST(Es256Key, TheJwkIsCanonicalAndItsThumbprintItsDigest) {
    EcPoint point{std::string(32, '\0'), std::string(32, '\xff')};
    std::string jwk = ec_jwk(point);
    EXPECT_EQ(jwk, R"({"crv":"P-256","kty":"EC","x":")" + base64url_encode(point.x)
                       + R"(","y":")" + base64url_encode(point.y) + R"("})");
    EXPECT_EQ(jwk_thumbprint(point), base64url_encode(sha256(jwk)));
    EXPECT_EQ(jwk_thumbprint(point).size(), 43U);
}

} // namespace
} // namespace sion
