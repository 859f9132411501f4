// SPDX-License-Identifier: MIT
// What the network proxy and its forwarder share, internal to them: a RelayServer that owns a
// listening handle and the connections it accepted, and a Relay, one such connection, which splices
// bytes both ways between a client stream and an upstream stream.
//
// Threads: the loop's only. Lifetime: a RelayServer or a Relay keeps itself alive (keep_alive)
// while any of its handles is open; each handle is released in its close callback. A Relay keeps
// its RelayServer alive, so the last close callback of all may be a Relay's.
#pragma once

#include "lib/result.hpp"

#include <uv.h>

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_set>

namespace sion::sandboxd {

// libuv's status as the house writes reasons: errno text for errnos ("Connection refused"), libuv's
// own text for its own codes (resolver errors).
[[nodiscard]] std::string uv_status_text(int status);

struct Relay;

struct RelayServer : std::enable_shared_from_this<RelayServer> {
    explicit RelayServer(uv_loop_t* l) : loop(l) {}

    virtual ~RelayServer() = default;
    RelayServer(const RelayServer&) = delete;
    RelayServer& operator=(const RelayServer&) = delete;

    // Stops listening and closes every relay; idempotent.
    void close();

    // Called by close() once the server handle is closing: a Proxy removes its socket file here.
    virtual void stopped() {}

    uv_loop_t* loop;
    uv_any_handle server{}; // held: server.handle.data is this until its close callback
    bool server_open = false;
    bool closing = false;
    std::unordered_set<Relay*> relays;
    std::shared_ptr<RelayServer> keep_alive;
};

// One direction of a relay: from src to dst, one buffer in flight at a time, so a slow reader
// slows the writer instead of filling memory.
struct RelayPump {
    uv_stream_t* src = nullptr;
    uv_stream_t* dst = nullptr;
    std::string first;           // written to dst before src is read
    std::unique_ptr<char[]> buf; // what src gave, until dst took it
    uv_write_t write_req{};
    uv_shutdown_t shutdown_req{};
    bool done = false; // src ended and dst's write side is shut down
};

struct Relay : std::enable_shared_from_this<Relay> {
    static constexpr size_t k_buffer = 64 * 1024;

    explicit Relay(std::shared_ptr<RelayServer> l) : owner(std::move(l)), loop(owner->loop) {}

    virtual ~Relay() = default;
    Relay(const Relay&) = delete;
    Relay& operator=(const Relay&) = delete;

    // Registers a handle just initialised: close() closes it, and the relay lives until its close
    // callback. Also counts a request that is no handle's (getaddrinfo) when h is null.
    void hold(uv_handle_t* h);
    // Drops one hold; the last one unregisters the relay and may free it: nothing after.
    void release();
    // Closes every held handle; idempotent. Requests on them end with UV_ECANCELED first.
    void close();

    // What a relay must cancel that is no handle's; called by close().
    virtual void cancel_requests() {}

    // Splices client <-> upstream until both directions ended (an end of input on one side shuts
    // down the other's write side) or either failed; then closes. `to_upstream` and `to_client`
    // are written first: what came after a request head, an answer to CONNECT.
    void splice(std::string to_upstream, std::string to_client);

    uv_stream_t* client_stream() { return &client.stream; }

    uv_stream_t* upstream_stream() { return &upstream.stream; }

    std::shared_ptr<RelayServer> owner;
    uv_loop_t* loop;
    uv_any_handle client{};
    uv_any_handle upstream{};
    uv_timer_t timer{};
    int holds = 0;
    bool closing = false;
    RelayPump up;   // client -> upstream
    RelayPump down; // upstream -> client
    std::shared_ptr<Relay> keep_alive;

private:
    void pump_start(RelayPump& p);
    void pump_read(RelayPump& p);
    void pump_write(RelayPump& p, char* data, size_t size);
    void pump_ended(RelayPump& p);

    RelayPump& pump_of(uv_stream_t* src) { return src == up.src ? up : down; }
};

// A close callback for held handles: forgets the handle and releases its hold.
void close_held_handle(uv_handle_t* h);

} // namespace sion::sandboxd
