// SPDX-License-Identifier: MIT
// Relaying bytes between two streams on libuv, and the lifetime of listeners and their relays.
// Handles live inside the objects, so an object stays alive until the last close callback of its
// handles has run; a callback that may drop the last hold does nothing after it.
#include "sandboxd/netproxy_relay.hpp"

#include <cstring>

namespace sion::sandboxd {

std::string uv_status_text(int status) {
    if (status < 0 && status > -1000)
        return std::strerror(-status);
    return uv_strerror(status);
}

void close_held_handle(uv_handle_t* h) {
    auto* relay = static_cast<Relay*>(h->data);
    h->data = nullptr;
    relay->release(); // may free relay and the handle with it
}

void RelayServer::close() {
    if (closing)
        return;
    closing = true;
    std::shared_ptr<RelayServer> keep = shared_from_this();
    if (server_open) {
        uv_close(&server.handle, [](uv_handle_t* h) {
            auto* self = static_cast<RelayServer*>(h->data);
            self->server_open = false;
            self->keep_alive.reset(); // may free self: nothing after
        });
    } else {
        keep_alive.reset();
    }
    stopped();
    auto open_relays = relays;
    for (Relay* relay : open_relays)
        relay->close();
}

void Relay::hold(uv_handle_t* h) {
    if (h != nullptr)
        h->data = this;
    ++holds;
}

void Relay::release() {
    if (--holds > 0)
        return;
    owner->relays.erase(this);
    std::shared_ptr<Relay> self = std::move(keep_alive); // frees this on return, if it was the last
}

void Relay::close() {
    if (closing)
        return;
    closing = true;
    // close_held_handle may run synchronously for none of these, but keep this alive through the
    // loop all the same: cancel_requests() can call back.
    std::shared_ptr<Relay> keep = shared_from_this();
    cancel_requests();
    for (uv_handle_t* h :
         {&client.handle, &upstream.handle, reinterpret_cast<uv_handle_t*>(&timer)})
        if (h->data != nullptr && !uv_is_closing(h))
            uv_close(h, close_held_handle);
}

void Relay::splice(std::string to_upstream, std::string to_client) {
    up.src = client_stream();
    up.dst = upstream_stream();
    up.first = std::move(to_upstream);
    down.src = upstream_stream();
    down.dst = client_stream();
    down.first = std::move(to_client);
    pump_start(up);
    if (!closing)
        pump_start(down);
}

void Relay::pump_start(RelayPump& p) {
    if (p.first.empty()) {
        pump_read(p);
        return;
    }
    pump_write(p, p.first.data(), p.first.size());
}

void Relay::pump_read(RelayPump& p) {
    auto alloc = [](uv_handle_t* h, size_t, uv_buf_t* out) {
        auto* relay = static_cast<Relay*>(h->data);
        RelayPump& pump = relay->pump_of(reinterpret_cast<uv_stream_t*>(h));
        if (!pump.buf)
            pump.buf = std::make_unique<char[]>(k_buffer);
        *out = uv_buf_init(pump.buf.get(), static_cast<unsigned>(k_buffer));
    };
    auto on_read = [](uv_stream_t* s, ssize_t n, const uv_buf_t*) {
        auto* relay = static_cast<Relay*>(s->data);
        RelayPump& pump = relay->pump_of(s);
        if (n == 0)
            return; // nothing this time (EAGAIN)
        uv_read_stop(s);
        if (n > 0)
            relay->pump_write(pump, pump.buf.get(), static_cast<size_t>(n));
        else if (n == UV_EOF)
            relay->pump_ended(pump);
        else
            relay->close();
    };
    if (uv_read_start(p.src, alloc, on_read) != 0)
        close();
}

void Relay::pump_write(RelayPump& p, char* data, size_t size) {
    uv_buf_t b = uv_buf_init(data, static_cast<unsigned>(size));
    p.write_req.data = &p;
    int rc = uv_write(&p.write_req, p.dst, &b, 1, [](uv_write_t* req, int status) {
        // The handle is still open: its close callback, which frees the relay, comes after this.
        auto* relay = static_cast<Relay*>(req->handle->data);
        auto* pump = static_cast<RelayPump*>(req->data);
        pump->first.clear();
        if (relay->closing)
            return;
        if (status < 0)
            relay->close();
        else
            relay->pump_read(*pump);
    });
    if (rc != 0)
        close();
}

// src ended: pass the end on as a shutdown of dst's write side, and close once both have ended.
void Relay::pump_ended(RelayPump& p) {
    p.shutdown_req.data = &p;
    int rc = uv_shutdown(&p.shutdown_req, p.dst, [](uv_shutdown_t* req, int status) {
        auto* relay = static_cast<Relay*>(req->handle->data);
        auto* pump = static_cast<RelayPump*>(req->data);
        if (relay->closing)
            return;
        pump->done = true;
        if (status < 0 || (relay->up.done && relay->down.done))
            relay->close();
    });
    if (rc != 0)
        close();
}

} // namespace sion::sandboxd
