// SPDX-License-Identifier: MIT
// lib/models/chatgpt: the ID token checked against the issuer's keys (a key made here with
// mbedTLS): a good one, and each refusal (signature, key id, issuer, audience, expiry, nonce, no
// subject, not a JWT); the way back read (state, iss, error, the client id of a registration);
// host ids; the sealed store kept, read and forgotten, and a store that was changed refused
// without being damaged; a plan's answer read as the Responses API's, with what it says of itself.
#include "lib/base64.hpp"
#include "lib/hash.hpp"
#include "lib/models/chatgpt.hpp"
#include "lib/secret_bytes.hpp"
#include "tests/unit/http_test_server.hpp"

#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
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
                   std::string_view sub = "user-1") {
    return std::string(R"({"iss":")") + std::string(iss) + R"(","aud":)" + std::string(aud)
           + R"(,"exp":)" + std::to_string(exp) + R"(,"nonce":")" + std::string(nonce)
           + R"(","sub":")" + std::string(sub)
           + R"(","email":"ada@example.com","https://api.openai.com/auth":{)"
           + R"("chatgpt_account_id":"acct-1","chatgpt_plan_type":"plus"}})";
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
    EXPECT_EQ(got->subject, "user-1");
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
    auto nobody = check(s_signer->sign(k_header, claims(k_issuer, R"("app_1")", k_now + 60,
                                                        "n-1", "")));
    ASSERT_FALSE(nobody);
    EXPECT_EQ(nobody.error().message(), "the ID token names no subject");
    auto malformed = check("not-a-jwt");
    ASSERT_FALSE(malformed);
    EXPECT_EQ(malformed.error().exit(), Exit::data);
}

TEST(Callback, AFirstRegistrationBringsItsClient) {
    const std::string at = "http://127.0.0.1:1455/auth/callback?";
    auto first = read_callback(at + "code=c1&state=s%201&client_id=oaiapp_1&scope=openid", "s 1",
                               k_issuer, "");
    ASSERT_TRUE(first) << first.error().message();
    EXPECT_EQ(first->code, "c1");
    EXPECT_EQ(first->client_id, "oaiapp_1");
    auto later = read_callback(at + "code=c2&state=s&iss=http%3A%2F%2F127.0.0.1%3A9", "s",
                               k_issuer, "oaiapp_1");
    ASSERT_TRUE(later) << later.error().message();
    EXPECT_EQ(later->client_id, "oaiapp_1");
    auto refusal = [&](const std::string& query, std::string_view client, const std::string& why) {
        auto got = read_callback(at + query, "s", k_issuer, client);
        ASSERT_FALSE(got) << query;
        EXPECT_EQ(got.error().exit(), Exit::no_perm);
        EXPECT_EQ(got.error().message(), why);
    };
    refusal("code=c&state=t&client_id=oaiapp_1", "", "the sign-in came back with another state");
    refusal("state=s&error=access_denied", "", "the sign-in was refused: access_denied");
    refusal("code=c&state=s&iss=https%3A%2F%2Fevil.example", "oaiapp_1",
            "the sign-in came back from issuer 'https://evil.example', not 'http://127.0.0.1:9'");
    refusal("code=c&state=s", "", "the sign-in came back with no client id");
    refusal("code=c&state=s&client_id=dynamic_agent_client", "",
            "the sign-in came back with no client id");
    refusal("code=c&state=s&client_id=oaiapp_2", "oaiapp_1",
            "the sign-in came back for client 'oaiapp_2', not 'oaiapp_1'");
    auto no_code = read_callback(at + "state=s&client_id=oaiapp_1", "s", k_issuer, "");
    ASSERT_FALSE(no_code);
    EXPECT_EQ(no_code.error().exit(), Exit::data);
}

TEST(HostId, AVersion4UuidUrn) {
    auto a = make_host_id();
    auto b = make_host_id();
    ASSERT_TRUE(a && b);
    EXPECT_NE(*a, *b);
    ASSERT_EQ(a->size(), 45U) << *a;
    EXPECT_EQ(a->substr(0, 9), "urn:uuid:");
    for (size_t dash : {17U, 22U, 27U, 32U})
        EXPECT_EQ((*a)[dash], '-') << *a;
    EXPECT_EQ((*a)[23], '4') << *a;                                          // the version
    EXPECT_NE(std::string("89ab").find((*a)[28]), std::string::npos) << *a; // the variant
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
    EXPECT_FALSE(none->account);
    EXPECT_EQ(none->host_id, "");
    Account a;
    a.issuer = k_issuer;
    a.client_id = "oaiapp_1";
    a.access_token = "at-1";
    a.refresh_token = "rt-1";
    a.expires_at = k_now;
    a.scope = "openid chatgpt.tokens.use.direct";
    a.subject = "user-1";
    a.account_id = "acct-1";
    a.email = "ada@example.com";
    a.plan = "plus";
    SignIn kept{"urn:uuid:1", k_issuer, "oaiapp_1", a};
    ASSERT_TRUE(store->write(kept));
    EXPECT_EQ(bytes_of(store->path()).find("rt-1"), std::string::npos);
    auto back = store->read();
    ASSERT_TRUE(back && back->account);
    EXPECT_EQ(back->to_json().dump(), kept.to_json().dump());
    // Signing out forgets the account and keeps the host id and registration.
    kept.account.reset();
    ASSERT_TRUE(store->write(kept));
    auto out = store->read();
    ASSERT_TRUE(out);
    EXPECT_FALSE(out->account);
    EXPECT_EQ(out->host_id, "urn:uuid:1");
    EXPECT_EQ(out->client_id, "oaiapp_1");
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
    ASSERT_TRUE(store->write(SignIn{"urn:uuid:1", k_issuer, "oaiapp_1", a}));
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

// A plan's streamed answer, its response naming the model and itself.
const std::string k_plan_answer =
    R"(data: {"type":"response.created","response":{"id":"resp_68a1","object":"response",)"
    R"("model":"gpt-5.2-codex","status":"in_progress"}})"
    "\n\n"
    R"(data: {"type":"response.output_item.done","output_index":0,"item":{"type":"message",)"
    R"("content":[{"type":"output_text","text":"Done."}]}})"
    "\n\n"
    R"(data: {"type":"response.completed","response":{"id":"resp_68a1","object":"response",)"
    R"("model":"gpt-5.2-codex","status":"completed","usage":{"input_tokens":9,"output_tokens":2}}})"
    "\n\n";

TEST_F(Store, APlansAnswerSaysWhatItIs) {
    test::TestServer api([](const test::Received&, int fd, const test::TestServer&) {
        test::TestServer::send_text(
            fd, test::respond(200, "OK", "Content-Type: text/event-stream\r\n", k_plan_answer));
    });
    auto store = TokenStore::open(m_home, true);
    ASSERT_TRUE(store) << store.error().message();
    Account a;
    a.issuer = k_issuer;
    a.client_id = "oaiapp_1";
    a.access_token = "at-1";
    a.refresh_token = "rt-1";
    a.expires_at = unix_now() + 3600; // good for the call: nothing is renewed
    a.account_id = "acct-1";
    ASSERT_TRUE(store->write(SignIn{"urn:uuid:1", k_issuer, "oaiapp_1", a}));
    std::optional<std::string> saved;
    if (const char* home = std::getenv("SION_HOME"))
        saved = home;
    ::setenv("SION_HOME", m_home.c_str(), 1);
    ::setenv("SION_CHATGPT_BASE_URL", api.url().c_str(), 1);
    auto model = open_chatgpt(ModelSpec{"chatgpt:gpt-5.2-codex", "chatgpt", "gpt-5.2-codex", {}});
    std::vector<Json> c;
    c.push_back(std::move(*Json::parse(R"({"role":"user","text":"hi"})")));
    auto answer = model ? (*model)->answer(Request{"", {}, c}) : Result<Answer>(model.error());
    saved ? ::setenv("SION_HOME", saved->c_str(), 1) : ::unsetenv("SION_HOME");
    ::unsetenv("SION_CHATGPT_BASE_URL");
    ASSERT_TRUE(answer) << answer.error().message();
    EXPECT_EQ(answer->text, "Done.");
    EXPECT_EQ(answer->model, "gpt-5.2-codex");
    EXPECT_EQ(answer->id, "resp_68a1");
    EXPECT_EQ(answer->finish_reason, "completed");
    EXPECT_EQ(api.requests(), 1);
}

} // namespace
} // namespace sion::models::chatgpt
