// SPDX-License-Identifier: MIT
// A client of one MCP server, on a libuv loop: over stdio (it starts the server's process) or over
// HTTP (it reaches the server at its URL), it finds which era of the protocol the server speaks,
// and makes requests of it, answering what the server asks of the client meanwhile. What goes on
// the wire is a transport's (mcpd/transport.hpp); the protocol's logic is here, once.
//
// The eras (reference: the protocol's versions):
// - 2026-07-28: no handshake. Every request's params carry _meta with the protocol version, the
//   client's capabilities and its info; `server/discover` is the probe. A result whose resultType
//   is "input_required" asks for input (elicitation, sampling, roots): the client gets it and makes
//   the same request again with inputResponses and the requestState, at most k_max_rounds times and
//   at most k_max_asks things a round.
// - 2025-11-25 and before: the `initialize` handshake, then `notifications/initialized` (only once
//   its result is in); the server asks with requests of its own while a request is open.
// connect() probes with server/discover unless the server spoke an earlier version at its review,
// and falls back to the handshake on any answer that is not a modern result, or on a timeout (half
// the timeout, 10 s at most): probe and handshake together take at most the timeout.
//
// Over HTTP (mcpd/transport_http.hpp), connect() posts the probe first; a 400, 404 or 405 whose
// body is not a modern JSON-RPC error sends it to the handshake, and a 4xx to that to the HTTP+SSE
// stream of 2024-11-05. `options.transport`, what the server spoke at its review, is tried first.
//
// Failures of a request (Errors): Exit::unavailable when no answer came — the server ended, its
// pipes closed, the connection was lost mid-request, a message over k_max_message arrived while
// the request was open, or its timeout passed (the request is then cancelled: notifications/
// cancelled, or its HTTP transfer ended; while a person or the model is being asked for the
// server, none of its requests times out). The request may have taken effect: for a tool call, it
// is uncertain. Exit::data when the server answered with an error, with something that is not a
// result, or over HTTP with an error status or a body that is not JSON-RPC: it refused, and
// nothing is known to have happened. Exit::no_perm when an HTTP server wants authorization the
// client cannot give: "the MCP server notes needs authorization (HTTP 401)".
//
// What the server says is redacted of its secrets (ClientOptions::secrets; lib/redact.hpp: any 12
// characters of one, in any case, split by white space, in base64) before anything of it is
// passed on — every result (its strings and member names: it stays JSON) and every Error of a
// request, what it asks for (elicitation, sampling), how it ended, and its last words — so that
// no caller, the bridge to a session or an operator's command, ever holds one to pass on.
//
// Threads and lifetime: everything happens on the loop's thread. A Client's transport keeps itself
// alive while its process and handles are; the loop must run until they have closed after close().
#pragma once

#include "lib/child.hpp"
#include "lib/http.hpp"
#include "lib/json.hpp"
#include "lib/result.hpp"

#include <uv.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sion::mcpd {

inline constexpr std::string_view k_modern_protocol = "2026-07-28";
// The handshake's versions this client speaks, newest first.
inline constexpr std::string_view k_legacy_protocols[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                          "2024-11-05"};
inline constexpr size_t k_max_message = size_t{32} << 20;
inline constexpr int k_max_rounds = 8;
inline constexpr int k_max_asks = 5;

// What the client answers with when the server asks: `answer` once, now or later.
using Answer = std::function<void(Result<Json>)>;
using Ask = std::function<void(Json params, Answer answer)>;

struct ClientOptions {
    std::string name;          // the server's name on the shelf, for messages
    std::string try_first;     // the version it spoke at its review; empty: probe
    bool can_elicit = false;   // someone can be asked: the elicitation capability is declared
    bool can_sample = false;   // sampling is allowed for this server
    std::string root;          // the file:// URI answered to roots/list; empty: no roots
    std::chrono::milliseconds timeout{60000}; // for each request; progress restarts it
    std::string transport{};   // over HTTP, what it spoke at its review: "http", "sse" or empty
    // Over stdio: its standard error is read and its last lines kept, for the operator's terminal
    // only (Client::last_words()); otherwise it goes to /dev/null.
    bool keep_last_words = false;
    // The values the server is given (mcpd/server_secrets.hpp): asked when the client is made and
    // again whenever the Authorization it sends changes (a renewed token, which is added too).
    // Unset: none.
    std::function<std::vector<std::string>()> secrets{};
};

// The authorization hooks of an HTTP server (the OAuth side, mcpd/oauth*, provides them).
// Before each request the client asks `authorization` for the Authorization header's value
// ("Bearer …"; empty: none). When the server answers 401, or 403 with error="insufficient_scope"
// in its WWW-Authenticate, the client calls `refused` with the status and that header's value
// (empty when it sent none); `retry(true)` sends the request once more, with a fresh value from
// `authorization`, `retry(false)` fails it (Exit::no_perm, "the MCP server NAME needs
// authorization (HTTP 401): log in with `sion agent mcp login NAME`", with the challenge's
// --scope for a 403). Call `retry` once, now or later. Without `refused`, or on a second
// refusal of the same request, it fails so at once.
using Retry = std::function<void(bool again)>;
using Authorization = std::function<std::string()>;
using Refused = std::function<void(int status, std::string www_authenticate, Retry retry)>;
// DPoP (RFC 9449): `proof` gives the DPoP header's value for a request by `method` to `url`,
// asked right after `authorization` (empty: none). A 401 whose challenge says
// error="use_dpop_nonce" hands its DPoP-Nonce to `nonce`, which keeps it for the next proofs
// (false: not usable), and the request is sent once more before `refused` hears of it.
using Proof = std::function<std::string(const std::string& method, const std::string& url)>;
using NonceGiven = std::function<bool(const std::string& url, const std::string& nonce)>;

struct ClientEvents {
    Ask elicit; // an ElicitRequest's params → an ElicitResult
    Ask sample; // a CreateMessageRequest's params → a CreateMessageResult
    std::function<void()> tools_changed;
    // The server's process ended or its output closed: every request open has failed. Once one
    // has, the other is waited for (a second at most), so that `why` says how the process ended.
    std::function<void(const Error&)> ended;
    Authorization authorization; // HTTP only
    Refused refused;             // HTTP only
    Proof proof;                 // HTTP only
    NonceGiven nonce;            // HTTP only
};

// Where an HTTP server is: its URL and the headers added to every request (values expanded).
struct HttpTarget {
    std::string url;
    HttpHeaders headers;
};

struct Connected {
    std::string protocol;
    std::string server_name;
    std::string server_version;
    Json capabilities; // the server's
    std::string instructions;
    std::string transport; // "stdio", "http" or "sse"
};

class Client {
public:
    // Starts the server (`spec`: stdin and stdout must be pipes). Errors are those of spawning.
    [[nodiscard]] static Result<std::unique_ptr<Client>>
    start(uv_loop_t* loop, const ChildSpec& spec, ClientOptions options, ClientEvents events);
    // Reaches the server at `target.url` (http or https). Nothing is sent before connect().
    [[nodiscard]] static Result<std::unique_ptr<Client>>
    reach(uv_loop_t* loop, HttpTarget target, ClientOptions options, ClientEvents events);

    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;
    // Closes, as close() does.
    ~Client();

    void connect(std::function<void(Result<Connected>)> done);

    // A request after connect(). `params` gets the era's _meta; a tools/call also a progress token.
    void request(std::string_view method, Json params, std::function<void(Result<Json>)> done);

    // Every page of a list request (tools/list → its "tools", resources/list, prompts/list, …):
    // one array of the items under `key`, at most 10,000 of them.
    void list_all(std::string_view method, std::string_view key,
                  std::function<void(Result<Json>)> done);

    // Ends the server: its stdin is closed; its process group gets SIGTERM if it has not ended
    // within a second, and SIGKILL a second after that. Over HTTP, a session is ended with DELETE.
    // Open requests fail. Nothing is called after this but their `done`s.
    void close();

    // The last lines its process wrote to its standard error, when ClientOptions::keep_last_words
    // asked for them (mcpd/last_words.hpp), redacted; empty otherwise.
    [[nodiscard]] std::vector<std::string> last_words() const;

    // Its process has not ended and its pipes are open (over HTTP: not closed).
    [[nodiscard]] bool alive() const;

    // ClientOptions::timeout, for the requests sent from now on.
    void set_timeout(std::chrono::milliseconds timeout);

    struct Impl;

private:
    explicit Client(std::shared_ptr<Impl> impl) : m_impl(std::move(impl)) {}
    std::shared_ptr<Impl> m_impl;
};

} // namespace sion::mcpd
