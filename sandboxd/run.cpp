// SPDX-License-Identifier: MIT
// sion-sandbox run: a command attached to this process's stdio in a bubblewrap sandbox or a
// container, the signals that end it, the declared network's proxy beside it, and its init's
// forwarder inside.
#include "sandboxd/run.hpp"

#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/text.hpp"
#include "sandboxd/bwrap.hpp"
#include "sandboxd/docker.hpp"
#include "sandboxd/init.hpp"
#include "sandboxd/limits.hpp"
#include "sandboxd/mounts.hpp"
#include "sandboxd/netproxy.hpp"
#include "sandboxd/warm.hpp"

#include <uv.h>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>

namespace sion::sandboxd {

namespace {

constexpr std::array<int, 3> k_ending_signals = {SIGTERM, SIGINT, SIGHUP};
constexpr size_t k_status_max = 65536;

// The sandbox's pid 1: bwrap's one child (bwrap --as-pid-1 forks once), or -1.
pid_t sandbox_pid1(pid_t bwrap) {
    std::string path =
        format("/proc/%d/task/%d/children", static_cast<int>(bwrap), static_cast<int>(bwrap));
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return -1;
    auto text = read_all(fd.get(), 4096);
    if (!text)
        return -1;
    long pid = std::strtol(text->c_str(), nullptr, 10);
    return pid > 1 ? static_cast<pid_t>(pid) : -1;
}

// One run on a loop: the signals that end it, the child (bwrap or docker run), its wall clock,
// and the proxy. Every handle is a member, closed once the child is reaped; the loop runs until
// they are, before this goes.
class AttachedRun {
public:
    AttachedRun(uv_loop_t* loop, const Config& config, Egress egress)
        : m_loop(loop), m_config(config), m_egress(std::move(egress)) {}

    AttachedRun(const AttachedRun&) = delete;
    AttachedRun& operator=(const AttachedRun&) = delete;
    AttachedRun(AttachedRun&&) = delete;
    AttachedRun& operator=(AttachedRun&&) = delete;
    ~AttachedRun() = default;

    // On error, the handles already open are closed: run the loop all the same.
    Status start(const proto::ExecRequest& request);
    [[nodiscard]] Result<RunOutcome> outcome();

    // After the loop: the proxy's directory, empty once the proxy has closed.
    void remove_proxy_dir() const {
        if (!m_proxy_dir.empty())
            ::rmdir(m_proxy_dir.c_str());
    }

private:
    Status watch_signals();
    Status spawn_bwrap(const proto::ExecRequest& request);
    Status spawn_docker(const proto::ExecRequest& request);
    Status watch_child(std::optional<std::chrono::milliseconds> timeout);
    void end_sandbox();
    void kill_sandbox(bool again);
    void child_ended();
    void close_handles();

    template <class Handle>
    void opened(Handle* h) {
        h->data = this;
        m_handles.push_back(reinterpret_cast<uv_handle_t*>(h));
    }

    static AttachedRun& of(void* handle) {
        return *static_cast<AttachedRun*>(static_cast<uv_handle_t*>(handle)->data);
    }

    uv_loop_t* m_loop;
    const Config& m_config;
    Egress m_egress; // for the proxy, which takes it
    std::optional<SandboxCgroup> m_cgroup; // bwrap's, dropped after it is reaped
    std::optional<Child> m_child;
    Fd m_status;          // bwrap: init's status pipe, read end
    Fd m_exit_watch;      // a duplicate of the child's pidfd: the Child keeps its own
    SandboxProxy m_proxy; // the declared network's, with hosts
    std::string m_proxy_dir;
    std::string m_container;                           // Docker: the container's name
    std::optional<DockerWorkspace> m_docker_workspace; // Docker: what it binds, while it runs
    std::array<uv_signal_t, k_ending_signals.size()> m_signals{};
    uv_poll_t m_exit_poll{};
    uv_timer_t m_timer{}; // the wall clock, then killing again
    std::vector<uv_handle_t*> m_handles;
    std::optional<ExitStatus> m_exit;
    std::optional<Error> m_failure;
    int m_received = 0;
    bool m_timed_out = false;
    bool m_ending = false;
};

Status AttachedRun::start(const proto::ExecRequest& request) {
    Status st = watch_signals();
    if (st && m_received == 0)
        st = m_config.backend == BackendKind::docker ? spawn_docker(request) : spawn_bwrap(request);
    if (st && m_child)
        st = watch_child(request.timeout);
    if (!st || !m_child)
        close_handles();
    return st;
}

Status AttachedRun::watch_signals() {
    for (size_t i = 0; i < k_ending_signals.size(); ++i) {
        uv_signal_init(m_loop, &m_signals[i]);
        opened(&m_signals[i]);
        int rc = uv_signal_start(
            &m_signals[i],
            [](uv_signal_t* h, int signum) {
                AttachedRun& self = of(h);
                if (self.m_received == 0)
                    self.m_received = signum;
                self.end_sandbox();
            },
            k_ending_signals[i]);
        if (rc != 0)
            return make_error(Exit::os, "cannot watch signal %d: %s", k_ending_signals[i],
                              uv_strerror(rc));
    }
    // Its parent's death is a SIGTERM; one that died before that was asked ends the run now.
    pid_t parent = ::getppid();
    if (::prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
        return sys_error(Exit::os, errno, "cannot ask to be told of the parent's death");
    if (::getppid() != parent)
        m_received = SIGTERM;
    return {};
}

Status AttachedRun::spawn_bwrap(const proto::ExecRequest& request) {
    SION_TRY(Pipe status, Pipe::make());
    bool forward = wants_proxy(m_config);
    if (forward) {
        SION_TRY(m_proxy,
                 start_sandbox_proxy(m_loop, m_config, m_proxy_dir, std::move(m_egress)));
    }
    SION_TRY(Launch launch,
             prepare_launch(m_config, request.env, status.write.get(), m_proxy.socket,
                            m_proxy.trust));
    std::vector<std::string> tail =
        run_init_argv(launch.limits, forward, request.argv, launch.env_fd);
    launch.spec.argv.insert(launch.spec.argv.end(), tail.begin(), tail.end());
    SION_TRY(Child child, Child::spawn(launch.spec));
    m_child.emplace(std::move(child));
    m_cgroup = std::move(launch.cgroup);
    m_status = std::move(status.read);
    return {}; // the write end and launch's descriptors close here: init holds them now
}

Status AttachedRun::spawn_docker(const proto::ExecRequest& request) {
    SION_CHECK(docker_image_present(m_config.image));
    m_container = docker_container_name();
    SION_TRY(DockerLaunch launch, prepare_docker(m_config, request, m_container));
    m_docker_workspace.emplace(std::move(*launch.workspace));
    ChildSpec& spec = launch.spec;
    auto child = Child::spawn(spec);
    if (!child && child.error().exit() == Exit::not_found)
        return make_error(Exit::unavailable, "docker is not installed: install Debian's docker.io");
    if (!child)
        return std::move(child).error();
    m_child.emplace(std::move(*child));
    return {};
}

Status AttachedRun::watch_child(std::optional<std::chrono::milliseconds> timeout) {
    uv_timer_init(m_loop, &m_timer);
    opened(&m_timer);
    m_exit_watch.reset(::fcntl(m_child->pidfd(), F_DUPFD_CLOEXEC, 0));
    if (!m_exit_watch)
        return sys_error(Exit::os, errno, "cannot watch the sandbox");
    if (int rc = uv_poll_init(m_loop, &m_exit_poll, m_exit_watch.get()); rc != 0)
        return make_error(Exit::os, "cannot watch the sandbox: %s", uv_strerror(rc));
    opened(&m_exit_poll);
    uv_poll_start(&m_exit_poll, UV_READABLE, [](uv_poll_t* h, int, int) { of(h).child_ended(); });
    if (timeout) {
        uv_timer_start(
            &m_timer,
            [](uv_timer_t* h) {
                AttachedRun& self = of(h);
                self.m_timed_out = true;
                self.end_sandbox();
            },
            static_cast<uint64_t>(timeout->count()), 0);
    }
    return {};
}

// Kills the sandbox now, and again every k_remove_again until the child has ended: a container
// still being made when docker rm ran is there to be removed the next time.
void AttachedRun::end_sandbox() {
    if (!m_child || m_exit || m_ending)
        return;
    m_ending = true;
    kill_sandbox(false);
    uv_timer_start(
        &m_timer, [](uv_timer_t* h) { of(h).kill_sandbox(true); },
        static_cast<uint64_t>(k_remove_again.count()),
        static_cast<uint64_t>(k_remove_again.count()));
}

void AttachedRun::kill_sandbox(bool again) {
    if (m_exit)
        return;
    if (m_config.backend == BackendKind::docker) {
        (void)docker_remove_container(m_container); // gone, or docker run is told when it is
        return;
    }
    // Its pid 1 first: bwrap waits for it, and the kernel ends the pid 1 only once every process
    // of its namespace has ended, so that bwrap's end is the whole sandbox's.
    pid_t pid1 = again ? -1 : sandbox_pid1(m_child->pid());
    if (pid1 < 0 || ::kill(pid1, SIGKILL) != 0)
        (void)m_child->kill_group(SIGKILL); // its --die-with-parent takes the pid 1 along
}

void AttachedRun::child_ended() {
    if (m_exit || m_failure)
        return;
    auto status = m_child->wait(); // the pidfd says it exited: this does not block
    if (status)
        m_exit = *status;
    else
        m_failure = status.error();
    close_handles();
}

void AttachedRun::close_handles() {
    for (uv_handle_t* h : m_handles)
        if (uv_is_closing(h) == 0)
            uv_close(h, nullptr);
    if (m_proxy.proxy)
        m_proxy.proxy->close();
}

Result<RunOutcome> AttachedRun::outcome() {
    if (m_failure)
        return *m_failure;
    RunOutcome out;
    out.received = m_received;
    if (!m_exit) { // the parent was gone before anything started
        out.ended.exit = to_int(Exit::signal_base) + m_received;
        return out;
    }
    out.ended.wall_ms = m_exit->wall_ms;
    if (m_timed_out || m_ending) {
        out.ended.timed_out = m_timed_out && m_received == 0;
        out.ended.exit =
            out.ended.timed_out ? to_int(Exit::timeout) : to_int(Exit::signal_base) + SIGKILL;
        out.ended.signal = SIGKILL;
        return out;
    }
    if (m_config.backend == BackendKind::docker) {
        if (m_exit->exit_code < 0)
            return make_error(Exit::unavailable, "the docker command was killed by signal %d",
                              m_exit->signal);
        out.ended = docker_run_outcome(m_exit->status);
        return out;
    }
    auto report = read_all(m_status.get(), k_status_max);
    if (report && read_status(*report, out.ended)) {
        out.ended.out_of_memory = m_cgroup && m_cgroup->oom_kills() > 0;
        return out;
    }
    std::string how = m_exit->signal != 0
                          ? "bwrap was killed by signal " + std::to_string(m_exit->signal)
                          : "bwrap exited with status " + std::to_string(m_exit->status);
    return make_error(Exit::unavailable, "cannot make the sandbox: %s (see its message above)",
                      how.c_str());
}

} // namespace

Result<RunOutcome> run_attached(const Config& config, const proto::ExecRequest& request,
                                Egress egress) {
    uv_loop_t loop;
    if (int rc = uv_loop_init(&loop); rc != 0)
        return make_error(Exit::os, "cannot start the event loop: %s", uv_strerror(rc));
    std::optional<Result<RunOutcome>> outcome;
    {
        AttachedRun run(&loop, config, std::move(egress));
        Status started = run.start(request);
        uv_run(&loop, UV_RUN_DEFAULT);
        if (started)
            outcome.emplace(run.outcome());
        else
            outcome.emplace(started.error());
        uv_run(&loop, UV_RUN_DEFAULT); // what the proxy closed last
        run.remove_proxy_dir();
    }
    if (uv_loop_close(&loop) != 0)
        return make_error(Exit::software, "internal error: the event loop did not close cleanly");
    return std::move(*outcome);
}

proto::ExecResult docker_run_outcome(int status) {
    proto::ExecResult r;
    r.exit = status;
    if (status > 128 && status <= 128 + 64)
        r.signal = status - 128;
    return r;
}

Result<std::vector<std::pair<std::string, std::string>>>
named_env(const std::vector<std::string>& names) {
    for (const std::string& name : names)
        if (name.empty() || name.find('=') != std::string::npos)
            return make_error(Exit::usage, "option '--env' takes a variable's name, not '%s'",
                              name.c_str());
    std::vector<std::pair<std::string, std::string>> env;
    for (const std::string& entry : env_keep(names)) {
        size_t eq = entry.find('=');
        env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
    }
    return env;
}

std::vector<OptionSpec> run_options() {
    std::vector<OptionSpec> options;
    for (OptionSpec option : sandbox_options(false)) {
        std::string_view name = option.name;
        if (name == "output")
            continue;
        if (name == "workspace")
            option.help = "the directory at /workspace, writable (default: an empty one)";
        if (name == "timeout")
            option.help = "wall-clock seconds the command may run (default: no limit)";
        options.push_back(option);
    }
    options.push_back(
        {"env", 0, "NAME", "a variable of this environment the command gets too (repeatable)"});
    options.push_back({"grants-fd", 0, "N",
                       "read grants from descriptor N: credentials the proxy writes for the "
                       "command"});
    return options;
}

Result<ScratchWorkspace> ScratchWorkspace::make() {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read before any thread runs
    const char* tmp = std::getenv("TMPDIR");
    std::string base = tmp != nullptr && *tmp == '/' ? tmp : "/tmp";
    std::string path = base + "/sion-sandbox-run.XXXXXX";
    if (::mkdtemp(path.data()) == nullptr)
        return sys_error(Exit::os, errno, "cannot make an empty workspace in '%s'", base.c_str());
    ScratchWorkspace made(path); // removed if resolving fails
    SION_TRY(made.m_path, resolve_path(path));
    return made;
}

ScratchWorkspace::~ScratchWorkspace() {
    if (m_path.empty())
        return;
    std::error_code ignored; // what cannot be removed stays; nothing to tell anyone at exit
    std::filesystem::remove_all(m_path, ignored);
}

Result<ExitStatus> init_exec_forwarding(const Limits& limits, const std::vector<std::string>& argv,
                                        const std::string& proxy_socket) {
    uv_loop_t loop;
    if (int rc = uv_loop_init(&loop); rc != 0)
        return make_error(Exit::os, "cannot start the event loop: %s", uv_strerror(rc));
    uv_async_t stop{};
    uv_async_init(&loop, &stop, [](uv_async_t* a) {
        static_cast<Forwarder*>(a->data)->close();
        uv_close(reinterpret_cast<uv_handle_t*>(a), nullptr);
    });
    auto forwarder = Forwarder::start(&loop, 0, proxy_socket);
    std::optional<Result<ExitStatus>> ran;
    std::thread thread;
    if (!forwarder) {
        ran.emplace(forwarder.error());
    } else {
        stop.data = forwarder->get();
        // Before the thread starts: nothing else reads the environment then.
        for (const auto& [name, value] : proxy_environment((*forwarder)->port()))
            ::setenv(name.c_str(), value.c_str(), 1); // NOLINT(concurrency-mt-unsafe)
        try {
            thread = std::thread([&loop] { uv_run(&loop, UV_RUN_DEFAULT); });
        } catch (const std::system_error& e) {
            ran.emplace(make_error(Exit::os, "cannot start the forwarder: %s", e.what()));
        }
    }
    if (thread.joinable()) {
        ran.emplace(init_exec(limits, argv));
        uv_async_send(&stop); // the loop's thread closes the forwarder, then its loop ends
        thread.join();
    } else {
        if (forwarder)
            (*forwarder)->close();
        uv_close(reinterpret_cast<uv_handle_t*>(&stop), nullptr);
        uv_run(&loop, UV_RUN_DEFAULT);
    }
    if (uv_loop_close(&loop) != 0)
        return make_error(Exit::software, "internal error: the event loop did not close cleanly");
    return std::move(*ran);
}

} // namespace sion::sandboxd
