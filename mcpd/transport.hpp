// SPDX-License-Identifier: MIT
// How mcpd::Client's messages reach a server: a transport carries JSON-RPC requests and
// notifications to it and brings back its answers, requests and notifications. The protocol's
// logic (eras, _meta, input rounds, timeouts) is the client's; a transport knows only its wire:
// a process's pipes (transport_stdio.hpp) or HTTP (transport_http.hpp).
//
// Contract: everything happens on the loop's thread. call()'s `done` is called at most once: with
// the server's answer (a response or an error message), or with an Error when this request can get
// none — Exit::unavailable when no answer came and it may have taken effect, Exit::data for an
// answer that is not a JSON-RPC answer (an HTTP error status, HTML), Exit::no_perm when the server
// refused the client's authorization. When the server itself is gone (its process ended),
// `ended` is called instead, once, and calls still open are left to the client to fail.
// After close(), nothing is called but `closed`, once, when every handle has been freed.
#pragma once

#include "lib/json.hpp"
#include "lib/result.hpp"
#include "lib/rpc/uv_connection.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::mcpd {

struct TransportEvents {
    // The server's requests and notifications, by method (an unknown request is answered with
    // -32601); on_end and on_overlong are not used.
    rpc::UvHandlers handlers;
    std::function<void(const Error& why)> ended;
    // A message over the size limit arrived on a channel no single request owns: calls open there
    // will not hear their answers.
    std::function<void(const Error& why)> overflowed;
    std::function<void()> closed;
};

class Transport {
public:
    Transport() = default;
    Transport(const Transport&) = delete;
    Transport& operator=(const Transport&) = delete;
    virtual ~Transport() = default;

    // Sends a request; returns its JSON-RPC id (0 when `done` was called already).
    virtual int64_t call(std::string_view method, JsonView params,
                         std::function<void(Result<rpc::Message>)> done) = 0;
    virtual void notify(std::string_view method, JsonView params) = 0;
    // The client stops waiting for request `id`: the server is told, as its wire allows, and a
    // late answer is dropped.
    virtual void cancel(int64_t id, std::string_view reason) = 0;
    // Ends the connection (and the server's process, for stdio).
    virtual void close() = 0;
    // "stdio", "http" (Streamable HTTP, either era) or "sse" (HTTP+SSE of 2024-11-05), as far
    // as it is known.
    [[nodiscard]] virtual std::string_view kind() const = 0;
    // The last lines the server's process wrote to its standard error, when they are kept
    // (mcpd/last_words.hpp); empty otherwise, and over HTTP.
    [[nodiscard]] virtual std::vector<std::string> last_words() const { return {}; }
};

} // namespace sion::mcpd
