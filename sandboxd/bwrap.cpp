// SPDX-License-Identifier: MIT
// Starting bubblewrap as the right user with the layout, and one command in a fresh sandbox.
#include "sandboxd/bwrap.hpp"

#include "lib/json.hpp"
#include "lib/log.hpp"
#include "sandboxd/capture.hpp"
#include "sandboxd/grants.hpp"
#include "sandboxd/init.hpp"
#include "sandboxd/limits.hpp"
#include "sandboxd/output.hpp"
#include "sandboxd/seccomp.hpp"
#include "sandboxd/stage.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string_view>

namespace sion::sandboxd {

namespace {

constexpr const char* k_self = "/proc/self/exe";

// A pipe holding `text`, closed for writing: bwrap reads it to its end.
Result<Fd> data_pipe(const std::string& text) {
    SION_TRY(Pipe pipe, Pipe::make());
    SION_CHECK(write_all(pipe.write.get(), text));
    return std::move(pipe.read);
}

// Gives the child `fd` (kept in launch.fds) as the next free number; returns that number.
int give(Launch& launch, Fd fd, int& next) {
    int number = next++;
    launch.spec.extra_fds.push_back({fd.get(), number});
    launch.fds.push_back(std::move(fd));
    return number;
}

// Where this program is, to bind it into the sandbox.
Result<std::string> own_path() {
    std::array<char, PATH_MAX> buf{};
    ssize_t n = ::readlink(k_self, buf.data(), buf.size() - 1);
    if (n <= 0)
        return sys_error(Exit::os, errno, "cannot find this program ('%s')", k_self);
    std::string path(buf.data(), static_cast<size_t>(n));
    constexpr std::string_view k_deleted = " (deleted)";
    if (path.size() > k_deleted.size()
        && std::string_view(path).substr(path.size() - k_deleted.size()) == k_deleted)
        return make_error(Exit::unavailable,
                          "cannot bind this program into the sandbox: '%s' was "
                          "replaced or removed since it started",
                          path.substr(0, path.size() - k_deleted.size()).c_str());
    return path;
}

Result<Layout> open_layout(const Config& config, Launch& launch, int& next) {
    Layout fds;
    SION_TRY(fds.exe, own_path());
    SION_TRY(Fd filter, memory_file(filter_program(), "the seccomp filter"));
    fds.seccomp = give(launch, std::move(filter), next);
    SION_TRY(Fd passwd, data_pipe(passwd_text()));
    fds.passwd = give(launch, std::move(passwd), next);
    SION_TRY(Fd group, data_pipe(group_text()));
    fds.group = give(launch, std::move(group), next);
    SION_TRY(Fd hosts, data_pipe(hosts_text()));
    fds.hosts = give(launch, std::move(hosts), next);
    for (auto& [copy, fd] : open_copies(etc_paths(config))) {
        copy.fd = give(launch, std::move(fd), next);
        fds.etc.push_back(std::move(copy));
    }
    return fds;
}

// As root, what become stages (stage.hpp): become's options, with `fds` changed to bind the staged
// paths instead of the sources.
std::vector<std::string> staged_sources(const Config& config, Layout& fds) {
    std::vector<std::string> sources;
    auto restage = [&](const std::string& path) {
        sources.push_back(path);
        return staged_path(sources.size());
    };
    for (const std::string& dir : config.reads)
        fds.reads.push_back(restage(dir));
    fds.exe = restage(fds.exe);
    if (!fds.proxy_socket.empty())
        fds.proxy_socket = restage(fds.proxy_socket);
    if (!config.channel.empty())
        fds.channel = restage(config.channel);
    if (!config.skill_dir.empty())
        fds.skill = restage(config.skill_dir);
    fds.workspace = staged_path(0);
    return stage_args(config.workspace, sources);
}

Status check_supported(const Config& config) {
    if (config.backend != BackendKind::bwrap)
        return make_error(Exit::software, "internal error: bwrap asked for a Docker sandbox");
    return {};
}

// Why bwrap made no sandbox, from what it wrote, with the fix when it is a known one. become's own
// refusal (its line, "sion-sandbox: …", exit Exit::config for a workspace that cannot be idmapped)
// is passed on as it said it.
Error sandbox_failure(const Captured& c, const Launch& launch) {
    std::string_view err = c.err;
    std::string line(err.substr(0, err.find('\n')));
    std::string own = std::string(program_name()) + ": ";
    if (c.signal == 0 && line.compare(0, own.size(), own) == 0)
        return Error(c.status == to_int(Exit::config) ? Exit::config : Exit::unavailable,
                     line.substr(own.size()));
    if (line.empty())
        line = c.signal != 0 ? "bwrap was killed by signal " + std::to_string(c.signal)
                             : "bwrap exited with status " + std::to_string(c.status);
    std::string fix;
    if (line.find("namespace") != std::string::npos || line.find("uid map") != std::string::npos
        || line.find("Operation not permitted") != std::string::npos)
        fix = " (unprivileged user namespaces are refused: allow them with sysctl "
              "kernel.unprivileged_userns_clone=1, or on Ubuntu kernel."
              "apparmor_restrict_unprivileged_userns=0)";
    else if (launch.staged && line.find("Permission denied") != std::string::npos)
        fix = " (as root, bwrap runs as uid " + std::to_string(launch.uid)
              + ", who must be able to read what the sandbox shows)";
    return make_error(Exit::unavailable, "cannot make the sandbox: %s%s", line.c_str(),
                      fix.c_str());
}

Result<proto::ExecResult> interpret(Captured c, uint64_t cap, const Launch& launch) {
    proto::ExecResult r;
    r.wall_ms = c.wall.count();
    if (c.timed_out) {
        r.exit = to_int(Exit::timeout);
        r.signal = 9;
        r.timed_out = true;
    } else if (!read_status(c.report, r)) {
        return sandbox_failure(c, launch);
    }
    r.out_of_memory = launch.cgroup && launch.cgroup->oom_kills() > 0;
    bool cut_out = cut_output(c.out, cap, c.out_total);
    bool cut_err = cut_output(c.err, cap, c.err_total);
    r.truncated = cut_out || cut_err;
    r.stdout_text = std::move(c.out);
    r.stderr_text = std::move(c.err);
    return r;
}

} // namespace

bool read_status(const std::string& text, proto::ExecResult& r) {
    auto json = Json::parse(std::string_view(text).substr(0, text.find('\n')));
    if (!json)
        return false;
    auto exit = json->view().integer("exit");
    if (!exit)
        return false;
    r.exit = static_cast<int>(*exit);
    if (auto signal = json->view().integer("signal"); signal && *signal > 0)
        r.signal = static_cast<int>(*signal);
    r.cpu_ms = json->view().integer_or("cpu_ms", 0).value_or(0);
    r.max_rss_kib = json->view().integer_or("max_rss_kib", 0).value_or(0);
    return true;
}

Result<std::string> find_bwrap() {
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read before any thread runs
    const char* path = std::getenv("PATH");
    std::string_view search = path != nullptr && *path != '\0' ? path : "/usr/bin:/bin";
    while (true) {
        size_t colon = search.find(':');
        std::string dir(search.substr(0, colon));
        if (!dir.empty() && dir[0] == '/') {
            std::string candidate = dir + "/bwrap";
            if (::access(candidate.c_str(), X_OK) == 0)
                return candidate;
        }
        if (colon == std::string_view::npos)
            break;
        search.remove_prefix(colon + 1);
    }
    return make_error(Exit::unavailable,
                      "cannot find bwrap: install bubblewrap (apt-get install bubblewrap)");
}

BwrapUser bwrap_user() {
    if (::geteuid() == 0)
        return {k_host_id, k_host_id, true};
    return {::geteuid(), ::getegid(), false};
}

Result<Launch> prepare_launch(const Config& config,
                              const std::vector<std::pair<std::string, std::string>>& extra,
                              int status_fd, const std::string& proxy_socket,
                              const EgressTrust& trust) {
    SION_CHECK(check_supported(config));
    SION_TRY(std::string bwrap, find_bwrap());
    Launch launch;
    BwrapUser user = bwrap_user();
    launch.staged = user.staged;
    launch.uid = user.uid;
    launch.gid = user.gid;
    int next = k_status_fd;
    if (status_fd >= 0)
        launch.spec.extra_fds.push_back({status_fd, next++});
    if (!extra.empty()) {
        SION_TRY(Fd env, memory_file(env_block(extra), "the environment"));
        launch.env_fd = give(launch, std::move(env), next);
    }
    SION_TRY(Layout fds, open_layout(config, launch, next));
    fds.proxy_socket = proxy_socket;
    if (!trust.bundle.empty()) {
        // Memory files: a bundle of roots is more than a pipe holds before bwrap reads it.
        SION_TRY(Fd bundle, memory_file(trust.bundle, "the trusted certificates"));
        fds.ca_bundle = give(launch, std::move(bundle), next);
        SION_TRY(Fd ca, memory_file(trust.authority, "sion's authority"));
        fds.egress_ca = give(launch, std::move(ca), next);
    }
    launch.limits = config.limits;
    if (auto cgroup = SandboxCgroup::make(find_cgroup_parent("pids"), find_cgroup_parent("memory"),
                                          config.limits.processes, config.limits.memory)) {
        if (!cgroup->memory_dir().empty())
            launch.limits.memory = 0;
        launch.cgroup = std::move(*cgroup);
    }
    if (launch.staged || launch.cgroup) {
        launch.spec.argv = {k_self, "become"};
        if (launch.cgroup)
            for (const std::string& dir : launch.cgroup->dirs())
                launch.spec.argv.insert(launch.spec.argv.end(), {"--cgroup", dir});
        if (launch.staged) {
            std::vector<std::string> stage = staged_sources(config, fds);
            launch.spec.argv.insert(launch.spec.argv.end(), stage.begin(), stage.end());
        }
        launch.spec.argv.insert(launch.spec.argv.end(),
                                {std::to_string(launch.uid), std::to_string(launch.gid), "--"});
    }
    launch.spec.argv.push_back(bwrap);
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read before any thread runs
    const char* term = std::getenv("TERM");
    std::vector<std::string> env = sandbox_env(term != nullptr ? term : "");
    if (!trust.bundle.empty())
        for (const auto& [name, value] : egress_trust_environment())
            env.push_back(name + "=" + value);
    std::vector<std::string> layout = layout_args(config, probe_host_root(), fds, env);
    launch.spec.argv.insert(launch.spec.argv.end(), layout.begin(), layout.end());
    return launch;
}

std::vector<std::string> run_init_argv(const Limits& limits, bool forward,
                                       const std::vector<std::string>& argv, int env_fd) {
    std::vector<std::string> out = {"--",     k_exe_inside,  "init",
                                    "--exec", "--status-fd", std::to_string(k_status_fd)};
    if (env_fd >= 0)
        out.insert(out.end(), {"--env-fd", std::to_string(env_fd)});
    if (forward)
        out.insert(out.end(), {"--proxy-socket", k_proxy_inside});
    std::vector<std::string> limit_args = limits_to_args(limits);
    out.insert(out.end(), limit_args.begin(), limit_args.end());
    out.emplace_back("--");
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
}

Result<proto::ExecResult> exec_once(const Config& config, const proto::ExecRequest& request,
                                    const std::optional<std::string>& input) {
    SION_TRY(Pipe status, Pipe::make());
    SION_TRY(Launch launch, prepare_launch(config, request.env, status.write.get()));
    std::vector<std::string> tail =
        run_init_argv(launch.limits, false, proto::request_argv(request), launch.env_fd);
    launch.spec.argv.insert(launch.spec.argv.end(), tail.begin(), tail.end());

    CaptureSpec spec;
    spec.child = launch.spec;
    spec.child.time_limit = config.limits.timeout;
    if (request.timeout)
        spec.child.time_limit =
            std::min<std::chrono::milliseconds>(*request.timeout, config.limits.timeout);
    spec.input = input;
    spec.cap = config.limits.output;
    spec.status_fd = status.read.release();
    spec.close_after_spawn = std::move(launch.fds);
    spec.close_after_spawn.push_back(std::move(status.write));
    SION_TRY(Captured c, capture(std::move(spec)));
    return interpret(std::move(c), config.limits.output, launch);
}

namespace {

Status set_ids(uid_t uid, gid_t gid) {
    if (::setgroups(0, nullptr) != 0)
        return sys_error(Exit::no_perm, errno, "cannot drop supplementary groups");
    if (::setresgid(gid, gid, gid) != 0)
        return sys_error(Exit::no_perm, errno, "cannot become group %u",
                         static_cast<unsigned>(gid));
    if (::setresuid(uid, uid, uid) != 0)
        return sys_error(Exit::no_perm, errno, "cannot become user %u", static_cast<unsigned>(uid));
    return {};
}

} // namespace

Error become(uid_t uid, gid_t gid, const std::vector<std::string>& argv) {
    if (argv.empty())
        return make_error(Exit::software, "become: nothing to run");
    // Already them (started only to join a cgroup): supplementary groups and all stay.
    if (uid != ::geteuid() || gid != ::getegid())
        if (Status changed = set_ids(uid, gid); !changed)
            return changed.error();
    std::vector<char*> args;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str())); // NOLINT: execv does not write through them
    args.push_back(nullptr);
    ::execve(args[0], args.data(), environ);
    return sys_error(errno == ENOENT ? Exit::not_found : Exit::cannot_exec, errno,
                     "cannot run '%s'", argv[0].c_str());
}

} // namespace sion::sandboxd
