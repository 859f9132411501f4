// SPDX-License-Identifier: MIT
// The HTTP/1.1 side of the network proxy, without I/O: finding and parsing a proxy request's head,
// rewriting a plain-HTTP request for the origin, and the proxy's own error answers.
#pragma once

#include "lib/http.hpp"
#include "lib/result.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace sion::sandboxd {

struct ProxyRequest {
    bool tunnel = false; // CONNECT host:port: a tunnel for TLS or anything else
    std::string host;    // in canonical_host's form
    int port = 0;
    std::string
        upstream_head; // absolute-form requests: the head the origin gets; empty for CONNECT
};

// Where a request head ends in `buffer` (just after its empty line), or npos if it has not ended.
// Lines end in CRLF or LF. `from` is where to start looking: a caller that appends to the buffer
// passes the old size less 3, so a long head arriving a byte at a time is not searched again and
// again.
[[nodiscard]] size_t find_head_end(std::string_view buffer, size_t from = 0);

// Parses a proxy request head, through its empty line: "CONNECT host:port HTTP/1.1" (port
// required), or any method with an absolute "http://host[:port]/path" target. For the latter,
// upstream_head is the request in origin-form ("GET /path HTTP/1.1") with a Host header naming the
// target, "Connection: close" (or "Connection: upgrade" for an Upgrade request), and the client's
// other headers except hop-by-hop ones: Connection, Keep-Alive, Proxy-*, and those Connection
// names. Errors (Exit::data) say what is wrong in a few words, for a 400 answer's body.
[[nodiscard]] Result<ProxyRequest> parse_proxy_request(std::string_view head);

// A grant (seed 002): a credential the proxy writes into the requests to its host that are on its
// path, so that the sandboxed program that makes them never holds it.
struct Grant {
    std::string host; // in canonical_host's form
    int port = 443;   // its port: 443 for https (a tunnel the proxy ends), 80 for plain http
    std::string path = "/"; // "/v1": that path and those under it ("/v1", "/v1/x", "/v1?q")
    std::string header = "Authorization";
    std::string value; // "Bearer …": the secret itself
    bool tls = true;   // https: written into a tunnel's requests, whose TLS the proxy ends; http:
                       // into plain requests' heads. Neither kind gets the other's.
};

// An origin-form request head (its request line, headers and blank line) as the host is to get
// it: with `grant`'s header written in, any the client sent of that name dropped, when its target
// is on the grant's path; without hop-by-hop headers, and asking the host to close the connection
// after its answer. A head that does not parse comes back as it is: the host refuses it.
[[nodiscard]] std::string granted_head(std::string_view head, const Grant& grant);

// A whole answer from the proxy itself: the status line, a text/plain body of one line (a newline
// is added), Content-Length and "Connection: close".
[[nodiscard]] std::string http_error_response(int status, std::string_view body_line);

} // namespace sion::sandboxd
