// SPDX-License-Identifier: MIT
// The client the official MCP conformance suite drives (tests/conformance/README):
//   conformance-driver URL
// with MCP_CONFORMANCE_SCENARIO naming the scenario and, for some, MCP_CONFORMANCE_CONTEXT carrying
// what it hands over (credentials, the calls to make). It is mcpd's client as sion-mcp uses it: it
// connects to the server at URL (mcpd finds the era), logs in when the server refuses it, as a
// person following `sion agent mcp login` would (oauth::login; the consent is headless, as the
// suite's authorization servers approve at once), lists the tools and calls each one mcpd offers,
// then reads the resources and gets the prompts the server has. A question (elicitation) is
// answered as by a person who accepts without typing: the form's defaults (the session engine's forms).
//
// What depends on the scenario is only what a user would configure or do: the context's client
// (--client-id, --client-secret-env, a private key), the identity provider's ID token for
// enterprise-managed authorization, the workload's identity token (auth/wif-jwt-bearer, kept in
// a file as --workload-token-file reads it), the client credentials grant for the
// auth/client-credentials-* scenarios, and the calls where the scenario names them (the context's
// toolCalls; json-schema-2020-12-preservation's echo of the schema it was given).
//
// Each run keeps its logins in a fresh SION_HOME, removed at the end. Exit: 0 when everything
// asked was done; else one line per failure and the first failure's code.

#include "session/elicit.hpp"
#include "lib/fd.hpp"
#include "lib/json.hpp"
#include "lib/log.hpp"
#include "lib/result.hpp"
#include "mcpd/auth_store.hpp"
#include "mcpd/client.hpp"
#include "mcpd/oauth_client.hpp"
#include "mcpd/oauth_consent.hpp"
#include "mcpd/oauth_discovery.hpp"
#include "mcpd/oauth_login.hpp"
#include "mcpd/review.hpp"

#include <fcntl.h>
#include <uv.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace sion;
using namespace sion::mcpd;

constexpr const char* k_server = "conformance";
// The client ID metadata document the suite's basic-cimd scenario expects (it is never fetched).
constexpr const char* k_metadata_url = "https://conformance-test.local/client-metadata.json";

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

Json arguments_for(JsonView schema);

// A value a schema accepts: its default, its first choice, or a plain value of its type.
Json example_of(JsonView schema) {
    if (schema.get("default").exists())
        return Json::copy_of(schema.get("default"));
    if (schema.get("enum").is_array() && schema.get("enum").size() > 0)
        return Json::copy_of(schema.get("enum").at(0));
    std::string type(schema.get("type").as_string().value_or(""));
    if (type == "integer" || type == "number")
        return Json::integer(1);
    if (type == "boolean")
        return Json::boolean(false);
    if (type == "array")
        return Json::array();
    if (type == "object")
        return arguments_for(schema);
    return Json::string("x");
}

// A tool's arguments: a value for each required property of its inputSchema.
Json arguments_for(JsonView schema) {
    Json arguments = Json::object();
    for (JsonView name : schema.get("required")) {
        if (auto n = name.as_string())
            arguments.set(*n, example_of(schema.get("properties").get(*n)));
    }
    return arguments;
}

// An elicitation answered by a person who accepts without typing: the form's defaults.
void accept_defaults(Json params, const Answer& answer) {
    Json result = Json::object();
    auto form = session::parse_form(params.get("requestedSchema"));
    auto content = form ? session::form_answer(*form, {}) : Result<Json>(form.error());
    if (!content) {
        result.set("action", "decline");
    } else {
        result.set("action", "accept");
        result.set("content", std::move(*content));
    }
    answer(std::move(result));
}

// A tools/call's or a prompts/get's params.
Json named(std::string_view name, Json arguments) {
    Json params = Json::object();
    params.set("name", name);
    params.set("arguments", std::move(arguments));
    return params;
}

// Logging in when the server refuses, as the person told how would: three times at most.
struct Login {
    static constexpr int k_max_logins = 3;
    AuthStore store;
    oauth::LoginOptions options;
    oauth::HeadlessConsent consent;
    oauth::Authorizer authorizer;
    int logins = 0;

    Login(AuthStore s, oauth::LoginOptions o)
        : store(std::move(s)), options(std::move(o)), consent(options.settings),
          authorizer(store, k_server, options.server_url, options.settings) {}

    std::string header() {
        auto value = authorizer.header();
        if (!value) {
            report(value.error());
            return {};
        }
        return value->value_or("");
    }

    std::string proof(const std::string& method, const std::string& url) {
        auto value = authorizer.proof(method, url);
        if (!value) {
            report(value.error());
            return {};
        }
        return std::move(*value);
    }

    void refused(int status, const std::string& www_authenticate, const Retry& retry) {
        oauth::LoginOptions again = options;
        again.challenge = oauth::parse_challenge(www_authenticate);
        // A kept authorization is renewed where nobody is needed, as a session renews it; else
        // it says what to log in for.
        auto kept = store.server(k_server);
        if (kept && kept->has_value()) {
            auto renewal = authorizer.renew(status, *again.challenge);
            if (!renewal) {
                report(renewal.error());
                return retry(false);
            }
            if (renewal->retry)
                return retry(true);
            again.scope = renewal->scope;
        }
        if (++logins > k_max_logins)
            return retry(false);
        auto outcome = oauth::login(store, k_server, again, consent);
        if (!outcome) {
            report(outcome.error());
            return retry(false);
        }
        retry(true);
    }
};

// The requests to make once the lists are in, and the first failure met.
struct Work {
    std::unique_ptr<Client> client;
    std::string scenario;
    Json context;
    std::vector<std::pair<std::string, Json>> calls;
    std::optional<Error> failed;
    bool done = false;

    void fail(const Error& error) {
        report(error);
        if (!failed)
            failed = error;
    }

    void finish() {
        done = true;
        client->close();
    }

    void run(size_t next) {
        if (next == calls.size())
            return finish();
        client->request(calls[next].first, Json::copy_of(calls[next].second),
                        [this, next](Result<Json> r) {
                            if (!r)
                                fail(r.error());
                            run(next + 1);
                        });
    }

    // The tool calls: the scenario's own, else every tool offered with arguments its schema takes.
    void plan_tools(JsonView listed) {
        if (context.get("toolCalls").is_array()) {
            for (JsonView call : context.get("toolCalls"))
                calls.emplace_back("tools/call", Json::copy_of(call));
            return;
        }
        std::vector<ToolDef> tools = tool_defs(listed, {}, k_server);
        for (const ToolDef& tool : tools) {
            if (!tool.unusable.empty())
                continue;
            Json arguments = arguments_for(tool.definition.get("inputSchema"));
            if (scenario == "json-schema-2020-12-preservation" && tool.name == "json_schema_echo") {
                for (const ToolDef& focal : tools)
                    if (focal.name == "json_schema_2020_12_tool")
                        arguments.set("schema", Json::copy_of(focal.definition.get("inputSchema")));
            }
            calls.emplace_back("tools/call", named(tool.name, std::move(arguments)));
        }
    }

    // Then each resource read, where the server has resources.
    void plan_reads(const Connected& connected) {
        if (!connected.capabilities.get("resources").exists())
            return plan_prompts(connected);
        client->list_all("resources/list", "resources", [this, &connected](Result<Json> items) {
            if (!items)
                fail(items.error());
            else
                for (JsonView item : items->view()) {
                    Json read = Json::object();
                    read.set("uri", Json::copy_of(item.get("uri")));
                    calls.emplace_back("resources/read", std::move(read));
                }
            plan_prompts(connected);
        });
    }

    // And each prompt got, where it has prompts; then the calls are made.
    void plan_prompts(const Connected& connected) {
        if (!connected.capabilities.get("prompts").exists())
            return run(0);
        client->list_all("prompts/list", "prompts", [this](Result<Json> items) {
            if (!items)
                fail(items.error());
            else
                for (JsonView item : items->view())
                    calls.emplace_back("prompts/get", named(item.string_or("name", "").value_or(""),
                                                            prompt_arguments(item)));
            run(0);
        });
    }

    static Json prompt_arguments(JsonView prompt) {
        Json arguments = Json::object();
        for (JsonView argument : prompt.get("arguments"))
            if (argument.boolean_or("required", false).value_or(false))
                if (auto name = argument.string("name"))
                    arguments.set(*name, "x");
        return arguments;
    }
};

// The work's outcome: its first failure's code, reported already; or an Error before it began.
Result<int> drive(const std::string& url, const std::string& home) {
    std::string scenario = env("MCP_CONFORMANCE_SCENARIO");
    Json context = Json::object();
    if (std::string text = env("MCP_CONFORMANCE_CONTEXT"); !text.empty()) {
        auto parsed = Json::parse(text);
        if (!parsed)
            return Error(parsed.error().exit(),
                         "cannot read MCP_CONFORMANCE_CONTEXT: " + parsed.error().message());
        context = std::move(*parsed);
    }

    oauth::LoginOptions login_options;
    login_options.server_url = url;
    login_options.settings.timeout = std::chrono::seconds(10);
    login_options.client_credentials = scenario.rfind("auth/client-credentials-", 0) == 0;
    oauth::ClientSettings& who = login_options.client;
    who.client_id = context.view().string_or("client_id", "").value_or("");
    who.client_secret = context.view().string_or("client_secret", "").value_or("");
    who.private_key_pem = context.view().string_or("private_key_pem", "").value_or("");
    if (who.client_id.empty())
        who.client_metadata_url = k_metadata_url;
    // A workload's identity token (auth/wif-jwt-bearer), where its platform would keep it.
    if (auto jwt = context.view().string_or("valid_jwt", "").value_or(""); !jwt.empty()) {
        who.workload_token_file = home + "/workload-token";
        Fd file(::open(who.workload_token_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                       0600));
        if (!file)
            return sys_error(Exit::os, errno, "cannot create '%s'",
                             who.workload_token_file.c_str());
        SION_CHECK(write_all(file.get(), std::string(jwt) + "\n"));
    }
    if (auto id_token = context.view().string_or("idp_id_token", "").value_or("");
        !id_token.empty())
        login_options.identity = oauth::IdentityAssertion{
            std::string(context.view().string_or("idp_token_endpoint", "").value_or("")),
            std::string(id_token)};
    SION_TRY(AuthStore store, AuthStore::open(home, true));
    Login login(std::move(store), std::move(login_options));

    uv_loop_t loop;
    if (int rc = uv_loop_init(&loop); rc != 0)
        return Error(Exit::os, std::string("cannot make an event loop: ") + uv_strerror(rc));
    Work work;
    work.scenario = scenario;
    work.context = std::move(context);
    Connected connected;
    {
        ClientOptions options;
        options.name = k_server;
        options.can_elicit = true;
        options.timeout = std::chrono::seconds(10);
        ClientEvents events;
        events.elicit = accept_defaults;
        events.authorization = [&login] { return login.header(); };
        events.proof = [&login](const std::string& method, const std::string& at) {
            return login.proof(method, at);
        };
        events.nonce = [&login](const std::string& at, const std::string& nonce) {
            return login.authorizer.keep_nonce(at, nonce);
        };
        events.refused = [&login](int status, const std::string& www_authenticate,
                                  const Retry& retry) {
            login.refused(status, www_authenticate, retry);
        };
        auto reached = Client::reach(&loop, HttpTarget{url, {}}, options, std::move(events));
        if (!reached) {
            uv_run(&loop, UV_RUN_DEFAULT);
            uv_loop_close(&loop);
            return std::move(reached).error();
        }
        work.client = std::move(*reached);
        work.client->connect([&](Result<Connected> c) {
            if (!c) {
                work.fail(c.error());
                return work.finish();
            }
            connected = std::move(*c);
            work.client->list_all("tools/list", "tools", [&](Result<Json> tools) {
                if (!tools)
                    work.fail(tools.error());
                else
                    work.plan_tools(*tools);
                work.plan_reads(connected);
            });
        });
        while (!work.done && uv_run(&loop, UV_RUN_ONCE) != 0) {
        }
        work.client->close();
        uv_run(&loop, UV_RUN_DEFAULT);
        work.client.reset();
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    if (!work.done && !work.failed)
        work.fail(Error(Exit::software, "the MCP server at '" + url + "' was left unanswered"));
    return work.failed ? static_cast<int>(work.failed->exit()) : 0;
}

} // namespace

int main(int argc, char** argv) {
    sion::set_program_name("conformance-driver");
    sion::guard_standard_fds();
    if (argc < 2) {
        sion::log_error("usage: conformance-driver URL");
        return static_cast<int>(sion::Exit::usage);
    }
    std::string base = env("TMPDIR").empty() ? "/tmp" : env("TMPDIR");
    std::string pattern = base + "/conformance-driver.XXXXXX";
    if (!mkdtemp(pattern.data())) {
        sion::Error error =
            sion::sys_error(sion::Exit::os, errno, "cannot make a home under '%s'", base.c_str());
        sion::report(error);
        return static_cast<int>(error.exit());
    }
    sion::Result<int> status = drive(argv[argc - 1], pattern);
    std::error_code ignored;
    std::filesystem::remove_all(pattern, ignored);
    if (!status) {
        sion::report(status.error());
        return static_cast<int>(status.error().exit());
    }
    return *status;
}
