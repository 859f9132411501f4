// SPDX-License-Identifier: MIT
// The init inside the sandbox, pid 1: limits on itself, then one command, every orphan reaped
// (exec), or every command of a session from an event loop in a child of its own (serve).
#include "sandboxd/init.hpp"

#include "lib/log.hpp"
#include "lib/proto/sandbox_exec.hpp"
#include "lib/rpc/uv_connection.hpp"
#include "lib/uv_child.hpp"
#include "sandboxd/limits.hpp"
#include "sandboxd/netproxy.hpp"
#include "sandboxd/output.hpp"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>

extern char** environ; // NOLINT: POSIX's

namespace sion::sandboxd {

namespace {

// Waits until `pid` has ended, reaping every other child that ends meanwhile (as pid 1 must);
// `pid` itself is left for its owner to reap.
Status await(pid_t pid) {
    for (;;) {
        siginfo_t info{};
        if (::waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) != 0) {
            if (errno == EINTR)
                continue;
            return sys_error(Exit::os, errno, "cannot wait for the command");
        }
        if (info.si_pid == pid)
            return {};
        while (::waitpid(info.si_pid, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
}

std::vector<std::string> current_env() {
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e)
        env.emplace_back(*e);
    return env;
}

} // namespace

void close_stray_fds(int keep) {
    if (keep < 3) {
        ::syscall(SYS_close_range, 3U, ~0U, 0U);
        return;
    }
    if (keep > 3)
        ::syscall(SYS_close_range, 3U, static_cast<unsigned>(keep - 1), 0U);
    ::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0U, 0U);
}

Result<std::optional<int>> split_reaper() {
    pid_t pid = ::fork();
    if (pid < 0)
        return sys_error(Exit::os, errno, "cannot fork the init's loop");
    if (pid == 0)
        return std::optional<int>();
    SION_CHECK(await(pid));
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR)
            return sys_error(Exit::os, errno, "cannot wait for the init's loop");
    }
    return std::optional<int>(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus));
}

Result<ExitStatus> init_exec(const Limits& limits, const std::vector<std::string>& argv) {
    SION_CHECK(apply_limits(limits));
    ChildSpec spec;
    spec.argv = argv;
    spec.env = current_env();
    SION_TRY(Child child, Child::spawn(spec));
    SION_CHECK(await(child.pid()));
    return child.wait();
}

std::string report_line(const ExitStatus& status) {
    Json line = Json::object();
    line.set("exit", status.status);
    line.set("signal", status.signal != 0 ? Json::integer(status.signal) : Json::null());
    line.set("cpu_ms", status.cpu_ms);
    line.set("max_rss_kib", status.max_rss_kib);
    return line.dump() + "\n";
}

std::string env_block(const std::vector<std::pair<std::string, std::string>>& vars) {
    std::string block;
    for (const auto& [name, value] : vars) {
        block += name;
        block += '=';
        block.append(value, 0, value.find('\0'));
        block += '\0';
    }
    return block;
}

Result<std::vector<std::pair<std::string, std::string>>> parse_env_block(std::string_view block) {
    std::vector<std::pair<std::string, std::string>> vars;
    while (!block.empty()) {
        size_t end = block.find('\0');
        std::string_view entry = block.substr(0, end);
        size_t eq = entry.find('=');
        // The name only: the value may be a secret.
        if (end == std::string_view::npos || eq == std::string_view::npos || eq == 0)
            return make_error(Exit::data,
                              "the environment given to init holds '%s', not NAME=value",
                              std::string(entry.substr(0, eq)).c_str());
        vars.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
        block.remove_prefix(end + 1);
    }
    return vars;
}

Status take_env(Fd fd) {
    SION_TRY(std::string block, read_all(fd.get(), k_env_block_max));
    fd.reset();
    SION_TRY(auto vars, parse_env_block(block));
    for (const auto& [name, value] : vars)
        if (::setenv(name.c_str(), value.c_str(), 1) != 0) // NOLINT(concurrency-mt-unsafe)
            return sys_error(Exit::os, errno, "cannot set '%s' in the environment", name.c_str());
    return {};
}

Json init_result(const Result<RunResult>& run, uint64_t cap) {
    proto::ExecResult r;
    if (!run) {
        // Not found or not runnable: what a shell would say, and its status.
        r.exit = to_int(run.error().exit());
        r.stderr_text = std::string(program_name()) + ": " + run.error().message() + "\n";
        return proto::exec_result_to_json(r);
    }
    r.exit = run->timed_out ? to_int(Exit::timeout) : run->status;
    if (run->signal != 0)
        r.signal = run->signal;
    r.timed_out = run->timed_out;
    r.stdout_text = run->out;
    r.stderr_text = run->err;
    bool cut_out = cut_output(r.stdout_text, cap, run->out_total);
    bool cut_err = cut_output(r.stderr_text, cap, run->err_total);
    r.truncated = cut_out || cut_err;
    r.wall_ms = run->wall_ms;
    r.cpu_ms = run->cpu_ms;
    r.max_rss_kib = run->max_rss_kib;
    return proto::exec_result_to_json(r);
}

namespace {

constexpr size_t k_request_line = size_t{4} << 20;
constexpr int k_retries = 50;
constexpr uint64_t k_retry_ms = 20;
// From init/end's SIGTERM to SIGKILL.
constexpr std::chrono::milliseconds k_end_grace{500};

// The warm init's state: the connection to sion-sandbox serve and the commands running.
class WarmInit {
public:
    explicit WarmInit(uv_loop_t* loop) : m_loop(loop), m_env(current_env()) {}

    rpc::UvHandlers handlers() {
        rpc::UvHandlers h;
        h.requests["init/exec"] = [this](rpc::Message m, rpc::Responder respond) {
            exec(m.params, std::move(respond));
        };
        h.notifications["init/end"] = [this](const rpc::Message&) { end_commands(); };
        h.on_end = [this](const Status&) { end(); };
        return h;
    }

    // The declared network: a forwarder to the proxy's socket, and the environment that names it.
    Status forward(const std::string& socket) {
        SION_TRY(m_forwarder, Forwarder::start(m_loop, 0, socket));
        for (const auto& [name, value] : proxy_environment(m_forwarder->port()))
            env_set(m_env, name, value);
        return {};
    }

    void attach(std::unique_ptr<rpc::UvConnection> conn) {
        m_conn = std::move(conn);
        m_conn->notify("init/ready");
    }

    [[nodiscard]] Status outcome() const { return m_conn ? m_conn->write_status() : Status(); }

private:
    // A command to start, kept while its start is retried.
    struct Start {
        uv_timer_t timer{};
        WarmInit* init = nullptr;
        ChildSpec spec;
        std::string input;
        uint64_t cap = 0;
        rpc::Responder respond;
        int tries = 0;
    };

    void exec(JsonView params, rpc::Responder respond) {
        auto request = proto::exec_request_from_json(params);
        if (!request) {
            respond(rpc::Reply::fail(rpc::k_invalid_params, request.error().message()));
            return;
        }
        if (m_ending) {
            respond(rpc::Reply::fail(rpc::k_invalid_request, "the session is ending"));
            return;
        }
        auto start = std::make_unique<Start>();
        start->init = this;
        start->cap = static_cast<uint64_t>(params.integer_or("output", 65536).value_or(65536));
        start->spec.argv = proto::request_argv(*request);
        start->spec.env = m_env;
        for (const auto& [name, value] : request->env)
            env_set(start->spec.env, name, value);
        if (request->timeout)
            start->spec.time_limit = *request->timeout;
        start->input = std::move(request->input);
        start->respond = std::move(respond);
        launch(std::move(start));
    }

    // Spawns; when the sandbox's processes are at RLIMIT_NPROC (the ones a command just killed may
    // not all be reaped yet), tries again every k_retry for about a second.
    void launch(std::unique_ptr<Start> start) {
        int64_t key = m_next++;
        uint64_t cap = start->cap;
        rpc::Responder respond = start->respond;
        auto done = [this, key, cap, respond](const Result<RunResult>& r) {
            respond(rpc::Reply::ok(init_result(r, cap)));
            m_runs.erase(key); // done may drop its own run
        };
        auto run = run_on_loop(m_loop, start->spec, start->input, cap, done);
        if (run) {
            m_runs.emplace(key, std::move(*run));
            return;
        }
        const char* eagain = std::strerror(EAGAIN); // NOLINT(concurrency-mt-unsafe): one thread
        bool again = run.error().exit() == Exit::os
                     && run.error().message().find(eagain) != std::string::npos;
        if (again && start->tries++ < k_retries && !m_ended) {
            retry_later(std::move(start));
            return;
        }
        Error why = run.error();
        if (why.exit() != Exit::not_found)
            why = Error(Exit::cannot_exec, why.message());
        respond(rpc::Reply::ok(init_result(Result<RunResult>(std::move(why)), cap)));
    }

    void retry_later(std::unique_ptr<Start> start) {
        Start* s = start.release(); // freed in the timer's close callback
        uv_timer_init(m_loop, &s->timer);
        s->timer.data = s;
        m_waiting.insert(s);
        uv_timer_start(
            &s->timer,
            [](uv_timer_t* t) {
                auto* waiting = static_cast<Start*>(t->data);
                WarmInit* self = waiting->init;
                self->m_waiting.erase(waiting);
                auto again = std::make_unique<Start>();
                again->init = self;
                again->spec = std::move(waiting->spec);
                again->input = std::move(waiting->input);
                again->cap = waiting->cap;
                again->respond = std::move(waiting->respond);
                again->tries = waiting->tries;
                close_start(waiting);
                self->launch(std::move(again));
            },
            k_retry_ms, 0);
    }

    static void close_start(Start* s) {
        uv_close(reinterpret_cast<uv_handle_t*>(&s->timer),
                 [](uv_handle_t* h) { delete static_cast<Start*>(h->data); });
    }

    // init/end: what runs gets SIGTERM, and SIGKILL k_end_grace later if it still runs; each is
    // answered as it ends. No command starts after it.
    void end_commands() {
        if (m_ending)
            return;
        m_ending = true;
        for (Start* s : m_waiting) {
            s->respond(rpc::Reply::ok(init_result(
                Result<RunResult>(make_error(Exit::cannot_exec, "the session ended first")),
                s->cap)));
            close_start(s);
        }
        m_waiting.clear();
        for (auto& [key, run] : m_runs)
            run->kill(SIGTERM);
        uv_timer_init(m_loop, &m_grace);
        m_grace.data = this;
        uv_timer_start(
            &m_grace,
            [](uv_timer_t* t) {
                auto* self = static_cast<WarmInit*>(t->data);
                for (auto& [key, run] : self->m_runs)
                    run->kill();
            },
            static_cast<uint64_t>(k_end_grace.count()), 0);
        uv_unref(reinterpret_cast<uv_handle_t*>(&m_grace));
    }

    // Input ended: what still runs is killed (dropping a run kills its group), and init ends.
    void end() {
        m_ended = true;
        m_runs.clear();
        for (Start* s : m_waiting)
            close_start(s);
        m_waiting.clear();
        m_conn->close();
        if (m_forwarder)
            m_forwarder->close();
        if (m_ending)
            uv_close(reinterpret_cast<uv_handle_t*>(&m_grace), nullptr);
    }

    uv_loop_t* m_loop;
    std::vector<std::string> m_env;
    std::unique_ptr<rpc::UvConnection> m_conn;
    std::unique_ptr<Forwarder> m_forwarder;
    std::map<int64_t, std::shared_ptr<UvRun>> m_runs;
    std::set<Start*> m_waiting;
    int64_t m_next = 0;
    bool m_ended = false;
    bool m_ending = false; // init/end came
    uv_timer_t m_grace{};  // from init/end to SIGKILL
};

} // namespace

Status init_serve(const Limits& limits, const std::string& proxy_socket) {
    SION_CHECK(apply_limits(limits));
    uv_loop_t loop;
    if (int rc = uv_loop_init(&loop); rc != 0)
        return make_error(Exit::os, "cannot start the event loop: %s", uv_strerror(rc));
    WarmInit init(&loop);
    Status forwarding = proxy_socket.empty() ? Status() : init.forward(proxy_socket);
    // A request carries a client's line (1 MiB at most) and a little more.
    auto conn = forwarding ? rpc::UvConnection::open(&loop, 0, 1, init.handlers(), k_request_line)
                           : Result<std::unique_ptr<rpc::UvConnection>>(forwarding.error());
    if (conn)
        init.attach(std::move(*conn));
    uv_run(&loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&loop) != 0)
        return make_error(Exit::software, "internal error: the event loop did not close cleanly");
    if (!conn)
        return std::move(conn).error();
    return init.outcome();
}

} // namespace sion::sandboxd
