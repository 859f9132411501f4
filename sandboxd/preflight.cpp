// SPDX-License-Identifier: MIT
// The pre-flight checks on a sandbox's configuration, with the seed's messages.
#include "sandboxd/preflight.hpp"

#include "lib/child.hpp"
#include "lib/fd.hpp"
#include "lib/home.hpp"
#include "lib/log.hpp"
#include "lib/text.hpp"
#include "sandboxd/bwrap.hpp"
#include "sandboxd/cgroup.hpp"
#include "sandboxd/server.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <chrono>

namespace sion::sandboxd {

namespace {

constexpr std::chrono::milliseconds k_probe_limit{15000};
constexpr size_t k_probe_output = size_t{64} << 10;

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r'))
        s.remove_suffix(1);
    while (!s.empty() && (s.front() == '\n' || s.front() == ' '))
        s.remove_prefix(1);
    return s;
}

std::string_view first_line(std::string_view s) {
    s = trimmed(s);
    return s.substr(0, s.find('\n'));
}

// A /proc/sys setting as it reads, trimmed; empty when the kernel has no such setting.
std::string sysctl_value(const std::string& proc_sys, const char* name) {
    int fd = ::open((proc_sys + "/" + name).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return {};
    Fd file(fd);
    auto text = read_all(file.get(), 64);
    return text ? std::string(trimmed(*text)) : std::string();
}

Result<bool> overlap(const std::string& a, const std::string& b) {
    auto r = paths_overlap(a, b);
    if (!r)
        return Error(Exit::config, r.error().message());
    return *r;
}

} // namespace

Status check_workspace(const Config& config) {
    SION_TRY(bool both, overlap(config.workspace, config.home));
    if (both)
        return make_error(Exit::config,
                          "the workspace %s and %s (wallets, sessions, skills) overlap: give a "
                          "workspace apart from it",
                          config.workspace_as_given.c_str(), config.home_as_given.c_str());
    return {};
}

Status check_reads(const Config& config) {
    for (size_t i = 0; i < config.reads.size(); ++i) {
        SION_TRY(bool both, overlap(config.reads[i], config.home));
        if (both) {
            const std::string& given =
                i < config.reads_as_given.size() ? config.reads_as_given[i] : config.reads[i];
            return make_error(Exit::config,
                              "the directory %s given with --sandbox-read and %s (wallets, "
                              "sessions, skills) overlap: give a directory apart from it",
                              given.c_str(), config.home_as_given.c_str());
        }
    }
    return {};
}

Status preflight(const Config& config) {
    SION_CHECK(check_workspace(config));
    SION_CHECK(check_reads(config));
    return {};
}

Result<std::string> bwrap_version(const std::string& bwrap) {
    ChildSpec spec;
    spec.argv = {bwrap, "--version"};
    spec.time_limit = k_probe_limit;
    SION_TRY(RunResult r, run(std::move(spec), {}, k_probe_output));
    std::string_view line = first_line(r.out);
    constexpr std::string_view k_name = "bubblewrap ";
    if (r.status != 0 || line.substr(0, k_name.size()) != k_name)
        return make_error(Exit::unavailable, "'%s --version' did not say which bubblewrap it is",
                          bwrap.c_str());
    return std::string(line.substr(k_name.size()));
}

std::string userns_fix(std::string_view bwrap_error, const std::string& proc_sys) {
    if (sysctl_value(proc_sys, "kernel/unprivileged_userns_clone") == "0")
        return "allow them with sysctl kernel.unprivileged_userns_clone=1";
    if (sysctl_value(proc_sys, "user/max_user_namespaces") == "0")
        return "allow them with sysctl user.max_user_namespaces=10000";
    if (sysctl_value(proc_sys, "kernel/apparmor_restrict_unprivileged_userns") == "1"
        || bwrap_error.find("apparmor") != std::string_view::npos)
        return "AppArmor restricts them (Ubuntu 24.04): allow them with sysctl "
               "kernel.apparmor_restrict_unprivileged_userns=0, or give bwrap an AppArmor profile "
               "that allows userns";
    return "allow them with sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04 with "
           "sysctl kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap";
}

Status check_userns(const std::string& bwrap) {
    BwrapUser user = bwrap_user();
    ChildSpec spec;
    // As prepare_launch() does, root becomes k_host_id through this program.
    if (user.staged)
        spec.argv = {"/proc/self/exe", "become", std::to_string(user.uid), std::to_string(user.gid),
                     "--"};
    spec.argv.insert(spec.argv.end(),
                     {bwrap, "--unshare-user", "--ro-bind", "/", "/", "--", "true"});
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.time_limit = k_probe_limit;
    SION_TRY(RunResult r, run(std::move(spec), {}, k_probe_output));
    if (r.status == 0)
        return {};
    std::string said(first_line(r.err));
    std::string own = std::string(program_name()) + ": ";
    if (said.compare(0, own.size(), own) == 0) // become's: bwrap never ran
        return make_error(Exit::unavailable,
                          "%s (as root, bwrap runs as uid %u, who must be able "
                          "to run it)",
                          said.substr(own.size()).c_str(), user.uid);
    if (said.empty())
        said = r.timed_out ? "it did not end within 15 s"
                           : "it exited with status " + std::to_string(r.status);
    return make_error(Exit::unavailable, "user namespaces refused (%s): %s", said.c_str(),
                      userns_fix(r.err).c_str());
}

Result<std::string> run_trivial_command(const Config& config) {
    proto::ExecRequest request;
    request.argv = {"id", "-u"};
    SION_TRY(proto::ExecResult r, exec_one(config, request, std::string()));
    if (r.exit != 0 || r.timed_out) {
        std::string said(first_line(r.stderr_text));
        return make_error(Exit::unavailable, "id -u %s in the sandbox%s%s",
                          r.timed_out ? "ran out of time"
                                      : ("exited " + std::to_string(r.exit)).c_str(),
                          said.empty() ? "" : ": ", said.c_str());
    }
    return std::string(trimmed(r.stdout_text));
}

std::vector<std::string> bounds(const Config& config) {
    auto n = static_cast<unsigned long long>(config.limits.processes);
    std::string memory = size_text(config.limits.memory);
    auto pids = find_cgroup_parent("pids");
    auto mem = find_cgroup_parent("memory");
    auto cgroup = SandboxCgroup::make(pids, mem, config.limits.processes, config.limits.memory);
    std::string processes, memory_line;
    // bwrap never runs as root (stage.hpp), so RLIMIT_NPROC binds.
    if (cgroup && !cgroup->pids_dir().empty())
        processes =
            format("processes bounded: pids.max %llu in each sandbox's own cgroup beneath %s "
                   "(cgroup v%d)",
                   n, pids->dir.c_str(), pids->version);
    else
        processes = format("processes bounded: RLIMIT_NPROC %llu for uid %u, who runs bwrap "
                           "(no cgroup: %s)",
                           n, static_cast<unsigned>(bwrap_user().uid),
                           (pids ? cgroup.error() : pids.error()).message().c_str());
    if (cgroup && !cgroup->memory_dir().empty())
        memory_line = format("memory bounded: %s for each sandbox, in its own cgroup beneath %s "
                             "(cgroup v%d), with no swap",
                             memory.c_str(), mem->dir.c_str(), mem->version);
    else
        memory_line = format("memory bounded: RLIMIT_DATA %s a process (no memory cgroup: %s)",
                             memory.c_str(),
                             (cgroup ? cgroup->memory_why() : cgroup.error().message()).c_str());
    return {processes, memory_line};
}

std::string who_runs(const Config& config) {
    BwrapUser user = bwrap_user();
    if (!user.staged)
        return format("commands run as uid %u, who runs sion-sandbox (10001 inside)",
                      static_cast<unsigned>(user.uid));

    struct stat st {};

    std::string owner =
        ::stat(config.workspace.c_str(), &st) == 0
            ? format("%u:%u", static_cast<unsigned>(st.st_uid), static_cast<unsigned>(st.st_gid))
            : std::string("its owner");
    return format("commands run as uid %u, never root (10001 inside); the workspace is idmapped so "
                  "that what they write is %s's",
                  user.uid, owner.c_str());
}

} // namespace sion::sandboxd
