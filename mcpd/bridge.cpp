// SPDX-License-Identifier: MIT
#include "mcpd/bridge.hpp"

#include "mcpd/client.hpp"
#include "mcpd/config.hpp"
#include "mcpd/first_party.hpp"
#include "mcpd/render.hpp"
#include "mcpd/review.hpp"
#include "mcpd/shelf.hpp"

#include "lib/base64.hpp"
#include "lib/log.hpp"
#include "lib/otlp.hpp"
#include "lib/picture.hpp"
#include "lib/proto/mcp_names.hpp"
#include "lib/rpc/uv_connection.hpp"
#include "lib/text.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

namespace sion::mcpd {

namespace {

using rpc::Message;
using rpc::Reply;
using rpc::Responder;

// A tool the session is offered, and what it stands for.
struct Offered {
    std::string tool; // the server's name for it; "" for the resource tools
    enum class Kind { tool, resources, read_resource } kind = Kind::tool;
    Json spec;   // name, description, inputSchema
    Effect effect = Effect::external;
    bool idempotent = false;
    bool taints = true;
};

struct Server {
    std::string name;
    std::optional<ShelfEntry> entry;
    std::vector<Pin> pins;
    std::unique_ptr<Client> client;
    enum class State { connecting, connected, failed } state = State::connecting;
    std::string message; // failed: why
    Connected connected;
    std::vector<std::string> notices;
    std::map<std::string, Offered, std::less<>> offered; // by the session's name
    std::vector<std::string> order;                      // the session's names, in order
    int samples = 0;                                     // this run's
    std::vector<std::function<void()>> waiting;          // requests until it settles
};

Json object_schema(Json properties, std::initializer_list<std::string_view> required) {
    Json schema = Json::object();
    schema.set("type", "object");
    schema.set("properties", std::move(properties));
    Json req = Json::array();
    for (std::string_view r : required)
        req.push(Json::string(r));
    schema.set("required", std::move(req));
    return schema;
}

Json tool_spec(const std::string& name, const std::string& description, Json schema) {
    Json s = Json::object();
    s.set("name", std::string_view(name));
    s.set("description", std::string_view(description));
    s.set("inputSchema", std::move(schema));
    return s;
}

class Bridge {
public:
    Bridge(std::vector<std::string> names, ServerLoader load, bool ask, std::string sampling_model)
        : m_first(std::move(names)), m_load(std::move(load)), m_ask(ask),
          m_sampling_model(std::move(sampling_model)) {}

    int run() {
        if (int rc = uv_loop_init(&m_loop); rc != 0) {
            log_error("cannot make an event loop: %s", uv_strerror(rc));
            return static_cast<int>(Exit::os);
        }
        int status = serve();
        uv_run(&m_loop, UV_RUN_DEFAULT);
        if (m_up && !m_up->write_status())
            status = static_cast<int>(Exit::io);
        m_servers.clear();
        m_up.reset();
        uv_run(&m_loop, UV_RUN_DEFAULT);
        uv_loop_close(&m_loop);
        return status;
    }

private:
    // A request's responder that counts it while it is open: input that ends waits for it.
    Responder counted(Responder respond) {
        ++m_open_requests;
        return [this, respond = std::move(respond)](const Reply& reply) {
            respond(reply);
            if (--m_open_requests == 0 && m_input_ended)
                close_all();
        };
    }

    int serve() {
        rpc::UvHandlers h;
        h.requests.emplace("mcp/state",
                           [this](Message m, Responder r) { state(m, counted(std::move(r))); });
        h.requests.emplace("tools/call", [this](Message m, Responder r) {
            call(std::move(m), counted(std::move(r)));
        });
        h.requests.emplace("prompts/list", [this](Message m, Responder r) {
            prompts(std::move(m), counted(std::move(r)), false);
        });
        h.requests.emplace("prompts/get", [this](Message m, Responder r) {
            prompts(std::move(m), counted(std::move(r)), true);
        });
        h.requests.emplace("mcp/servers", [this](const Message& m, Responder r) {
            servers(m, counted(std::move(r)));
        });
        h.requests.emplace("mcp/close", [this](const Message&, const Responder& r) {
            r(Reply::ok(Json::object()));
            close_all();
        });
        h.on_end = [this](const Status&) {
            m_input_ended = true;
            if (m_open_requests == 0)
                close_all();
        };
        auto up = rpc::UvConnection::open(&m_loop, STDIN_FILENO, STDOUT_FILENO, std::move(h));
        if (!up) {
            report(up.error());
            return static_cast<int>(up.error().exit());
        }
        m_up = std::move(*up);
        watch_parent();
        add(m_first);
        return 0;
    }

    // Starts the servers `names` that are not running yet, read from the shelf now, each once,
    // in the order given after those there are.
    void add(const std::vector<std::string>& names) {
        std::vector<std::string> fresh;
        for (const std::string& name : names)
            if (!m_servers.contains(name)
                && std::find(fresh.begin(), fresh.end(), name) == fresh.end())
                fresh.push_back(name);
        if (fresh.empty())
            return;
        for (BridgedServer& loaded : m_load(fresh)) {
            m_names.push_back(loaded.name);
            auto s = std::make_unique<Server>();
            s->name = loaded.name;
            s->entry = std::move(loaded.entry);
            s->pins = std::move(loaded.pins);
            Server& server = *s;
            m_servers.emplace(loaded.name, std::move(s));
            if (!server.entry)
                fail(server, loaded.error.empty() ? "it is not on the shelf (`sion agent mcp list`)"
                                                  : loaded.error);
            else
                start(server);
        }
    }

    // The session that started this bridge dies: SIGTERM (PR_SET_PDEATHSIG) ends everything at once.
    void watch_parent() {
        pid_t parent = ::getppid();
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        m_term = new uv_signal_t;
        uv_signal_init(&m_loop, m_term);
        m_term->data = this;
        uv_signal_start(
            m_term, [](uv_signal_t* h, int) { static_cast<Bridge*>(h->data)->close_all(); },
            SIGTERM);
        if (::getppid() != parent)
            close_all(); // it died before the death signal was set
    }

    void start(Server& s) {
        ClientOptions options = client_options(s.name, s.entry->config, s.entry->protocol);
        options.can_elicit = m_ask;
        options.can_sample = s.entry->sampling.has_value();
        ClientEvents events;
        std::string name = s.name;
        events.elicit = [this, name](Json params, Answer answer) {
            ask_up("elicitation/create", name, std::move(params), std::move(answer));
        };
        events.sample = [this, name](Json params, Answer answer) {
            sample(name, std::move(params), std::move(answer));
        };
        events.tools_changed = [this, name] {
            if (Server* now = find(name); now && now->state == Server::State::connected)
                list_tools(*now);
        };
        events.ended = [this, name](const Error& why) {
            // One that was connected ended: the message says how ("MCP server ghost ended
            // (killed by signal 9)"), in the session's list of servers and in the next call.
            if (Server* now = find(name))
                fail_as(*now, why.message(),
                        now->state == Server::State::connected ? "" : "did not answer: ");
        };
        auto client = open_client(&m_loop, s.name, s.entry->config, std::move(options),
                                  std::move(events), nullptr);
        if (!client) {
            fail(s, (s.entry->config.url.empty() ? "cannot start it: " : "cannot reach it: ")
                        + client.error().message());
            return;
        }
        s.client = std::move(*client);
        s.client->connect([this, name](Result<Connected> c) {
            Server* now = find(name);
            if (!now)
                return;
            if (!c) {
                // A server that wants a login is not offered, and the words say how to log in.
                if (c.error().exit() == Exit::no_perm)
                    fail_as(*now, c.error().message());
                else
                    fail(*now, c.error().message());
                return;
            }
            now->connected = std::move(*c);
            list_tools(*now);
        });
    }

    Server* find(std::string_view name) {
        auto it = m_servers.find(name);
        return it == m_servers.end() ? nullptr : it->second.get();
    }

    void list_tools(Server& s) {
        std::string name = s.name;
        s.client->list_all("tools/list", "tools", [this, name](Result<Json> tools) {
            Server* now = find(name);
            if (!now)
                return;
            if (!tools) {
                fail(*now, tools.error().message());
                return;
            }
            offer(*now, *tools);
        });
    }

    // What the server lists against its pins: the tools offered and the notices for the rest.
    void offer(Server& s, JsonView listed) {
        std::vector<ToolDef> defs =
            tool_defs(listed, s.entry->config.effects, s.name, s.entry->config.local);
        s.offered.clear();
        s.order.clear();
        s.notices.clear();
        for (const ToolDef& t : defs)
            if (!t.unusable.empty())
                s.notices.push_back(unusable_notice(s.name, t));
        std::vector<ToolDef> usable;
        for (ToolDef& t : defs)
            if (t.unusable.empty())
                usable.push_back(std::move(t));
        for (const Reviewed& r : compare(usable, s.pins)) {
            if (r.state != PinState::unchanged) {
                if (std::string n = not_offered_notice(s.name, r); !n.empty())
                    s.notices.push_back(std::move(n));
                continue;
            }
            const ToolDef& t = *r.tool;
            Offered o;
            o.tool = t.name;
            o.effect = t.effect;
            o.idempotent = t.idempotent;
            o.taints = taints(t, data_from_outside(s.entry->config.first_party));
            JsonView schema = t.definition.get("inputSchema");
            o.spec = tool_spec(s.name + "_" + t.name, t.description,
                               schema.is_object() ? Json::copy_of(schema)
                                                  : object_schema(Json::object(), {}));
            add_offered(s, std::move(o));
        }
        if (s.connected.capabilities.get("resources").exists()) {
            Offered list;
            list.kind = Offered::Kind::resources;
            list.effect = Effect::read;
            list.idempotent = true;
            list.spec = tool_spec(s.name + "_resources",
                                  "List what MCP server " + s.name
                                      + " offers at addresses: its resources and resource "
                                        "templates. What it returns comes from outside.",
                                  object_schema(Json::object(), {}));
            add_offered(s, std::move(list));
            Offered read;
            read.kind = Offered::Kind::read_resource;
            read.effect = Effect::read;
            read.idempotent = true;
            Json uri = Json::object();
            uri.set("type", "string");
            uri.set("description", "the resource's address, as listed");
            Json props = Json::object();
            props.set("uri", std::move(uri));
            read.spec = tool_spec(s.name + "_read_resource",
                                  "Read a resource of MCP server " + s.name
                                      + " by its address. What it returns comes from outside.",
                                  object_schema(std::move(props), {"uri"}));
            add_offered(s, std::move(read));
        }
        settle(s, Server::State::connected);
    }

    static void add_offered(Server& s, Offered o) {
        std::string name(o.spec.get("name").as_string().value_or(""));
        if (s.offered.contains(name))
            return;
        s.order.push_back(name);
        s.offered.emplace(std::move(name), std::move(o));
    }

    void fail(Server& s, const std::string& why) { fail_as(s, why, "did not answer: "); }

    // The server failed: the session shows "is not offered: ", `head` and `why`.
    void fail_as(Server& s, const std::string& why, const char* head = "") {
        s.state = Server::State::failed;
        s.message = head + one_line(why);
        s.offered.clear();
        s.order.clear();
        // The client's messages name the server already ("MCP server web ended (…)").
        std::string who = "MCP server " + s.name;
        if (why.compare(0, who.size(), who) == 0)
            log_error("%s", one_line(why).c_str());
        else
            log_error("%s: %s", who.c_str(), one_line(why).c_str());
        settle(s, Server::State::failed);
    }

    void settle(Server& s, Server::State state) {
        s.state = state;
        auto waiting = std::move(s.waiting);
        s.waiting.clear();
        for (auto& w : waiting)
            w();
        if (!m_state_waiting.empty() && all_settled()) {
            auto waiting_state = std::move(m_state_waiting);
            m_state_waiting = {};
            for (auto& w : waiting_state)
                w();
        }
    }

    bool all_settled() const {
        for (const auto& [name, s] : m_servers)
            if (s->state == Server::State::connecting)
                return false;
        return true;
    }

    // -- the session's requests ------------------------------------------------------------------

    // mcp/servers {servers}: the session's servers from now on. Those it no longer has end; those
    // it has newly are started, as at the start; its state lists them in the order given.
    void servers(const Message& m, const Responder& respond) {
        auto names = m.params.strings("servers");
        if (!names) {
            respond(
                Reply::fail(rpc::k_invalid_params, "invalid params: " + names.error().message()));
            return;
        }
        for (const std::string& name : *names)
            if (Status checked = proto::check_server_name(name); !checked) {
                respond(Reply::fail(rpc::k_invalid_params,
                                    "invalid params: " + checked.error().message()));
                return;
            }
        for (auto it = m_servers.begin(); it != m_servers.end();) {
            if (std::find(names->begin(), names->end(), it->first) != names->end()) {
                ++it;
                continue;
            }
            Server& gone = *it->second;
            if (gone.client)
                gone.client->close();
            auto waiting = std::move(gone.waiting);
            it = m_servers.erase(it);
            for (auto& w : waiting)
                w(); // a request that waited for it finds it gone
        }
        add(*names);
        m_names.clear();
        for (const std::string& name : *names)
            if (m_servers.contains(name)
                && std::find(m_names.begin(), m_names.end(), name) == m_names.end())
                m_names.push_back(name);
        if (!m_state_waiting.empty() && all_settled()) {
            auto waiting_state = std::move(m_state_waiting);
            m_state_waiting = {};
            for (auto& w : waiting_state)
                w();
        }
        respond(Reply::ok(Json::object()));
    }

    void state(const Message&, const Responder& respond) {
        if (!all_settled()) {
            m_state_waiting.push_back([this, respond] { state(Message{}, respond); });
            return;
        }
        Json servers = Json::array();
        for (const std::string& name : m_names) {
            Server* s = find(name);
            if (!s)
                continue;
            Json j = Json::object();
            j.set("name", std::string_view(s->name));
            bool up = s->state == Server::State::connected;
            j.set("state", up ? "connected" : "failed");
            if (up) {
                j.set("protocol", std::string_view(s->connected.protocol));
                Json info = Json::object();
                info.set("name", std::string_view(s->connected.server_name));
                info.set("version", std::string_view(s->connected.server_version));
                j.set("server", std::move(info));
            } else {
                j.set("message", std::string_view(s->message));
            }
            Json notices = Json::array();
            for (const std::string& n : s->notices)
                notices.push(Json::string(n));
            j.set("notices", std::move(notices));
            Json tools = Json::array();
            for (const std::string& tool : s->order) {
                const Offered& o = s->offered.at(tool);
                Json t = Json::copy_of(o.spec);
                t.set("effect", effect_name(o.effect));
                t.set("idempotent", o.idempotent);
                t.set("taints", o.taints);
                tools.push(std::move(t));
            }
            j.set("tools", std::move(tools));
            servers.push(std::move(j));
        }
        Json result = Json::object();
        result.set("servers", std::move(servers));
        respond(Reply::ok(std::move(result)));
    }

    // The server a session's tool name belongs to: the part before the first '_'.
    Server* server_of_tool(std::string_view tool) {
        size_t cut = tool.find('_');
        return cut == std::string_view::npos ? nullptr : find(tool.substr(0, cut));
    }

    void call(Message m, Responder respond) {
        auto name = m.params.string("name");
        if (!name) {
            respond(Reply::fail(rpc::k_invalid_params, "invalid params: " + name.error().message()));
            return;
        }
        Server* s = server_of_tool(*name);
        if (s && s->state == Server::State::connecting) {
            // Asked again once the server is connected or has failed.
            auto held = std::make_shared<Message>(std::move(m));
            s->waiting.push_back([this, held, respond] { call(std::move(*held), respond); });
            return;
        }
        if (!s || (s->state == Server::State::connected && !s->offered.contains(*name))) {
            respond(Reply::fail(k_no_tool, "there is no tool named " + std::string(*name)));
            return;
        }
        if (s->state != Server::State::connected || !s->client) {
            respond(Reply::fail(k_not_connected,
                                "MCP server " + s->name + " is not connected: " + s->message));
            return;
        }
        const Offered& o = s->offered.find(*name)->second;
        JsonView arguments = m.params.get("arguments");
        Json args = arguments.is_object() ? Json::copy_of(arguments) : Json::object();
        switch (o.kind) {
        case Offered::Kind::tool: {
            Json params = Json::object();
            params.set("name", std::string_view(o.tool));
            params.set("arguments", std::move(args));
            // The session's trace context, for the server's trace to join (over HTTP, the
            // traceparent header too).
            if (auto tp = m.params.string("traceparent"); tp && otlp::parse_traceparent(*tp)) {
                Json meta = Json::object();
                meta.set("traceparent", *tp);
                params.set("_meta", std::move(meta));
            }
            int64_t start = otlp::now_ns() / 1000;
            s->client->request("tools/call", std::move(params), [respond, start](Result<Json> r) {
                if (!r) {
                    respond(answer_failure(r.error()));
                    return;
                }
                Json a = tool_answer(*r);
                a.set("start_us", start);
                a.set("end_us", otlp::now_ns() / 1000);
                respond(Reply::ok(std::move(a)));
            });
            break;
        }
        case Offered::Kind::resources:
            list_resources(*s, respond);
            break;
        case Offered::Kind::read_resource: {
            auto uri = args.view().string("uri");
            if (!uri) {
                respond(Reply::ok(error_answer("give the resource's address as 'uri'")));
                return;
            }
            Json params = Json::object();
            params.set("uri", *uri);
            s->client->request("resources/read", std::move(params), [respond](Result<Json> r) {
                if (!r) {
                    respond(answer_failure(r.error()));
                    return;
                }
                Json a = Json::object();
                a.set("text", std::string_view(render_resource(*r)));
                a.set("isError", false);
                respond(Reply::ok(std::move(a)));
            });
            break;
        }
        }
    }

    // A request that failed: refused (the model is told, as an error result), or unanswered.
    static Reply answer_failure(const Error& e) {
        if (e.exit() == Exit::unavailable)
            return Reply::fail(k_no_answer, e.message());
        return Reply::ok(error_answer(e.message()));
    }

    static Json error_answer(std::string_view text) {
        Json a = Json::object();
        a.set("text", text);
        a.set("isError", true);
        return a;
    }

    static Json tool_answer(JsonView result) {
        Json a = Json::object();
        a.set("text", std::string_view(render_tool_result(result)));
        a.set("isError", result.boolean_or("isError", false).value_or(false));
        // The server's own form too, when it is small enough to pass up the pipe.
        constexpr size_t k_pass_on = size_t{256} << 10;
        JsonView content = result.get("content");
        JsonView structured = result.get("structuredContent");
        if (content.exists() && content.dump().size() <= k_pass_on)
            a.set("content", Json::copy_of(content));
        if (structured.exists() && structured.dump().size() <= k_pass_on)
            a.set("structuredContent", Json::copy_of(structured));
        if (Json images = pictures_of(content); images.view().size() > 0)
            a.set("images", std::move(images));
        return a;
    }

    // The pictures of a result's image content that a model is sent (lib/picture.hpp): known by
    // their bytes, whatever the server calls them; the text names the others.
    static Json pictures_of(JsonView content) {
        Json images = Json::array();
        for (JsonView block : content) {
            if (images.view().size() == k_max_pictures)
                break;
            if (block.string_or("type", "").value_or("") != "image")
                continue;
            auto bytes = base64_decode(block.string_or("data", "").value_or(""));
            if (!bytes)
                continue;
            if (auto picture = make_picture(*bytes, ""))
                images.push(std::move(*picture));
        }
        return images;
    }

    void list_resources(Server& s, const Responder& respond) {
        std::string name = s.name;
        s.client->list_all("resources/list", "resources", [this, name, respond](Result<Json> r) {
            Server* now = find(name);
            if (!r || !now || !now->client) {
                respond(r ? Reply::fail(k_not_connected, "MCP server " + name + " is gone")
                          : answer_failure(r.error()));
                return;
            }
            auto resources = std::make_shared<Json>(std::move(*r));
            now->client->list_all("resources/templates/list", "resourceTemplates",
                                [resources, respond](Result<Json> templates) {
                                    std::string text;
                                    for (JsonView item : resources->view())
                                        text += resource_line(item, "uri") + "\n";
                                    if (templates)
                                        for (JsonView item : templates->view())
                                            text += resource_line(item, "uriTemplate")
                                                + " (template)\n";
                                    if (text.empty())
                                        text = "(no resources)\n";
                                    Json a = Json::object();
                                    a.set("text", std::string_view(text));
                                    a.set("isError", false);
                                    respond(Reply::ok(std::move(a)));
                                });
        });
    }

    static std::string resource_line(JsonView item, std::string_view key) {
        std::string line = one_line(item.string_or(key, "").value_or(""));
        std::string name = one_line(item.string_or("name", "").value_or(""));
        std::string description = one_line(item.string_or("description", "").value_or(""));
        if (!name.empty())
            line += "  " + name;
        if (!description.empty())
            line += ": " + description;
        return line;
    }

    void prompts(Message m, Responder respond, bool get) {
        auto server = m.params.string("server");
        Server* s = server ? find(*server) : nullptr;
        if (s && s->state == Server::State::connecting) {
            auto held = std::make_shared<Message>(std::move(m));
            s->waiting.push_back(
                [this, held, respond, get] { prompts(std::move(*held), respond, get); });
            return;
        }
        if (!s || s->state != Server::State::connected || !s->client) {
            respond(Reply::fail(k_not_connected,
                                server ? "MCP server " + std::string(*server) + " is not connected"
                                       : "invalid params: " + server.error().message()));
            return;
        }
        if (!get) {
            s->client->list_all("prompts/list", "prompts", [respond](Result<Json> r) {
                if (!r) {
                    respond(Reply::fail(k_no_answer, r.error().message()));
                    return;
                }
                Json a = Json::object();
                a.set("prompts", std::move(*r));
                respond(Reply::ok(std::move(a)));
            });
            return;
        }
        Json params = Json::object();
        params.set("name", m.params.string("name").value_or(""));
        JsonView arguments = m.params.get("arguments");
        params.set("arguments", arguments.is_object() ? Json::copy_of(arguments) : Json::object());
        s->client->request("prompts/get", std::move(params), [respond](Result<Json> r) {
            if (!r) {
                respond(Reply::fail(r.error().exit() == Exit::unavailable ? k_no_answer
                                                                          : rpc::k_invalid_params,
                                    r.error().message()));
                return;
            }
            Json a = Json::object();
            a.set("text", std::string_view(render_prompt(*r)));
            respond(Reply::ok(std::move(a)));
        });
    }

    // -- up to the session -----------------------------------------------------------------------

    void ask_up(std::string_view method, const std::string& server, Json params, Answer answer) {
        if (!m_up) {
            answer(Error(Exit::unavailable, "the session is gone"));
            return;
        }
        if (!params.view().is_object())
            params = Json::object();
        params.take("server");
        params.set("server", std::string_view(server));
        m_up->call(method, params, [answer](Result<Message> r) {
            if (!r) {
                answer(std::move(r).error());
                return;
            }
            if (r->kind == rpc::Kind::error) {
                answer(Error(Exit::data, std::string(r->error_message)));
                return;
            }
            answer(Json::copy_of(r->result));
        });
    }

    void sample(const std::string& name, Json params, Answer answer) {
        Server* s = find(name);
        if (!s || !s->entry || !s->entry->sampling) {
            answer(Error(Exit::no_perm, "sampling is not allowed for MCP server " + name));
            return;
        }
        const Sampling& allowed = *s->entry->sampling;
        if (s->samples >= allowed.per_run) {
            answer(make_error(Exit::no_perm, "MCP server %s has had its %d completions of this run",
                              name.c_str(), allowed.per_run));
            return;
        }
        ++s->samples;
        if (!params.view().is_object())
            params = Json::object();
        int64_t asked = params.view().integer_or("maxTokens", allowed.max_tokens)
                            .value_or(allowed.max_tokens);
        params.take("maxTokens");
        params.set("maxTokens", std::min<int64_t>(std::max<int64_t>(asked, 1), allowed.max_tokens));
        params.take("model");
        params.set("model", std::string_view(allowed.model.empty() ? m_sampling_model : allowed.model));
        ask_up("sampling/createMessage", name, std::move(params), std::move(answer));
    }

    void close_all() {
        if (m_closing)
            return;
        m_closing = true;
        for (auto& [name, s] : m_servers)
            if (s->client)
                s->client->close();
        if (m_up)
            m_up->close();
        if (m_term) {
            uv_signal_stop(m_term);
            uv_close(reinterpret_cast<uv_handle_t*>(m_term),
                     [](uv_handle_t* h) { delete reinterpret_cast<uv_signal_t*>(h); });
            m_term = nullptr;
        }
    }

    std::vector<std::string> m_first; // the servers given at the start
    ServerLoader m_load;
    std::vector<std::string> m_names; // as given, each once
    bool m_ask;
    std::string m_sampling_model;
    uv_loop_t m_loop{};
    std::unique_ptr<rpc::UvConnection> m_up;
    std::map<std::string, std::unique_ptr<Server>, std::less<>> m_servers;
    std::vector<std::function<void()>> m_state_waiting;
    bool m_closing = false;
    bool m_input_ended = false;
    int m_open_requests = 0;
    uv_signal_t* m_term = nullptr;
};

} // namespace

std::vector<BridgedServer> load_servers(Db& db, const std::vector<std::string>& names) {
    Shelf shelf(db);
    std::vector<BridgedServer> out;
    for (const std::string& name : names) {
        BridgedServer b;
        b.name = name;
        auto entry = shelf.find(name);
        auto pins = shelf.pins(name);
        if (!entry)
            b.error = entry.error().message();
        else if (!pins)
            b.error = pins.error().message();
        else if (*entry) {
            b.entry = std::move(**entry);
            b.pins = std::move(*pins);
        }
        out.push_back(std::move(b));
    }
    return out;
}

int serve_bridge(std::vector<std::string> names, ServerLoader load, bool ask,
                 std::string sampling_model) {
    Bridge bridge(std::move(names), std::move(load), ask, std::move(sampling_model));
    return bridge.run();
}

} // namespace sion::mcpd
