// SPDX-License-Identifier: MIT
// The declared network's proxy: reads one request head per connection, checks the host against
// the declared ones before anything is resolved, and then relays bytes to the host it connected.
#include "sandboxd/netproxy.hpp"

#include "lib/text.hpp"
#include "sandboxd/egress_tls.hpp"
#include "sandboxd/netproxy_relay.hpp"
#include "sandboxd/netproxy_request.hpp"

#include <netdb.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace sion::sandboxd {

struct Proxy::Impl : RelayServer {
    explicit Impl(uv_loop_t* l) : RelayServer(l) {}

    void stopped() override {
        if (bound)
            ::unlink(path.c_str());
        bound = false;
    }

    std::string path;
    bool bound = false;
    std::vector<HostRule> allow;
    ProxyOptions options;
    std::shared_ptr<TrustedRoots> roots; // options.trusted, parsed once
};

namespace {

// How long an answered client may go on sending before the proxy closes on it anyway.
constexpr uint64_t k_linger_ms = 1000;

std::string seconds(std::chrono::milliseconds ms) {
    return format("%.3g s", static_cast<double>(ms.count()) / 1000.0);
}

// One client of the proxy, from its request head to the end of the relay.
struct ProxyRelay : Relay {
    explicit ProxyRelay(std::shared_ptr<RelayServer> l) : Relay(std::move(l)) {}

    ~ProxyRelay() override {
        if (addresses != nullptr)
            uv_freeaddrinfo(addresses);
    }

    Proxy::Impl& proxy() { return static_cast<Proxy::Impl&>(*owner); }

    void cancel_requests() override {
        if (resolving)
            uv_cancel(reinterpret_cast<uv_req_t*>(&resolve_req)); // its callback releases its hold
    }

    void start();
    void on_head_bytes(std::string_view bytes);
    void handle_request();
    void resolve();
    void on_resolved(int status, addrinfo* res);
    void connect_next();
    static void upstream_closed(uv_handle_t* h);
    void connected();
    void start_timer(uint64_t ms);
    void on_timer();
    void answer(int status, const std::string& body);
    void drain(int status);
    static void alloc_up(uv_handle_t* h, size_t, uv_buf_t* out);
    static void alloc_down(uv_handle_t* h, size_t, uv_buf_t* out);
    // A tunnel to a granted host, its TLS ended here (egress_tls.hpp).
    void intercept();
    void intercepted(uv_stream_t* from, ssize_t n);
    void flush();
    void send(uv_stream_t* to, std::string data);

    const Grant* grant = nullptr; // the grant for the host, if there is one
    std::unique_ptr<Interception> interception;
    int writes = 0; // the interception's, in flight

    std::string head;
    std::string early; // what the client sent after the head, before the host was connected
    ProxyRequest request;
    bool reading_head = false;
    bool answered = false;
    bool draining = false;
    bool resolving = false;
    uv_getaddrinfo_t resolve_req{};
    addrinfo* addresses = nullptr;
    addrinfo* next_address = nullptr;
    uv_connect_t connect_req{};
    std::string connect_error = "no address";
    std::string answer_text;
    uv_write_t answer_req{};
    uv_shutdown_t answer_shutdown{};
};

void ProxyRelay::alloc_up(uv_handle_t* h, size_t, uv_buf_t* out) {
    auto* relay = static_cast<ProxyRelay*>(h->data);
    if (!relay->up.buf)
        relay->up.buf = std::make_unique<char[]>(k_buffer);
    *out = uv_buf_init(relay->up.buf.get(), static_cast<unsigned>(k_buffer));
}

void ProxyRelay::alloc_down(uv_handle_t* h, size_t, uv_buf_t* out) {
    auto* relay = static_cast<ProxyRelay*>(h->data);
    if (!relay->down.buf)
        relay->down.buf = std::make_unique<char[]>(k_buffer);
    *out = uv_buf_init(relay->down.buf.get(), static_cast<unsigned>(k_buffer));
}

void ProxyRelay::start_timer(uint64_t ms) {
    uv_timer_start(
        &timer, [](uv_timer_t* t) { static_cast<ProxyRelay*>(t->data)->on_timer(); }, ms, 0);
}

void ProxyRelay::start() {
    uv_timer_init(loop, &timer);
    hold(reinterpret_cast<uv_handle_t*>(&timer));
    start_timer(static_cast<uint64_t>(proxy().options.head_timeout.count()));
    auto on_read = [](uv_stream_t* s, ssize_t n, const uv_buf_t*) {
        auto* relay = static_cast<ProxyRelay*>(s->data);
        if (n > 0)
            relay->on_head_bytes({relay->up.buf.get(), static_cast<size_t>(n)});
        else if (n < 0)
            relay->close(); // gone before its request was whole: nobody to answer
    };
    reading_head = uv_read_start(client_stream(), alloc_up, on_read) == 0;
    if (!reading_head)
        close();
}

void ProxyRelay::on_head_bytes(std::string_view bytes) {
    size_t from = head.size() >= 3 ? head.size() - 3 : 0;
    head.append(bytes);
    size_t end = find_head_end(head, from);
    size_t max = proxy().options.max_head;
    if ((end == std::string::npos && head.size() > max)
        || (end != std::string::npos && end > max)) {
        answer(431, format("the request head is longer than %zu bytes", max));
        return;
    }
    if (end == std::string::npos)
        return;
    uv_read_stop(client_stream());
    reading_head = false;
    uv_timer_stop(&timer);
    // What followed the head goes to the host after it: a body, or a TLS hello sent early.
    early = head.substr(end);
    head.resize(end);
    handle_request();
}

void ProxyRelay::handle_request() {
    auto parsed = parse_proxy_request(head);
    if (!parsed) {
        answer(400, "bad proxy request: " + parsed.error().message());
        return;
    }
    request = std::move(*parsed);
    for (const Grant& g : proxy().options.grants)
        if (g.host == request.host && g.port == request.port && g.tls == request.tunnel)
            grant = &g;
    if (grant && !request.tunnel)
        request.upstream_head = granted_head(request.upstream_head, *grant);
    if (!host_allowed(proxy().allow, request.host, request.port)) {
        std::shared_ptr<Relay> keep = shared_from_this();
        if (proxy().options.on_refused)
            proxy().options.on_refused(request.host, request.port);
        if (!closing)
            answer(403, format("host '%s' is not declared",
                               host_port(request.host, request.port).c_str()));
        return;
    }
    resolve();
}

void ProxyRelay::resolve() {
    start_timer(static_cast<uint64_t>(proxy().options.connect_timeout.count()));
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    // An address is used as it is; only a name asks the resolver.
    hints.ai_flags = is_ip_literal(request.host) ? AI_NUMERICHOST : 0;
    std::string port = std::to_string(request.port);
    resolve_req.data = this;
    auto on_done = [](uv_getaddrinfo_t* req, int status, addrinfo* res) {
        auto* relay = static_cast<ProxyRelay*>(req->data);
        relay->resolving = false;
        relay->on_resolved(status, res);
        relay->release(); // the request's hold; may free relay
    };
    int rc =
        uv_getaddrinfo(loop, &resolve_req, on_done, request.host.c_str(), port.c_str(), &hints);
    if (rc != 0) {
        answer(502,
               format("cannot resolve '%s': %s", request.host.c_str(), uv_status_text(rc).c_str()));
        return;
    }
    resolving = true;
    hold(nullptr);
}

void ProxyRelay::on_resolved(int status, addrinfo* res) {
    if (closing || answered) {
        if (res != nullptr)
            uv_freeaddrinfo(res);
        return;
    }
    if (status < 0) {
        answer(502, format("cannot resolve '%s': %s", request.host.c_str(),
                           uv_status_text(status).c_str()));
        return;
    }
    addresses = res;
    next_address = res;
    connect_next();
}

// Tries the resolved addresses in order; a failed one's handle is closed before the next is made.
void ProxyRelay::connect_next() {
    if (next_address == nullptr) {
        answer(502, format("cannot connect to '%s': %s",
                           host_port(request.host, request.port).c_str(), connect_error.c_str()));
        return;
    }
    const sockaddr* address = next_address->ai_addr;
    next_address = next_address->ai_next;
    uv_tcp_init(loop, &upstream.tcp);
    hold(&upstream.handle);
    auto on_connect = [](uv_connect_t* req, int status) {
        auto* relay = static_cast<ProxyRelay*>(req->handle->data);
        if (status == UV_ECANCELED || relay->closing || relay->answered)
            return; // the handle is closing; its close callback releases it
        if (status == 0) {
            relay->connected();
            return;
        }
        relay->connect_error = uv_status_text(status);
        uv_close(&relay->upstream.handle, upstream_closed);
    };
    int rc = uv_tcp_connect(&connect_req, &upstream.tcp, address, on_connect);
    if (rc != 0) {
        connect_error = uv_status_text(rc);
        uv_close(&upstream.handle, upstream_closed);
    }
}

// A failed address's handle is closed: the next address may use it.
void ProxyRelay::upstream_closed(uv_handle_t* h) {
    auto* relay = static_cast<ProxyRelay*>(h->data);
    h->data = nullptr;
    if (!relay->closing && !relay->answered)
        relay->connect_next();
    relay->release(); // may free relay
}

void ProxyRelay::connected() {
    uv_timer_stop(&timer);
    uv_tcp_nodelay(&upstream.tcp, 1);
    uv_freeaddrinfo(addresses);
    addresses = next_address = nullptr;
    if (request.tunnel && grant && proxy().options.authority != nullptr)
        intercept();
    else if (request.tunnel)
        splice(std::move(early), "HTTP/1.1 200 Connection established\r\n\r\n");
    else
        splice(request.upstream_head + early, {});
}

void ProxyRelay::intercept() {
    ProxyOptions& o = proxy().options;
    auto issued = o.authority->issue(request.host);
    Result<std::unique_ptr<Interception>> started =
        issued ? Interception::start({request.host, *issued, proxy().roots,
                                      [g = *grant](std::string_view asked) {
                                          return granted_head(asked, g);
                                      }})
               : Result<std::unique_ptr<Interception>>(issued.error());
    if (!started) {
        if (o.on_failed)
            o.on_failed(started.error().message());
        answer(502, started.error().message());
        return;
    }
    interception = std::move(*started);
    send(client_stream(), "HTTP/1.1 200 Connection established\r\n\r\n");
    if (!early.empty())
        interception->from_client(std::exchange(early, std::string()));
    flush();
    auto on_read = [](uv_stream_t* s, ssize_t n, const uv_buf_t*) {
        static_cast<ProxyRelay*>(s->data)->intercepted(s, n);
    };
    if (!closing && (uv_read_start(client_stream(), alloc_up, on_read) != 0
                     || uv_read_start(upstream_stream(), alloc_down, on_read) != 0))
        close();
}

void ProxyRelay::intercepted(uv_stream_t* from, ssize_t n) {
    if (closing || n == 0)
        return;
    bool client_side = from == client_stream();
    if (n > 0) {
        std::string_view bytes(client_side ? up.buf.get() : down.buf.get(), static_cast<size_t>(n));
        if (client_side)
            interception->from_client(bytes);
        else
            interception->from_host(bytes);
    } else {
        uv_read_stop(from);
        if (client_side)
            interception->client_ended();
        else
            interception->host_ended();
    }
    flush();
}

// What the interception has for either side goes; once it is finished and all is sent, the end.
void ProxyRelay::flush() {
    if (closing)
        return;
    std::string to_client = interception->take_for_client();
    std::string to_host = interception->take_for_host();
    if (!to_client.empty())
        send(client_stream(), std::move(to_client));
    if (!to_host.empty())
        send(upstream_stream(), std::move(to_host));
    if (interception->finished() && writes == 0) {
        if (!interception->failure().empty() && proxy().options.on_failed)
            proxy().options.on_failed(interception->failure());
        close();
    }
}

void ProxyRelay::send(uv_stream_t* to, std::string data) {
    struct Write {
        uv_write_t req{};
        std::string data;
    };
    auto* w = new Write{{}, std::move(data)};
    uv_buf_t b = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
    ++writes;
    int rc = uv_write(&w->req, to, &b, 1, [](uv_write_t* req, int status) {
        // The handle is open until its close callback, which comes after this one.
        auto* relay = static_cast<ProxyRelay*>(req->handle->data);
        delete reinterpret_cast<Write*>(req); // NOLINT: req is the Write's first member
        --relay->writes;
        if (status < 0)
            relay->close();
        else if (relay->interception && relay->writes == 0 && relay->interception->finished())
            relay->flush();
    });
    if (rc != 0) {
        --writes;
        delete w;
        close();
    }
}

void ProxyRelay::on_timer() {
    if (draining) {
        close();
        return;
    }
    if (reading_head) {
        answer(408, "no whole request head within " + seconds(proxy().options.head_timeout));
        return;
    }
    answer(504, format("cannot connect to '%s': no connection within %s",
                       host_port(request.host, request.port).c_str(),
                       seconds(proxy().options.connect_timeout).c_str()));
}

// Sends one of the proxy's own answers, then ends the connection. Only before a relay starts.
void ProxyRelay::answer(int status, const std::string& body) {
    if (answered || closing)
        return;
    answered = true;
    uv_timer_stop(&timer);
    if (reading_head)
        uv_read_stop(client_stream());
    reading_head = false;
    answer_text = http_error_response(status, body);
    uv_buf_t b = uv_buf_init(answer_text.data(), static_cast<unsigned>(answer_text.size()));
    int rc = uv_write(&answer_req, client_stream(), &b, 1, nullptr);
    if (rc == 0)
        rc = uv_shutdown(&answer_shutdown, client_stream(), [](uv_shutdown_t* req, int st) {
            auto* relay = static_cast<ProxyRelay*>(req->handle->data);
            if (!relay->closing)
                relay->drain(st);
        });
    if (rc != 0)
        close();
}

// After an answer, what the client still sends is read and dropped until it ends, for a while:
// closing a socket with unread bytes resets the peer's end, and the answer could be lost with it.
void ProxyRelay::drain(int status) {
    if (status < 0) {
        close();
        return;
    }
    draining = true;
    start_timer(k_linger_ms);
    auto on_read = [](uv_stream_t* s, ssize_t n, const uv_buf_t*) {
        if (n < 0)
            static_cast<Relay*>(s->data)->close();
    };
    if (uv_read_start(client_stream(), alloc_up, on_read) != 0)
        close();
}

} // namespace

Result<std::unique_ptr<Proxy>> Proxy::start(uv_loop_t* loop, std::string socket_path,
                                            std::vector<HostRule> allow, ProxyOptions options) {
    auto impl = std::make_shared<Impl>(loop);
    impl->keep_alive = impl;
    impl->path = std::move(socket_path);
    impl->allow = std::move(allow);
    impl->options = std::move(options);
    std::unique_ptr<Proxy> proxy(new Proxy(impl));
    if (!impl->options.grants.empty() && impl->options.authority != nullptr) {
        SION_TRY(impl->roots, TrustedRoots::parse(impl->options.trusted));
    }
    const char* path = impl->path.c_str();
    if (impl->path.empty() || impl->path.size() >= sizeof(sockaddr_un{}.sun_path))
        return make_error(Exit::usage, "cannot listen on '%s': a socket path has 1 to %zu bytes",
                          path, sizeof(sockaddr_un{}.sun_path) - 1);
    uv_pipe_init(loop, &impl->server.pipe, 0);
    impl->server.handle.data = impl.get();
    impl->server_open = true;
    if (int rc = uv_pipe_bind(&impl->server.pipe, path); rc != 0)
        return sys_error(Exit::os, -rc, "cannot listen on '%s'", path);
    impl->bound = true;
    // Before listen(): until then a connect is refused, so nobody gets in under a looser mode.
    if (::chmod(path, 0600) != 0)
        return sys_error(Exit::os, errno, "cannot make '%s' private", path);
    auto on_connection = [](uv_stream_t* server, int status) {
        auto* self = static_cast<Impl*>(server->data);
        if (status < 0 || self->closing)
            return;
        auto relay = std::make_shared<ProxyRelay>(self->shared_from_this());
        relay->keep_alive = relay;
        uv_pipe_init(self->loop, &relay->client.pipe, 0);
        relay->hold(&relay->client.handle);
        self->relays.insert(relay.get());
        if (uv_accept(server, relay->client_stream()) != 0)
            relay->close();
        else
            relay->start();
    };
    if (int rc = uv_listen(&impl->server.stream, 128, on_connection); rc != 0)
        return sys_error(Exit::os, -rc, "cannot listen on '%s'", path);
    return proxy;
}

Proxy::~Proxy() {
    close();
}

void Proxy::close() {
    m_impl->close();
}

size_t Proxy::connections() const {
    return m_impl->relays.size();
}

std::vector<std::pair<std::string, std::string>> proxy_environment(int port, bool loopback_direct) {
    std::string url = format("http://127.0.0.1:%d", port);
    std::vector<std::pair<std::string, std::string>> env;
    for (const char* name :
         {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"})
        env.emplace_back(name, url);
    // Node reads the variables only when told to (22.21 and 24 on; fetch() and http(s) alike).
    env.emplace_back("NODE_USE_ENV_PROXY", "1");
    if (loopback_direct)
        for (const char* name : {"NO_PROXY", "no_proxy"})
            env.emplace_back(name, "localhost,127.0.0.1,::1");
    return env;
}

} // namespace sion::sandboxd
