// SPDX-License-Identifier: MIT
// DPoP (RFC 9449) and the workload identity grant of mcpd/oauth: the proofs' header, claims and
// signature (checked with the jwk the proof carries), ath, the nonces kept and refused, a token
// endpoint asking for a nonce (tests/unit/http_test_server.hpp on 127.0.0.1), a DPoP token from
// a server that offers no DPoP, the key sealed with the tokens, mcpd's client taking the MCP
// server's nonce once (and no more), and the jwt-bearer grant.
#include "mcpd/auth_store.hpp"
#include "mcpd/client.hpp"
#include "mcpd/oauth_client.hpp"
#include "mcpd/oauth_discovery.hpp"
#include "mcpd/oauth_dpop.hpp"
#include "mcpd/oauth_login.hpp"
#include "mcpd/oauth_types.hpp"

#include "lib/base64.hpp"
#include "lib/hash.hpp"
#include "lib/json.hpp"
#include "lib/jws.hpp"
#include "tests/unit/http_test_server.hpp"

#include <gtest/gtest.h>
#include <uv.h>

#include <csignal>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace sion::mcpd::oauth {
namespace {

namespace fs = std::filesystem;
using test::Received;
using test::respond;
using test::TestServer;

int64_t now_s() {
    using namespace std::chrono;
    return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

struct Jwt {
    Json header;
    Json claims;
    std::string signing_input;
    std::string signature;
};

Jwt decode(const std::string& jwt) {
    Jwt out;
    size_t dot1 = jwt.find('.');
    size_t dot2 = jwt.find('.', dot1 + 1);
    EXPECT_NE(dot2, std::string::npos) << jwt;
    out.signing_input = jwt.substr(0, dot2);
    auto header = base64url_decode(jwt.substr(0, dot1));
    auto claims = base64url_decode(jwt.substr(dot1 + 1, dot2 - dot1 - 1));
    auto signature = base64url_decode(jwt.substr(dot2 + 1));
    EXPECT_TRUE(header && claims && signature);
    out.header = *Json::parse(*header);
    out.claims = *Json::parse(*claims);
    out.signature = *signature;
    return out;
}

std::string text(JsonView v, const char* key) {
    return std::string(v.string_or(key, "").value_or(""));
}

// The point of the proof's own jwk, as a server checking it takes it.
EcPoint point_of(JsonView jwk) {
    return {*base64url_decode(text(jwk, "x")), *base64url_decode(text(jwk, "y"))};
}

// A header's value in a request's head ("" when absent), its name in any case.
std::string header_of(const Received& r, const std::string& name) {
    std::string head = r.head;
    std::string lower_head, lower_name;
    for (char c : head)
        lower_head += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (char c : name)
        lower_name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t at = lower_head.find("\r\n" + lower_name + ":");
    if (at == std::string::npos)
        return {};
    size_t start = at + 3 + name.size();
    size_t end = head.find("\r\n", start);
    std::string value = head.substr(start, end - start);
    return value.substr(value.find_first_not_of(' '));
}

class DpopTest : public testing::Test {
protected:
    void SetUp() override {
        auto key = es256_generate();
        ASSERT_TRUE(key) << key.error().message();
        m_key = *key;
        char dir[] = "/tmp/sion-oauth-dpop.XXXXXX";
        ASSERT_NE(::mkdtemp(dir), nullptr);
        m_dir = dir;
        m_settings.timeout = std::chrono::seconds(10);
    }

    void TearDown() override { fs::remove_all(m_dir); }

    // A token endpoint at /token that answers with `answers` in turn (the last one again after).
    void serve(std::vector<std::string> answers) {
        m_server = std::make_unique<TestServer>(
            [this, answers](const Received& r, int fd, const TestServer&) {
                std::lock_guard<std::mutex> lock(m_mutex);
                m_seen.push_back(r);
                size_t i = std::min(m_seen.size(), answers.size()) - 1;
                TestServer::send_text(fd, answers[i]);
            });
    }

    [[nodiscard]] Discovery discovery() const {
        Discovery d;
        d.server_url = m_server->url("/mcp");
        d.resource = d.server_url;
        d.server.issuer = m_server->url();
        d.server.token_endpoint = m_server->url("/token");
        d.server.dpop_signing_alg_values_supported = {"ES256"};
        return d;
    }

    [[nodiscard]] std::vector<Received> seen() {
        std::lock_guard<std::mutex> lock(m_mutex);
        return m_seen;
    }

    Result<Tokens> exchange(DpopSigner dpop) {
        ClientRecord client;
        client.client_id = "sion";
        client.redirect_uri = "http://127.0.0.1:1/callback";
        Pkce pkce{"verifier", "challenge", "state"};
        return exchange_code(discovery(), client, "code", pkce, m_settings, dpop);
    }

    static std::string token_answer(const std::string& type) {
        return respond(200, "OK", "Content-Type: application/json\r\n",
                       R"({"access_token":"at-1","token_type":")" + type
                           + R"(","expires_in":3600})");
    }

    static std::string nonce_answer(const std::string& nonce) {
        return respond(400, "Bad Request",
                       "Content-Type: application/json\r\nDPoP-Nonce: " + nonce + "\r\n",
                       R"({"error":"use_dpop_nonce","error_description":"a nonce, please"})");
    }

    std::string m_key;
    fs::path m_dir;
    Settings m_settings;
    std::unique_ptr<TestServer> m_server;
    std::mutex m_mutex;
    std::vector<Received> m_seen;
};

TEST_F(DpopTest, AProofCarriesItsKeyAndTheRequestAndVerifies) {
    auto proof = dpop_proof(m_key, "POST", "https://mcp.example.com:443/mcp?x=1", "", "");
    ASSERT_TRUE(proof) << proof.error().message();
    Jwt jwt = decode(*proof);
    EXPECT_EQ(text(jwt.header, "typ"), "dpop+jwt");
    EXPECT_EQ(text(jwt.header, "alg"), "ES256");
    JsonView jwk = jwt.header.get("jwk");
    EXPECT_EQ(text(jwk, "kty"), "EC");
    EXPECT_EQ(text(jwk, "crv"), "P-256");
    EXPECT_FALSE(jwk.get("d").exists()) << "the private key went out";
    EXPECT_EQ(text(jwt.claims, "htm"), "POST");
    EXPECT_EQ(text(jwt.claims, "htu"), "https://mcp.example.com/mcp");
    int64_t iat = jwt.claims.get("iat").as_int().value_or(0);
    EXPECT_LE(std::abs(iat - now_s()), 5);
    EXPECT_GE(text(jwt.claims, "jti").size(), 16U);
    EXPECT_FALSE(jwt.claims.get("ath").exists());
    EXPECT_FALSE(jwt.claims.get("nonce").exists());
    auto verified = es256_verify(point_of(jwk), jwt.signing_input, jwt.signature);
    ASSERT_TRUE(verified) << verified.error().message();
    EXPECT_TRUE(*verified);
    EXPECT_EQ(jwk_thumbprint(point_of(jwk)), jwk_thumbprint(*es256_public(m_key)));

    Jwt again = decode(*dpop_proof(m_key, "POST", "https://mcp.example.com/mcp", "", ""));
    EXPECT_NE(text(again.claims, "jti"), text(jwt.claims, "jti")) << "a proof made twice";
}

TEST_F(DpopTest, AResourceRequestsProofHashesItsTokenAndCarriesTheNonce) {
    Jwt jwt = decode(*dpop_proof(m_key, "GET", "http://127.0.0.1:8812", "tok-1", "n-1"));
    EXPECT_EQ(text(jwt.claims, "htm"), "GET");
    EXPECT_EQ(text(jwt.claims, "htu"), "http://127.0.0.1:8812/");
    EXPECT_EQ(text(jwt.claims, "ath"), base64url_encode(sha256("tok-1")));
    EXPECT_EQ(text(jwt.claims, "nonce"), "n-1");
    EXPECT_TRUE(*es256_verify(point_of(jwt.header.get("jwk")), jwt.signing_input, jwt.signature));
}

TEST_F(DpopTest, BadKeysAndUrlsMakeNoProof) {
    auto no_key = dpop_proof("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n",
                             "POST", "https://a.example/t", "", "");
    ASSERT_FALSE(no_key);
    EXPECT_EQ(no_key.error().exit(), Exit::data);
    auto no_url = dpop_proof(m_key, "POST", "not a url", "", "");
    ASSERT_FALSE(no_url);
    EXPECT_EQ(no_url.error().exit(), Exit::data);
}

TEST(DpopNonce, TheLatestUsableNonceIsKeptPerOrigin) {
    DpopNonces nonces;
    EXPECT_TRUE(nonces.keep("https://as.example/token", "n-1"));
    EXPECT_TRUE(nonces.keep("https://rs.example/mcp", "abc+/=="));
    EXPECT_EQ(nonces.of("https://as.example/other?q"), "n-1");
    EXPECT_TRUE(nonces.keep("https://as.example/token", "n-2"));
    EXPECT_EQ(nonces.of("https://as.example/token"), "n-2");
    EXPECT_EQ(nonces.of("https://rs.example:443/mcp"), "abc+/==");
    EXPECT_EQ(nonces.of("https://elsewhere.example/"), "");
    for (std::string bad : {std::string(), std::string("a b"), std::string("\"quoted\""),
                            std::string("a,b"), std::string("=="), std::string("x\r\ny"),
                            std::string(DpopNonces::k_max_size + 1, 'n')})
        EXPECT_FALSE(nonces.keep("https://as.example/token", bad)) << bad;
    EXPECT_EQ(nonces.of("https://as.example/token"), "n-2") << "a refused nonce replaced one";
    EXPECT_TRUE(nonces.keep("https://as.example/token", std::string(DpopNonces::k_max_size, 'n')));
    EXPECT_FALSE(nonces.keep("not a url", "n-3"));
}

TEST(DpopChallenge, DpopChallengesAreRead) {
    Challenge c = parse_challenge(
        R"(DPoP error="use_dpop_nonce", error_description="Resource server requires nonce", )"
        R"(resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp")");
    EXPECT_TRUE(c.dpop);
    EXPECT_FALSE(c.bearer);
    EXPECT_EQ(c.error, "use_dpop_nonce");
    EXPECT_EQ(c.resource_metadata, "http://localhost:1/.well-known/oauth-protected-resource/mcp");
    Challenge both = parse_challenge(R"(Bearer scope="a", DPoP algs="ES256", error="x")");
    EXPECT_TRUE(both.bearer);
    EXPECT_TRUE(both.dpop);
    EXPECT_EQ(both.scope, "a");
    EXPECT_EQ(both.error, "x");
    EXPECT_FALSE(parse_challenge(R"(Basic realm="x", error="y")").dpop);
    EXPECT_EQ(parse_challenge(R"(Basic realm="x", error="y")").error, "");
}

TEST_F(DpopTest, TheTokenRequestIsSentOnceMoreWithTheNonceItAsksFor) {
    serve({nonce_answer("as-nonce-1"), token_answer("DPoP")});
    DpopNonces nonces;
    auto tokens = exchange({m_key, &nonces});
    ASSERT_TRUE(tokens) << tokens.error().message();
    EXPECT_TRUE(tokens->dpop);
    EXPECT_EQ(tokens->access_token, "at-1");
    auto requests = seen();
    ASSERT_EQ(requests.size(), 2U);
    Jwt first = decode(header_of(requests[0], "DPoP"));
    Jwt second = decode(header_of(requests[1], "DPoP"));
    EXPECT_FALSE(first.claims.get("nonce").exists());
    EXPECT_EQ(text(second.claims, "nonce"), "as-nonce-1");
    EXPECT_EQ(text(second.claims, "htm"), "POST");
    EXPECT_EQ(text(second.claims, "htu"), m_server->url("/token"));
    EXPECT_NE(text(first.claims, "jti"), text(second.claims, "jti"));
    EXPECT_FALSE(second.claims.get("ath").exists()) << "a token request has no token to hash";
    EXPECT_EQ(nonces.of(m_server->url("/token")), "as-nonce-1");
}

TEST_F(DpopTest, ANonceRefusedTwiceIsTheServersLastWord) {
    serve({nonce_answer("as-nonce-1")});
    DpopNonces nonces;
    auto tokens = exchange({m_key, &nonces});
    ASSERT_FALSE(tokens);
    EXPECT_EQ(tokens.error().exit(), Exit::no_perm);
    EXPECT_NE(tokens.error().message().find("use_dpop_nonce"), std::string::npos)
        << tokens.error().message();
    EXPECT_EQ(seen().size(), 2U) << "the nonce was asked for more than once";
}

TEST_F(DpopTest, AnUnusableNonceIsRefusedWithoutARetry) {
    serve({nonce_answer(std::string(DpopNonces::k_max_size + 1, 'n')), token_answer("DPoP")});
    DpopNonces nonces;
    auto oversized = exchange({m_key, &nonces});
    ASSERT_FALSE(oversized);
    EXPECT_EQ(oversized.error().exit(), Exit::data);
    EXPECT_NE(oversized.error().message().find("DPoP nonce"), std::string::npos)
        << oversized.error().message();
    EXPECT_EQ(seen().size(), 1U);

    m_seen.clear();
    serve({nonce_answer("not\"a token68"), token_answer("DPoP")});
    auto quoted = exchange({m_key, &nonces});
    ASSERT_FALSE(quoted);
    EXPECT_EQ(quoted.error().exit(), Exit::data);
    EXPECT_EQ(seen().size(), 1U);
}

TEST_F(DpopTest, ADpopTokenFromAServerThatOffersNoDpopIsRefused) {
    serve({token_answer("DPoP")});
    auto tokens = exchange({});
    ASSERT_FALSE(tokens);
    EXPECT_EQ(tokens.error().exit(), Exit::data);
    EXPECT_NE(tokens.error().message().find("does not offer DPoP"), std::string::npos)
        << tokens.error().message();
    ASSERT_EQ(seen().size(), 1U);
    EXPECT_EQ(header_of(seen()[0], "DPoP"), "") << "a proof went to a server without DPoP";
}

TEST_F(DpopTest, ABearerAnswerToAProofStaysBearer) {
    serve({token_answer("Bearer")});
    DpopNonces nonces;
    auto tokens = exchange({m_key, &nonces});
    ASSERT_TRUE(tokens) << tokens.error().message();
    EXPECT_FALSE(tokens->dpop);
}

TEST_F(DpopTest, TheKeyIsSealedWithTheTokensAndSignsTheResourceRequests) {
    auto opened = AuthStore::open(m_dir.string(), true);
    ASSERT_TRUE(opened) << opened.error().message();
    AuthStore& store = *opened;
    ServerAuth auth;
    auth.server_url = "http://127.0.0.1:1/mcp";
    auth.access_token = "at-1";
    auth.dpop_key = m_key;
    auth.dpop = true;
    ASSERT_TRUE(store.put_server("notes", auth));
    auto kept = store.server("notes");
    ASSERT_TRUE(kept && *kept);
    EXPECT_EQ((*kept)->dpop_key, m_key);
    EXPECT_TRUE((*kept)->dpop);
    std::ifstream sealed(store.path());
    std::string bytes((std::istreambuf_iterator<char>(sealed)), std::istreambuf_iterator<char>());
    EXPECT_EQ(bytes.find("PRIVATE KEY"), std::string::npos) << "the key was written in the clear";

    Authorizer authorizer(store, "notes", "http://127.0.0.1:1/mcp", m_settings);
    auto header = authorizer.header();
    ASSERT_TRUE(header && *header);
    EXPECT_EQ(**header, "DPoP at-1");
    EXPECT_TRUE(authorizer.keep_nonce("http://127.0.0.1:1/mcp", "rs-nonce"));
    auto proof = authorizer.proof("POST", "http://127.0.0.1:1/mcp");
    ASSERT_TRUE(proof) << proof.error().message();
    Jwt jwt = decode(*proof);
    EXPECT_EQ(text(jwt.claims, "ath"), base64url_encode(sha256("at-1")));
    EXPECT_EQ(text(jwt.claims, "nonce"), "rs-nonce");
    EXPECT_TRUE(*es256_verify(point_of(jwt.header.get("jwk")), jwt.signing_input, jwt.signature));

    // The nonce was given and refused again: no renewal, no login helps.
    Challenge again = parse_challenge(R"(DPoP error="use_dpop_nonce")");
    auto renewal = authorizer.renew(401, again);
    ASSERT_FALSE(renewal);
    EXPECT_EQ(renewal.error().exit(), Exit::no_perm);

    // A Bearer token gets no proof.
    auth.dpop = false;
    ASSERT_TRUE(store.put_server("notes", auth));
    EXPECT_EQ(**authorizer.header(), "Bearer at-1");
    EXPECT_EQ(*authorizer.proof("POST", "http://127.0.0.1:1/mcp"), "");
}

// mcpd's client, logged in with a DPoP-bound token, against an MCP server in the test.
class DpopClientTest : public DpopTest {
protected:
    void SetUp() override {
        DpopTest::SetUp();
        ASSERT_NE(::signal(SIGPIPE, SIG_IGN), SIG_ERR);
        ASSERT_EQ(uv_loop_init(&m_loop), 0);
        auto opened = AuthStore::open(m_dir.string(), true);
        ASSERT_TRUE(opened) << opened.error().message();
        m_store.emplace(std::move(*opened));
    }

    void TearDown() override {
        if (m_client)
            m_client->close();
        m_client.reset();
        uv_run(&m_loop, UV_RUN_DEFAULT);
        EXPECT_EQ(uv_loop_close(&m_loop), 0) << "a handle was left open";
        m_server.reset();
        DpopTest::TearDown();
    }

    // Connects to the server of serve(), the token "at-1" bound to the key; `refused` counts the
    // refusals the nonce did not answer.
    Result<Connected> connect() {
        if (m_client) {
            m_client->close();
            m_client.reset();
            uv_run(&m_loop, UV_RUN_DEFAULT);
        }
        ServerAuth auth;
        auth.server_url = m_server->url("/mcp");
        auth.access_token = "at-1";
        auth.dpop_key = m_key;
        auth.dpop = true;
        EXPECT_TRUE(m_store->put_server("web", auth));
        if (!m_authorizer) // one for the test: the nonces it keeps outlast a connection
            m_authorizer.emplace(*m_store, "web", m_server->url("/mcp"), m_settings);
        ClientEvents events;
        events.authorization = [this] { return m_authorizer->header()->value_or(""); };
        events.proof = [this](const std::string& method, const std::string& url) {
            return *m_authorizer->proof(method, url);
        };
        events.nonce = [this](const std::string& url, const std::string& nonce) {
            return m_authorizer->keep_nonce(url, nonce);
        };
        events.refused = [this](int status, std::string www, Retry retry) {
            ++m_refused;
            auto renewal = m_authorizer->renew(status, parse_challenge(www));
            retry(renewal && renewal->retry);
        };
        ClientOptions options;
        options.name = "web";
        options.timeout = std::chrono::milliseconds(10000);
        auto client = Client::reach(&m_loop, {m_server->url("/mcp"), {}}, options, std::move(events));
        EXPECT_TRUE(client) << client.error().message();
        if (!client)
            return std::move(client).error();
        m_client = std::move(*client);
        std::optional<Result<Connected>> got;
        m_client->connect([&](Result<Connected> c) { got = std::move(c); });
        uint64_t deadline = uv_now(&m_loop) + 20000;
        uv_timer_t guard;
        uv_timer_init(&m_loop, &guard);
        uv_timer_start(&guard, [](uv_timer_t*) {}, 50, 50);
        while (!got && uv_now(&m_loop) < deadline)
            uv_run(&m_loop, UV_RUN_ONCE);
        uv_close(reinterpret_cast<uv_handle_t*>(&guard), nullptr);
        uv_run(&m_loop, UV_RUN_NOWAIT);
        return got ? std::move(*got) : Error(Exit::software, "no answer within 20 s");
    }

    // A server/discover answer to the request `r`.
    static std::string discovered(const Received& r) {
        auto body = Json::parse(r.body);
        int64_t id = body ? body->view().integer_or("id", 0).value_or(0) : 0;
        return respond(200, "OK", "Content-Type: application/json\r\n",
                       R"({"jsonrpc":"2.0","id":)" + std::to_string(id)
                           + R"(,"result":{"supportedVersions":["2026-07-28"],"capabilities":{},)"
                             R"("_meta":{"io.modelcontextprotocol/serverInfo":)"
                             R"({"name":"t","version":"1"}}}})");
    }

    static std::string wants_nonce(const std::string& nonce) {
        return respond(401, "Unauthorized",
                       "WWW-Authenticate: DPoP error=\"use_dpop_nonce\"\r\n"
                           + (nonce.empty() ? "" : "DPoP-Nonce: " + nonce + "\r\n"),
                       R"({"error":"use_dpop_nonce"})");
    }

    uv_loop_t m_loop{};
    std::optional<AuthStore> m_store;
    std::optional<Authorizer> m_authorizer;
    std::unique_ptr<Client> m_client;
    int m_refused = 0;
};

TEST_F(DpopClientTest, TheServersNonceIsTakenAndTheRequestSentOnceMore) {
    m_server = std::make_unique<TestServer>([this](const Received& r, int fd, const TestServer&) {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_seen.push_back(r);
        }
        Jwt proof = decode(header_of(r, "DPoP"));
        TestServer::send_text(fd, text(proof.claims, "nonce") == "rs-1" ? discovered(r)
                                                                         : wants_nonce("rs-1"));
    });
    auto connected = connect();
    ASSERT_TRUE(connected) << connected.error().message();
    EXPECT_EQ(m_refused, 0);
    auto requests = seen();
    ASSERT_EQ(requests.size(), 2U);
    for (const Received& r : requests) {
        EXPECT_EQ(header_of(r, "Authorization"), "DPoP at-1");
        Jwt proof = decode(header_of(r, "DPoP"));
        EXPECT_EQ(text(proof.claims, "htm"), "POST");
        EXPECT_EQ(text(proof.claims, "htu"), m_server->url("/mcp"));
        EXPECT_EQ(text(proof.claims, "ath"), base64url_encode(sha256("at-1")));
        EXPECT_TRUE(*es256_verify(point_of(proof.header.get("jwk")), proof.signing_input,
                                  proof.signature));
    }
    EXPECT_NE(text(decode(header_of(requests[0], "DPoP")).claims, "jti"),
              text(decode(header_of(requests[1], "DPoP")).claims, "jti"));
}

TEST_F(DpopClientTest, ANonceRefusedAgainEndsTheRequest) {
    serve({wants_nonce("rs-1")});
    auto connected = connect();
    ASSERT_FALSE(connected);
    EXPECT_EQ(connected.error().exit(), Exit::no_perm) << connected.error().message();
    EXPECT_EQ(seen().size(), 2U) << "the nonce was taken more than once";
    EXPECT_EQ(m_refused, 1);
}

TEST_F(DpopClientTest, ARefusalWithoutAUsableNonceIsNotRetriedForOne) {
    serve({wants_nonce("")});
    ASSERT_FALSE(connect());
    EXPECT_EQ(seen().size(), 1U);
    EXPECT_EQ(m_refused, 1);

    m_seen.clear();
    m_refused = 0;
    serve({wants_nonce(std::string(DpopNonces::k_max_size + 1, 'n'))});
    ASSERT_FALSE(connect());
    EXPECT_EQ(seen().size(), 1U) << "an oversized nonce was taken";
    EXPECT_EQ(m_refused, 1);
}

class WorkloadTest : public DpopTest {
protected:
    Result<Tokens> grant(const std::string& file) {
        Discovery d = discovery();
        d.server.dpop_signing_alg_values_supported.clear();
        ClientSettings client;
        client.client_id = "workload";
        client.workload_token_file = file;
        return workload_grant(d, client, "", m_settings);
    }

    std::string token_file(const std::string& contents) {
        std::string path = (m_dir / "token").string();
        std::ofstream(path) << contents;
        return path;
    }
};

TEST_F(WorkloadTest, TheTokenFileIsTheAssertion) {
    serve({token_answer("Bearer")});
    auto tokens = grant(token_file("eyJ.workload.jwt\n"));
    ASSERT_TRUE(tokens) << tokens.error().message();
    ASSERT_EQ(seen().size(), 1U);
    std::string body = seen()[0].body;
    EXPECT_NE(body.find("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer"),
              std::string::npos) << body;
    EXPECT_NE(body.find("assertion=eyJ.workload.jwt&"), std::string::npos) << body;
    EXPECT_NE(body.find("client_id=workload"), std::string::npos) << body;
    EXPECT_NE(body.find("resource="), std::string::npos) << body;

    // Read again at every request: the platform rotates it.
    m_seen.clear();
    serve({token_answer("Bearer")});
    ASSERT_TRUE(grant(token_file("eyJ.rotated.jwt")));
    EXPECT_NE(seen()[0].body.find("assertion=eyJ.rotated.jwt&"), std::string::npos);
}

TEST_F(WorkloadTest, ARefusalIsFinal) {
    serve({respond(400, "Bad Request", "Content-Type: application/json\r\n",
                   R"({"error":"invalid_grant","error_description":"JWT assertion is expired"})"),
           token_answer("Bearer")});
    auto tokens = grant(token_file("eyJ.expired.jwt"));
    ASSERT_FALSE(tokens);
    EXPECT_EQ(tokens.error().exit(), Exit::no_perm);
    EXPECT_NE(tokens.error().message().find("invalid_grant (JWT assertion is expired)"),
              std::string::npos) << tokens.error().message();
    EXPECT_EQ(seen().size(), 1U) << "the grant was tried again";
}

TEST_F(WorkloadTest, AMissingOrEmptyFileIsAConfigurationError) {
    serve({token_answer("Bearer")});
    auto missing = grant((m_dir / "nowhere").string());
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().exit(), Exit::config);
    EXPECT_NE(missing.error().message().find("nowhere"), std::string::npos);
    auto empty = grant(token_file(" \n"));
    ASSERT_FALSE(empty);
    EXPECT_EQ(empty.error().exit(), Exit::config);
    EXPECT_NE(empty.error().message().find("is empty"), std::string::npos);
    EXPECT_EQ(seen().size(), 0U) << "a request went without an assertion";
}

} // namespace
} // namespace sion::mcpd::oauth
