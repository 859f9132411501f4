// SPDX-License-Identifier: MIT
// mcpd's OAuth logins against tests/fixtures/mcp/notes_http_server.py on 127.0.0.1 (started and
// stopped by each test): the whole login, the registration kept, refresh with rotation, a renewed
// token refused, step-up, the client credentials grant, revocation at logout, the terminal's
// consent (a browser's return and a pasted address), and every refusal the fixture's flags make.
#include "mcpd/auth_store.hpp"
#include "mcpd/oauth_client.hpp"
#include "mcpd/oauth_consent.hpp"
#include "mcpd/oauth_discovery.hpp"
#include "mcpd/oauth_login.hpp"
#include "mcpd/oauth_types.hpp"

#include "lib/child.hpp"
#include "lib/fd.hpp"
#include "lib/json.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace sion::mcpd::oauth {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path source_dir() {
    const char* dir = std::getenv("SION_TEST_SOURCE_DIR"); // NOLINT(concurrency-mt-unsafe)
    return dir != nullptr ? fs::path(dir) : fs::path(".");
}

// Reads one line from `fd`, 20 s at most.
std::string read_line(int fd) {
    std::string line;
    char c = 0;
    while (line.empty() || line.back() != '\n') {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 20000) <= 0 || ::read(fd, &c, 1) != 1)
            break;
        line += c;
    }
    if (!line.empty() && line.back() == '\n')
        line.pop_back();
    return line;
}

class OauthTest : public testing::Test {
protected:
    void SetUp() override {
        char dir[] = "/tmp/sion-mcpd-oauth.XXXXXX";
        ASSERT_NE(::mkdtemp(dir), nullptr);
        m_dir = dir;
        fs::create_directory(m_dir / "notes");
        m_settings.timeout = 10s;
    }

    void TearDown() override {
        m_server.reset(); // killed and reaped
        fs::remove_all(m_dir);
    }

    // Starts the fixture with `flags`; its URLs are then origin() + path.
    void start(std::vector<std::string> flags = {}) {
        ChildSpec spec;
        spec.argv = {"python3", (source_dir() / "tests/fixtures/mcp/notes_http_server.py").string(),
                     "--dir", (m_dir / "notes").string(), "--log", log_path()};
        spec.argv.insert(spec.argv.end(), flags.begin(), flags.end());
        spec.env = env_keep({"PATH"});
        spec.in = Stdio::pipe(); // its lifeline: it ends when this end closes
        spec.out = Stdio::pipe();
        spec.time_limit = 120s;
        auto child = Child::spawn(spec);
        ASSERT_TRUE(child) << child.error().message();
        m_server = std::move(*child);
        std::string port = read_line(m_server->out().get());
        ASSERT_FALSE(port.empty()) << "the fixture did not start";
        m_origin = "http://127.0.0.1:" + port;
    }

    [[nodiscard]] std::string log_path() const { return (m_dir / "requests.log").string(); }

    [[nodiscard]] AuthStore store() const {
        return {(m_dir / "mcp-auth.bin").string(), (m_dir / "secrets.key").string()};
    }

    [[nodiscard]] LoginOptions options(const std::string& path = "/mcp") const {
        LoginOptions o;
        o.server_url = m_origin + path;
        o.settings = m_settings;
        return o;
    }

    Result<LoginOutcome> login(const LoginOptions& o) {
        AuthStore s = store();
        HeadlessConsent consent(m_settings);
        return oauth::login(s, "notes", o, consent);
    }

    // The requests the fixture saw at `path`, as JSON objects.
    [[nodiscard]] std::vector<Json> requests(const std::string& path) const {
        std::vector<Json> out;
        std::ifstream in(log_path());
        for (std::string line; std::getline(in, line);) {
            auto entry = Json::parse(line);
            if (entry && entry->get("path").as_string().value_or("") == path)
                out.push_back(std::move(*entry));
        }
        return out;
    }

    // A tools/call (or any JSON-RPC body) to /mcp with `authorization`; the response.
    [[nodiscard]] HttpResponse post_mcp(const std::string& authorization,
                                        const std::string& body) const {
        HttpRequest r;
        r.method = "POST";
        r.url = m_origin + "/mcp";
        r.headers.add("Content-Type", "application/json");
        if (!authorization.empty())
            r.headers.add("Authorization", authorization);
        r.body = body;
        auto sent = http_send(r);
        EXPECT_TRUE(sent) << sent.error().message();
        return sent ? *sent : HttpResponse{};
    }

    static std::string call(const std::string& tool, const std::string& args) {
        return R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":")" + tool
               + R"(","arguments":)" + args
               + R"(,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",)"
                 R"("io.modelcontextprotocol/clientCapabilities":{}}}})";
    }

    [[nodiscard]] std::string bearer() const {
        AuthStore s = store();
        Authorizer authorizer(s, "notes", options().server_url, m_settings);
        auto header = authorizer.header();
        EXPECT_TRUE(header && *header) << (header ? "none" : header.error().message());
        return header && *header ? **header : std::string();
    }

    void expect_refused(const Result<LoginOutcome>& r, Exit exit, const std::string& says) {
        ASSERT_FALSE(r) << "the login went through";
        EXPECT_EQ(r.error().exit(), exit) << r.error().message();
        EXPECT_NE(r.error().message().find(says), std::string::npos) << r.error().message();
        EXPECT_FALSE(*store().server("notes")) << "a refused login kept tokens";
    }

    fs::path m_dir;
    std::optional<Child> m_server;
    std::string m_origin;
    Settings m_settings;
};

TEST_F(OauthTest, TheWholeLogin) {
    start();
    auto outcome = login(options());
    ASSERT_TRUE(outcome) << outcome.error().message();
    EXPECT_TRUE(outcome->registered);
    EXPECT_EQ(outcome->issuer, m_origin);
    EXPECT_EQ(outcome->scope, "notes:read");
    EXPECT_TRUE(outcome->refreshable);
    auto lines = login_lines("notes", *outcome);
    ASSERT_EQ(lines.size(), 2U);
    EXPECT_EQ(lines[0], "registered with " + m_origin + " as client " + outcome->client_id);
    EXPECT_EQ(lines[1], "authorized notes at " + m_origin
                            + " for notes:read, renewed without you while its refresh token lasts");

    auto registered = requests("/register");
    ASSERT_EQ(registered.size(), 1U);
    EXPECT_EQ(registered[0].get("form").get("application_type").as_string().value_or(""), "native");
    EXPECT_EQ(registered[0].get("form").get("token_endpoint_auth_method").as_string().value_or(""),
              "none");
    auto authorized = requests("/authorize");
    ASSERT_EQ(authorized.size(), 1U);
    JsonView query = authorized[0].get("query");
    EXPECT_EQ(query.get("resource").as_string().value_or(""), m_origin + "/mcp");
    EXPECT_EQ(query.get("scope").as_string().value_or(""), "notes:read");
    EXPECT_EQ(query.get("code_challenge_method").as_string().value_or(""), "S256");
    auto tokens = requests("/token");
    ASSERT_EQ(tokens.size(), 1U);
    EXPECT_EQ(tokens[0].get("form").get("resource").as_string().value_or(""), m_origin + "/mcp");
    EXPECT_FALSE(tokens[0].get("form").get("client_secret").exists());

    HttpResponse answer = post_mcp(bearer(), call("write_note", R"({"name":"groceries","text":"rice"})"));
    EXPECT_EQ(answer.status, 200) << answer.body;
    EXPECT_NE(answer.body.find("wrote groceries"), std::string::npos) << answer.body;
    EXPECT_EQ(post_mcp("", call("read_note", R"({"name":"groceries"})")).status, 401);

    // A second login keeps the registration.
    auto again = login(options());
    ASSERT_TRUE(again) << again.error().message();
    EXPECT_FALSE(again->registered);
    EXPECT_EQ(again->client_id, outcome->client_id);
    EXPECT_EQ(requests("/register").size(), 1U);
}

TEST_F(OauthTest, TheDeprecatedTransportIsLoggedInToTheSameWay) {
    start();
    auto outcome = login(options("/sse"));
    ASSERT_TRUE(outcome) << outcome.error().message();
    auto authorized = requests("/authorize");
    ASSERT_EQ(authorized.size(), 1U);
    EXPECT_EQ(authorized[0].get("query").get("resource").as_string().value_or(""),
              m_origin + "/sse");
    EXPECT_EQ(requests("/.well-known/oauth-protected-resource/sse").size(), 1U);
}

TEST_F(OauthTest, RefreshRotatesAndARenewedTokenRefusedAsksForALogin) {
    start({"--token-lifetime", "3600"});
    ASSERT_TRUE(login(options()));
    AuthStore s = store();
    std::string old_refresh = (*s.server("notes"))->refresh_token;
    std::string old_access = (*s.server("notes"))->access_token;
    Authorizer authorizer(s, "notes", options().server_url, m_settings);
    Challenge refused;
    auto renewed = authorizer.renew(401, refused);
    ASSERT_TRUE(renewed) << renewed.error().message();
    EXPECT_TRUE(renewed->retry);
    auto now = *s.server("notes");
    EXPECT_NE(now->refresh_token, old_refresh) << "the rotated refresh token was not kept";
    EXPECT_NE(now->access_token, old_access);
    auto token_requests = requests("/token");
    ASSERT_EQ(token_requests.size(), 2U);
    JsonView form = token_requests.back().get("form");
    EXPECT_EQ(form.get("grant_type").as_string().value_or(""), "refresh_token");
    EXPECT_EQ(form.get("resource").as_string().value_or(""), m_origin + "/mcp");
    EXPECT_EQ(post_mcp(bearer(), call("read_note", R"({"name":"x"})")).status, 200);
    EXPECT_EQ(post_mcp("Bearer " + old_access, call("read_note", R"({"name":"x"})")).status, 200)
        << "(the fixture lets an old access token live out its time)";

    // The same token refused again: no renewal helps.
    auto again = authorizer.renew(401, refused);
    ASSERT_TRUE(again);
    EXPECT_FALSE(again->retry);
}

TEST_F(OauthTest, AnExpiredTokenIsRenewedBeforeItIsSent) {
    start({"--token-lifetime", "5"}); // within the 30 s margin: renewed at once
    ASSERT_TRUE(login(options()));
    std::string before = (*store().server("notes"))->access_token;
    std::string header = bearer();
    EXPECT_NE(header, "Bearer " + before);
    EXPECT_EQ(header, "Bearer " + (*store().server("notes"))->access_token);
}

// A server removed and added again under the same name elsewhere is sent none of the old tokens.
TEST_F(OauthTest, TokensKeptForAnotherUrlAreNeverSent) {
    start();
    ASSERT_TRUE(login(options()));
    AuthStore s = store();
    Authorizer elsewhere(s, "notes", "https://elsewhere.example/mcp", m_settings);
    auto header = elsewhere.header();
    ASSERT_TRUE(header) << header.error().message();
    EXPECT_FALSE(*header);
    auto proof = elsewhere.proof("POST", "https://elsewhere.example/mcp");
    ASSERT_TRUE(proof) << proof.error().message();
    EXPECT_EQ(*proof, "");
    auto renewed = elsewhere.renew(401, Challenge{});
    ASSERT_TRUE(renewed) << renewed.error().message();
    EXPECT_FALSE(renewed->retry);
    EXPECT_EQ(requests("/token").size(), 1U) << "the old refresh token was used";
    Authorizer here(s, "notes", options().server_url, m_settings);
    auto mine = here.header();
    EXPECT_TRUE(mine && *mine);
}

TEST_F(OauthTest, AnExpiredRefreshTokenAsksForALogin) {
    start({"--expired-refresh"});
    ASSERT_TRUE(login(options()));
    AuthStore s = store();
    Authorizer authorizer(s, "notes", options().server_url, m_settings);
    auto renewed = authorizer.renew(401, Challenge{});
    ASSERT_TRUE(renewed) << renewed.error().message();
    EXPECT_FALSE(renewed->retry);
    EXPECT_NE(renewed->why.find("invalid_grant"), std::string::npos) << renewed->why;
    EXPECT_EQ(renewed->why.find("rt-"), std::string::npos) << "a token in a message";
}

TEST_F(OauthTest, StepUpAsksForTheUnionOfScopes) {
    start({"--write-scope"});
    ASSERT_TRUE(login(options()));
    HttpResponse refused = post_mcp(bearer(), call("write_note", R"({"name":"a","text":"b"})"));
    ASSERT_EQ(refused.status, 403);
    AuthStore s = store();
    Authorizer authorizer(s, "notes", options().server_url, m_settings);
    auto renewal = authorizer.renew(403, challenge_of(refused));
    ASSERT_TRUE(renewal) << renewal.error().message();
    EXPECT_FALSE(renewal->retry);
    EXPECT_EQ(renewal->scope, "notes:read notes:write");
    LoginOptions wider = options();
    wider.scope = renewal->scope;
    wider.challenge = challenge_of(refused);
    auto outcome = login(wider);
    ASSERT_TRUE(outcome) << outcome.error().message();
    EXPECT_EQ(outcome->scope, "notes:read notes:write");
    EXPECT_EQ(post_mcp(bearer(), call("write_note", R"({"name":"a","text":"b"})")).status, 200);
    // A 403 asking for what the token has already: no loop.
    Challenge same;
    same.error = "insufficient_scope";
    same.scope = "notes:write";
    Authorizer again(s, "notes", options().server_url, m_settings);
    auto loop = again.renew(403, same);
    ASSERT_FALSE(loop);
    EXPECT_EQ(loop.error().exit(), Exit::no_perm);
}

TEST_F(OauthTest, ClientCredentials) {
    start({"--client", "robot:s3cret"});
    ::setenv("SION_TEST_ROBOT_SECRET", "s3cret", 1); // NOLINT(concurrency-mt-unsafe)
    LoginOptions o = options();
    o.client_credentials = true;
    o.client.client_id = "robot";
    o.client.secret_env = "SION_TEST_ROBOT_SECRET";
    auto outcome = login(o);
    ASSERT_TRUE(outcome) << outcome.error().message();
    EXPECT_TRUE(outcome->unattended);
    EXPECT_EQ(requests("/authorize").size(), 0U);
    auto token = requests("/token");
    ASSERT_EQ(token.size(), 1U);
    EXPECT_EQ(token[0].get("auth").as_string().value_or(""), "Basic");
    EXPECT_EQ(token[0].get("form").get("grant_type").as_string().value_or(""),
              "client_credentials");
    EXPECT_EQ((*store().server("notes"))->secret_env, "SION_TEST_ROBOT_SECRET");
    EXPECT_EQ(post_mcp(bearer(), call("read_note", R"({"name":"x"})")).status, 200);
    // Renewed without anyone: the grant made again, the secret read from its variable again.
    AuthStore s = store();
    Authorizer authorizer(s, "notes", options().server_url, m_settings);
    auto renewed = authorizer.renew(401, Challenge{});
    ASSERT_TRUE(renewed) << renewed.error().message();
    EXPECT_TRUE(renewed->retry);
    EXPECT_EQ(requests("/token").size(), 2U);
    ::setenv("SION_TEST_ROBOT_SECRET", "wrong", 1); // NOLINT(concurrency-mt-unsafe)
    auto refused = login(o);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().exit(), Exit::no_perm);
    EXPECT_EQ(refused.error().message().find("wrong"), std::string::npos) << "the secret shown";
    ::unsetenv("SION_TEST_ROBOT_SECRET"); // NOLINT(concurrency-mt-unsafe)
}

TEST_F(OauthTest, EnterpriseManagedAuthorization) {
    start({"--client", "xaa:sec", "--id-token", "the-id-token"});
    LoginOptions o = options();
    o.client.client_id = "xaa";
    o.client.client_secret = "sec";
    o.identity = IdentityAssertion{m_origin + "/idp/token", "the-id-token"};
    auto outcome = login(o);
    ASSERT_TRUE(outcome) << outcome.error().message();
    EXPECT_EQ(requests("/authorize").size(), 0U);
    auto exchanged = requests("/idp/token");
    ASSERT_EQ(exchanged.size(), 1U);
    EXPECT_EQ(exchanged[0].get("form").get("audience").as_string().value_or(""), m_origin);
    EXPECT_EQ(exchanged[0].get("form").get("resource").as_string().value_or(""), m_origin + "/mcp");
    EXPECT_EQ(post_mcp(bearer(), call("read_note", R"({"name":"x"})")).status, 200);
    o.identity->id_token = "another-token";
    auto refused = login(o);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message().find("cannot get an identity assertion grant"),
              std::string::npos) << refused.error().message();
}

TEST_F(OauthTest, LogoutRevokesAndForgets) {
    start();
    ASSERT_TRUE(login(options()));
    std::string header = bearer();
    AuthStore s = store();
    auto out = logout(s, "notes", m_settings);
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ(out->revoked_at, m_origin);
    EXPECT_EQ(logout_lines("notes", *out),
              (std::vector<std::string>{"revoked its tokens at " + m_origin,
                                        "forgot the authorization of MCP server notes"}));
    EXPECT_EQ(requests("/revoke").size(), 2U); // the refresh token, then the access token
    EXPECT_EQ(post_mcp(header, call("read_note", R"({"name":"x"})")).status, 401);
    EXPECT_FALSE(*s.server("notes"));
    EXPECT_FALSE(*s.client(m_origin)) << "the registration outlived the logout";
    auto twice = logout(s, "notes", m_settings);
    ASSERT_TRUE(twice);
    EXPECT_FALSE(twice->had_authorization);
}

TEST_F(OauthTest, LogoutWithoutRevocationForgetsOnly) {
    start({"--no-revocation"});
    ASSERT_TRUE(login(options()));
    AuthStore s = store();
    auto out = logout(s, "notes", m_settings);
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_EQ(out->revoked_at, "");
    EXPECT_EQ(logout_lines("notes", *out),
              std::vector<std::string>{"forgot the authorization of MCP server notes"});
    EXPECT_EQ(requests("/revoke").size(), 0U);
}

TEST_F(OauthTest, RefusalsOfTheServersMetadata) {
    start({"--wrong-issuer"});
    expect_refused(login(options()), Exit::data, "names the issuer 'https://evil.example'");
    EXPECT_EQ(requests("/register").size(), 0U);
}

TEST_F(OauthTest, RefusesResourceMetadataNamingAnotherServer) {
    start({"--other-resource"});
    expect_refused(login(options()), Exit::data,
                   "names the resource 'https://evil.example/mcp', not the MCP server");
    EXPECT_EQ(requests("/authorize").size(), 0U);
}

TEST_F(OauthTest, RefusesAServerWithoutS256) {
    start({"--no-s256"});
    expect_refused(login(options()), Exit::data, "does not offer PKCE with S256");
    EXPECT_EQ(requests("/authorize").size(), 0U);
}

TEST_F(OauthTest, RefusesAnAnswerWithAnotherState) {
    start({"--wrong-state"});
    expect_refused(login(options()), Exit::data, "its state is not the one this login sent");
    EXPECT_EQ(requests("/token").size(), 0U);
}

TEST_F(OauthTest, RefusesAnAnswerFromAnotherIssuer) {
    start({"--wrong-iss"});
    expect_refused(login(options()), Exit::data, "names the issuer 'https://evil.example'");
    EXPECT_EQ(requests("/token").size(), 0U);
}

TEST_F(OauthTest, ATokenEndpointThatHangsTimesOut) {
    start({"--hang-token", "30"});
    m_settings.timeout = 1s;
    expect_refused(login(options()), Exit::timeout, "cannot reach '" + m_origin + "/token'");
}

TEST_F(OauthTest, RefusesMetadataAtAPrivateAddressForALoopbackServer) {
    start();
    LoginOptions o = options();
    Challenge c;
    c.bearer = true;
    c.resource_metadata = "http://10.9.8.7/.well-known/oauth-protected-resource/mcp";
    o.challenge = c;
    expect_refused(login(o), Exit::no_perm, "plain HTTP");
    EXPECT_TRUE(requests("/.well-known/oauth-protected-resource/mcp").empty());
}

TEST_F(OauthTest, ATamperedStoreStopsTheLoginAndKeepsTheFile) {
    start();
    AuthStore s = store();
    ServerAuth other;
    other.access_token = "other-token";
    ASSERT_TRUE(s.put_server("other", other));
    std::string path = (m_dir / "mcp-auth.bin").string();
    std::string sealed;
    {
        std::ifstream in(path, std::ios::binary);
        sealed.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    sealed[sealed.size() - 1] ^= 1;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << sealed;
    auto r = login(options());
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().exit(), Exit::data);
    EXPECT_NE(r.error().message().find("cannot read MCP authorizations"), std::string::npos)
        << r.error().message();
    std::ifstream in(path, std::ios::binary);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
              sealed);
}

// The terminal: the test plays the person, reading what is printed and answering.
class TerminalTest : public OauthTest {
protected:
    // Logs in on another thread with a TerminalConsent on pipes; `answer` gets the authorization
    // URL once printed and plays the browser or the person.
    Result<LoginOutcome> login_at_terminal(const std::function<void(const std::string&, int)>& answer,
                                           std::string& printed) {
        auto in = Pipe::make();
        auto out = Pipe::make();
        EXPECT_TRUE(in && out);
        Result<LoginOutcome> result = make_error(Exit::software, "not run");
        std::thread person([&] {
            AuthStore s = store();
            TerminalConsent consent(in->read.get(), out->write.get(), true, 0);
            consent.patience = 20s;
            result = oauth::login(s, "notes", options(), consent);
            out->write.reset();
        });
        printed = read_line(out->read.get()) + "\n";
        std::string url = read_line(out->read.get());
        printed += url + "\n" + read_line(out->read.get()) + "\n";
        answer(url, in->write.get());
        person.join();
        return result;
    }
};

std::string follow(const std::string& url) {
    HttpRequest r;
    r.url = url;
    auto sent = http_send(r);
    EXPECT_TRUE(sent) << sent.error().message();
    auto location = sent ? sent->headers.get("Location") : std::nullopt;
    return location ? std::string(*location) : std::string();
}

TEST_F(TerminalTest, TheBrowserComesBackToThisMachine) {
    start();
    std::string printed;
    auto outcome = login_at_terminal(
        [](const std::string& url, int) {
            HttpRequest back;
            back.url = follow(url);
            auto sent = http_send(back);
            ASSERT_TRUE(sent) << sent.error().message();
            EXPECT_EQ(sent->status, 200);
        },
        printed);
    ASSERT_TRUE(outcome) << outcome.error().message();
    EXPECT_TRUE(printed.starts_with("Open this URL to authorize:\n" + m_origin
                                    + "/authorize?response_type=code&client_id="))
        << printed;
    EXPECT_TRUE(printed.ends_with("\nA browser on another machine cannot come back to this one: "
                                  "paste here the address it was sent to.\n"))
        << printed;
}

TEST_F(TerminalTest, AnAddressPastedAtTheTerminal) {
    start();
    std::string printed;
    auto outcome = login_at_terminal(
        [](const std::string& url, int in) {
            // A stranger's visit to the callback first: answered 400 and ignored.
            std::string location = follow(url);
            HttpRequest stranger;
            stranger.url = location.substr(0, location.find('?')) + "?code=x&state=y";
            auto sent = http_send(stranger);
            ASSERT_TRUE(sent);
            EXPECT_EQ(sent->status, 400);
            ASSERT_TRUE(write_all(in, location + "\n"));
        },
        printed);
    ASSERT_TRUE(outcome) << outcome.error().message();
    EXPECT_EQ(outcome->scope, "notes:read");
}

} // namespace
} // namespace sion::mcpd::oauth
