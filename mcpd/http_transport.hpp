// SPDX-License-Identifier: MIT
// The HTTP transport's class and state, shared by the files that hold it by concern: the session
// and the transport the client holds (transport_http.cpp), one HTTP exchange with its headers,
// status and body (http_exchange.cpp), and the server's event streams and their resumption
// (http_stream.cpp). Internal to them; the contract is mcpd/transport_http.hpp's.
#pragma once

#include "mcpd/http_headers.hpp"
#include "mcpd/transport_http.hpp"

#include "lib/models/sse.hpp"
#include "lib/uv_http.hpp"

#include <uv.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion::mcpd {

// The media type of a response's Content-Type, lowercased, without its parameters.
[[nodiscard]] std::string media_type(const HttpResponse& head);

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
[[nodiscard]] std::string said_words(const Reading& reading);

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

// The transport of one server over HTTP (reach_http()); it keeps itself alive from open() until
// close() has ended.
class HttpTransport final : public Transport, public std::enable_shared_from_this<HttpTransport> {
public:
    HttpTransport(uv_loop_t* loop, HttpWire wire, TransportEvents events)
        : m_loop(loop), m_wire(std::move(wire)), m_events(std::move(events)),
          m_sse(m_wire.first == "sse") {}

    Status open();
    int64_t call(std::string_view method, JsonView params,
                 std::function<void(Result<rpc::Message>)> done) override;
    void notify(std::string_view method, JsonView params) override;
    void cancel(int64_t id, std::string_view reason) override;
    void close() override;
    std::string_view kind() const override { return m_sse ? "sse" : "http"; }

private:
    // -- the session (transport_http.cpp) ------------------------------------------------------

    void finish_close();

    // A JSON-RPC message from the server, on whatever channel it came.
    void dispatch(std::string_view text);

    // The answer to call `id`, as an event of a stream or as an HTTP response's body.
    void deliver(int64_t id, rpc::Message m, bool on_stream);

    void learn_marks(JsonView tools);

    void fail(std::shared_ptr<Call> c, Error why); // by value: it may be the map's own

    std::string where() const { return redact_url(m_wire.target.url); }

    // The server forgot the session: a new one (initialize again, as before), then `c` again.
    void reopen_session(const std::shared_ptr<Call>& c);

    // A message that is answered by no one: a notification, or an answer to the server's request.
    void post_side(std::string body, std::function<void()> then);

    // A request of the server's, on a stream: answered with a POST.
    void asked(rpc::Message m);

    // -- requests (http_exchange.cpp) ----------------------------------------------------------

    HttpRequest request(std::string method, std::string url);

    // Where POSTs go.
    std::string post_url() const { return m_sse ? m_endpoint : m_wire.target.url; }

    HttpRequest post_request(const Call& c);

    void post_call(const std::shared_ptr<Call>& c);

    // One HTTP exchange on behalf of call `c`: a POST of it, or a GET that resumes its stream.
    void exchange(const std::shared_ptr<Call>& c, HttpRequest r, bool resuming = false);

    // An exchange for call `c` has ended.
    void exchanged(const std::shared_ptr<Call>& c, Reading& reading, Result<HttpResponse> res);

    // Call `c`'s request to `url` was refused (refusal()): made again by `again` once with the
    // DPoP nonce the refusal asks for, or once the authorization hooks give a fresh token; failed
    // otherwise.
    void answer_refusal(const std::shared_ptr<Call>& c, int status, const HttpHeaders& headers,
                        const std::string& url, std::function<void()> again);

    // A body that should be the call's answer.
    void answered_by_body(const std::shared_ptr<Call>& c, int status, const Reading& reading,
                          const HttpResponse& res);

    static bool refusal(int status, const HttpHeaders& headers);

    // RFC 9449 section 9: a 401 asking for a DPoP nonce gives one, kept for the next proofs to
    // `url`'s origin.
    bool takes_nonce(int status, const HttpHeaders& headers, const std::string& url);

    // The server refused the client's authorization: the hook may renew it (then `then(true)`).
    void authorize(int status, const HttpHeaders& headers, bool retried,
                   std::function<void(Result<bool>)> then);

    // -- streams (http_stream.cpp) -------------------------------------------------------------

    // The events that have arrived on a stream; `c` is the call whose stream it is, if any.
    void drain(Reading& reading, const std::shared_ptr<Call>& c);

    // A call's stream ended before its answer: a GET with Last-Event-ID resumes it, after the
    // delay the stream asked for.
    bool resume(const std::shared_ptr<Call>& c, const Reading& reading);

    HttpRequest resume_request(const Call& c);

    // The GET resuming a call's stream was refused. The server took the call, which may have
    // acted: it is never sent again. Only its stream is asked for again, once with the DPoP nonce
    // or the token the refusal asks for; anything else leaves the call without an answer.
    void refused_resumption(const std::shared_ptr<Call>& c, int status, const HttpResponse& res);

    struct Later {
        std::weak_ptr<HttpTransport> self;
        std::function<void()> fn;
    };

    static void close_timer(uv_timer_t* t);

    // Runs `fn` after `ms`, unless closed first.
    void later(int64_t ms, std::function<void()> fn);

    // A GET stream of the server's own: the session's (for its requests and notifications), or
    // the whole connection, for HTTP+SSE.
    void open_stream(bool legacy);

    void open_sse_stream();

    void open_listening_stream();

    void stream_ended(const Reading& reading, Result<HttpResponse> res, bool legacy);

    // The endpoint event of HTTP+SSE: where to POST, on the stream's own origin only.
    void endpoint(std::string_view data);

    void fail_waiting(Error why);

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

} // namespace sion::mcpd
