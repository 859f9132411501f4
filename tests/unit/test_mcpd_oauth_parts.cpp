// SPDX-License-Identifier: MIT
// The parts of mcpd's OAuth that need no server: URLs and where requests may go, challenges,
// scopes, the authorization answer's checks, the lines printed, the sealed store (tampered
// included) and ES256 signatures (checked by Node's crypto, an implementation not ours).
#include "mcpd/auth_store.hpp"
#include "mcpd/oauth_client.hpp"
#include "mcpd/oauth_discovery.hpp"
#include "mcpd/oauth_login.hpp"
#include "mcpd/oauth_url.hpp"

#include "lib/base64.hpp"
#include "lib/child.hpp"
#include "lib/hash.hpp"
#include "lib/jws.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace sion::mcpd::oauth {
namespace {

namespace fs = std::filesystem;

// A throwaway P-256 key made for this test with `openssl genpkey`.
constexpr const char* k_test_key = "-----BEGIN PRIVATE KEY-----\n"
                                   "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg4BPGgeZU01DMdsRi\n"
                                   "FpXNnmmnyLuhfIOHm0BCam38SfWhRANCAATAqJg0t0QQKnMD49jNeYYk6bUIYG1U\n"
                                   "l9n+rJHX9pBrgSMftukoyDjyKKpfcGjT5wkb9a9/OXo+TVpPhzB/JH2W\n"
                                   "-----END PRIVATE KEY-----\n";

Url url(const char* text) {
    auto parsed = parse_url(text);
    EXPECT_TRUE(parsed) << text;
    return parsed ? *parsed : Url{};
}

TEST(OauthUrl, SplitsAndNormalises) {
    Url u = url("HTTPS://Example.COM:443/a/b/?x=1");
    EXPECT_EQ(u.scheme, "https");
    EXPECT_EQ(u.host, "example.com");
    EXPECT_EQ(u.origin(), "https://example.com");
    EXPECT_EQ(u.without_query(), "https://example.com/a/b");
    EXPECT_EQ(u.query, "x=1");
    EXPECT_EQ(url("http://[::1]:8080").origin(), "http://[::1]:8080");
    EXPECT_EQ(url("http://127.0.0.1:8812").path, "/");
    for (const char* bad : {"ftp://x/", "//x/", "http://u:p@x/", "http://x/#f", "http://:80/",
                            "http://x:port/"}) {
        auto r = parse_url(bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().exit(), Exit::data);
    }
}

TEST(OauthUrl, ReachOfHosts) {
    EXPECT_EQ(reach_of("localhost"), Reach::loopback);
    EXPECT_EQ(reach_of("127.5.0.1"), Reach::loopback);
    EXPECT_EQ(reach_of("::1"), Reach::loopback);
    EXPECT_EQ(reach_of("::ffff:127.0.0.1"), Reach::loopback);
    EXPECT_EQ(reach_of("10.1.2.3"), Reach::private_network);
    EXPECT_EQ(reach_of("172.31.0.1"), Reach::private_network);
    EXPECT_EQ(reach_of("192.168.0.1"), Reach::private_network);
    EXPECT_EQ(reach_of("169.254.169.254"), Reach::private_network);
    EXPECT_EQ(reach_of("fd00::1"), Reach::private_network);
    EXPECT_EQ(reach_of("172.32.0.1"), Reach::public_network);
    EXPECT_EQ(reach_of("mcp.example.com"), Reach::public_network);
}

TEST(OauthUrl, WhereRequestsMayGo) {
    Url here = url("http://127.0.0.1:8812/mcp");
    Url public_server = url("https://mcp.example.com/mcp");
    Url lan_server = url("https://10.0.0.5/mcp");
    EXPECT_TRUE(check_reach(here, url("http://localhost:9000/token"), "token endpoint"));
    EXPECT_TRUE(check_reach(public_server, url("https://auth.example.com/token"), "x"));
    EXPECT_TRUE(check_reach(lan_server, url("https://10.0.0.6/token"), "x"));
    struct Refused {
        Url server;
        const char* target;
        const char* why;
    };
    for (const Refused& r : {
             Refused{here, "http://10.0.0.1/token", "plain HTTP"},
             Refused{public_server, "http://auth.example.com/token", "plain HTTP"},
             Refused{lan_server, "http://10.0.0.6/token", "plain HTTP"},
             Refused{public_server, "https://127.0.0.1/token", "on this machine"},
             Refused{public_server, "https://192.168.1.1/token", "private address"},
             Refused{lan_server, "https://localhost/token", "on this machine"},
         }) {
        Status s = check_reach(r.server, url(r.target), "token endpoint");
        ASSERT_FALSE(s) << r.target;
        EXPECT_EQ(s.error().exit(), Exit::no_perm);
        EXPECT_NE(s.error().message().find(r.why), std::string::npos) << s.error().message();
        EXPECT_NE(s.error().message().find("refusing token endpoint at '"), std::string::npos);
    }
}

TEST(OauthChallenge, ParsesBearerAmongOthers) {
    Challenge c = parse_challenge(
        R"(Basic realm="x", Bearer error="insufficient_scope", scope="a b",)"
        R"( resource_metadata="https://r.example/.well-known/oauth-protected-resource/mcp",)"
        R"( error_description="needs \"b\"", Negotiate)");
    EXPECT_TRUE(c.bearer);
    EXPECT_EQ(c.error, "insufficient_scope");
    EXPECT_EQ(c.scope, "a b");
    EXPECT_EQ(c.resource_metadata, "https://r.example/.well-known/oauth-protected-resource/mcp");
    EXPECT_EQ(c.error_description, "needs \"b\"");
    Challenge other = parse_challenge(R"(Basic realm="x", scope="ignored")");
    EXPECT_FALSE(other.bearer);
    EXPECT_EQ(other.scope, "");
    EXPECT_TRUE(parse_challenge("bearer").bearer);
    EXPECT_FALSE(parse_challenge("=\"\",,, ==").bearer); // junk, no crash
}

TEST(OauthScope, ChosenAsTheSpecificationSays) {
    Discovery d;
    d.resource_scopes = {"mcp:basic", "mcp:read"};
    Challenge with;
    with.scope = "mcp:write";
    EXPECT_EQ(choose_scope(d, with, ""), "mcp:write");
    EXPECT_EQ(choose_scope(d, Challenge{}, ""), "mcp:basic mcp:read");
    EXPECT_EQ(choose_scope(d, Challenge{}, "mcp:read extra"), "mcp:basic mcp:read extra");
    d.server.scopes_supported = {"mcp:basic", "offline_access"};
    EXPECT_EQ(choose_scope(d, Challenge{}, ""), "mcp:basic mcp:read offline_access");
    Discovery none;
    none.server.scopes_supported = {"offline_access"};
    EXPECT_EQ(choose_scope(none, Challenge{}, ""), "");
}

Discovery notes_discovery(bool iss_supported) {
    Discovery d;
    d.server_url = "http://127.0.0.1:8812/mcp";
    d.resource = d.server_url;
    d.server.issuer = "http://127.0.0.1:8812";
    d.server.authorization_endpoint = "http://127.0.0.1:8812/authorize";
    d.server.iss_parameter_supported = iss_supported;
    return d;
}

TEST(OauthAnswer, TheAuthorizationUrlIsTheSeeds) {
    Pkce pkce{"verifier", "lqyyLj3Xcglu_wqDNUXP671v7ycavmLyjElGB1HSz_A",
              "yJWbR-_1MCBtpiHo2GQBkZ46we_lSTBm"};
    ClientRecord client;
    client.client_id = "59ac93d6-c3bf-4695-919f-e2873b3448f1";
    client.redirect_uri = "http://127.0.0.1:44263/callback";
    EXPECT_EQ(authorization_url(notes_discovery(true), client, pkce, "notes:read"),
              "http://127.0.0.1:8812/authorize?response_type=code&client_id=59ac93d6-c3bf-4695-"
              "919f-e2873b3448f1&redirect_uri=http%3A%2F%2F127.0.0.1%3A44263%2Fcallback&code_"
              "challenge=lqyyLj3Xcglu_wqDNUXP671v7ycavmLyjElGB1HSz_A&code_challenge_method=S256&"
              "state=yJWbR-_1MCBtpiHo2GQBkZ46we_lSTBm&resource=http%3A%2F%2F127.0.0.1%3A8812%2Fmcp"
              "&scope=notes%3Aread");
    auto made = make_pkce();
    ASSERT_TRUE(made);
    EXPECT_EQ(made->verifier.size(), 43U);
    EXPECT_EQ(made->state.size(), 32U);
    EXPECT_EQ(made->challenge, base64url_encode(sha256(made->verifier)));
}

TEST(OauthAnswer, StateAndIssAreChecked) {
    Pkce pkce{"v", "c", "the-state"};
    Discovery strict = notes_discovery(true);
    Discovery lax = notes_discovery(false);
    std::string iss = "&iss=http%3A%2F%2F127.0.0.1%3A8812";
    auto good = code_from_redirect("http://127.0.0.1:1/callback?code=abc&state=the-state" + iss,
                                   strict, pkce);
    ASSERT_TRUE(good) << good.error().message();
    EXPECT_EQ(*good, "abc");
    EXPECT_TRUE(code_from_redirect("code=abc&state=the-state\n", lax, pkce)); // pasted, no iss
    struct Bad {
        std::string answer;
        const Discovery* d;
        Exit exit;
        const char* says;
    };
    for (const Bad& b : {
             Bad{"code=abc&state=other" + iss, &strict, Exit::data, "its state"},
             Bad{"code=abc", &lax, Exit::data, "its state"},
             Bad{"code=abc&state=the-state", &strict, Exit::data, "names no issuer"},
             Bad{"code=abc&state=the-state&iss=https%3A%2F%2Fevil.example", &lax, Exit::data,
                 "names the issuer 'https://evil.example'"},
             Bad{"code=abc&state=the-state&iss=http%3A%2F%2F127.0.0.1%3A8812%2F", &strict,
                 Exit::data, "names the issuer"},
             Bad{"error=access_denied&error_description=no&state=the-state" + iss, &strict,
                 Exit::no_perm, "did not authorize sion: access_denied (no)"},
             Bad{"state=the-state" + iss, &strict, Exit::data, "holds no code"},
         }) {
        auto r = code_from_redirect(b.answer, *b.d, pkce);
        ASSERT_FALSE(r) << b.answer;
        EXPECT_EQ(r.error().exit(), b.exit) << b.answer;
        EXPECT_NE(r.error().message().find(b.says), std::string::npos) << r.error().message();
    }
}

TEST(OauthLines, AreTheSeeds) {
    LoginOutcome o;
    o.issuer = "http://127.0.0.1:8812";
    o.client_id = "59ac93d6-c3bf-4695-919f-e2873b3448f1";
    o.registered = true;
    o.scope = "notes:read";
    o.refreshable = true;
    EXPECT_EQ(asks_line("notes"), "MCP server notes asks for authorization.");
    std::vector<std::string> want = {
        "registered with http://127.0.0.1:8812 as client 59ac93d6-c3bf-4695-919f-e2873b3448f1",
        "authorized notes at http://127.0.0.1:8812 for notes:read, renewed without you while its "
        "refresh token lasts"};
    EXPECT_EQ(login_lines("notes", o), want);
    LogoutOutcome out{true, "http://127.0.0.1:8812", ""};
    std::vector<std::string> gone = {"revoked its tokens at http://127.0.0.1:8812",
                                     "forgot the authorization of MCP server notes"};
    EXPECT_EQ(logout_lines("notes", out), gone);
    EXPECT_EQ(needs_login("notes", 401, ""),
              "the MCP server notes needs authorization (HTTP 401): log in with `sion agent mcp "
              "login notes`");
    EXPECT_EQ(needs_login("notes", 403, "a b"),
              "the MCP server notes needs authorization (HTTP 403): log in with `sion agent mcp "
              "login notes --scope 'a b'`");
}

class AuthStoreTest : public testing::Test {
protected:
    void SetUp() override {
        char dir[] = "/tmp/sion-mcpd-auth.XXXXXX";
        ASSERT_NE(::mkdtemp(dir), nullptr);
        m_dir = dir;
    }

    void TearDown() override { fs::remove_all(m_dir); }

    [[nodiscard]] AuthStore store() const {
        return {(m_dir / "mcp-auth.bin").string(), (m_dir / "secrets.key").string()};
    }

    fs::path m_dir;
};

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(AuthStoreTest, KeepsEntriesApart) {
    AuthStore s = store();
    ServerAuth a;
    a.issuer = "https://as.example";
    a.access_token = "secret-access-a";
    a.refresh_token = "secret-refresh-a";
    a.expires_at = 1234;
    ServerAuth b = a;
    b.access_token = "secret-access-b";
    ASSERT_TRUE(s.put_server("a", a));
    ASSERT_TRUE(s.put_server("b", b));
    ClientRecord c;
    c.issuer = "https://as.example";
    c.client_id = "client-1";
    ASSERT_TRUE(s.put_client(c));
    auto forgot = s.forget_server("a");
    ASSERT_TRUE(forgot && *forgot);
    auto kept = s.server("b");
    ASSERT_TRUE(kept && *kept);
    EXPECT_EQ((*kept)->access_token, "secret-access-b");
    EXPECT_EQ((*kept)->expires_at, 1234);
    EXPECT_FALSE(*s.server("a"));
    EXPECT_EQ(*s.servers_of("https://as.example"), std::vector<std::string>{"b"});
    EXPECT_EQ((*s.client("https://as.example"))->client_id, "client-1");
    EXPECT_EQ(slurp(m_dir / "mcp-auth.bin").find("secret-access"), std::string::npos);
}

TEST_F(AuthStoreTest, ATamperedFileIsAClearErrorAndIsNotWrittenOver) {
    AuthStore s = store();
    ServerAuth a;
    a.access_token = "secret";
    ASSERT_TRUE(s.put_server("a", a));
    std::string sealed = slurp(m_dir / "mcp-auth.bin");
    std::string changed = sealed;
    changed[changed.size() / 2] ^= 0x20;
    std::ofstream(m_dir / "mcp-auth.bin", std::ios::binary | std::ios::trunc) << changed;
    auto read = s.server("a");
    ASSERT_FALSE(read);
    EXPECT_EQ(read.error().exit(), Exit::data);
    EXPECT_NE(read.error().message().find("cannot read MCP authorizations '"), std::string::npos)
        << read.error().message();
    EXPECT_NE(read.error().message().find("authentication failed"), std::string::npos);
    Status write = s.put_server("b", a);
    ASSERT_FALSE(write);
    EXPECT_EQ(write.error().exit(), Exit::data);
    EXPECT_EQ(slurp(m_dir / "mcp-auth.bin"), changed); // nothing written over it
    std::ofstream(m_dir / "mcp-auth.bin", std::ios::binary | std::ios::trunc) << "short";
    EXPECT_EQ(s.server("a").error().exit(), Exit::data);
}

TEST_F(AuthStoreTest, WithoutAKeyFileItIsEmptyAndReadOnly) {
    auto s = AuthStore::open(m_dir.string(), false);
    ASSERT_TRUE(s);
    EXPECT_FALSE(*s->server("a"));
    EXPECT_EQ(s->put_server("a", ServerAuth{}).error().exit(), Exit::config);
    auto made = AuthStore::open(m_dir.string(), true);
    ASSERT_TRUE(made);
    ASSERT_TRUE(made->put_server("a", ServerAuth{}));
    EXPECT_TRUE(fs::exists(m_dir / "agents" / "mcp-auth.bin"));
    EXPECT_TRUE(fs::exists(m_dir / "agents" / "secrets.key"));
}

TEST(OauthEs256, SignsAsJoseWantsAndVerifies) {
    auto signature = es256_sign(k_test_key, "header.claims");
    ASSERT_TRUE(signature) << signature.error().message();
    EXPECT_EQ(signature->size(), 64U);
    EXPECT_TRUE(*es256_verify(k_test_key, "header.claims", *signature));
    EXPECT_FALSE(*es256_verify(k_test_key, "header.claimz", *signature));
    EXPECT_FALSE(*es256_verify(k_test_key, "header.claims", signature->substr(1)));
    auto bad = es256_sign("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n",
                          "x");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().exit(), Exit::data);
    EXPECT_EQ(bad.error().message().find("not a key"), std::string::npos);
}

TEST(OauthEs256, NodeVerifiesTheSignature) {
    auto signature = es256_sign(k_test_key, "header.claims");
    ASSERT_TRUE(signature);
    ChildSpec spec;
    spec.argv = {"node", "-e",
                 "const c=require('crypto');const [k,s]=[process.env.KEY,process.env.SIG];"
                 "process.exit(c.verify('sha256',Buffer.from('header.claims'),"
                 "{key:k,dsaEncoding:'ieee-p1363'},Buffer.from(s,'base64url'))?0:3)"};
    spec.env = env_keep({"PATH"});
    env_set(spec.env, "KEY", k_test_key);
    env_set(spec.env, "SIG", base64url_encode(*signature));
    spec.time_limit = std::chrono::seconds(30);
    auto ran = run(spec, "");
    ASSERT_TRUE(ran) << ran.error().message();
    EXPECT_EQ(ran->status, 0) << ran->err;
}

} // namespace
} // namespace sion::mcpd::oauth
