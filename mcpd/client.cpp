// SPDX-License-Identifier: MIT
#include "mcpd/client.hpp"

#include "mcpd/transport_http.hpp"
#include "mcpd/transport_stdio.hpp"

#include "lib/redact.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"
#include "lib/version.hpp"

#include <map>

namespace sion::mcpd {

namespace {

constexpr std::chrono::milliseconds k_probe_timeout{10000};
constexpr std::chrono::milliseconds k_min_timeout{100};
constexpr size_t k_max_listed = 10000;
constexpr int k_max_pages = 1000;

constexpr int k_unsupported_version = -32022;

constexpr std::string_view k_meta_version = "io.modelcontextprotocol/protocolVersion";
constexpr std::string_view k_meta_capabilities = "io.modelcontextprotocol/clientCapabilities";
constexpr std::string_view k_meta_client = "io.modelcontextprotocol/clientInfo";
constexpr std::string_view k_meta_server = "io.modelcontextprotocol/serverInfo";

Json client_info() {
    Json info = Json::object();
    info.set("name", "sion");
    info.set("version", version());
    return info;
}

// `params` as an object (a copy of it, or a new one).
Json object_of(JsonView params) {
    return params.is_object() ? Json::copy_of(params) : Json::object();
}

template <typename T> void close_and_delete(T* handle) {
    uv_close(reinterpret_cast<uv_handle_t*>(handle),
             [](uv_handle_t* h) { delete reinterpret_cast<T*>(h); });
}

} // namespace

struct Client::Impl : std::enable_shared_from_this<Client::Impl> {
    // One request of the client's, across its input_required rounds.
    struct Open {
        std::string method;
        Json params;
        std::function<void(Result<Json>)> done;
        int64_t id = 0; // of the round on the wire
        int rounds = 0;
        std::string progress_token;
        uv_timer_t* timer = nullptr;
        bool finished = false;
        bool version_retried = false; // after a -32022
    };

    // What a request's timer knows of it.
    struct TimerCtx {
        std::weak_ptr<Impl> self;
        int64_t serial;
        std::chrono::milliseconds timeout;
    };

    uv_loop_t* loop = nullptr;
    ClientOptions options;
    ClientEvents events;
    std::shared_ptr<Transport> transport;
    std::map<int64_t, std::shared_ptr<Open>> open; // by a serial of our own
    int64_t next_serial = 1;
    std::string protocol; // once connected
    bool modern = false;
    bool ended = false; // the server went away
    bool closing = false;
    bool probe_timed_out = false;
    std::string offered; // the handshake's version, when a -32022 named those the server speaks
    int asks_this_call = 0; // legacy: what the server asked while requests were open
    int asking = 0;         // questions to a person or the model not answered yet
    Redactor redactor;      // of options.secrets() and the credentials sent
    std::string authorization_sent;       // the Authorization header's value last sent
    std::vector<std::string> credentials; // every credential it has carried, in order

    std::string who() const { return "MCP server " + options.name; }

    // The secrets asked for again, with every credential sent.
    void learn_secrets() {
        std::vector<std::string> secrets;
        if (options.secrets)
            secrets = options.secrets();
        secrets.insert(secrets.end(), credentials.begin(), credentials.end());
        redactor = Redactor(secrets);
        for (std::string& secret : secrets)
            wipe(secret);
    }

    // An Authorization header's value about to be sent ("Bearer TOKEN"): its credential, when new,
    // becomes a secret before the server has it.
    void sending(const std::string& authorization) {
        if (authorization.empty() || authorization == authorization_sent)
            return;
        wipe(authorization_sent);
        authorization_sent = authorization;
        size_t space = authorization.find(' ');
        credentials.push_back(space == std::string::npos ? authorization
                                                         : authorization.substr(space + 1));
        learn_secrets();
    }

    // What the server said, as the client passes it on: redacted of its secrets.
    Result<Json> told(Result<Json> said) const {
        if (redactor.empty())
            return said;
        if (!said)
            return told(said.error());
        return redactor.redact_json(std::move(*said));
    }

    Error told(const Error& said) const {
        return redactor.empty() ? said : Error(said.exit(), redactor.redact(said.message()));
    }

    Json capabilities() const {
        Json caps = Json::object();
        if (options.can_elicit) {
            Json e = Json::object();
            e.set("form", Json::object());
            e.set("url", Json::object());
            caps.set("elicitation", std::move(e));
        }
        if (options.can_sample)
            caps.set("sampling", Json::object());
        if (!options.root.empty())
            caps.set("roots", Json::object());
        return caps;
    }

    Json with_meta(Json params) const {
        if (!modern)
            return params;
        Json meta = params.take("_meta");
        if (!meta.view().is_object())
            meta = Json::object();
        meta.set(k_meta_version, k_modern_protocol);
        meta.set(k_meta_capabilities, capabilities());
        meta.set(k_meta_client, client_info());
        params.set("_meta", std::move(meta));
        return params;
    }

    Json roots() const {
        Json list = Json::array();
        if (!options.root.empty()) {
            Json r = Json::object();
            r.set("uri", std::string_view(options.root));
            r.set("name", "workspace");
            list.push(std::move(r));
        }
        Json result = Json::object();
        result.set("roots", std::move(list));
        return result;
    }

    // The server went away: every open request fails with `why`.
    void end(const Error& why) {
        if (ended)
            return;
        ended = true;
        fail_open(why);
        if (events.ended && !closing)
            events.ended(told(why));
        if (transport)
            transport->close();
    }

    void fail_open(const Error& why) {
        auto waiting = std::move(open);
        open.clear();
        for (auto& [serial, o] : waiting)
            finish(*o, why);
    }

    // -- requests ------------------------------------------------------------------------------

    void finish(Open& o, Result<Json> answer) {
        if (o.finished)
            return;
        o.finished = true;
        if (o.timer) {
            uv_timer_stop(o.timer);
            delete static_cast<TimerCtx*>(o.timer->data);
            close_and_delete(o.timer);
            o.timer = nullptr;
        }
        auto done = std::move(o.done);
        done(told(std::move(answer)));
    }

    void send(const std::shared_ptr<Open>& o, int64_t serial) {
        if (ended || closing || !transport) {
            open.erase(serial);
            finish(*o, Error(Exit::unavailable, who() + " is not running"));
            return;
        }
        std::weak_ptr<Impl> weak = weak_from_this();
        Json params = with_meta(Json::copy_of(o->params));
        o->id = transport->call(o->method, params, [weak, o, serial](Result<rpc::Message> answer) {
            auto self = weak.lock();
            if (!self || o->finished)
                return;
            self->answered(o, serial, std::move(answer));
        });
    }

    void answered(const std::shared_ptr<Open>& o, int64_t serial, Result<rpc::Message> answer) {
        if (!answer) {
            open.erase(serial);
            finish(*o, std::move(answer).error());
            return;
        }
        rpc::Message& m = *answer;
        if (m.kind == rpc::Kind::error && m.error_code == k_unsupported_version) {
            // Retried once when the server names the modern version among those it speaks.
            JsonView supported = m.error_data.get("supported");
            bool ours = false;
            for (JsonView v : supported)
                ours = ours || (v.as_string() && *v.as_string() == k_modern_protocol);
            if (modern && ours && !o->version_retried) {
                o->version_retried = true;
                send(o, serial);
                return;
            }
            note_supported(supported);
        }
        if (m.kind == rpc::Kind::error) {
            open.erase(serial);
            finish(*o, make_error(Exit::data, "%s refused '%s': %s (%d)", who().c_str(),
                                  o->method.c_str(),
                                  std::string(m.error_message).c_str(), m.error_code));
            return;
        }
        if (!m.result.is_object()) {
            open.erase(serial);
            finish(*o, make_error(Exit::data, "%s answered '%s' with %s, not an object",
                                  who().c_str(), o->method.c_str(), m.result.type_name()));
            return;
        }
        auto type = m.result.string_or("resultType", "complete");
        if (type && *type == "input_required") {
            input_round(o, serial, Json::copy_of(m.result));
            return;
        }
        open.erase(serial);
        finish(*o, Json::copy_of(m.result));
    }

    // A modern server asks for input: get each thing it asks for, then make the request again.
    void input_round(const std::shared_ptr<Open>& o, int64_t serial, Json result) {
        if (++o->rounds > k_max_rounds) {
            open.erase(serial);
            finish(*o, make_error(Exit::data, "%s asked for input more than %d times in one call",
                                  who().c_str(), k_max_rounds));
            return;
        }
        JsonView asks = result.get("inputRequests");
        if (asks.exists() && !asks.is_object()) {
            open.erase(serial);
            finish(*o, make_error(Exit::data, "%s asked for input with 'inputRequests' that is %s",
                                  who().c_str(), asks.type_name()));
            return;
        }
        if (asks.size() > static_cast<size_t>(k_max_asks)) {
            open.erase(serial);
            finish(*o, make_error(Exit::data,
                                  "%s asked for %zu things in one round, more than %d",
                                  who().c_str(), asks.size(), k_max_asks));
            return;
        }
        struct Round {
            Json responses = Json::object();
            size_t waiting = 0;
        };
        auto round = std::make_shared<Round>();
        round->waiting = asks.size() + 1; // +1 until every ask is sent
        Json state = Json::copy_of(result.get("requestState"));
        std::weak_ptr<Impl> weak = weak_from_this();
        auto complete = [weak, o, serial, round, state = std::make_shared<Json>(std::move(state))]() {
            if (--round->waiting != 0)
                return;
            auto self = weak.lock();
            if (!self || o->finished)
                return;
            o->params.take("inputResponses");
            o->params.take("requestState");
            o->params.set("inputResponses", std::move(round->responses));
            if (state->exists())
                o->params.set("requestState", Json::copy_of(*state));
            self->send(o, serial);
        };
        for (JsonView ask : asks) {
            std::string key(ask.key());
            auto method = ask.string("method");
            Json params = Json::copy_of(ask.get("params"));
            ask_client(method ? *method : std::string_view(), std::move(params),
                       [round, key, complete](Result<Json> answer) {
                           round->responses.set(key, answer ? std::move(*answer) : decline());
                           complete();
                       });
        }
        complete();
    }

    // `answer`, counted as awaited: while a person or the model is asked, no request of this
    // server times out (that time is theirs, not the server's).
    Answer waited_for(Answer answer) {
        ++asking;
        std::weak_ptr<Impl> weak = weak_from_this();
        return [weak, answer = std::move(answer)](Result<Json> r) {
            if (auto self = weak.lock())
                --self->asking;
            answer(std::move(r));
        };
    }

    static Json decline() {
        Json d = Json::object();
        d.set("action", "decline");
        return d;
    }

    // What the server asks of the client, in either era.
    void ask_client(std::string_view method, Json params, Answer answer) {
        if (method == "roots/list") {
            answer(roots());
            return;
        }
        if (method == "elicitation/create") {
            if (!options.can_elicit || !events.elicit) {
                answer(decline());
                return;
            }
            events.elicit(redactor.redact_json(std::move(params)), waited_for(std::move(answer)));
            return;
        }
        if (method == "sampling/createMessage") {
            if (!options.can_sample || !events.sample) {
                answer(Error(Exit::no_perm,
                             "sampling is not allowed for " + who() + " (`sion agent mcp sampling "
                                 + options.name + "`)"));
                return;
            }
            events.sample(redactor.redact_json(std::move(params)), waited_for(std::move(answer)));
            return;
        }
        answer(make_error(Exit::data, "unknown request '%.*s'", static_cast<int>(method.size()),
                          method.data()));
    }

    void start_request(std::string_view method, Json params,
                       std::function<void(Result<Json>)> done,
                       std::chrono::milliseconds timeout) {
        auto o = std::make_shared<Open>();
        o->method = std::string(method);
        o->params = params.view().is_object() ? std::move(params) : Json::object();
        o->done = std::move(done);
        int64_t serial = next_serial++;
        if (o->method == "tools/call") {
            o->progress_token = format("p%lld", static_cast<long long>(serial));
            Json meta = o->params.take("_meta");
            if (!meta.view().is_object())
                meta = Json::object();
            meta.set("progressToken", std::string_view(o->progress_token));
            o->params.set("_meta", std::move(meta));
        }
        open.emplace(serial, o);
        arm(o, serial, timeout);
        send(o, serial);
    }

    // The request's timer: when it runs out, the request is cancelled and fails as unanswered.
    void arm(const std::shared_ptr<Open>& o, int64_t serial, std::chrono::milliseconds timeout) {
        if (!o->timer) {
            o->timer = new uv_timer_t;
            uv_timer_init(loop, o->timer);
            o->timer->data = nullptr;
        }
        delete static_cast<TimerCtx*>(o->timer->data);
        o->timer->data = new TimerCtx{weak_from_this(), serial, timeout};
        uv_timer_start(
            o->timer,
            [](uv_timer_t* t) {
                auto* ctx = static_cast<TimerCtx*>(t->data);
                if (auto self = ctx->self.lock())
                    self->timed_out(ctx->serial, ctx->timeout);
            },
            static_cast<uint64_t>(timeout.count()), 0);
    }

    void timed_out(int64_t serial, std::chrono::milliseconds timeout) {
        auto it = open.find(serial);
        if (it == open.end())
            return;
        auto o = it->second;
        if (asking > 0) {
            arm(o, serial, timeout);
            return;
        }
        open.erase(it);
        if (o->method == "server/discover")
            probe_timed_out = true;
        if (transport)
            transport->cancel(o->id, "the client stopped waiting");
        finish(*o, make_error(Exit::unavailable, "%s did not answer '%s' within %lld s",
                              who().c_str(), o->method.c_str(),
                              static_cast<long long>(timeout.count() / 1000)));
    }

    void progressed(JsonView params) {
        auto token = params.get("progressToken").as_string();
        if (!token)
            return;
        for (auto& [serial, o] : open)
            if (o->progress_token == *token) {
                arm(o, serial, options.timeout);
                return;
            }
    }

    // -- connecting ----------------------------------------------------------------------------

    // Connecting takes at most the timeout: the probe half of it (10 s at most), the handshake
    // what is left.
    void probe(std::function<void(Result<Connected>)> done) {
        modern = true;
        std::weak_ptr<Impl> weak = weak_from_this();
        uint64_t began = uv_now(loop);
        start_request(
            "server/discover", Json::object(),
            [weak, done, began](Result<Json> answer) mutable {
                auto self = weak.lock();
                if (!self)
                    return;
                if (answer && self->is_modern(*answer)) {
                    self->protocol = std::string(k_modern_protocol);
                    Connected c = self->connected_from(*answer, answer->get("_meta").get(k_meta_server));
                    if (self->transport->kind() != "stdio")
                        self->listen(c.capabilities);
                    done(std::move(c));
                    return;
                }
                if (self->ended || self->closing) {
                    done(answer ? Error(Exit::unavailable, self->who() + " ended")
                                : std::move(answer).error());
                    return;
                }
                // Over HTTP, a server that cannot be reached, or that refuses the client's
                // authorization, is not one of another era: only its answer or its silence is.
                if (!answer && !self->probe_timed_out && self->transport->kind() != "stdio"
                    && (answer.error().exit() == Exit::unavailable
                        || answer.error().exit() == Exit::no_perm)) {
                    done(std::move(answer).error());
                    return;
                }
                auto spent = std::chrono::milliseconds(uv_now(self->loop) - began);
                bool probe_unanswered = !answer && answer.error().exit() == Exit::unavailable;
                auto said = [weak, done, probe_unanswered](Result<Connected> c) {
                    auto now = weak.lock();
                    if (!c && probe_unanswered && now && !now->ended && !now->closing
                        && c.error().exit() == Exit::unavailable) {
                        done(make_error(Exit::unavailable,
                                        "%s answered neither server/discover nor initialize "
                                        "within %lld s",
                                        now->who().c_str(),
                                        static_cast<long long>(now->options.timeout.count() / 1000)));
                        return;
                    }
                    done(std::move(c));
                };
                self->handshake(std::move(said),
                                std::max(self->options.timeout - spent, k_min_timeout));
            },
            std::min(k_probe_timeout, options.timeout / 2));
    }

    // A server that does not speak the version asked for says which it does (-32022): the
    // handshake offers the newest of those this client speaks.
    void note_supported(JsonView supported) {
        for (std::string_view ours : k_legacy_protocols)
            for (JsonView v : supported)
                if (v.as_string() && *v.as_string() == ours && offered.empty())
                    offered = std::string(ours);
    }

    // Over HTTP, a modern server's list_changed comes on a subscriptions/listen stream, opened
    // when the session wants to hear of changes and the server can tell them. It has no timeout;
    // its end is not an error.
    void listen(JsonView capabilities) {
        JsonView changes = capabilities.get("tools").get("listChanged");
        if (!events.tools_changed || !changes.is_bool() || !*changes.as_bool())
            return;
        Json wanted = Json::object();
        wanted.set("toolsListChanged", true);
        Json params = Json::object();
        params.set("notifications", std::move(wanted));
        transport->call("subscriptions/listen", with_meta(std::move(params)).view(),
                        [](const Result<rpc::Message>&) {});
    }

    static bool is_modern(JsonView result) {
        for (JsonView v : result.get("supportedVersions"))
            if (v.as_string() && *v.as_string() == k_modern_protocol)
                return true;
        return false;
    }

    Connected connected_from(JsonView result, JsonView info) {
        Connected c;
        c.protocol = protocol;
        c.server_name = std::string(info.string_or("name", options.name).value_or(options.name));
        c.server_version = std::string(info.string_or("version", "").value_or(""));
        c.capabilities = object_of(result.get("capabilities"));
        c.instructions = std::string(result.string_or("instructions", "").value_or(""));
        c.transport = std::string(transport->kind());
        return c;
    }

    void handshake(std::function<void(Result<Connected>)> done, std::chrono::milliseconds timeout) {
        modern = false;
        Json params = Json::object();
        params.set("protocolVersion",
                   offered.empty() ? std::string(k_legacy_protocols[0]) : offered);
        params.set("capabilities", capabilities());
        params.set("clientInfo", client_info());
        std::weak_ptr<Impl> weak = weak_from_this();
        start_request(
            "initialize", std::move(params),
            [weak, done](Result<Json> answer) {
                auto self = weak.lock();
                if (!self)
                    return;
                if (!answer) {
                    done(std::move(answer).error());
                    return;
                }
                auto version = answer->view().string("protocolVersion");
                bool known = false;
                for (std::string_view v : k_legacy_protocols)
                    known = known || (version && *version == v);
                if (!known) {
                    done(make_error(Exit::data, "%s speaks protocol '%s', which sion does not",
                                    self->who().c_str(),
                                    version ? std::string(*version).c_str() : "(none)"));
                    return;
                }
                self->protocol = std::string(*version);
                if (self->transport)
                    self->transport->notify("notifications/initialized", {});
                done(self->connected_from(*answer, answer->get("serverInfo")));
            },
            timeout);
    }

    void connect(std::function<void(Result<Connected>)> done) {
        bool earlier = !options.try_first.empty() && options.try_first != k_modern_protocol;
        if (earlier)
            handshake(std::move(done), options.timeout);
        else
            probe(std::move(done));
    }

    // -- the connection's handlers ---------------------------------------------------------------

    TransportEvents transport_events() {
        std::weak_ptr<Impl> weak = weak_from_this();
        TransportEvents events_of_wire;
        rpc::UvHandlers& h = events_of_wire.handlers;
        auto asked = [weak](std::string method) {
            return [weak, method](rpc::Message m, rpc::Responder respond) {
                auto self = weak.lock();
                if (!self)
                    return;
                if (method != "roots/list" && ++self->asks_this_call > k_max_asks) {
                    respond(rpc::Reply::fail(rpc::k_invalid_request,
                                             format("more than %d requests in one call", k_max_asks)));
                    return;
                }
                self->ask_client(method, Json::copy_of(m.params),
                                 [respond](Result<Json> answer) {
                                     if (answer)
                                         respond(rpc::Reply::ok(std::move(*answer)));
                                     else
                                         respond(rpc::Reply::fail(rpc::k_internal_error,
                                                                  answer.error().message()));
                                 });
            };
        };
        for (const char* method : {"roots/list", "elicitation/create", "sampling/createMessage"})
            h.requests.emplace(method, asked(method));
        h.requests.emplace("ping", [](rpc::Message, rpc::Responder respond) {
            respond(rpc::Reply::ok(Json::object()));
        });
        h.notifications.emplace("notifications/progress", [weak](rpc::Message m) {
            if (auto self = weak.lock())
                self->progressed(m.params);
        });
        h.notifications.emplace("notifications/tools/list_changed", [weak](rpc::Message) {
            if (auto self = weak.lock(); self && self->events.tools_changed)
                self->events.tools_changed();
        });
        events_of_wire.ended = [weak](const Error& why) {
            if (auto self = weak.lock())
                self->end(why);
        };
        events_of_wire.overflowed = [weak](const Error& why) {
            if (auto self = weak.lock())
                self->fail_open(why);
        };
        return events_of_wire;
    }
};

Result<std::unique_ptr<Client>> Client::start(uv_loop_t* loop, const ChildSpec& spec,
                                              ClientOptions options, ClientEvents events) {
    auto impl = std::make_shared<Impl>();
    impl->loop = loop;
    impl->options = std::move(options);
    impl->events = std::move(events);
    impl->learn_secrets();
    SION_TRY(impl->transport,
             start_stdio(loop, spec, impl->who(), k_max_message, impl->transport_events()));
    return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Result<std::unique_ptr<Client>> Client::reach(uv_loop_t* loop, HttpTarget target,
                                              ClientOptions options, ClientEvents events) {
    auto impl = std::make_shared<Impl>();
    impl->loop = loop;
    impl->options = std::move(options);
    impl->events = std::move(events);
    HttpWire wire;
    wire.target = std::move(target);
    wire.name = impl->options.name;
    wire.who = impl->who();
    wire.first = impl->options.transport;
    impl->learn_secrets();
    wire.authorization = [weak = std::weak_ptr<Impl>(impl),
                          given = impl->events.authorization]() -> std::string {
        std::string value = given ? given() : std::string();
        if (auto self = weak.lock())
            self->sending(value);
        return value;
    };
    wire.refused = impl->events.refused;
    wire.proof = impl->events.proof;
    wire.nonce = impl->events.nonce;
    // The session's GET stream: where a 2025 server sends its own requests and notifications.
    const ClientOptions& o = impl->options;
    wire.listen = static_cast<bool>(impl->events.tools_changed) || o.can_elicit || o.can_sample
        || !o.root.empty();
    SION_TRY(impl->transport, reach_http(loop, std::move(wire), impl->transport_events()));
    return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Client::~Client() {
    close();
}

void Client::connect(std::function<void(Result<Connected>)> done) {
    m_impl->connect(std::move(done));
}

void Client::request(std::string_view method, Json params,
                     std::function<void(Result<Json>)> done) {
    m_impl->asks_this_call = 0;
    m_impl->start_request(method, std::move(params), std::move(done), m_impl->options.timeout);
}

void Client::list_all(std::string_view method, std::string_view key,
                      std::function<void(Result<Json>)> done) {
    struct Walk {
        std::string method, key;
        Json items = Json::array();
        size_t count = 0;
        int pages = 0;
        std::function<void(Result<Json>)> done;
        std::function<void(std::string cursor)> next;
    };
    auto walk = std::make_shared<Walk>();
    walk->method = std::string(method);
    walk->key = std::string(key);
    walk->done = std::move(done);
    std::weak_ptr<Impl> weak = m_impl;
    walk->next = [weak, w = std::weak_ptr<Walk>(walk)](std::string cursor) {
        auto self = weak.lock();
        auto held = w.lock();
        if (!self || !held)
            return;
        Json params = Json::object();
        if (!cursor.empty())
            params.set("cursor", std::string_view(cursor));
        self->start_request(held->method, std::move(params),
                            [walk = held](Result<Json> page) {
                                if (!page) {
                                    walk->done(std::move(page).error());
                                    return;
                                }
                                for (JsonView item : page->get(walk->key)) {
                                    if (++walk->count > k_max_listed)
                                        break;
                                    walk->items.push(Json::copy_of(item));
                                }
                                auto more = page->view().string("nextCursor");
                                if (more && !more->empty() && ++walk->pages < k_max_pages
                                    && walk->count <= k_max_listed) {
                                    walk->next(std::string(*more));
                                    return;
                                }
                                walk->done(std::move(walk->items));
                            },
                            self->options.timeout);
    };
    // Each page's answer holds the walk until the next page is asked for.
    walk->next({});
}

void Client::close() {
    Impl& c = *m_impl;
    if (c.closing)
        return;
    c.closing = true;
    c.fail_open(Error(Exit::unavailable, c.who() + " was closed"));
    if (c.transport)
        c.transport->close();
}

std::vector<std::string> Client::last_words() const {
    if (!m_impl->transport)
        return {};
    std::vector<std::string> lines = m_impl->transport->last_words();
    if (m_impl->redactor.empty())
        return lines;
    // Redacted whole, so that a secret broken across lines is found too.
    std::string text;
    for (const std::string& line : lines)
        text += line + "\n";
    std::string redacted = m_impl->redactor.redact(text);
    lines.clear();
    for (std::string_view left = redacted; !left.empty();) {
        size_t end = left.find('\n');
        std::string_view line = left.substr(0, end);
        if (!line.empty())
            lines.emplace_back(line);
        left.remove_prefix(end == std::string_view::npos ? left.size() : end + 1);
    }
    return lines;
}

bool Client::alive() const {
    return !m_impl->ended && !m_impl->closing;
}

void Client::set_timeout(std::chrono::milliseconds timeout) {
    m_impl->options.timeout = timeout;
}

} // namespace sion::mcpd
