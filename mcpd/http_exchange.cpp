// SPDX-License-Identifier: MIT
// One HTTP exchange of the HTTP transport: a call's POST, or the GET resuming its stream, with its
// headers; its answer read as a JSON body or an event stream; and what its status says (a redirect,
// a refusal answered with a DPoP nonce or a renewed token, a forgotten session, a server of
// HTTP+SSE) or its body's words.
#include "mcpd/http_transport.hpp"

#include "mcpd/oauth_discovery.hpp"
#include "mcpd/oauth_login.hpp"

#include "lib/otlp.hpp"
#include "lib/text.hpp"

namespace sion::mcpd {

std::string media_type(const HttpResponse& head) {
    std::string type = ascii_lower(head.headers.get("Content-Type").value_or(""));
    if (size_t semi = type.find(';'); semi != std::string::npos)
        type.resize(semi);
    while (!type.empty() && type.back() == ' ')
        type.pop_back();
    return type;
}

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

HttpRequest HttpTransport::request(std::string method, std::string url) {
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

HttpRequest HttpTransport::post_request(const Call& c) {
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
    // The session's trace context (W3C Trace Context), which the bridge put in _meta.
    if (auto tp = c.params.get("_meta").string("traceparent"))
        if (otlp::parse_traceparent(*tp))
            r.headers.add("traceparent", std::string(*tp));
    std::string body = rpc::encode_request(c.id, c.method, c.params);
    body.pop_back(); // its line end
    r.body = std::move(body);
    return r;
}

void HttpTransport::post_call(const std::shared_ptr<Call>& c) {
    if (m_sse && m_endpoint.empty()) {
        m_waiting_endpoint.push_back(c->id);
        open_sse_stream();
        return;
    }
    exchange(c, post_request(*c));
}

void HttpTransport::exchange(const std::shared_ptr<Call>& c, HttpRequest r, bool resuming) {
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

void HttpTransport::exchanged(const std::shared_ptr<Call>& c, Reading& reading,
                              Result<HttpResponse> res) {
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

void HttpTransport::answer_refusal(const std::shared_ptr<Call>& c, int status,
                                   const HttpHeaders& headers, const std::string& url,
                                   std::function<void()> again) {
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

void HttpTransport::answered_by_body(const std::shared_ptr<Call>& c, int status,
                                     const Reading& reading, const HttpResponse& res) {
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

bool HttpTransport::refusal(int status, const HttpHeaders& headers) {
    if (status == 401)
        return true;
    return status == 403
        && headers.get("WWW-Authenticate").value_or("").find("insufficient_scope")
        != std::string_view::npos;
}

bool HttpTransport::takes_nonce(int status, const HttpHeaders& headers, const std::string& url) {
    auto nonce = headers.get("DPoP-Nonce");
    if (status != 401 || !m_wire.nonce || !nonce)
        return false;
    std::string_view challenge = headers.get("WWW-Authenticate").value_or("");
    return oauth::parse_challenge(challenge).error == "use_dpop_nonce"
        && m_wire.nonce(url, std::string(*nonce));
}

void HttpTransport::authorize(int status, const HttpHeaders& headers, bool retried,
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

} // namespace sion::mcpd
