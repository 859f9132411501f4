// SPDX-License-Identifier: MIT
// The warm sandbox's outside: bwrap with init --serve, init/exec relayed, the declared network's
// proxy.
#include "sandboxd/warm.hpp"

#include "lib/home.hpp"
#include "lib/rpc/uv_connection.hpp"
#include "sandboxd/bwrap.hpp"
#include "sandboxd/host_pattern.hpp"
#include "sandboxd/limits.hpp"
#include "sandboxd/mounts.hpp"
#include "sandboxd/netproxy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <optional>

namespace sion::sandboxd {

namespace {

// A directory only this user may enter, for the proxy's socket: root's bwrap reaches the socket
// staged (stage.hpp), and connects to it as k_host_id, its owner.
Result<std::string> private_dir() {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read before any thread runs
    const char* tmp = std::getenv("TMPDIR");
    std::string path =
        std::string(tmp != nullptr && *tmp == '/' ? tmp : "/tmp") + "/sion-sandbox.XXXXXX";
    if (::mkdtemp(path.data()) == nullptr)
        return sys_error(Exit::os, errno, "cannot make a directory for the proxy in '%s'",
                         tmp != nullptr ? tmp : "/tmp");
    return path;
}

} // namespace

bool wants_proxy(const Config& config) {
    return config.network == Network::declared && !config.allow_hosts.empty();
}

Result<SandboxProxy> start_sandbox_proxy(uv_loop_t* loop, const Config& config, std::string& dir,
                                         Egress egress) {
    SION_TRY(std::vector<HostRule> rules, parse_host_rules(config.allow_hosts));
    BwrapUser user = bwrap_user();
    SandboxProxy p;
    ProxyOptions options;
    if (!egress.grants.empty()) {
        SION_CHECK(ensure_home(config.home));
        SION_TRY(p.authority, EgressAuthority::open(config.home));
        SION_TRY(options.trusted, trusted_roots());
        p.trust.authority = p.authority->certificate();
        p.trust.bundle = options.trusted;
        if (!p.trust.bundle.empty() && p.trust.bundle.back() != '\n')
            p.trust.bundle += '\n';
        p.trust.bundle += p.trust.authority;
        options.grants = std::move(egress.grants);
        options.authority = p.authority.get();
        options.on_failed = std::move(egress.on_failed);
    }
    SION_TRY(dir, private_dir());
    p.socket = dir + "/proxy.sock";
    SION_TRY(p.proxy, Proxy::start(loop, p.socket, std::move(rules), std::move(options)));
    if (user.staged && ::chown(p.socket.c_str(), user.uid, user.gid) != 0)
        return sys_error(Exit::os, errno, "cannot give '%s' to uid %u", p.socket.c_str(),
                         static_cast<unsigned>(user.uid));
    return p;
}

struct WarmSandbox::Impl {
    uv_loop_t* loop;
    const Config& config;
    Events events;
    std::optional<SandboxCgroup> cgroup; // dropped after bwrap is reaped
    std::optional<Child> bwrap;
    uv_poll_t* exit_poll = nullptr; // freed in its close callback, which may come after Impl goes
    Fd exit_watch;
    std::unique_ptr<rpc::UvConnection> init;
    std::unique_ptr<Proxy> proxy;
    std::string proxy_dir;
    bool ready = false;
    bool stopped = false;

    Impl(uv_loop_t* l, const Config& c, Events e) : loop(l), config(c), events(std::move(e)) {}

    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    Impl(Impl&&) = delete;
    Impl& operator=(Impl&&) = delete;

    ~Impl() { close_exit_poll(); }

    void close_exit_poll() {
        if (exit_poll == nullptr)
            return;
        exit_poll->data = nullptr;
        uv_close(reinterpret_cast<uv_handle_t*>(exit_poll),
                 [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
        exit_poll = nullptr;
    }

    [[nodiscard]] uint64_t oom_kills() const { return cgroup ? cgroup->oom_kills() : 0; }

    Result<std::string> start_proxy();
    Status spawn(Launch launch);
    void watch_exit();
    void init_ended(const Status& st);
};

// The proxy, listening on a socket the user who runs bwrap may connect to; its path.
Result<std::string> WarmSandbox::Impl::start_proxy() {
    SION_TRY(SandboxProxy p, start_sandbox_proxy(loop, config, proxy_dir));
    proxy = std::move(p.proxy);
    return std::move(p.socket);
}

Status WarmSandbox::Impl::spawn(Launch launch) {
    std::vector<std::string>& argv = launch.spec.argv;
    argv.insert(argv.end(), {"--", k_exe_inside, "init", "--serve"});
    if (proxy)
        argv.insert(argv.end(), {"--proxy-socket", k_proxy_inside});
    std::vector<std::string> limits = limits_to_args(launch.limits);
    argv.insert(argv.end(), limits.begin(), limits.end());
    launch.spec.in = Stdio::pipe();
    launch.spec.out = Stdio::pipe();
    SION_TRY(Child child, Child::spawn(launch.spec));
    launch.fds.clear();
    cgroup = std::move(launch.cgroup);
    int to_init = child.in().release();
    int from_init = child.out().release();
    bwrap.emplace(std::move(child));
    watch_exit();
    rpc::UvHandlers h;
    h.notifications["init/ready"] = [this](const rpc::Message&) {
        if (!ready && !stopped) {
            ready = true;
            events.ready();
        }
    };
    h.on_end = [this](const Status& st) { init_ended(st); };
    // An answer carries stdout and stderr, each up to the cap and each byte up to six as JSON.
    size_t max_line = std::max<size_t>(rpc::k_default_max_line,
                                       12 * static_cast<size_t>(config.limits.output) + 65536);
    SION_TRY(init, rpc::UvConnection::open(loop, from_init, to_init, std::move(h), max_line));
    return {};
}

// bwrap's exit, watched on a duplicate of its pidfd so that the Child keeps its own.
void WarmSandbox::Impl::watch_exit() {
    exit_watch.reset(::fcntl(bwrap->pidfd(), F_DUPFD_CLOEXEC, 0));
    if (!exit_watch)
        return; // the Child is reaped when it goes all the same
    exit_poll = new uv_poll_t{};
    if (uv_poll_init(loop, exit_poll, exit_watch.get()) != 0) {
        delete exit_poll;
        exit_poll = nullptr;
        return;
    }
    exit_poll->data = this;
    uv_poll_start(exit_poll, UV_READABLE, [](uv_poll_t* p, int, int) {
        auto* self = static_cast<Impl*>(p->data);
        if (self == nullptr)
            return;
        self->close_exit_poll();
        if (self->init)
            self->init->close(); // init is gone: nothing more will come
    });
}

void WarmSandbox::Impl::init_ended(const Status& st) {
    if (stopped)
        return;
    Error why = ready ? make_error(Exit::software, "the sandbox ended during the session%s%s",
                                   st ? "" : ": ", st ? "" : st.error().message().c_str())
                      : make_error(Exit::unavailable, "cannot make the sandbox: it ended before "
                                                      "it was ready (see bwrap's message above)");
    events.ended(std::move(why));
}

Result<std::unique_ptr<WarmSandbox>> WarmSandbox::start(uv_loop_t* loop, const Config& config,
                                                        Events events) {
    std::unique_ptr<WarmSandbox> warm(
        new WarmSandbox(std::make_unique<Impl>(loop, config, std::move(events))));
    std::string socket;
    if (wants_proxy(config)) {
        SION_TRY(socket, warm->m_impl->start_proxy());
    }
    SION_TRY(Launch launch, prepare_launch(config, {}, -1, socket));
    SION_CHECK(warm->m_impl->spawn(std::move(launch)));
    return warm;
}

WarmSandbox::WarmSandbox(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

WarmSandbox::~WarmSandbox() {
    stop();
    if (!m_impl->proxy_dir.empty())
        ::rmdir(m_impl->proxy_dir.c_str()); // empty once the proxy closed its socket
}

void WarmSandbox::exec(const proto::ExecRequest& request, std::function<void(rpc::Reply)> done) {
    Json params = proto::exec_request_to_json(request);
    params.set("output", static_cast<int64_t>(m_impl->config.limits.output));
    // A command ran out of memory when the kernel killed a process of the sandbox for it while the
    // command ran: the cgroup's count of OOM kills grew (with commands side by side, each is told
    // so: the sandbox's memory is theirs together).
    Impl* w = m_impl.get();
    uint64_t kills = w->oom_kills();
    w->init->call(
        "init/exec", params, [w, kills, done = std::move(done)](Result<rpc::Message> answer) {
            if (!answer) {
                done(rpc::Reply::fail(rpc::k_internal_error,
                                      "the sandbox ended: " + answer.error().message()));
                return;
            }
            if (answer->kind == rpc::Kind::error) {
                done(rpc::Reply::fail(answer->error_code, std::string(answer->error_message)));
                return;
            }
            if (w->oom_kills() > kills) {
                if (auto r = proto::exec_result_from_json(answer->result)) {
                    r->out_of_memory = true;
                    done(rpc::Reply::ok(proto::exec_result_to_json(*r)));
                    return;
                }
            }
            done(rpc::Reply::ok(Json::copy_of(answer->result)));
        });
}

void WarmSandbox::end_commands() {
    if (m_impl->init && !m_impl->stopped)
        m_impl->init->notify("init/end");
}

void WarmSandbox::stop() {
    Impl& w = *m_impl;
    if (w.stopped)
        return;
    w.stopped = true;
    if (w.init)
        w.init->close();
    // Whatever still runs in the sandbox ends with it: bwrap's death takes its pid 1 along, and
    // with it the whole sandbox.
    if (w.bwrap)
        (void)w.bwrap->kill_group(SIGKILL);
    if (w.proxy)
        w.proxy->close();
}

} // namespace sion::sandboxd
