// SPDX-License-Identifier: MIT
// lib/models/chatgpt: the ID token checked against the issuer's keys (a key made here with
// mbedTLS): a good one, and each refusal (signature, key id, issuer, audience, expiry, nonce, the
// plan not allowed, not a JWT); PKCE's S256 pair and the authorize URL; the sealed token store
// kept, read and forgotten, and a store that was changed refused without being damaged.
#include "lib/crypto.hpp"
#include "lib/models/chatgpt.hpp"

#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sion::models::chatgpt {
namespace {

namespace fs = std::filesystem;

int random_source(void* /*unused*/, unsigned char* out, size_t size) {
    return fill_random(out, size) ? 0 : -1;
}

// A fresh 2048-bit RSA key that signs JWTs, and its JWK Set.
class Signer {
public:
    Signer() {
        mbedtls_pk_init(&m_pk);
        EXPECT_EQ(mbedtls_pk_setup(&m_pk, mbedtls_pk_info_from_type(MBEDTLS_PK_RSA)), 0);
        EXPECT_EQ(mbedtls_rsa_gen_key(mbedtls_pk_rsa(m_pk), random_source, nullptr, 2048, 65537),
                  0);
    }

    Signer(const Signer&) = delete;
    Signer& operator=(const Signer&) = delete;

    ~Signer() { mbedtls_pk_free(&m_pk); }

    Json jwks(std::string_view kid = "k1") {
        std::string n(256, '\0');
        std::string e(3, '\0');
        EXPECT_EQ(mbedtls_rsa_export_raw(mbedtls_pk_rsa(m_pk),
                                         reinterpret_cast<unsigned char*>(n.data()), n.size(),
                                         nullptr, 0, nullptr, 0, nullptr, 0,
                                         reinterpret_cast<unsigned char*>(e.data()), e.size()),
                  0);
        Json key = Json::object();
        key.set("kty", "RSA");
        key.set("kid", kid);
        key.set("n", base64url_encode(n));
        key.set("e", base64url_encode(e));
        Json keys = Json::array();
        keys.push(std::move(key));
        Json set = Json::object();
        set.set("keys", std::move(keys));
        return set;
    }

    std::string sign(std::string_view header, std::string_view claims) {
        std::string input = base64url_encode(header) + "." + base64url_encode(claims);
        std::string digest = sha256(input);
        std::string signature(MBEDTLS_PK_SIGNATURE_MAX_SIZE, '\0');
        size_t len = 0;
        EXPECT_EQ(mbedtls_pk_sign(&m_pk, MBEDTLS_MD_SHA256,
                                  reinterpret_cast<const unsigned char*>(digest.data()),
                                  digest.size(), reinterpret_cast<unsigned char*>(signature.data()),
                                  &len, random_source, nullptr),
                  0);
        signature.resize(len);
        return input + "." + base64url_encode(signature);
    }

private:
    mbedtls_pk_context m_pk;
};

constexpr int64_t k_now = 1'800'000'000;
const std::string k_issuer = "http://127.0.0.1:9";
const std::string k_header = R"({"alg":"RS256","kid":"k1"})";

std::string claims(std::string_view iss = k_issuer, std::string_view aud = R"("app_1")",
                   int64_t exp = k_now + 3600, std::string_view nonce = "n-1",
                   std::string_view scopes = R"(["openid","chatgpt.tokens.use.direct"])") {
    return std::string(R"({"iss":")") + std::string(iss) + R"(","aud":)" + std::string(aud)
           + R"(,"exp":)" + std::to_string(exp) + R"(,"nonce":")" + std::string(nonce)
           + R"(","email":"ada@example.com","https://api.openai.com/auth":{)"
           + R"("chatgpt_account_id":"acct-1","chatgpt_plan_type":"plus","scp":)"
           + std::string(scopes) + "}}";
}

class IdToken : public ::testing::Test {
protected:
    static void SetUpTestSuite() { s_signer = new Signer(); }

    static void TearDownTestSuite() {
        delete s_signer;
        s_signer = nullptr;
    }

    static Result<IdClaims> check(const std::string& jwt, std::string_view nonce = "n-1") {
        Json keys = s_signer->jwks();
        return verify_id_token(jwt, keys.view(), k_issuer, "app_1", nonce, k_now);
    }

    static void refused(const std::string& jwt, const std::string& why) {
        auto got = check(jwt);
        ASSERT_FALSE(got);
        EXPECT_EQ(got.error().exit(), Exit::no_perm);
        EXPECT_EQ(got.error().message(), why);
    }

    static Signer* s_signer;
};

Signer* IdToken::s_signer = nullptr;

TEST_F(IdToken, AGoodOneSaysWhoAndWhichPlan) {
    auto got = check(s_signer->sign(k_header, claims()));
    ASSERT_TRUE(got) << got.error().message();
    EXPECT_EQ(got->email, "ada@example.com");
    EXPECT_EQ(got->account_id, "acct-1");
    EXPECT_EQ(got->plan, "plus");
    EXPECT_EQ(got->expires_at, k_now + 3600);
    // An audience may be a list; a renewal's token has no nonce to match.
    auto listed = check(s_signer->sign(k_header, claims(k_issuer, R"(["x","app_1"])")), "");
    EXPECT_TRUE(listed) << listed.error().message();
}

TEST_F(IdToken, EachCheckRefuses) {
    std::string good = s_signer->sign(k_header, claims());
    std::string tampered = good;
    tampered[tampered.size() - 5] = tampered[tampered.size() - 5] == 'A' ? 'B' : 'A';
    refused(tampered, "the ID token's signature does not verify");
    Signer other;
    refused(other.sign(k_header, claims()), "the ID token's signature does not verify");
    refused(s_signer->sign(R"({"alg":"RS256","kid":"k2"})", claims()),
            "the ID token's key 'k2' is not among the issuer's");
    refused(s_signer->sign(R"({"alg":"none","kid":"k1"})", claims()),
            "the ID token is not signed with RS256");
    refused(s_signer->sign(k_header, claims("https://evil.example")),
            "the ID token's issuer 'https://evil.example' is not 'http://127.0.0.1:9'");
    refused(s_signer->sign(k_header, claims(k_issuer, R"("app_2")")),
            "the ID token is for audience '\"app_2\"', not 'app_1'");
    refused(s_signer->sign(k_header, claims(k_issuer, R"("app_1")", k_now - 1)),
            "the ID token has expired");
    refused(s_signer->sign(k_header, claims(k_issuer, R"("app_1")", k_now + 60, "n-2")),
            "the ID token's nonce does not match");
    refused(s_signer->sign(k_header,
                           claims(k_issuer, R"("app_1")", k_now + 60, "n-1", R"(["openid"])")),
            "the plan may not be used by other apps: allow chatgpt.tokens.use.direct when "
            "signing in");
    auto malformed = check("not-a-jwt");
    ASSERT_FALSE(malformed);
    EXPECT_EQ(malformed.error().exit(), Exit::data);
}

TEST(Pkce, ItsChallengeIsTheVerifiersS256) {
    auto p = Pkce::make();
    ASSERT_TRUE(p);
    EXPECT_EQ(p->verifier.size(), 43U);
    EXPECT_EQ(p->challenge, base64url_encode(sha256(p->verifier)));
    auto q = Pkce::make();
    ASSERT_TRUE(q);
    EXPECT_NE(p->verifier, q->verifier);
    Issuer issuer(Endpoints{k_issuer, k_issuer + "/api"});
    std::string url =
        issuer.authorize_url("app_1", "http://127.0.0.1:1455/auth/callback", *p, "s t", "n");
    EXPECT_EQ(url, k_issuer
                       + "/oauth/authorize?response_type=code&client_id=app_1&redirect_uri="
                         "http%3A%2F%2F127.0.0.1%3A1455%2Fauth%2Fcallback&scope=openid%20profile%"
                         "20email%20offline_access%20chatgpt.tokens.use.direct&code_challenge="
                       + p->challenge + "&code_challenge_method=S256&state=s%20t&nonce=n");
}

class Store : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/sion-chatgpt-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        m_home = tmpl;
    }

    void TearDown() override { fs::remove_all(m_home); }

    std::string m_home;
};

std::string bytes_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST_F(Store, KeptReadAndForgotten) {
    auto store = TokenStore::open(m_home, true);
    ASSERT_TRUE(store);
    auto none = store->read();
    ASSERT_TRUE(none);
    EXPECT_FALSE(none->has_value());
    Account a;
    a.issuer = k_issuer;
    a.client_id = "app_1";
    a.access_token = "at-1";
    a.refresh_token = "rt-1";
    a.expires_at = k_now;
    a.account_id = "acct-1";
    a.email = "ada@example.com";
    a.plan = "plus";
    ASSERT_TRUE(store->write(a));
    EXPECT_EQ(bytes_of(store->path()).find("rt-1"), std::string::npos);
    auto back = store->read();
    ASSERT_TRUE(back && back->has_value());
    EXPECT_EQ((*back)->to_json().dump(), a.to_json().dump());
    auto removed = store->remove();
    ASSERT_TRUE(removed);
    EXPECT_TRUE(*removed);
    auto again = store->remove();
    ASSERT_TRUE(again);
    EXPECT_FALSE(*again);
}

TEST_F(Store, AChangedStoreIsRefusedAndLeftAsItWas) {
    auto store = TokenStore::open(m_home, true);
    ASSERT_TRUE(store);
    Account a;
    a.refresh_token = "rt-1";
    ASSERT_TRUE(store->write(a));
    std::string sealed = bytes_of(store->path());
    sealed[sealed.size() / 2] ^= 1;
    {
        std::ofstream out(store->path(), std::ios::binary | std::ios::trunc);
        out << sealed;
    }
    auto got = store->read();
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().exit(), Exit::data);
    EXPECT_EQ(
        got.error().message().rfind("cannot read the ChatGPT sign-in '" + store->path() + "'", 0),
        0U)
        << got.error().message();
    EXPECT_EQ(bytes_of(store->path()), sealed);
}

} // namespace
} // namespace sion::models::chatgpt
