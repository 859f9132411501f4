// SPDX-License-Identifier: MIT
// The HTTP transports of MCP, on lib/uv_http.hpp:
// - Streamable HTTP as of 2026-07-28: every request its own POST, stateless; a request that
//   carries the modern _meta gets MCP-Protocol-Version (= its version), Mcp-Method, Mcp-Name and
//   the Mcp-Param-* of the tool's x-mcp-header marks (mcpd/http_headers.hpp), learnt from the
//   tools/list answers that pass through.
// - Streamable HTTP of 2025-03-26 to 2025-11-25: the initialize POST opens a session, whose
//   Mcp-Session-Id goes on every later request with MCP-Protocol-Version (the version negotiated);
//   a 404 to a request with a session id opens a new session (initialize again) and sends the
//   request once more; the server's own requests come on the streams of the client's requests and,
//   when `listen` is set, on a GET stream (405: it has none); the client's answers are POSTed;
//   DELETE ends the session at close().
// - HTTP+SSE of 2024-11-05: a GET of the URL opens an event stream whose `endpoint` event names
//   where to POST (resolved against the URL; another origin is refused); answers come on the stream.
// Answers come as application/json or text/event-stream. A stream that ends before its request's
// answer, having given an event id, is resumed with a GET and Last-Event-ID after its `retry:`
// delay (1 s when it gave none), five times at most. Redirects are never followed (an error names
// where they lead); a body over `max_message` is not read.
//
// Which one a server speaks: the client's first request is a modern POST (server/discover); its
// initialize POST goes to the HTTP+SSE stream when answered with a 4xx other than 401 or 403, or at
// once when `first` is "sse".
#pragma once

#include "mcpd/client.hpp"
#include "mcpd/transport.hpp"

#include <uv.h>

#include <memory>
#include <string>

namespace sion::mcpd {

struct HttpWire {
    HttpTarget target;
    std::string name; // on the shelf, for the authorization message
    std::string who;  // "MCP server notes", for messages
    std::string first; // "sse": the stream of 2024-11-05 first
    bool listen = false; // a 2025 session opens its GET stream (for the server's requests and notices)
    size_t max_message = k_max_message;
    Authorization authorization;
    Refused refused;
    Proof proof;
    NonceGiven nonce;
};

[[nodiscard]] Result<std::shared_ptr<Transport>> reach_http(uv_loop_t* loop, HttpWire wire,
                                                            TransportEvents events);

// "http://127.0.0.1:8812" of "http://me@127.0.0.1:8812/mcp?x" (scheme and host lowercased), or
// empty for a URL that is not http or https.
[[nodiscard]] std::string url_origin(std::string_view url);

// `ref` (an absolute URL, "//host/p", "/p" or "p") resolved against `base`.
[[nodiscard]] std::string resolve_url(std::string_view base, std::string_view ref);

} // namespace sion::mcpd
