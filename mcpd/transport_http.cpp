// SPDX-License-Identifier: MIT
#include "mcpd/transport_http.hpp"

#include "mcpd/http_headers.hpp"
#include "mcpd/oauth.hpp"

#include "lib/models/sse.hpp"
#include "lib/text.hpp"
#include "lib/uv_http.hpp"

#include <map>
#include <optional>
#include <set>

namespace sion::mcpd {

namespace {

constexpr int64_t k_default_retry_ms = 1000;
constexpr int64_t k_max_retry_ms = 60000;
constexpr int k_max_resumes = 5;
constexpr int k_max_stream_opens = 5;
constexpr std::chrono::milliseconds k_side_timeout{30000}; // notifications, answers, DELETE
constexpr size_t k_max_stream = size_t{1} << 40;           // a GET stream, over its life
constexpr size_t k_max_refusal = size_t{64} << 10;         // the body of a GET's 401 or 403

std::string media_type(const HttpResponse& head) {
    std::string type = ascii_lower(head.headers.get("Content-Type").value_or(""));
    if (size_t semi = type.find(';'); semi != std::string::npos)
        type.resize(semi);
    while (!type.empty() && type.back() == ' ')
        type.pop_back();
    return type;
}

// What one HTTP exchange is reading: a JSON body, or an event stream.
struct Reading {
    int status = 0;
    HttpHeaders headers;
    bool stream = false;
    std::string body;
    bool overflow = false;
    std::optional<models::SseDecoder> events;
    std::string last_id;
    std::optional<int64_t> retry_ms;
    bool resuming = false; // a GET asking again for the stream of a call already taken
};

// ": Not Found" — the message of an error status's body, when it is short: the text of a text/plain
// body or of an HTML page's <body> (its tags left out), or the "message" or "error" of a JSON one,
// on one line, control characters left out; empty when there is none or it is longer than 160
// bytes.
std::string said_words(const Reading& reading) {
    constexpr size_t k_short = 160;
    std::string_view body = reading.body;
    HttpResponse head;
    head.headers = reading.headers;
    std::string type = media_type(head);
    std::string text;
    if (type == "application/json") {
        auto doc = Json::parse(body);
        if (!doc)
            return {};
        JsonView j = doc->view();
        JsonView error = j.get("error");
        JsonView said = j.get("message").is_string() ? j.get("message")
            : error.is_string()                      ? error
                                                     : error.get("message");
        if (!said.is_string())
            return {};
        text = std::string(*said.as_string());
    } else if (type == "text/plain" || type == "text/html") {
        if (type == "text/html") {
            std::string lower = ascii_lower(body);
            if (size_t at = lower.find("<body"); at != std::string::npos)
                body.remove_prefix(at);
        }
        bool tag = false;
        for (char c : body) {
            if (type == "text/html" && (c == '<' || c == '>')) {
                tag = c == '<';
                text += ' ';
            } else if (!tag) {
                text += c;
            }
        }
    } else {
        return {};
    }
    std::string line;
    bool space = false;
    for (unsigned char c : text) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            space = !line.empty();
            continue;
        }
        if (c < 0x20 || c == 0x7f)
            continue;
        if (space)
            line += ' ';
        space = false;
        line += static_cast<char>(c);
    }
    if (line.empty() || line.size() > k_short)
        return {};
    return ": " + line;
}

// One request of the client's.
struct Call {
    int64_t id = 0;
    std::string method;
    Json params;
    std::function<void(Result<rpc::Message>)> done;
    UvHttp::Id transfer = 0;
    bool transferring = false;
    bool auth_retried = false;
    bool nonce_retried = false; // sent again with the DPoP nonce a refusal gave
    bool session_retried = false;
    int resumes = 0;
    std::string last_id;
};

class HttpTransport final : public Transport, public std::enable_shared_from_this<HttpTransport> {
public:
    HttpTransport(uv_loop_t* loop, HttpWire wire, TransportEvents events)
        : m_loop(loop), m_wire(std::move(wire)), m_events(std::move(events)),
          m_sse(m_wire.first == "sse") {}

    Status open() {
        SION_TRY(m_http, UvHttp::make(m_loop));
        m_keep_alive = shared_from_this();
        return {};
    }

    int64_t call(std::string_view method, JsonView params,
                 std::function<void(Result<rpc::Message>)> done) override {
        if (m_closing) {
            done(Error(Exit::unavailable, m_wire.who + " was closed"));
            return 0;
        }
        auto c = std::make_shared<Call>();
        c->id = m_next_id++;
        c->method = std::string(method);
        c->params = Json::copy_of(params);
        c->done = std::move(done);
        if (c->method == "initialize")
            m_initialize = Json::copy_of(params);
        m_calls.emplace(c->id, c);
        post_call(c);
        return c->id;
    }

    void notify(std::string_view method, JsonView params) override {
        std::string body = rpc::encode_notification(method, params);
        if (method == "notifications/initialized" && !m_sse && m_wire.listen)
            post_side(std::move(body), [weak = weak_from_this()] {
                if (auto self = weak.lock())
                    self->open_listening_stream();
            });
        else
            post_side(std::move(body), {});
    }

    void cancel(int64_t id, std::string_view reason) override {
        auto it = m_calls.find(id);
        if (it == m_calls.end())
            return;
        std::shared_ptr<Call> c = it->second;
        m_calls.erase(it);
        if (c->transferring)
            m_http->cancel(c->transfer);
        if (m_session_id.empty() && !m_sse)
            return; // stateless: ending the POST is the cancellation
        Json params = Json::object();
        params.set("requestId", id);
        params.set("reason", reason);
        post_side(rpc::encode_notification("notifications/cancelled", params), {});
    }

    void close() override {
        if (m_closing)
            return;
        m_closing = true;
        for (auto& [id, c] : m_calls)
            if (c->transferring)
                m_http->cancel(c->transfer);
        m_calls.clear();
        for (UvHttp::Id t : m_side)
            m_http->cancel(t);
        m_side.clear();
        if (m_stream)
            m_http->cancel(*m_stream);
        m_stream.reset();
        for (uv_timer_t* t : m_timers)
            close_timer(t);
        m_timers.clear();
        if (m_session_id.empty()) {
            finish_close();
            return;
        }
        HttpRequest del = request("DELETE", m_wire.target.url);
        del.timeout = k_side_timeout;
        m_http->start(std::move(del), [weak = weak_from_this()](Result<HttpResponse>) {
            if (auto self = weak.lock())
                self->finish_close();
        });
    }

    std::string_view kind() const override { return m_sse ? "sse" : "http"; }

private:
    void finish_close() {
        if (m_http)
            m_http->close();
        auto closed = std::move(m_events.closed);
        auto keep = std::move(m_keep_alive);
        if (closed)
            closed();
    }

    // -- requests ------------------------------------------------------------------------------

    HttpRequest request(std::string method, std::string url) {
        HttpRequest r;
        r.method = std::move(method);
        r.url = std::move(url);
        r.headers = m_wire.target.headers;
        r.timeout = std::chrono::milliseconds(0); // the client's timers decide
        r.max_response_size = m_wire.max_message;
        if (!m_session_id.empty())
            r.headers.add("Mcp-Session-Id", m_session_id);
        if (!m_protocol.empty() && !m_sse)
            r.headers.add("MCP-Protocol-Version", m_protocol);
        if (m_wire.authorization)
            if (std::string value = m_wire.authorization(); !value.empty()) {
                r.headers.add("Authorization", std::move(value));
                if (m_wire.proof)
                    if (std::string proof = m_wire.proof(r.method, r.url); !proof.empty())
                        r.headers.add("DPoP", std::move(proof));
            }
        return r;
    }

    // Where POSTs go.
    std::string post_url() const { return m_sse ? m_endpoint : m_wire.target.url; }

    HttpRequest post_request(const Call& c) {
        HttpRequest r = request("POST", post_url());
        r.headers.add("Content-Type", "application/json");
        r.headers.add("Accept", "application/json, text/event-stream");
        JsonView version = c.params.get("_meta").get("io.modelcontextprotocol/protocolVersion");
        if (auto v = version.as_string(); version.is_string() && v) {
            if (m_protocol.empty())
                r.headers.add("MCP-Protocol-Version", std::string(*v));
            auto marks = m_marks.find(std::string(c.params.get("name").as_string().value_or("")));
            add_mirror_headers(r.headers, c.method, c.params,
                               marks == m_marks.end() || c.method != "tools/call"
                                   ? std::vector<HeaderMark>{}
                                   : marks->second);
        }
        std::string body = rpc::encode_request(c.id, c.method, c.params);
        body.pop_back(); // its line end
        r.body = std::move(body);
        return r;
    }

    void post_call(const std::shared_ptr<Call>& c) {
        if (m_sse && m_endpoint.empty()) {
            m_waiting_endpoint.push_back(c->id);
            open_sse_stream();
            return;
        }
        exchange(c, post_request(*c));
    }

    // One HTTP exchange on behalf of call `c`: a POST of it, or a GET that resumes its stream.
    void exchange(const std::shared_ptr<Call>& c, HttpRequest r, bool resuming = false) {
        auto reading = std::make_shared<Reading>();
        reading->resuming = resuming;
        std::weak_ptr<HttpTransport> weak = weak_from_this();
        std::weak_ptr<Call> wc = c;
        size_t max = m_wire.max_message;
        r.on_headers = [weak, wc, reading, max](const HttpResponse& head) {
            reading->status = head.status;
            reading->headers = head.headers;
            reading->stream = head.status / 100 == 2 && media_type(head) == "text/event-stream";
            if (reading->stream)
                reading->events.emplace(max);
            // The session is the initialize answer's, whether it comes as JSON or as events.
            auto self = weak.lock();
            auto call = wc.lock();
            if (self && call && call->method == "initialize" && head.status / 100 == 2)
                if (auto sid = head.headers.get("Mcp-Session-Id"))
                    self->m_session_id = std::string(*sid);
            return true;
        };
        r.on_body = [weak, wc, reading, max](std::string_view chunk) {
            // Held here: what the server sent may end this transfer, and its callbacks with it.
            auto self = weak.lock();
            auto held = reading;
            auto call = wc.lock();
            if (!self)
                return false;
            if (!held->stream) {
                if (held->body.size() + chunk.size() > max) {
                    held->overflow = true;
                    return false;
                }
                held->body.append(chunk);
                return true;
            }
            if (!held->events->feed(chunk)) {
                held->overflow = true;
                return false;
            }
            self->drain(*held, call);
            return true;
        };
        c->transferring = true;
        c->transfer = m_http->start(std::move(r), [weak, wc, reading](Result<HttpResponse> res) {
            auto self = weak.lock();
            auto call = wc.lock();
            if (!self || !call)
                return;
            call->transferring = false;
            self->exchanged(call, *reading, std::move(res));
        });
    }

    // The events that have arrived on a stream; `c` is the call whose stream it is, if any.
    void drain(Reading& reading, const std::shared_ptr<Call>& c) {
        while (auto event = reading.events->next()) {
            if (!event->id.empty()) {
                reading.last_id = event->id;
                if (c)
                    c->last_id = event->id;
            }
            if (event->type == "endpoint") {
                endpoint(event->data);
                continue;
            }
            if (event->type != "message" || event->data.empty())
                continue; // a priming event, or one this client does not know
            dispatch(event->data);
        }
        reading.retry_ms = reading.events->retry_ms();
    }

    // A JSON-RPC message from the server, on whatever channel it came.
    void dispatch(std::string_view text) {
        rpc::Decoded decoded = rpc::decode(text);
        if (!decoded.message)
            return;
        rpc::Message m = std::move(*decoded.message);
        switch (m.kind) {
        case rpc::Kind::response:
        case rpc::Kind::error: {
            auto id = m.id.as_int();
            if (!m.id.is_number() || !id)
                return;
            deliver(*id, std::move(m), true);
            return;
        }
        case rpc::Kind::request:
            asked(std::move(m));
            return;
        case rpc::Kind::notification:
            if (auto h = m_events.handlers.notifications.find(m.method);
                h != m_events.handlers.notifications.end())
                h->second(std::move(m));
            return;
        }
    }

    // The answer to call `id`, as an event of a stream or as an HTTP response's body.
    void deliver(int64_t id, rpc::Message m, bool on_stream) {
        auto it = m_calls.find(id);
        if (it == m_calls.end())
            return;
        std::shared_ptr<Call> c = it->second;
        m_calls.erase(it);
        if (c->transferring && on_stream) {
            m_http->cancel(c->transfer); // the answer is in: the rest of its stream is not wanted
            c->transferring = false;
        }
        if (m.kind == rpc::Kind::response) {
            if (c->method == "initialize")
                m_protocol = std::string(m.result.string_or("protocolVersion", "").value_or(""));
            if (c->method == "tools/list")
                learn_marks(m.result.get("tools"));
        }
        c->done(std::move(m));
    }

    void learn_marks(JsonView tools) {
        for (JsonView t : tools) {
            auto name = t.string("name");
            auto marks = header_marks(t.get("inputSchema"));
            if (name && marks)
                m_marks[std::string(*name)] = std::move(*marks);
        }
    }

    void fail(std::shared_ptr<Call> c, Error why) { // by value: it may be the map's own
        auto it = m_calls.find(c->id);
        if (it == m_calls.end() || it->second != c)
            return;
        m_calls.erase(it);
        if (c->transferring)
            m_http->cancel(c->transfer);
        c->transferring = false;
        c->done(std::move(why));
    }

    std::string where() const { return redact_url(m_wire.target.url); }

    // An exchange for call `c` has ended.
    void exchanged(const std::shared_ptr<Call>& c, Reading& reading, Result<HttpResponse> res) {
        if (!m_calls.contains(c->id) || m_closing)
            return; // answered on its stream, or cancelled
        if (reading.overflow) {
            fail(c, make_error(Exit::unavailable, "%s sent an answer to '%s' over the %zu MiB limit",
                               m_wire.who.c_str(), c->method.c_str(), m_wire.max_message >> 20));
            return;
        }
        if (!res) {
            if (reading.stream && resume(c, reading))
                return;
            fail(c, Error(Exit::unavailable, m_wire.who + " did not answer '" + c->method
                                                 + "': " + res.error().message()));
            return;
        }
        int status = res->status;
        if (status / 100 == 2 && reading.stream) {
            if (resume(c, reading))
                return;
            fail(c, Error(Exit::unavailable, m_wire.who + " ended its stream before answering '"
                                                 + c->method + "' (" + where() + ")"));
            return;
        }
        if (reading.resuming && status / 100 != 2) {
            refused_resumption(c, status, *res);
            return;
        }
        if (status / 100 == 3) {
            std::string to = url_origin(resolve_url(m_wire.target.url,
                                                    res->headers.get("Location").value_or("")));
            fail(c, make_error(Exit::data, "%s at %s redirects to %s, and redirects are not followed",
                               m_wire.who.c_str(), where().c_str(),
                               to.empty() ? "an address that is not http" : to.c_str()));
            return;
        }
        if (refusal(status, res->headers)) {
            answer_refusal(c, status, res->headers, post_url(), [this, c] { post_call(c); });
            return;
        }
        if (status == 404 && !m_session_id.empty() && !c->session_retried
            && c->method != "initialize") {
            c->session_retried = true;
            reopen_session(c);
            return;
        }
        if (status / 100 == 4 && status != 401 && status != 403 && c->method == "initialize"
            && !m_sse && m_session_id.empty()) {
            // Not Streamable HTTP: the HTTP+SSE transport of 2024-11-05, perhaps.
            m_sse = true;
            post_call(c);
            return;
        }
        answered_by_body(c, status, reading, *res);
    }

    // Call `c`'s request to `url` was refused (refusal()): made again by `again` once with the
    // DPoP nonce the refusal asks for, or once the authorization hooks give a fresh token; failed
    // otherwise.
    void answer_refusal(const std::shared_ptr<Call>& c, int status, const HttpHeaders& headers,
                        const std::string& url, std::function<void()> again) {
        if (!c->nonce_retried && takes_nonce(status, headers, url)) {
            c->nonce_retried = true;
            again();
            return;
        }
        authorize(status, headers, c->auth_retried,
                  [weak = weak_from_this(), c, again = std::move(again)](Result<bool> fresh) {
                      auto self = weak.lock();
                      if (!self || !self->m_calls.contains(c->id))
                          return;
                      if (!fresh) {
                          self->fail(c, std::move(fresh).error());
                          return;
                      }
                      c->auth_retried = true;
                      again();
                  });
    }

    // The GET resuming a call's stream was refused. The server took the call, which may have
    // acted: it is never sent again. Only its stream is asked for again, once with the DPoP nonce
    // or the token the refusal asks for; anything else leaves the call without an answer.
    void refused_resumption(const std::shared_ptr<Call>& c, int status, const HttpResponse& res) {
        if (refusal(status, res.headers)) {
            answer_refusal(c, status, res.headers, m_wire.target.url,
                           [this, c] { exchange(c, resume_request(*c), true); });
            return;
        }
        fail(c, make_error(Exit::unavailable,
                           "%s refused to resume the stream of '%s' (HTTP %d, %s): the call was "
                           "taken, and may have acted",
                           m_wire.who.c_str(), c->method.c_str(), status, where().c_str()));
    }

    // A body that should be the call's answer.
    void answered_by_body(const std::shared_ptr<Call>& c, int status, const Reading& reading,
                          const HttpResponse& res) {
        if (m_sse && status / 100 == 2)
            return; // accepted: the answer comes on the stream
        std::string type = media_type(res);
        rpc::Decoded decoded = rpc::decode(reading.body);
        bool json = type == "application/json" || type.empty();
        if (json && decoded.message
            && (decoded.message->kind == rpc::Kind::response
                || decoded.message->kind == rpc::Kind::error)) {
            rpc::Message m = std::move(*decoded.message);
            bool ours = m.id.as_int() && *m.id.as_int() == c->id;
            if (m.kind == rpc::Kind::error && (ours || m.id.is_null() || !m.id.exists())) {
                deliver(c->id, std::move(m), false);
                return;
            }
            if (ours && status / 100 == 2) {
                deliver(c->id, std::move(m), false);
                return;
            }
        }
        std::string what = status / 100 == 2
            ? format("with %s, not a JSON-RPC answer",
                     reading.body.empty() ? "an empty body"
                     : type.empty()       ? "a body of no type"
                                          : type.c_str())
            : format("with HTTP %d", status);
        fail(c, make_error(Exit::data, "%s answered '%s' %s (%s)%s", m_wire.who.c_str(),
                           c->method.c_str(), what.c_str(), where().c_str(),
                           status / 100 == 2 ? "" : said_words(reading).c_str()));
    }

    static bool refusal(int status, const HttpHeaders& headers) {
        if (status == 401)
            return true;
        return status == 403
            && headers.get("WWW-Authenticate").value_or("").find("insufficient_scope")
            != std::string_view::npos;
    }

    // RFC 9449 section 9: a 401 asking for a DPoP nonce gives one, kept for the next proofs to
    // `url`'s origin.
    bool takes_nonce(int status, const HttpHeaders& headers, const std::string& url) {
        auto nonce = headers.get("DPoP-Nonce");
        if (status != 401 || !m_wire.nonce || !nonce)
            return false;
        std::string_view challenge = headers.get("WWW-Authenticate").value_or("");
        return oauth::parse_challenge(challenge).error == "use_dpop_nonce"
            && m_wire.nonce(url, std::string(*nonce));
    }

    // The server refused the client's authorization: the hook may renew it (then `then(true)`).
    void authorize(int status, const HttpHeaders& headers, bool retried,
                   std::function<void(Result<bool>)> then) {
        std::string challenge(headers.get("WWW-Authenticate").value_or(""));
        Error no(Exit::no_perm,
                 oauth::needs_login(m_wire.name, status,
                                    status == 403 ? oauth::parse_challenge(challenge).scope : ""));
        if (retried || !m_wire.refused) {
            then(no);
            return;
        }
        auto once = std::make_shared<bool>(false);
        m_wire.refused(status, std::move(challenge),
                       [then, no, once](bool again) {
                           if (std::exchange(*once, true))
                               return;
                           if (again)
                               then(true);
                           else
                               then(no);
                       });
    }

    // -- streams -------------------------------------------------------------------------------

    // A call's stream ended before its answer: a GET with Last-Event-ID resumes it, after the
    // delay the stream asked for.
    bool resume(const std::shared_ptr<Call>& c, const Reading& reading) {
        if (c->last_id.empty() || m_sse || ++c->resumes > k_max_resumes)
            return false;
        int64_t delay = std::min(reading.retry_ms.value_or(k_default_retry_ms), k_max_retry_ms);
        // A new request: the server may ask for a new nonce.
        c->nonce_retried = false;
        later(delay, [weak = weak_from_this(), c] {
            auto self = weak.lock();
            if (!self || !self->m_calls.contains(c->id))
                return;
            self->exchange(c, self->resume_request(*c), true);
        });
        return true;
    }

    HttpRequest resume_request(const Call& c) {
        HttpRequest r = request("GET", m_wire.target.url);
        r.headers.add("Accept", "text/event-stream");
        r.headers.add("Last-Event-ID", c.last_id);
        return r;
    }

    struct Later {
        std::weak_ptr<HttpTransport> self;
        std::function<void()> fn;
    };

    static void close_timer(uv_timer_t* t) {
        uv_timer_stop(t);
        delete static_cast<Later*>(t->data);
        uv_close(reinterpret_cast<uv_handle_t*>(t),
                 [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    }

    // Runs `fn` after `ms`, unless closed first.
    void later(int64_t ms, std::function<void()> fn) {
        auto* t = new uv_timer_t;
        uv_timer_init(m_loop, t);
        t->data = new Later{weak_from_this(), std::move(fn)};
        m_timers.insert(t);
        uv_timer_start(
            t,
            [](uv_timer_t* h) {
                std::function<void()> run = std::move(static_cast<Later*>(h->data)->fn);
                if (auto self = static_cast<Later*>(h->data)->self.lock())
                    self->m_timers.erase(h);
                close_timer(h);
                run();
            },
            static_cast<uint64_t>(ms), 0);
    }

    // A GET stream of the server's own: the session's (for its requests and notifications), or
    // the whole connection, for HTTP+SSE.
    void open_stream(bool legacy) {
        if (m_stream || m_closing)
            return;
        HttpRequest r = request("GET", m_wire.target.url);
        r.headers.add("Accept", "text/event-stream");
        if (!m_stream_last_id.empty())
            r.headers.add("Last-Event-ID", m_stream_last_id);
        r.max_response_size = k_max_stream;
        auto reading = std::make_shared<Reading>();
        std::weak_ptr<HttpTransport> weak = weak_from_this();
        size_t max = m_wire.max_message;
        r.on_headers = [reading, max](const HttpResponse& head) {
            reading->status = head.status;
            reading->headers = head.headers;
            reading->stream = head.status / 100 == 2 && media_type(head) == "text/event-stream";
            if (reading->stream)
                reading->events.emplace(max);
            // Anything but a stream is read (64 KiB at most): a refusal for its challenge, an
            // error status for its message.
            return true;
        };
        r.on_body = [weak, reading](std::string_view chunk) {
            auto self = weak.lock();
            auto held = reading; // the stream's events may end it, and this callback with it
            if (!held->stream) {
                held->body.append(chunk);
                return held->body.size() <= k_max_refusal;
            }
            if (!self || !held->events->feed(chunk))
                return false;
            self->drain(*held, nullptr);
            if (!held->last_id.empty())
                self->m_stream_last_id = held->last_id;
            return true;
        };
        ++m_stream_opens;
        m_stream = m_http->start(std::move(r), [weak, reading, legacy](Result<HttpResponse> res) {
            if (auto self = weak.lock())
                self->stream_ended(*reading, std::move(res), legacy);
        });
    }

    void open_sse_stream() { open_stream(true); }

    void open_listening_stream() {
        if (!m_session_id.empty())
            open_stream(false);
    }

    void stream_ended(const Reading& reading, Result<HttpResponse> res, bool legacy) {
        m_stream.reset();
        if (m_closing)
            return;
        // A stream refused for want of a DPoP nonce is asked for again with it, once; a stream
        // that opened may be refused so again later.
        if (reading.stream)
            m_stream_nonce_retried = false;
        else if (res && !m_stream_nonce_retried
                 && takes_nonce(res->status, res->headers, m_wire.target.url)) {
            m_stream_nonce_retried = true;
            open_stream(legacy);
            return;
        }
        if (!legacy) {
            // 405: the server has no stream to offer; otherwise it is opened again, a few times.
            if (reading.stream && m_stream_opens < k_max_stream_opens)
                later(std::min(reading.retry_ms.value_or(k_default_retry_ms), k_max_retry_ms),
                      [weak = weak_from_this()] {
                          if (auto self = weak.lock())
                              self->open_listening_stream();
                      });
            return;
        }
        if (!reading.stream && res && refusal(res->status, res->headers)) {
            authorize(res->status, res->headers, m_stream_auth_retried,
                      [weak = weak_from_this()](Result<bool> again) {
                          auto self = weak.lock();
                          if (!self)
                              return;
                          if (!again) {
                              self->fail_waiting(std::move(again).error());
                              return;
                          }
                          self->m_stream_auth_retried = true;
                          self->open_sse_stream();
                      });
            return;
        }
        // An answer that is not a stream is named by its status, and its message when it is
        // short, even when its body was too long to read whole.
        int status = res ? res->status : reading.status;
        Error why = !reading.stream && status != 0
            ? make_error(Exit::data, "%s answered neither a POST nor the GET of an event stream "
                                     "(HTTP %d, %s)%s",
                         m_wire.who.c_str(), status, where().c_str(),
                         said_words(reading).c_str())
            : !res ? Error(Exit::unavailable, m_wire.who + " lost its event stream: "
                                                  + res.error().message())
                   : Error(Exit::unavailable, m_wire.who + " closed its event stream");
        if (m_endpoint.empty()) {
            fail_waiting(std::move(why));
            return;
        }
        if (m_events.ended)
            m_events.ended(why);
    }

    // The endpoint event of HTTP+SSE: where to POST, on the stream's own origin only.
    void endpoint(std::string_view data) {
        std::string url = resolve_url(m_wire.target.url, data);
        std::string origin = url_origin(url);
        if (origin.empty() || origin != url_origin(m_wire.target.url)) {
            Error why = make_error(
                Exit::data, "%s named an endpoint at %s, another origin than its own (%s): refused",
                m_wire.who.c_str(), origin.empty() ? "an address that is not http" : origin.c_str(),
                url_origin(m_wire.target.url).c_str());
            if (m_stream)
                m_http->cancel(*m_stream);
            m_stream.reset();
            fail_waiting(std::move(why));
            return;
        }
        m_endpoint = std::move(url);
        auto waiting = std::move(m_waiting_endpoint);
        m_waiting_endpoint.clear();
        for (int64_t id : waiting)
            if (auto it = m_calls.find(id); it != m_calls.end())
                exchange(it->second, post_request(*it->second));
        auto notes = std::move(m_waiting_side);
        m_waiting_side.clear();
        for (auto& [body, then] : notes)
            post_side(std::move(body), std::move(then));
    }

    void fail_waiting(Error why) {
        auto waiting = std::move(m_waiting_endpoint);
        m_waiting_endpoint.clear();
        for (int64_t id : waiting)
            if (auto it = m_calls.find(id); it != m_calls.end())
                fail(it->second, why);
    }

    // -- sessions ------------------------------------------------------------------------------

    // The server forgot the session: a new one (initialize again, as before), then `c` again.
    void reopen_session(const std::shared_ptr<Call>& c) {
        m_reopen_waiting.push_back(c);
        if (m_reopening)
            return;
        m_reopening = true;
        m_session_id.clear();
        if (m_stream)
            m_http->cancel(*m_stream);
        m_stream.reset();
        std::weak_ptr<HttpTransport> weak = weak_from_this();
        call("initialize", m_initialize.view(), [weak](Result<rpc::Message> m) {
            auto self = weak.lock();
            if (!self)
                return;
            self->m_reopening = false;
            auto waiting = std::move(self->m_reopen_waiting);
            self->m_reopen_waiting.clear();
            bool ok = m && m->kind == rpc::Kind::response;
            if (ok)
                self->notify("notifications/initialized", {});
            for (auto& w : waiting) {
                if (!self->m_calls.contains(w->id))
                    continue;
                if (ok)
                    self->post_call(w);
                else
                    self->fail(w, make_error(Exit::unavailable,
                                             "%s forgot its session and did not open another",
                                             self->m_wire.who.c_str()));
            }
        });
    }

    // A message that is answered by no one: a notification, or an answer to the server's request.
    void post_side(std::string body, std::function<void()> then) {
        if (m_closing)
            return;
        if (m_sse && m_endpoint.empty()) {
            m_waiting_side.emplace_back(std::move(body), std::move(then));
            return;
        }
        if (!body.empty() && body.back() == '\n')
            body.pop_back();
        HttpRequest r = request("POST", post_url());
        r.headers.add("Content-Type", "application/json");
        r.headers.add("Accept", "application/json, text/event-stream");
        r.timeout = k_side_timeout;
        r.body = std::move(body);
        auto id = std::make_shared<UvHttp::Id>(0);
        std::weak_ptr<HttpTransport> weak = weak_from_this();
        *id = m_http->start(std::move(r), [weak, id, then](Result<HttpResponse>) {
            auto self = weak.lock();
            if (!self)
                return;
            self->m_side.erase(*id);
            if (then && !self->m_closing)
                then();
        });
        m_side.insert(*id);
    }

    // A request of the server's, on a stream: answered with a POST.
    void asked(rpc::Message m) {
        Json id = Json::copy_of(m.id);
        std::weak_ptr<HttpTransport> weak = weak_from_this();
        rpc::Responder respond = [weak, id = std::make_shared<Json>(std::move(id))](
                                     const rpc::Reply& reply) {
            if (auto self = weak.lock())
                self->post_side(rpc::encode_reply(id->view(), reply), {});
        };
        auto h = m_events.handlers.requests.find(m.method);
        if (h == m_events.handlers.requests.end()) {
            respond(rpc::Reply::fail(rpc::k_method_not_found,
                                     "method not found: " + std::string(m.method)));
            return;
        }
        h->second(std::move(m), std::move(respond));
    }

    uv_loop_t* m_loop;
    HttpWire m_wire;
    TransportEvents m_events;
    bool m_sse;
    std::unique_ptr<UvHttp> m_http;
    std::map<int64_t, std::shared_ptr<Call>> m_calls;
    int64_t m_next_id = 1;
    Json m_initialize = Json::object();
    std::string m_session_id;
    std::string m_protocol; // negotiated by initialize
    std::map<std::string, std::vector<HeaderMark>> m_marks; // by tool
    std::string m_endpoint;                                  // HTTP+SSE
    std::vector<int64_t> m_waiting_endpoint;
    std::vector<std::pair<std::string, std::function<void()>>> m_waiting_side;
    std::optional<UvHttp::Id> m_stream;
    std::string m_stream_last_id;
    int m_stream_opens = 0;
    bool m_stream_auth_retried = false;
    bool m_stream_nonce_retried = false; // the last GET of a stream was sent again with a nonce
    std::set<UvHttp::Id> m_side;
    std::set<uv_timer_t*> m_timers;
    bool m_reopening = false;
    std::vector<std::shared_ptr<Call>> m_reopen_waiting;
    bool m_closing = false;
    std::shared_ptr<HttpTransport> m_keep_alive;
};

} // namespace

std::string url_origin(std::string_view url) {
    size_t colon = url.find("://");
    if (colon == std::string_view::npos)
        return {};
    std::string scheme = ascii_lower(url.substr(0, colon));
    if (scheme != "http" && scheme != "https")
        return {};
    std::string_view rest = url.substr(colon + 3);
    std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
    if (size_t at = authority.rfind('@'); at != std::string_view::npos)
        authority = authority.substr(at + 1);
    if (authority.empty())
        return {};
    std::string host = ascii_lower(authority);
    // The scheme's own port is the same origin as none.
    if (scheme == "http" && host.ends_with(":80"))
        host.resize(host.size() - 3);
    if (scheme == "https" && host.ends_with(":443"))
        host.resize(host.size() - 4);
    return scheme + "://" + host;
}

std::string resolve_url(std::string_view base, std::string_view ref) {
    if (url_origin(ref) != "" || ref.find("://") != std::string_view::npos)
        return std::string(ref);
    size_t colon = base.find("://");
    if (colon == std::string_view::npos)
        return std::string(ref);
    if (ref.starts_with("//"))
        return std::string(base.substr(0, colon + 1)) + std::string(ref);
    size_t path = base.find_first_of("/?#", colon + 3);
    std::string_view root = base.substr(0, path);
    if (ref.starts_with("/"))
        return std::string(root) + std::string(ref);
    std::string_view dir = path == std::string_view::npos ? std::string_view("/")
                                                          : base.substr(path);
    dir = dir.substr(0, dir.find_first_of("?#"));
    dir = dir.substr(0, dir.rfind('/') + 1);
    return std::string(root) + std::string(dir) + std::string(ref);
}

Result<std::shared_ptr<Transport>> reach_http(uv_loop_t* loop, HttpWire wire,
                                              TransportEvents events) {
    if (url_origin(wire.target.url).empty())
        return Error(Exit::usage, "the URL '" + redact_url(wire.target.url)
                                      + "' is not an http or https URL");
    auto t = std::make_shared<HttpTransport>(loop, std::move(wire), std::move(events));
    SION_CHECK(t->open());
    return std::shared_ptr<Transport>(std::move(t));
}

} // namespace sion::mcpd
