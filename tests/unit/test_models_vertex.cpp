// SPDX-License-Identifier: MIT
// lib/models/vertex: a service account's JWT signed with RS256 and verified with the key's public
// half (a key made here with mbedTLS), its header and claims; where a model is and how it is
// asked (project, location, express mode, Claude's publisher); and the settings that cannot work
// refused before a session starts; and the model on KeyedModel's answer loop against a loopback
// server: a minted token refused is minted again once, express mode's keys rotate, and the cache
// figures of an answer and what it says of itself are read.
#include "lib/base64.hpp"
#include "lib/hash.hpp"
#include "lib/models/vertex.hpp"
#include "lib/secret_bytes.hpp"
#include "tests/unit/http_test_server.hpp"

#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <vector>

namespace sion::models {
namespace {

namespace fs = std::filesystem;

int random_source(void* /*unused*/, unsigned char* out, size_t size) {
    return fill_random(out, size) ? 0 : -1;
}

// A fresh 2048-bit RSA key, in PEM, and its context for verifying.
class TestKey {
public:
    TestKey() {
        mbedtls_pk_init(&m_pk);
        EXPECT_EQ(mbedtls_pk_setup(&m_pk, mbedtls_pk_info_from_type(MBEDTLS_PK_RSA)), 0);
        EXPECT_EQ(mbedtls_rsa_gen_key(mbedtls_pk_rsa(m_pk), random_source, nullptr, 2048, 65537),
                  0);
        std::vector<unsigned char> pem(16000);
        EXPECT_EQ(mbedtls_pk_write_key_pem(&m_pk, pem.data(), pem.size()), 0);
        m_pem = reinterpret_cast<const char*>(pem.data());
    }

    TestKey(const TestKey&) = delete;
    TestKey& operator=(const TestKey&) = delete;

    ~TestKey() { mbedtls_pk_free(&m_pk); }

    const std::string& pem() const { return m_pem; }

    bool verifies(std::string_view data, std::string_view signature) {
        std::string digest = sha256(data);
        return mbedtls_pk_verify(
                   &m_pk, MBEDTLS_MD_SHA256, reinterpret_cast<const unsigned char*>(digest.data()),
                   digest.size(), reinterpret_cast<const unsigned char*>(signature.data()),
                   signature.size())
               == 0;
    }

private:
    mbedtls_pk_context m_pk;
    std::string m_pem;
};

Json key_file(const std::string& pem) {
    Json key = Json::object();
    key.set("type", "service_account");
    key.set("private_key_id", "kid-1");
    key.set("private_key", std::string_view(pem));
    key.set("client_email", "sa@p.iam.gserviceaccount.com");
    key.set("token_uri", "http://127.0.0.1:9/token");
    return key;
}

TEST(Vertex, AServiceAccountsJwtIsSignedWithItsKey) {
    TestKey key;
    Json file = key_file(key.pem());
    auto jwt = service_account_assertion(file, 1700000000);
    ASSERT_TRUE(jwt) << jwt.error().message();
    size_t dot1 = jwt->find('.');
    size_t dot2 = jwt->rfind('.');
    ASSERT_NE(dot1, dot2);
    auto header = base64url_decode(jwt->substr(0, dot1));
    auto claims = base64url_decode(jwt->substr(dot1 + 1, dot2 - dot1 - 1));
    auto signature = base64url_decode(jwt->substr(dot2 + 1));
    ASSERT_TRUE(header && claims && signature);
    EXPECT_EQ(canonical_json(Json::parse(*header)->view()),
              R"({"alg":"RS256","kid":"kid-1","typ":"JWT"})");
    EXPECT_EQ(
        canonical_json(Json::parse(*claims)->view()),
        R"({"aud":"http://127.0.0.1:9/token","exp":1700003600,"iat":1700000000,)"
        R"("iss":"sa@p.iam.gserviceaccount.com","scope":"https://www.googleapis.com/auth/cloud-platform"})");
    EXPECT_EQ(signature->size(), 256U);
    EXPECT_TRUE(key.verifies(jwt->substr(0, dot2), *signature));
    EXPECT_FALSE(key.verifies(jwt->substr(0, dot2) + "x", *signature));
}

TEST(Vertex, AKeyThatIsNoRsaKeyIsRefused) {
    Json file = key_file("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n");
    auto jwt = service_account_assertion(file, 0);
    ASSERT_FALSE(jwt);
    EXPECT_EQ(jwt.error().exit(), Exit::config);
    EXPECT_EQ(jwt.error().message().rfind("the service account's private key is not an RSA key", 0),
              0U)
        << jwt.error().message();
    EXPECT_EQ(jwt.error().message().find("not a key"), std::string::npos);
}

class VertexEnvironment : public ::testing::Test {
protected:
    void SetUp() override {
        std::string tmpl = (fs::temp_directory_path() / "sion-test-vertex.XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        m_dir = tmpl;
        for (const char* name : k_names) {
            const char* v = std::getenv(name);
            m_saved.emplace_back(name, v != nullptr ? std::optional<std::string>(v) : std::nullopt);
            ::unsetenv(name);
        }
        ::setenv("HOME", m_dir.c_str(), 1);
        ::setenv("SION_HOME", (m_dir / "sion").c_str(), 1);
    }

    void TearDown() override {
        for (const auto& [name, value] : m_saved)
            value ? ::setenv(name, value->c_str(), 1) : ::unsetenv(name);
        fs::remove_all(m_dir);
    }

    std::string write(const char* name, std::string_view text) {
        std::ofstream(m_dir / name) << text;
        return (m_dir / name).string();
    }

    static constexpr const char* k_names[] = {"HOME",
                                              "SION_HOME",
                                              "GOOGLE_CLOUD_PROJECT",
                                              "ANTHROPIC_VERTEX_PROJECT_ID",
                                              "GOOGLE_CLOUD_LOCATION",
                                              "CLOUD_ML_REGION",
                                              "VERTEX_BASE_URL",
                                              "GOOGLE_OAUTH_ACCESS_TOKEN",
                                              "GOOGLE_APPLICATION_CREDENTIALS",
                                              "GOOGLE_API_KEY",
                                              "CLOUDSDK_CONFIG"};
    fs::path m_dir;
    std::vector<std::pair<const char*, std::optional<std::string>>> m_saved;
};

TEST_F(VertexEnvironment, WhereEachModelIs) {
    ::setenv("ANTHROPIC_VERTEX_PROJECT_ID", "proj", 1);
    ::setenv("CLOUD_ML_REGION", "europe-west1", 1);
    ::setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "ya29.given", 1);
    auto claude = vertex_settings("claude-opus-4-5@20251101");
    ASSERT_TRUE(claude) << claude.error().message();
    EXPECT_TRUE(claude->claude);
    EXPECT_EQ(claude->token, "ya29.given");
    EXPECT_EQ(vertex_url(*claude),
              "https://europe-west1-aiplatform.googleapis.com/v1/projects/proj/locations/"
              "europe-west1/publishers/anthropic/models/claude-opus-4-5@20251101:streamRawPredict");
    ::setenv("GOOGLE_CLOUD_PROJECT", "other", 1);
    ::setenv("GOOGLE_CLOUD_LOCATION", "global", 1);
    auto gemini = vertex_settings("gemini-2.5-pro");
    ASSERT_TRUE(gemini) << gemini.error().message();
    EXPECT_FALSE(gemini->claude);
    EXPECT_EQ(vertex_url(*gemini),
              "https://aiplatform.googleapis.com/v1/projects/other/locations/global/publishers/"
              "google/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
}

TEST_F(VertexEnvironment, ExpressModeWithoutAProject) {
    ::setenv("GOOGLE_API_KEY", "k1,k2", 1);
    ::setenv("VERTEX_BASE_URL", "http://127.0.0.1:7/", 1);
    auto s = vertex_settings("gemini-2.5-flash");
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(s->api_keys.size(), 2U);
    EXPECT_EQ(vertex_url(*s), "http://127.0.0.1:7/v1/publishers/google/models/"
                              "gemini-2.5-flash:streamGenerateContent?alt=sse");
    auto claude = vertex_settings("claude-sonnet-4-5@20250929");
    ASSERT_FALSE(claude);
    EXPECT_EQ(claude.error().exit(), Exit::config);
    EXPECT_EQ(claude.error().message(), "vertex:claude-sonnet-4-5@20250929 needs a project: set "
                                        "GOOGLE_CLOUD_PROJECT (Claude is reached on Vertex AI only "
                                        "in a project)");
    ::unsetenv("GOOGLE_API_KEY");
    auto none = vertex_settings("gemini-2.5-flash");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().message(),
              "vertex:gemini-2.5-flash needs a project (GOOGLE_CLOUD_PROJECT) "
              "or, for express mode, a key in GOOGLE_API_KEY");
}

TEST_F(VertexEnvironment, CredentialsToMintWith) {
    ::setenv("GOOGLE_CLOUD_PROJECT", "p", 1);
    auto none = vertex_settings("gemini-2.5-pro");
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().exit(), Exit::config);
    EXPECT_EQ(none.error().message(),
              "vertex:gemini-2.5-pro needs a token: set GOOGLE_OAUTH_ACCESS_TOKEN or "
              "GOOGLE_APPLICATION_CREDENTIALS, or run 'gcloud auth application-default login'");
    // gcloud's own file, where CLOUDSDK_CONFIG says.
    ::setenv("CLOUDSDK_CONFIG", m_dir.c_str(), 1);
    write("application_default_credentials.json",
          R"({"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r"})");
    auto user = vertex_settings("gemini-2.5-pro");
    ASSERT_TRUE(user) << user.error().message();
    EXPECT_EQ(user->credentials.view().string("refresh_token").value_or(""), "r");
    std::string external = write("external.json", R"({"type":"external_account"})");
    ::setenv("GOOGLE_APPLICATION_CREDENTIALS", external.c_str(), 1);
    auto other = vertex_settings("gemini-2.5-pro");
    ASSERT_FALSE(other);
    EXPECT_EQ(other.error().message(),
              "Google credentials '" + external
                  + "' are of type 'external_account': sion mints "
                    "tokens from service_account and authorized_user ones");
    std::string partial = write("partial.json", R"({"type":"service_account","client_email":"x"})");
    ::setenv("GOOGLE_APPLICATION_CREDENTIALS", partial.c_str(), 1);
    auto missing = vertex_settings("gemini-2.5-pro");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().message(),
              "Google credentials '" + partial + "' have no private_key");
    ::setenv("GOOGLE_APPLICATION_CREDENTIALS", (m_dir / "nothing.json").c_str(), 1);
    auto unreadable = vertex_settings("gemini-2.5-pro");
    ASSERT_FALSE(unreadable);
    EXPECT_EQ(unreadable.error().message(), "cannot read Google credentials '"
                                                + (m_dir / "nothing.json").string()
                                                + "': No such file or directory");
}

// --- the model's answer loop ------------------------------------------------------------------

// Gemini's streamed answer, with its cache figures and what it says of itself.
const std::string k_gemini_answer =
    "data: "
    R"({"candidates":[{"content":{"role":"model","parts":[{"text":"fine"}]},"finishReason":"STOP"}],)"
    R"("usageMetadata":{"promptTokenCount":100,"cachedContentTokenCount":60,"candidatesTokenCount":5},)"
    R"("modelVersion":"gemini-2.5-pro","createTime":"2025-09-01T10:00:00.000000Z",)"
    R"("responseId":"lmS1aKjvM8rV-O4P9Jqw4AY"})"
    "\r\n\r\n";

// Vertex AI and its token endpoint on 127.0.0.1: `answer` makes each reply; each request's head
// is kept for heads().
class Platform {
public:
    using Answer = std::function<std::string(const test::Received&)>;

    explicit Platform(Answer answer)
        : m_answer(std::move(answer)),
          m_server([this](const test::Received& r, int fd, const test::TestServer&) {
              {
                  std::lock_guard lock(m_mutex);
                  m_heads.push_back(r.head.substr(0, r.head.find("\r\n")) + " " + bearer(r.head));
              }
              test::TestServer::send_text(fd, m_answer(r));
          }) {}

    [[nodiscard]] std::string url(const std::string& path = "") const { return m_server.url(path); }

    // "POST /path HTTP/1.1 <key or token>" for each request, in order.
    [[nodiscard]] std::vector<std::string> heads() const {
        std::lock_guard lock(m_mutex);
        return m_heads;
    }

    static std::string bearer(const std::string& head) {
        for (std::string name : {"Authorization: Bearer ", "x-goog-api-key: "})
            if (size_t at = head.find(name); at != std::string::npos) {
                at += name.size();
                return head.substr(at, head.find("\r\n", at) - at);
            }
        return "-";
    }

private:
    Answer m_answer;
    mutable std::mutex m_mutex;
    std::vector<std::string> m_heads;
    test::TestServer m_server; // last: its threads stop before the members above go
};

std::string reply(int status, const std::string& type, const std::string& body) {
    return test::respond(status, "X", "Content-Type: " + type + "\r\n", body);
}

Result<Answer> ask(Model& model) {
    std::vector<Json> conv;
    conv.push_back(std::move(*Json::parse(R"({"role":"user","text":"hi"})")));
    return model.answer(Request{"sys", {}, conv, 100});
}

TEST_F(VertexEnvironment, AMintedTokenRefusedIsMintedAgainOnce) {
    int minted = 0; // the server's thread alone touches it
    std::atomic<bool> refuse_all = false;
    Platform vertex([&minted, &refuse_all](const test::Received& r) {
        if (r.head.rfind("POST /token ", 0) == 0)
            return reply(200, "application/json",
                         R"({"access_token":"ya29.minted-)" + std::to_string(++minted)
                             + R"(","expires_in":3600})");
        if (refuse_all || Platform::bearer(r.head) != "ya29.minted-2")
            return reply(401, "application/json",
                         R"({"error":{"code":401,"message":"Request had invalid authentication )"
                         R"(credentials.","status":"UNAUTHENTICATED"}})");
        return reply(200, "text/event-stream", k_gemini_answer);
    });
    ::setenv("GOOGLE_CLOUD_PROJECT", "p", 1);
    ::setenv("VERTEX_BASE_URL", vertex.url().c_str(), 1);
    std::string user = write("user.json", R"({"type":"authorized_user","client_id":"c",)"
                                          R"("client_secret":"s","refresh_token":"r","token_uri":")"
                                              + vertex.url("/token") + R"("})");
    ::setenv("GOOGLE_APPLICATION_CREDENTIALS", user.c_str(), 1);
    auto model = open_vertex(ModelSpec{"vertex:gemini-2.5-pro", "vertex", "gemini-2.5-pro", {}});
    ASSERT_TRUE(model) << model.error().message();
    auto answer = ask(**model);
    ASSERT_TRUE(answer) << answer.error().message();
    EXPECT_EQ(answer->text, "fine");
    EXPECT_EQ(answer->usage.input_tokens, 100);
    EXPECT_EQ(answer->usage.cache_read_tokens, 60);
    EXPECT_EQ(answer->model, "gemini-2.5-pro");
    EXPECT_EQ(answer->id, "lmS1aKjvM8rV-O4P9Jqw4AY");
    EXPECT_EQ(answer->finish_reason, "STOP");
    const std::string api = "POST /v1/projects/p/locations/global/publishers/google/models/"
                            "gemini-2.5-pro:streamGenerateContent?alt=sse HTTP/1.1 ";
    EXPECT_EQ(vertex.heads(),
              (std::vector<std::string>{"POST /token HTTP/1.1 -", api + "ya29.minted-1",
                                        "POST /token HTTP/1.1 -", api + "ya29.minted-2"}));
    // The token is kept while it is good.
    ASSERT_TRUE(ask(**model));
    EXPECT_EQ(vertex.heads().size(), 5U);
    EXPECT_EQ(vertex.heads().back(), api + "ya29.minted-2");
    // A new token refused too is the call's failure, as unauthorized: it is minted again once.
    refuse_all = true;
    auto refused = ask(**model);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::no_perm);
    EXPECT_EQ(refused.error().message(),
              "HTTP 401: Request had invalid authentication credentials.");
    auto heads = vertex.heads();
    EXPECT_EQ(std::vector<std::string>(heads.begin() + 5, heads.end()),
              (std::vector<std::string>{api + "ya29.minted-2", "POST /token HTTP/1.1 -",
                                        api + "ya29.minted-3"}));
}

TEST_F(VertexEnvironment, ExpressModesKeysRotatePastALimitedOne) {
    Platform vertex([](const test::Received& r) {
        if (Platform::bearer(r.head) == "limited-1")
            return reply(429, "application/json",
                         R"({"error":{"code":429,"message":"Resource exhausted.",)"
                         R"("status":"RESOURCE_EXHAUSTED"}})");
        return reply(200, "text/event-stream", k_gemini_answer);
    });
    ::setenv("GOOGLE_API_KEY", "limited-1,good-2", 1);
    ::setenv("VERTEX_BASE_URL", vertex.url().c_str(), 1);
    auto model =
        open_vertex(ModelSpec{"vertex:gemini-2.5-flash", "vertex", "gemini-2.5-flash", {}});
    ASSERT_TRUE(model) << model.error().message();
    ASSERT_TRUE(ask(**model));
    ASSERT_TRUE(ask(**model));
    const std::string api = "POST /v1/publishers/google/models/gemini-2.5-flash:"
                            "streamGenerateContent?alt=sse HTTP/1.1 ";
    // The limited key rests a minute; the next call starts with the other.
    EXPECT_EQ(vertex.heads(),
              (std::vector<std::string>{api + "limited-1", api + "good-2", api + "good-2"}));
}

} // namespace
} // namespace sion::models
