// SPDX-License-Identifier: MIT
// The HTTP transport's event streams: a stream's events read, a call's stream resumed with
// Last-Event-ID after its retry delay, the GET stream of a 2025 session or of HTTP+SSE opened (and
// opened again), and the endpoint an HTTP+SSE stream names.
#include "mcpd/http_transport.hpp"

#include <algorithm>

namespace sion::mcpd {

namespace {

constexpr int64_t k_default_retry_ms = 1000;
constexpr int64_t k_max_retry_ms = 60000;
constexpr int k_max_resumes = 5;
constexpr int k_max_stream_opens = 5;
constexpr size_t k_max_stream = size_t{1} << 40;   // a GET stream, over its life
constexpr size_t k_max_refusal = size_t{64} << 10; // the body of a GET's 401 or 403

} // namespace

void HttpTransport::drain(Reading& reading, const std::shared_ptr<Call>& c) {
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

void HttpTransport::refused_resumption(const std::shared_ptr<Call>& c, int status,
                                       const HttpResponse& res) {
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

bool HttpTransport::resume(const std::shared_ptr<Call>& c, const Reading& reading) {
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

HttpRequest HttpTransport::resume_request(const Call& c) {
    HttpRequest r = request("GET", m_wire.target.url);
    r.headers.add("Accept", "text/event-stream");
    r.headers.add("Last-Event-ID", c.last_id);
    return r;
}

void HttpTransport::close_timer(uv_timer_t* t) {
    uv_timer_stop(t);
    delete static_cast<Later*>(t->data);
    uv_close(reinterpret_cast<uv_handle_t*>(t),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
}

void HttpTransport::later(int64_t ms, std::function<void()> fn) {
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

void HttpTransport::open_stream(bool legacy) {
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

void HttpTransport::open_sse_stream() {
    open_stream(true);
}

void HttpTransport::open_listening_stream() {
    if (!m_session_id.empty())
        open_stream(false);
}

void HttpTransport::stream_ended(const Reading& reading, Result<HttpResponse> res, bool legacy) {
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

void HttpTransport::endpoint(std::string_view data) {
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

void HttpTransport::fail_waiting(Error why) {
    auto waiting = std::move(m_waiting_endpoint);
    m_waiting_endpoint.clear();
    for (int64_t id : waiting)
        if (auto it = m_calls.find(id); it != m_calls.end())
            fail(it->second, why);
}

} // namespace sion::mcpd
