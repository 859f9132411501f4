// SPDX-License-Identifier: MIT
// mcpd/config: a server's configuration kept as JSON and read back (and refused when damaged), how
// list describes it, the environment it is given (nothing of sion's own), how it is launched with
// and without a sandbox, the client's options for it, and the secrets it is given.
#include "mcpd/config.hpp"
#include "mcpd/grants.hpp"

#include "mcpd/auth_store.hpp"
#include "mcpd/server_secrets.hpp"

#include "lib/fd.hpp"
#include "tests/unit/temp_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace sion::mcpd {
namespace {

namespace fs = std::filesystem;

Json parse(std::string_view text) {
    auto json = Json::parse(text);
    EXPECT_TRUE(json) << text;
    return json ? std::move(*json) : Json::object();
}

ServerConfig full() {
    ServerConfig c;
    c.command = {"python3", "/home/me/notes-server.py"};
    c.shown = {"python3", "notes-server.py"};
    c.dir = "/home/me/notes";
    c.env = {"NOTES_KEY"};
    c.sandbox = "bwrap";
    c.network = "none";
    c.sandbox_read = {"/opt/node"};
    c.memory = "8G";
    c.effects = {{"export_notes", Effect::spend}};
    c.timeout_s = 30;
    return c;
}

// Sets variables for one test and puts them back after.
class Environment {
public:
    void set(const char* name, const char* value) {
        const char* was = std::getenv(name); // NOLINT(concurrency-mt-unsafe)
        m_saved.emplace_back(name, was ? std::optional<std::string>(was) : std::nullopt);
        if (value)
            ::setenv(name, value, 1); // NOLINT(concurrency-mt-unsafe)
        else
            ::unsetenv(name); // NOLINT(concurrency-mt-unsafe)
    }
    ~Environment() {
        for (auto it = m_saved.rbegin(); it != m_saved.rend(); ++it)
            if (it->second)
                ::setenv(it->first.c_str(), it->second->c_str(), 1); // NOLINT(concurrency-mt-unsafe)
            else
                ::unsetenv(it->first.c_str()); // NOLINT(concurrency-mt-unsafe)
    }

private:
    std::vector<std::pair<std::string, std::optional<std::string>>> m_saved;
};

TEST(McpdConfig, KeptAsJsonAndReadBack) {
    Json j = config_to_json(full());
    EXPECT_EQ(canonical_json(j.view()),
              canonical_json(parse(R"({"command":["python3","/home/me/notes-server.py"],
                  "shown":["python3","notes-server.py"],"dir":"/home/me/notes","env":["NOTES_KEY"],
                  "sandbox":"bwrap","network":"none","sandbox_read":["/opt/node"],"memory":"8G",
                  "effects":{"export_notes":"spend"},"timeout":30})")
                                 .view()));
    auto back = config_from_json(j.view());
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->command, full().command);
    EXPECT_EQ(back->shown, full().shown);
    EXPECT_EQ(back->dir, "/home/me/notes");
    EXPECT_EQ(back->env, full().env);
    EXPECT_EQ(back->sandbox, "bwrap");
    EXPECT_EQ(back->network, "none");
    EXPECT_EQ(back->sandbox_read, full().sandbox_read);
    EXPECT_EQ(back->memory, "8G");
    EXPECT_EQ(back->effects, full().effects);
    EXPECT_EQ(back->timeout_s, 30);
}

TEST(McpdConfig, OnlyTheCommandIsNeeded) {
    ServerConfig c;
    c.command = {"srv"};
    c.shown = {"srv"};
    EXPECT_EQ(config_to_json(c).dump(), R"({"command":["srv"],"timeout":60})");
    auto back = config_from_json(parse(R"({"command":["srv"]})").view());
    ASSERT_TRUE(back);
    EXPECT_EQ(back->shown, back->command);
    EXPECT_EQ(back->timeout_s, k_default_timeout_s);
    EXPECT_TRUE(back->dir.empty());
    EXPECT_TRUE(back->sandbox.empty());
}

TEST(McpdConfig, ADamagedConfigIsRefusedNamingTheMember) {
    struct Case {
        const char* json;
        const char* message;
    };
    for (const Case& c : std::vector<Case>{
             {R"({})", "member 'command' is empty"},
             {R"({"command":[]})", "member 'command' is empty"},
             {R"({"command":"srv"})", "member 'command' is a string, not an array of strings"},
             {R"({"command":["srv",1]})", "member 'command' holds a number, not only strings"},
             {R"({"command":["srv"],"env":"X"})", "member 'env' is a string, not an array of strings"},
             {R"({"command":["srv"],"effects":[]})", "member 'effects' is not an object"},
             {R"({"command":["srv"],"timeout":0})", "member 'timeout' is not between 1 and 86400"},
             {R"({"command":["srv"],"timeout":86401})", "member 'timeout' is not between 1 and 86400"},
         }) {
        auto r = config_from_json(parse(c.json).view());
        ASSERT_FALSE(r) << c.json;
        EXPECT_EQ(r.error().exit(), Exit::data) << c.json;
        EXPECT_EQ(r.error().message(), c.message) << c.json;
    }
    for (const char* json : {R"({"command":[1]})", R"({"command":["srv"],"effects":{"t":"fly"}})",
                             R"({"command":["srv"],"dir":5})"})
        EXPECT_FALSE(config_from_json(parse(json).view())) << json;
}

TEST(McpdConfig, HowListShowsIt) {
    ServerConfig c;
    c.command = {"python3", "/abs/notes-server.py"};
    c.shown = {"python3", "notes-server.py"};
    EXPECT_EQ(describe(c), "python3 notes-server.py, unsandboxed");
    c.sandbox = "bwrap";
    EXPECT_EQ(describe(c), "python3 notes-server.py, in bwrap");
    c.sandbox = "docker:img@sha256:0123";
    EXPECT_EQ(describe(c), "python3 notes-server.py, in docker:img@sha256:0123");
}

TEST(McpdConfig, TheEnvironmentIsOnlyTheNamedVariablesAndFourMore) {
    Environment env;
    env.set("ANTHROPIC_API_KEY", "sk-test-secret");
    env.set("SION_HOME", "/tmp/secret-home");
    env.set("NOTES_KEY", "k1");
    env.set("LANG", "C.UTF-8");
    env.set("TMPDIR", nullptr);
    env.set("UNSET_ONE", nullptr);
    ServerConfig c;
    c.command = {"srv"};
    c.env = {"NOTES_KEY", "UNSET_ONE"};
    std::vector<std::string> got = server_environment(c);
    std::vector<std::string> names;
    for (const std::string& v : got)
        names.push_back(v.substr(0, v.find('=')));
    std::sort(names.begin(), names.end());
    std::vector<std::string> want = {"HOME", "LANG", "NOTES_KEY", "PATH"};
    if (!std::getenv("HOME")) // NOLINT(concurrency-mt-unsafe)
        want.erase(want.begin());
    EXPECT_EQ(names, want);
    EXPECT_NE(std::find(got.begin(), got.end(), "NOTES_KEY=k1"), got.end());
    for (const std::string& v : got)
        EXPECT_EQ(v.find("sk-test-secret"), std::string::npos) << v;
}

TEST(McpdConfig, AnUnsandboxedServerRunsItsCommandInItsDirectory) {
    ServerConfig c = full();
    c.sandbox.clear();
    auto spec = launch_spec(c);
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->spec.argv, c.command);
    EXPECT_EQ(spec->spec.cwd, "/home/me/notes");
    EXPECT_EQ(spec->spec.env, server_environment(c));
    EXPECT_EQ(spec->spec.in.kind, Stdio::Kind::pipe);
    EXPECT_EQ(spec->spec.out.kind, Stdio::Kind::pipe);
    EXPECT_EQ(spec->spec.err.kind, Stdio::Kind::null); // servers print secrets there
}

// A directory with a sion-sandbox that does nothing, found first (SION_EXEC_PATH), and the home
// given, while it lives.
struct FakeSandbox {
    FakeSandbox(Environment& env, const char* home) {
        std::ofstream(fake) << "#!/bin/sh\n";
        EXPECT_EQ(::chmod(fake.c_str(), 0755), 0);
        env.set("SION_EXEC_PATH", dir.path().c_str());
        env.set("SION_HOME", home);
    }

    test::TempDir dir;
    std::string fake = dir.path() + "/sion-sandbox";
};

TEST(McpdConfig, ASandboxedServerRunsInSionSandboxRun) {
    Environment env;
    FakeSandbox sandbox(env, "/tmp/h");
    const std::string& fake = sandbox.fake;
    env.set("ANTHROPIC_API_KEY", "sk-test-secret");
    auto spec = launch_spec(full());
    ASSERT_TRUE(spec) << spec.error().message();
    EXPECT_EQ(spec->spec.argv, (std::vector<std::string>{
                              fake, "run", "--workspace", "/home/me/notes", "--network", "none",
                              "--sandbox-read", "/opt/node", "--memory", "8G", "--env", "NOTES_KEY", "--",
                              "python3", "/home/me/notes-server.py"}));
    EXPECT_TRUE(spec->spec.cwd.empty());
    EXPECT_EQ(spec->spec.err.kind, Stdio::Kind::null);
    // sion-sandbox finds its home; the secret stays out.
    EXPECT_NE(std::find(spec->spec.env.begin(), spec->spec.env.end(), "SION_HOME=/tmp/h"), spec->spec.env.end());
    for (const std::string& v : spec->spec.env)
        EXPECT_EQ(v.find("sk-test-secret"), std::string::npos) << v;
    // A Docker image is a backend; no directory and no network given are none.
    ServerConfig docker;
    docker.command = {"srv"};
    docker.sandbox = "docker:img@sha256:0123";
    spec = launch_spec(docker);
    ASSERT_TRUE(spec);
    EXPECT_EQ(spec->spec.argv, (std::vector<std::string>{fake, "run", "--backend",
                                                    "docker:img@sha256:0123", "--network", "none",
                                                    "--", "srv"}));
}

// A sandboxed server's grants: its network the declared one with their hosts, and their values on
// a descriptor, never on its command line or in its environment.
TEST(McpdConfig, ASandboxedServersGrantsGoOnADescriptor) {
    Environment env;
    FakeSandbox sandbox(env, "/nonexistent/home");
    const std::string& fake = sandbox.fake;
    env.set("API_TOKEN", "tok-the-secret-value");
    ServerConfig c;
    c.command = {"srv"};
    c.sandbox = "bwrap";
    auto g = make_grant("api", c, "https://API.example.org/v1", "API_TOKEN", "Authorization",
                        "Bearer");
    ASSERT_TRUE(g) << g.error().message();
    c.grants.push_back(*g);
    auto launch = launch_spec(c);
    ASSERT_TRUE(launch) << launch.error().message();
    EXPECT_EQ(launch->spec.argv,
              (std::vector<std::string>{fake, "run", "--network", "declared", "--allow-host",
                                        "api.example.org:443", "--grants-fd", "3", "--", "srv"}));
    ASSERT_EQ(launch->spec.extra_fds.size(), 1U);
    EXPECT_EQ(launch->spec.extra_fds[0].child_fd, 3);
    auto lines = read_all(launch->grants.get(), 4096);
    ASSERT_TRUE(lines);
    EXPECT_EQ(*lines, "{\"scheme\":\"https\",\"host\":\"api.example.org\",\"port\":443,\"path\":"
                      "\"/v1\",\"header\":\"Authorization\",\"value\":\"Bearer "
                      "tok-the-secret-value\"}\n");
    for (const std::string& v : launch->spec.env)
        EXPECT_EQ(v.find("tok-the-secret"), std::string::npos) << v;
    // A credential not kept is named, never shown.
    c.grants[0].credential = "OTHER_TOKEN";
    auto missing = launch_spec(c);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().message(),
              "the grant for https://api.example.org/v1 needs the credential OTHER_TOKEN: keep it "
              "with `sion agent credential add OTHER_TOKEN`");
}

// sion's own mail server: its settings looked up at each start (the environment's, else the kept
// credentials'), given in its environment and named with --env, and its URLs' hosts its network.
TEST(McpdConfig, SionsMailServerIsGivenItsSettingsAndItsHosts) {
    Environment env;
    FakeSandbox sandbox(env, "/nonexistent/home");
    const std::string& fake = sandbox.fake;
    for (const char* name : {"MAIL_USERNAME", "MAIL_TOKEN_COMMAND", "SSL_CERT_FILE",
                             "MAIL_SMTP_URL"})
        env.set(name, nullptr);
    env.set("MAIL_ADDRESS", "me@example.org");
    env.set("MAIL_IMAP_URL", "imaps://IMAP.example.org");
    env.set("MAIL_PASSWORD", "pw-the-secret-value");
    ServerConfig c;
    c.command = {"/usr/bin/sion-mail"};
    c.sandbox = "bwrap";
    c.network = "none";
    c.first_party = "mail";
    auto launch = launch_spec(c);
    ASSERT_TRUE(launch) << launch.error().message();
    EXPECT_EQ(launch->spec.argv,
              (std::vector<std::string>{fake, "run", "--network", "declared", "--allow-host",
                                        "imap.example.org:993", "--env", "MAIL_ADDRESS", "--env",
                                        "MAIL_IMAP_URL", "--env", "MAIL_PASSWORD", "--",
                                        "/usr/bin/sion-mail"}));
    auto has = [&](const std::string& v) {
        return std::find(launch->spec.env.begin(), launch->spec.env.end(), v)
               != launch->spec.env.end();
    };
    EXPECT_TRUE(has("MAIL_PASSWORD=pw-the-secret-value"));
    EXPECT_TRUE(has("MAIL_IMAP_URL=imaps://IMAP.example.org"));
    // Both URLs: each host once, the scheme's port when none is written; one that is no mail URL
    // is given to the server (which says what is wrong with it) but opens nothing.
    env.set("MAIL_SMTP_URL", "smtp://imap.example.org:587");
    launch = launch_spec(c);
    ASSERT_TRUE(launch);
    EXPECT_EQ(std::vector<std::string>(launch->spec.argv.begin() + 2,
                                       launch->spec.argv.begin() + 8),
              (std::vector<std::string>{"--network", "declared", "--allow-host",
                                        "imap.example.org:993", "--allow-host",
                                        "imap.example.org:587"}));
    env.set("MAIL_SMTP_URL", "https://imap.example.org/");
    env.set("MAIL_IMAP_URL", "not a url");
    launch = launch_spec(c);
    ASSERT_TRUE(launch);
    EXPECT_EQ(launch->spec.argv[2], "--network");
    EXPECT_EQ(launch->spec.argv[3], "none");
    // The password is a secret of the server: what it says is redacted of it; the address is not.
    EXPECT_EQ(server_secrets("mail", c), std::vector<std::string>{"pw-the-secret-value"});
    // The kind is kept with the config, and only a kind sion has is read back.
    Json j = config_to_json(c);
    EXPECT_EQ(j.get("first_party").dump(), "\"mail\"");
    auto back = config_from_json(j);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->first_party, "mail");
    j.set("first_party", "notes");
    EXPECT_EQ(config_from_json(j).error().message(),
              "member 'first_party' is not documents, mail or calendar");
}

// sion's calendar server with no settings: it starts with no network, and says what to set when
// it is called.
TEST(McpdConfig, SionsCalendarServerWithNoSettingsHasNoNetwork) {
    Environment env;
    FakeSandbox sandbox(env, "/nonexistent/home");
    for (const char* name : {"CALDAV_URL", "CALDAV_USERNAME", "CALDAV_PASSWORD",
                             "CALDAV_TOKEN_COMMAND", "SSL_CERT_FILE"})
        env.set(name, nullptr);
    ServerConfig c;
    c.command = {"/usr/bin/sion-calendar"};
    c.sandbox = "bwrap";
    c.first_party = "calendar";
    auto launch = launch_spec(c);
    ASSERT_TRUE(launch) << launch.error().message();
    EXPECT_EQ(launch->spec.argv, (std::vector<std::string>{sandbox.fake, "run", "--network",
                                                          "none", "--",
                                                          "/usr/bin/sion-calendar"}));
    env.set("CALDAV_URL", "http://127.0.0.3:5232/");
    launch = launch_spec(c);
    ASSERT_TRUE(launch);
    EXPECT_EQ(launch->spec.argv,
              (std::vector<std::string>{sandbox.fake, "run", "--network", "declared",
                                        "--allow-host", "127.0.0.3:5232", "--env", "CALDAV_URL",
                                        "--", "/usr/bin/sion-calendar"}));
}

TEST(McpdConfig, AGrantIsCheckedForItsServer) {
    ServerConfig bwrap;
    bwrap.command = {"srv"};
    bwrap.sandbox = "bwrap";
    auto error_of = [](const ServerConfig& c, std::string_view url, std::string credential = "T",
                       std::string header = "Authorization", std::string scheme = "Bearer") {
        auto g = make_grant("s", c, url, std::move(credential), std::move(header),
                            std::move(scheme));
        return g ? std::string() : g.error().message();
    };
    EXPECT_EQ(error_of(bwrap, "https://a.test/v1"), "");
    EXPECT_EQ(error_of(bwrap, "http://127.0.0.1:8080/v1"), "");
    EXPECT_EQ(error_of(bwrap, "http://a.test/v1"),
              "a credential goes over https only, not to 'http://a.test/v1': plain http is for "
              "this machine's loopback");
    EXPECT_EQ(error_of(bwrap, "https://a.test/v1?x=1"),
              "a grant's URL has no query: give its path alone, as https://a.test/v1");
    EXPECT_EQ(error_of(bwrap, "https://a.test/v1/../admin"),
              "a grant's path has no '.' or '..' segment and nothing encoded that could make one: "
              "'/v1/../admin'");
    EXPECT_EQ(error_of(bwrap, "https://a.test/a b"),
              "a grant's path has no blanks: percent-encode them, as %20, in '/a b'");
    EXPECT_EQ(error_of(bwrap, "ftp://a.test/"), "bad URL 'ftp://a.test/': only http and https are used");
    EXPECT_EQ(error_of(bwrap, "https://a.test/", "lower"),
              "--credential takes a variable's name (uppercase letters, digits and _), not 'lower'");
    EXPECT_EQ(error_of(bwrap, "https://a.test/", "T", "Host"),
              "--header cannot be Host: the client sets it");
    EXPECT_EQ(error_of(bwrap, "https://a.test/", "T", "X Y"),
              "--header takes a header's name, not 'X Y'");
    EXPECT_EQ(error_of(bwrap, "https://a.test/", "T", "X-Key", "two words"),
              "--scheme takes a word such as Bearer, not 'two words'");
    ServerConfig bare;
    bare.command = {"srv"};
    EXPECT_NE(error_of(bare, "https://a.test/").find("runs outside any sandbox"), std::string::npos);
    ServerConfig docker = bwrap;
    docker.sandbox = "docker:img@sha256:0123";
    EXPECT_NE(error_of(docker, "https://a.test/").find("runs in Docker"), std::string::npos);
    ServerConfig host = bwrap;
    host.network = "host";
    EXPECT_NE(error_of(host, "https://a.test/").find("has the host's network"), std::string::npos);
    ServerConfig remote;
    remote.url = "https://mcp.a.test/mcp";
    EXPECT_EQ(error_of(remote, "https://mcp.a.test/"), "");
    EXPECT_EQ(error_of(remote, "https://mcp.a.test/mcp"), "");
    EXPECT_EQ(error_of(remote, "https://mcp.a.test/other"),
              "MCP server s is at https://mcp.a.test/mcp: its grant is for its own host and path, "
              "not https://mcp.a.test/other");
}

// Over HTTP, the client writes the grant's header into the requests to the server's own URL.
TEST(McpdConfig, AGrantOfAServerOverHttpIsAHeaderOfItsTarget) {
    Environment env;
    env.set("SION_HOME", "/nonexistent/home");
    env.set("MCP_KEY", "key-value-0123456789");
    ServerConfig c;
    c.url = "https://mcp.a.test/mcp";
    auto g = make_grant("s", c, "https://mcp.a.test/mcp", "MCP_KEY", "X-Api-Key", "");
    ASSERT_TRUE(g) << g.error().message();
    c.grants.push_back(*g);
    auto t = http_target("s", c);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->headers.get("X-Api-Key").value_or(""), std::string_view("key-value-0123456789"));
    EXPECT_EQ(describe_grant(*g), "https://mcp.a.test/mcp gets X-Api-Key: ${MCP_KEY}");
    // Kept in the shelf's JSON and read back.
    auto back = config_from_json(config_to_json(c).view());
    ASSERT_TRUE(back);
    ASSERT_EQ(back->grants.size(), 1U);
    EXPECT_EQ(back->grants[0].url, "https://mcp.a.test/mcp");
    EXPECT_EQ(back->grants[0].credential, "MCP_KEY");
    EXPECT_EQ(back->grants[0].header, "X-Api-Key");
    EXPECT_EQ(back->grants[0].scheme, "");
}

TEST(McpdConfig, TheClientsOptions) {
    ServerConfig c = full();
    ClientOptions o = client_options("notes", c, "2025-06-18");
    EXPECT_EQ(o.name, "notes");
    EXPECT_EQ(o.try_first, "2025-06-18");
    EXPECT_EQ(o.timeout, std::chrono::seconds(30));
    EXPECT_EQ(o.root, "file:///workspace");
    EXPECT_FALSE(o.can_elicit);
    EXPECT_FALSE(o.can_sample);
    c.sandbox.clear();
    EXPECT_EQ(client_options("notes", c, "").root, "file:///home/me/notes");
    c.dir = "/home/me/my notes%";
    EXPECT_EQ(client_options("notes", c, "").root, "file:///home/me/my%20notes%25");
    c.dir.clear();
    EXPECT_EQ(client_options("notes", c, "").root, "");
}

TEST(McpdConfig, AServerOverHttpKeepsItsUrlHeadersAndTransport) {
    ServerConfig c;
    c.url = "https://mcp.example.com/mcp?tenant=1";
    c.headers = {{"X-Key", "${NOTES_KEY}"}, {"X-Plain", "a b"}};
    c.transport = "sse";
    c.timeout_s = 20;
    Json j = config_to_json(c);
    EXPECT_EQ(j.dump(), R"({"url":"https://mcp.example.com/mcp?tenant=1","headers":[["X-Key","${NOTES_KEY}"],)"
                        R"(["X-Plain","a b"]],"transport":"sse","timeout":20})");
    auto back = config_from_json(j);
    ASSERT_TRUE(back) << back.error().message();
    EXPECT_EQ(back->url, c.url);
    EXPECT_EQ(back->headers, c.headers);
    EXPECT_EQ(back->transport, "sse");
    EXPECT_TRUE(back->command.empty());
    EXPECT_EQ(describe(*back), "https://mcp.example.com/mcp over HTTP+SSE");
    back->transport = "http";
    EXPECT_EQ(describe(*back), "https://mcp.example.com/mcp over HTTP");
    auto bad = config_from_json(parse(R"({"url":"http://h/","headers":[["X"]]})"));
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message(), "member 'headers' holds something not a [name, value]");
}

TEST(McpdConfig, HeadersGivenToAdd) {
    auto h = parse_header("Authorization:  Bearer ${TOKEN} ");
    ASSERT_TRUE(h) << h.error().message();
    EXPECT_EQ(h->first, "Authorization");
    EXPECT_EQ(h->second, "Bearer ${TOKEN}");
    auto refused = [](std::string_view given) {
        auto r = parse_header(given);
        return r ? std::string("(taken)") : r.error().message();
    };
    EXPECT_EQ(refused("no colon"), "--header takes 'Name: value', not 'no colon'");
    EXPECT_EQ(refused("Bad Name: x"), "--header takes 'Name: value', not 'Bad Name: x'");
    EXPECT_EQ(refused("mcp-method: x"),
              "--header cannot set mcp-method: the protocol's headers are the client's");
    EXPECT_EQ(refused("Content-Type: text/plain"), "--header cannot set Content-Type: the client sets it");
    EXPECT_EQ(refused("X-A: a\x01b"), "--header X-A: the value holds a control character");
}

TEST(McpdConfig, VariablesInHeadersAreExpandedWhereTheClientRuns) {
    ServerConfig c;
    c.url = "http://127.0.0.1:1/mcp";
    c.headers = {{"X-Key", "k=${SION_TEST_KEY}; $plain ${"}};
    ASSERT_EQ(::setenv("SION_TEST_KEY", "s3cret", 1), 0);
    auto t = http_target("notes", c);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->url, c.url);
    EXPECT_EQ(t->headers.get("X-Key").value_or(""), "k=s3cret; $plain ${");
    ASSERT_EQ(::unsetenv("SION_TEST_KEY"), 0);
    auto unset = http_target("notes", c);
    ASSERT_FALSE(unset);
    EXPECT_EQ(unset.error().exit(), Exit::config);
    EXPECT_EQ(unset.error().message(),
              "the header X-Key of MCP server notes takes ${SION_TEST_KEY}, which is not set");
}

TEST(McpdConfig, TheSecretsAServerIsGiven) {
    char dir[] = "/tmp/sion-mcpd-secrets.XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    Environment env;
    env.set("SION_HOME", dir);
    env.set("SION_TEST_NOTES_KEY", "nk-value-0123456789");
    env.set("SION_TEST_NOT_SET", nullptr);
    env.set("SION_TEST_HEADER_KEY", "hk-value-0123456789");
    env.set("SION_TEST_CLIENT_SECRET", "cs-value-0123456789");
    // An unsandboxed server: the values of what --env names and is set.
    ServerConfig local;
    local.command = {"server"};
    local.env = {"SION_TEST_NOTES_KEY", "SION_TEST_NOT_SET"};
    EXPECT_EQ(server_secrets("notes", local), std::vector<std::string>{"nk-value-0123456789"});
    // Over HTTP: the headers that take a variable, as sent, and the variables; not a header given
    // as it is. Its client's secret, and what mcp-auth.bin keeps for it.
    ServerConfig http;
    http.url = "http://127.0.0.1:1/mcp";
    http.headers = {{"X-Plain", "not-a-secret-at-all"},
                    {"Authorization", "Key ${SION_TEST_HEADER_KEY}"},
                    {"X-Unset", "${SION_TEST_NOT_SET}"}};
    http.auth.secret_env = "SION_TEST_CLIENT_SECRET";
    EXPECT_EQ(server_secrets("notes", http),
              (std::vector<std::string>{"hk-value-0123456789", "cs-value-0123456789"}));
    auto store = AuthStore::open(dir, true);
    ASSERT_TRUE(store) << store.error().message();
    ServerAuth auth;
    auth.server_url = http.url;
    auth.issuer = "http://127.0.0.1:1";
    auth.access_token = "at-value-0123456789";
    auth.refresh_token = "rt-value-0123456789";
    ASSERT_TRUE(store->put_server("notes", auth));
    ClientRecord client;
    client.issuer = auth.issuer;
    client.client_id = "registered";
    client.client_secret = "rs-value-0123456789";
    ASSERT_TRUE(store->put_client(client));
    http.headers.pop_back(); // now every header can be sent
    EXPECT_EQ(server_secrets("notes", http),
              (std::vector<std::string>{"hk-value-0123456789", "Key hk-value-0123456789",
                                        "cs-value-0123456789", "at-value-0123456789",
                                        "rt-value-0123456789", "rs-value-0123456789"}));
    EXPECT_EQ(server_secrets("other", http),
              (std::vector<std::string>{"hk-value-0123456789", "Key hk-value-0123456789",
                                        "cs-value-0123456789"}));
    fs::remove_all(dir);
}

} // namespace
} // namespace sion::mcpd
