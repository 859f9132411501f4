// SPDX-License-Identifier: MIT
// The HTTP transport's session and the transport the client holds: its calls, notifications,
// cancellations and close (DELETE of a 2025 session), the server's messages on whatever channel
// they come, and a session the server forgot opened again; reach_http(), url_origin() and
// resolve_url().
#include "mcpd/http_transport.hpp"

#include "lib/text.hpp"

#include <chrono>

namespace sion::mcpd {

namespace {

constexpr std::chrono::milliseconds k_side_timeout{30000}; // notifications, answers, DELETE

} // namespace

Status HttpTransport::open() {
    SION_TRY(m_http, UvHttp::make(m_loop));
    m_keep_alive = shared_from_this();
    return {};
}

int64_t HttpTransport::call(std::string_view method, JsonView params,
                            std::function<void(Result<rpc::Message>)> done) {
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

void HttpTransport::notify(std::string_view method, JsonView params) {
    std::string body = rpc::encode_notification(method, params);
    if (method == "notifications/initialized" && !m_sse && m_wire.listen)
        post_side(std::move(body), [weak = weak_from_this()] {
            if (auto self = weak.lock())
                self->open_listening_stream();
        });
    else
        post_side(std::move(body), {});
}

void HttpTransport::cancel(int64_t id, std::string_view reason) {
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

void HttpTransport::close() {
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

void HttpTransport::finish_close() {
    if (m_http)
        m_http->close();
    auto closed = std::move(m_events.closed);
    auto keep = std::move(m_keep_alive);
    if (closed)
        closed();
}

void HttpTransport::dispatch(std::string_view text) {
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

void HttpTransport::deliver(int64_t id, rpc::Message m, bool on_stream) {
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

void HttpTransport::learn_marks(JsonView tools) {
    for (JsonView t : tools) {
        auto name = t.string("name");
        auto marks = header_marks(t.get("inputSchema"));
        if (name && marks)
            m_marks[std::string(*name)] = std::move(*marks);
    }
}

void HttpTransport::fail(std::shared_ptr<Call> c, Error why) {
    auto it = m_calls.find(c->id);
    if (it == m_calls.end() || it->second != c)
        return;
    m_calls.erase(it);
    if (c->transferring)
        m_http->cancel(c->transfer);
    c->transferring = false;
    c->done(std::move(why));
}

void HttpTransport::reopen_session(const std::shared_ptr<Call>& c) {
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

void HttpTransport::post_side(std::string body, std::function<void()> then) {
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

void HttpTransport::asked(rpc::Message m) {
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
