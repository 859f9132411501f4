// SPDX-License-Identifier: MIT
// The forwarder inside the sandbox: TCP on 127.0.0.1 to the proxy's Unix socket, byte for byte. It
// knows nothing of HTTP, so every answer a client sees is the proxy's.
#include "lib/text.hpp"
#include "sandboxd/netproxy.hpp"
#include "sandboxd/netproxy_relay.hpp"

#include <netinet/in.h>

namespace sion::sandboxd {

struct Forwarder::Impl : RelayServer {
    explicit Impl(uv_loop_t* l) : RelayServer(l) {}

    std::string path;
    int port = 0;
};

namespace {

struct ForwardRelay : Relay {
    explicit ForwardRelay(std::shared_ptr<RelayServer> l) : Relay(std::move(l)) {}

    void start() {
        uv_tcp_nodelay(&client.tcp, 1);
        uv_pipe_init(loop, &upstream.pipe, 0);
        hold(&upstream.handle);
        auto on_connect = [](uv_connect_t* req, int status) {
            auto* relay = static_cast<ForwardRelay*>(req->handle->data);
            if (relay->closing)
                return;
            if (status < 0)
                relay->close(); // no proxy: the client sees its connection closed
            else
                relay->splice({}, {});
        };
        const auto& path = static_cast<Forwarder::Impl&>(*owner).path;
        uv_pipe_connect(&connect_req, &upstream.pipe, path.c_str(), on_connect);
    }

    uv_connect_t connect_req{};
};

} // namespace

Result<std::unique_ptr<Forwarder>> Forwarder::start(uv_loop_t* loop, int port,
                                                    std::string socket_path) {
    auto impl = std::make_shared<Impl>(loop);
    impl->keep_alive = impl;
    impl->path = std::move(socket_path);
    std::unique_ptr<Forwarder> forwarder(new Forwarder(impl));
    if (port < 0 || port > 65535)
        return make_error(Exit::usage,
                          "cannot listen on port %d: a port is a number from 0 to 65535", port);
    uv_tcp_init(loop, &impl->server.tcp);
    impl->server.handle.data = impl.get();
    impl->server_open = true;
    sockaddr_in address{};
    uv_ip4_addr("127.0.0.1", port, &address);
    const std::string where = format("127.0.0.1:%d", port);
    int rc = uv_tcp_bind(&impl->server.tcp, reinterpret_cast<const sockaddr*>(&address), 0);
    auto on_connection = [](uv_stream_t* server, int status) {
        auto* self = static_cast<Impl*>(server->data);
        if (status < 0 || self->closing)
            return;
        auto relay = std::make_shared<ForwardRelay>(self->shared_from_this());
        relay->keep_alive = relay;
        uv_tcp_init(self->loop, &relay->client.tcp);
        relay->hold(&relay->client.handle);
        self->relays.insert(relay.get());
        if (uv_accept(server, relay->client_stream()) != 0)
            relay->close();
        else
            relay->start();
    };
    if (rc == 0)
        rc = uv_listen(&impl->server.stream, 128, on_connection); // bind errors show here
    if (rc != 0)
        return sys_error(Exit::os, -rc, "cannot listen on '%s'", where.c_str());
    sockaddr_storage bound{};
    int size = sizeof bound;
    if (rc = uv_tcp_getsockname(&impl->server.tcp, reinterpret_cast<sockaddr*>(&bound), &size);
        rc != 0)
        return sys_error(Exit::os, -rc, "cannot listen on '%s'", where.c_str());
    impl->port = ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
    return forwarder;
}

Forwarder::~Forwarder() {
    close();
}

void Forwarder::close() {
    m_impl->close();
}

int Forwarder::port() const {
    return m_impl->port;
}

size_t Forwarder::connections() const {
    return m_impl->relays.size();
}

} // namespace sion::sandboxd
