// SPDX-License-Identifier: MIT
// Spawning children with posix_spawn, waiting for them with a pidfd, and run(): feed and collect.
#include "lib/child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <utility>

namespace sion {

namespace {

// execvp's search path when PATH is not set (glibc's confstr(_CS_PATH)).
constexpr std::string_view k_default_path = "/bin:/usr/bin";
// How much run() moves per system call.
constexpr size_t k_chunk = 65536;

// An fd the child gets: `source` in the parent becomes number `target` in the child.
struct FdMap {
    int source;
    int target;
};

// What spawn() opens for a child; the child's ends of new pipes are closed when it goes.
struct Prepared {
    Fd cwd;
    Fd dev_null;
    std::vector<Fd> child_ends;
    std::vector<FdMap> fds;
};

// glibc's init functions only clear the structure and cannot fail.
struct FileActions {
    posix_spawn_file_actions_t actions{};

    FileActions() { posix_spawn_file_actions_init(&actions); }

    ~FileActions() { posix_spawn_file_actions_destroy(&actions); }

    FileActions(const FileActions&) = delete;
    FileActions& operator=(const FileActions&) = delete;
    FileActions(FileActions&&) = delete;
    FileActions& operator=(FileActions&&) = delete;
};

struct SpawnAttr {
    posix_spawnattr_t attr{};

    SpawnAttr() { posix_spawnattr_init(&attr); }

    ~SpawnAttr() { posix_spawnattr_destroy(&attr); }

    SpawnAttr(const SpawnAttr&) = delete;
    SpawnAttr& operator=(const SpawnAttr&) = delete;
    SpawnAttr(SpawnAttr&&) = delete;
    SpawnAttr& operator=(SpawnAttr&&) = delete;
};

std::optional<std::string_view> env_value(const std::vector<std::string>& env,
                                          std::string_view name) {
    for (const std::string& entry : env) {
        std::string_view e = entry;
        if (e.size() > name.size() && e.substr(0, name.size()) == name && e[name.size()] == '=')
            return e.substr(name.size() + 1);
    }
    return std::nullopt;
}

// Milliseconds from now until `end`, rounded up so a poll does not wake just before it; -1: none.
int poll_timeout(std::optional<Child::Clock::time_point> end) {
    if (!end)
        return -1;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*end - Child::Clock::now()).count();
    return static_cast<int>(std::clamp<decltype(left)>(left, 0, INT_MAX));
}

// `span` from now; spans of more than a century are a century, which keeps the sum from
// overflowing.
Child::Clock::time_point from_now(std::chrono::milliseconds span) {
    constexpr std::chrono::milliseconds k_century = std::chrono::hours(24 * 36525);
    return Child::Clock::now() + std::clamp(span, std::chrono::milliseconds(0), k_century);
}

bool passed(std::optional<Child::Clock::time_point> end) {
    return end && Child::Clock::now() >= *end;
}

Status check_open(int fd, const std::string& name) {
    if (fd < 0 || ::fcntl(fd, F_GETFD) < 0)
        return sys_error(Exit::software, fd < 0 ? EBADF : errno, "cannot pass fd %d to '%s'", fd,
                         name.c_str());
    return {};
}

Status check_spec(const ChildSpec& spec) {
    if (spec.argv.empty())
        return make_error(Exit::software, "cannot run a program: its argv is empty");
    const std::string& name = spec.argv[0];
    if (spec.time_limit.count() < 0)
        return make_error(Exit::software, "cannot run '%s': negative time limit", name.c_str());
    for (size_t i = 0; i < spec.extra_fds.size(); ++i) {
        const ExtraFd& x = spec.extra_fds[i];
        if (x.child_fd < 3)
            return make_error(Exit::software, "cannot give '%s' fd %d: fds 0-2 are its stdio",
                              name.c_str(), x.child_fd);
        for (size_t j = 0; j < i; ++j)
            if (spec.extra_fds[j].child_fd == x.child_fd)
                return make_error(Exit::software, "cannot give '%s' fd %d twice", name.c_str(),
                                  x.child_fd);
        SION_CHECK(check_open(x.parent_fd, name));
    }
    return {};
}

// The path to spawn for `name`, searched like execvp(3) but in the PATH of the child's `env`,
// relative to the child's working directory `dirfd`. A name with a slash is taken as it is.
Result<std::string> resolve(const std::string& name, const std::vector<std::string>& env,
                            int dirfd) {
    if (name.empty())
        return sys_error(Exit::not_found, ENOENT, "cannot run ''");
    if (name.find('/') != std::string::npos)
        return name;
    std::string_view search = env_value(env, "PATH").value_or(k_default_path);
    int err = ENOENT;
    for (;;) {
        size_t colon = search.find(':');
        std::string_view dir = search.substr(0, colon);
        // An empty entry is the working directory, as for execvp.
        std::string candidate = dir.empty() ? "./" + name : std::string(dir) + "/" + name;

        struct stat st {};

        if (::fstatat(dirfd, candidate.c_str(), &st, 0) == 0) {
            if (S_ISREG(st.st_mode) && ::faccessat(dirfd, candidate.c_str(), X_OK, AT_EACCESS) == 0)
                return candidate;
            err = EACCES; // execvp goes on searching but reports this if nothing else is found
        } else if (errno == EACCES) {
            err = EACCES;
        }
        if (colon == std::string_view::npos)
            break;
        search.remove_prefix(colon + 1);
    }
    return sys_error(err == ENOENT ? Exit::not_found : Exit::cannot_exec, err, "cannot run '%s'",
                     name.c_str());
}

// The shell's reading of a failed exec: 127 when there is no such program, 126 when it is there but
// cannot be run, and a plain system failure (no memory, too many processes) otherwise.
Error exec_error(int err, const std::string& name, const std::string& path, int dirfd) {
    Exit exit = Exit::os;
    switch (err) {
    case ENOENT:
    case ENOTDIR: {
        struct stat st {};

        // ENOENT for a file that is there: its "#!" interpreter is missing.
        bool there = ::fstatat(dirfd, path.c_str(), &st, 0) == 0;
        exit = there ? Exit::cannot_exec : Exit::not_found;
        break;
    }
    case EACCES:
    case EPERM:
    case ENOEXEC:
    case EISDIR:
    case ETXTBSY:
    case ELOOP:
    case ENAMETOOLONG:
    case E2BIG:
    case ELIBBAD:
        exit = Exit::cannot_exec;
        break;
    default:
        break;
    }
    return sys_error(exit, err, "cannot run '%s'", name.c_str());
}

Result<int> dev_null(Prepared& p) {
    if (!p.dev_null) {
        int fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd < 0)
            return sys_error(Exit::os, errno, "cannot open '/dev/null'");
        p.dev_null.reset(fd);
    }
    return p.dev_null.get();
}

// The parent fd that becomes the child's fd `target` (0-2); a new pipe's other end goes to
// `parent_end`.
Result<int> stdio_source(const Stdio& io, int target, Prepared& p, Fd& parent_end,
                         const std::string& name) {
    switch (io.kind) {
    case Stdio::Kind::inherit:
        if (::fcntl(target, F_GETFD) >= 0)
            return target;
        return dev_null(p);
    case Stdio::Kind::null:
        return dev_null(p);
    case Stdio::Kind::fd:
        SION_CHECK(check_open(io.fd, name));
        return io.fd;
    case Stdio::Kind::pipe: {
        SION_TRY(Pipe pipe, Pipe::make());
        bool child_reads = target == 0;
        parent_end = std::move(child_reads ? pipe.write : pipe.read);
        p.child_ends.push_back(std::move(child_reads ? pipe.read : pipe.write));
        return p.child_ends.back().get();
    }
    }
    return make_error(Exit::software, "cannot run '%s': bad stdio kind", name.c_str());
}

// Fills in the fds the child gets; returns an errno value as posix_spawn_file_actions_* do.
int add_fd_actions(posix_spawn_file_actions_t* fa, int cwd, const std::vector<FdMap>& fds) {
    int rc = 0;
    // First, before a dup2 below can land on the number the directory fd has.
    if (cwd >= 0)
        rc = posix_spawn_file_actions_addfchdir_np(fa, cwd);
    int top = 2;
    int max_target = 2;
    for (const FdMap& m : fds) {
        top = std::max({top, m.source, m.target});
        max_target = std::max(max_target, m.target);
    }
    // Every source goes to a fresh number above all sources and targets first: a source may be
    // another mapping's target, and dup2 onto itself keeps FD_CLOEXEC on some glibc versions.
    int n = static_cast<int>(fds.size());
    for (int i = 0; rc == 0 && i < n; ++i)
        rc = posix_spawn_file_actions_adddup2(fa, fds[i].source, top + 1 + i);
    for (int fd = 3; rc == 0 && fd <= max_target; ++fd) {
        bool named =
            std::any_of(fds.begin(), fds.end(), [fd](const FdMap& m) { return m.target == fd; });
        if (!named)
            rc = posix_spawn_file_actions_addclose(fa, fd); // glibc ignores EBADF here
    }
    for (int i = 0; rc == 0 && i < n; ++i)
        rc = posix_spawn_file_actions_adddup2(fa, top + 1 + i, fds[i].target);
    // Whatever is left open, close-on-exec or not, including the temporary numbers.
    if (rc == 0)
        rc = posix_spawn_file_actions_addclosefrom_np(fa, max_target + 1);
    return rc;
}

int set_attributes(posix_spawnattr_t* attr) {
    sigset_t none;
    sigset_t all;
    sigemptyset(&none);
    sigfillset(&all);
    short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    int rc = posix_spawnattr_setflags(attr, flags);
    if (rc == 0)
        rc = posix_spawnattr_setpgroup(attr, 0);
    if (rc == 0)
        rc = posix_spawnattr_setsigmask(attr, &none);
    if (rc == 0)
        rc = posix_spawnattr_setsigdefault(attr, &all);
    return rc;
}

// exec wants char* const[]; it does not write through them.
std::vector<char*> c_strings(const std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (const std::string& s : strings)
        // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast)
        out.push_back(const_cast<char*>(s.c_str()));
    out.push_back(nullptr);
    return out;
}

int64_t to_us(const timeval& t) {
    return static_cast<int64_t>(t.tv_sec) * 1000000 + t.tv_usec;
}

ExitStatus decode(int wstatus, const rusage& use, Child::Clock::duration wall) {
    ExitStatus s;
    s.wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(wall).count();
    // Summed before rounding, so two halves of a millisecond are not both lost.
    s.cpu_ms = (to_us(use.ru_utime) + to_us(use.ru_stime)) / 1000;
    s.max_rss_kib = use.ru_maxrss;
    if (WIFEXITED(wstatus)) {
        s.exit_code = WEXITSTATUS(wstatus);
        s.status = s.exit_code;
    } else if (WIFSIGNALED(wstatus)) {
        s.signal = WTERMSIG(wstatus);
        s.status = to_int(Exit::signal_base) + s.signal;
    }
    return s;
}

// Kills the group, and the child itself should it have left it. Only while it is not reaped, so
// that its pid (and with it the group id) cannot have been reused.
void kill_all(pid_t pid, int signal) {
    ::kill(-pid, signal);
    ::kill(pid, signal);
}

} // namespace

std::vector<std::string> env_keep(const std::vector<std::string>& names) {
    std::vector<std::string> env;
    for (const std::string& name : names) {
        // NOLINTNEXTLINE(concurrency-mt-unsafe): the project does not setenv once threads run
        if (const char* value = std::getenv(name.c_str()))
            env.push_back(name + "=" + value);
    }
    return env;
}

void env_set(std::vector<std::string>& env, std::string_view name, std::string_view value) {
    std::string entry = std::string(name) + "=" + std::string(value);
    for (std::string& e : env) {
        if (e.size() > name.size() && std::string_view(e).substr(0, name.size()) == name
            && e[name.size()] == '=') {
            e = std::move(entry);
            return;
        }
    }
    env.push_back(std::move(entry));
}

Result<Child> Child::spawn(const ChildSpec& spec) {
    SION_CHECK(check_spec(spec));
    const std::string& name = spec.argv[0];
    Prepared p;
    if (!spec.cwd.empty()) {
        // Opened here so that a bad directory is reported as one, not as a program not found.
        int fd = ::open(spec.cwd.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            return sys_error(Exit::os, errno, "cannot change directory to '%s'", spec.cwd.c_str());
        p.cwd.reset(fd);
    }
    int dirfd = p.cwd ? p.cwd.get() : AT_FDCWD;
    SION_TRY(std::string path, resolve(name, spec.env, dirfd));
    Child child;
    SION_TRY(int in, stdio_source(spec.in, 0, p, child.m_in, name));
    SION_TRY(int out, stdio_source(spec.out, 1, p, child.m_out, name));
    SION_TRY(int err, stdio_source(spec.err, 2, p, child.m_err, name));
    p.fds = {{in, 0}, {out, 1}, {err, 2}};
    for (const ExtraFd& x : spec.extra_fds)
        p.fds.push_back({x.parent_fd, x.child_fd});
    FileActions fa;
    SpawnAttr attr;
    int rc = add_fd_actions(&fa.actions, p.cwd ? p.cwd.get() : -1, p.fds);
    if (rc == 0)
        rc = set_attributes(&attr.attr);
    if (rc != 0)
        return sys_error(Exit::os, rc, "cannot run '%s'", name.c_str());
    std::vector<char*> argv = c_strings(spec.argv);
    std::vector<char*> envp = c_strings(spec.env);
    child.m_spawned = Clock::now();
    if (spec.time_limit.count() > 0)
        child.m_deadline = from_now(spec.time_limit);
    pid_t pid = -1;
    rc = ::posix_spawn(&pid, path.c_str(), &fa.actions, &attr.attr, argv.data(), envp.data());
    if (rc != 0)
        return exec_error(rc, name, path, dirfd);
    child.m_pid = pid;
    // Safe from pid reuse: only we reap this pid, and we have not.
    int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0)
        return sys_error(Exit::os, errno, "cannot watch '%s' (pid %d)", name.c_str(), pid);
    child.m_pidfd.reset(pidfd);
    return child;
}

Child::Child(Child&& other) noexcept
    : m_pid(std::exchange(other.m_pid, -1)), m_pidfd(std::move(other.m_pidfd)),
      m_in(std::move(other.m_in)), m_out(std::move(other.m_out)), m_err(std::move(other.m_err)),
      m_spawned(other.m_spawned), m_deadline(other.m_deadline), m_status(other.m_status) {}

Child& Child::operator=(Child&& other) noexcept {
    if (this != &other) {
        drop();
        m_pid = std::exchange(other.m_pid, -1);
        m_pidfd = std::move(other.m_pidfd);
        m_in = std::move(other.m_in);
        m_out = std::move(other.m_out);
        m_err = std::move(other.m_err);
        m_spawned = other.m_spawned;
        m_deadline = other.m_deadline;
        m_status = other.m_status;
    }
    return *this;
}

Child::~Child() {
    drop();
}

void Child::drop() noexcept {
    m_in.reset();
    m_out.reset();
    m_err.reset();
    if (m_pid > 0) {
        kill_all(m_pid, SIGKILL);
        while (::waitpid(m_pid, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    m_pid = -1;
    m_pidfd.reset();
}

Result<ExitStatus> Child::wait() {
    SION_TRY(std::optional<ExitStatus> status, wait_until(std::nullopt));
    return *status; // without an end of its own, wait_until returns only with a status
}

Result<std::optional<ExitStatus>> Child::wait_for(std::chrono::milliseconds timeout) {
    return wait_until(from_now(timeout));
}

Result<std::optional<ExitStatus>> Child::wait_until(std::optional<Clock::time_point> until) {
    if (m_status)
        return m_status;
    if (m_pid < 0)
        return make_error(Exit::software, "cannot wait for a child that was not spawned");
    for (;;) {
        std::optional<Clock::time_point> end = m_deadline;
        if (until && (!end || *until < *end))
            end = until;
        pollfd pfd{m_pidfd.get(), POLLIN, 0};
        int n = ::poll(&pfd, 1, poll_timeout(end));
        if (n < 0 && errno != EINTR)
            return sys_error(Exit::os, errno, "cannot wait for process %d", m_pid);
        if (n > 0) {
            SION_TRY(ExitStatus status, reap(false));
            return std::optional(status);
        }
        if (passed(m_deadline)) {
            kill_all(m_pid, SIGKILL);
            SION_TRY(ExitStatus status, reap(true));
            return std::optional(status);
        }
        if (passed(until))
            return std::optional<ExitStatus>();
    }
}

Result<ExitStatus> Child::reap(bool timed_out) {
    int wstatus = 0;
    rusage use{};
    pid_t r = -1;
    do
        r = ::wait4(m_pid, &wstatus, 0, &use);
    while (r < 0 && errno == EINTR);
    if (r < 0) {
        int err = errno;
        pid_t pid = std::exchange(m_pid, -1); // gone either way: never signal that number again
        m_pidfd.reset();
        return sys_error(Exit::os, err, "cannot wait for process %d", pid);
    }
    ExitStatus status = decode(wstatus, use, Clock::now() - m_spawned);
    status.timed_out = timed_out;
    m_status = status;
    m_pid = -1;
    m_pidfd.reset();
    return status;
}

Status Child::kill_group(int signal) {
    if (m_pid < 0)
        return {};
    if (::kill(-m_pid, signal) != 0 && errno != ESRCH)
        return sys_error(Exit::os, errno, "cannot signal process group %d", m_pid);
    if (::kill(m_pid, signal) != 0 && errno != ESRCH)
        return sys_error(Exit::os, errno, "cannot signal process %d", m_pid);
    return {};
}

namespace {

// Writes what the pipe takes now; closes it once `input` is all written or the child closed its
// end.
Status feed(Fd& fd, std::string_view& input, const std::string& name) {
    ssize_t n = write_without_sigpipe(fd.get(), input.data(), std::min(input.size(), k_chunk));
    if (n < 0) {
        if (errno == EINTR || errno == EAGAIN)
            return {};
        if (errno != EPIPE)
            return sys_error(Exit::io, errno, "cannot write to '%s'", name.c_str());
        input = {}; // the child did not want the rest: that is its business
    } else {
        input.remove_prefix(static_cast<size_t>(n));
    }
    if (input.empty())
        fd.reset();
    return {};
}

// Reads what the pipe has now, keeping at most `limit` bytes; closes it at end of file.
Status drain(Fd& fd, std::string& text, bool& truncated, uint64_t& total, size_t limit,
             const std::string& name) {
    std::array<char, k_chunk> buf; // NOLINT(cppcoreguidelines-pro-type-member-init): read fills it
    ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0) {
        if (errno == EINTR || errno == EAGAIN)
            return {};
        return sys_error(Exit::io, errno, "cannot read from '%s'", name.c_str());
    }
    if (n == 0) {
        fd.reset();
        return {};
    }
    auto got = static_cast<size_t>(n);
    total += got;
    size_t keep = std::min(got, limit - std::min(limit, text.size()));
    text.append(buf.data(), keep);
    if (keep < got)
        truncated = true;
    return {};
}

// Moves bytes until all three pipes are closed (true) or the time limit runs out (false).
Result<bool> pump(Child& child, std::string_view input, size_t limit, RunResult& r,
                  const std::string& name) {
    for (Fd* fd : {&child.in(), &child.out(), &child.err()})
        SION_CHECK(set_nonblocking(fd->get(), true));
    if (input.empty())
        child.in().reset();
    for (;;) {
        // poll skips negative fds, so a closed pipe simply drops out.
        std::array<pollfd, 3> fds{{{child.in().get(), POLLOUT, 0},
                                   {child.out().get(), POLLIN, 0},
                                   {child.err().get(), POLLIN, 0}}};
        if (!child.in() && !child.out() && !child.err())
            return true;
        if (passed(child.deadline()))
            return false;
        int n = ::poll(fds.data(), fds.size(), poll_timeout(child.deadline()));
        if (n < 0 && errno != EINTR)
            return sys_error(Exit::os, errno, "cannot poll the pipes of '%s'", name.c_str());
        if (n <= 0)
            continue;
        if (fds[0].revents != 0)
            SION_CHECK(feed(child.in(), input, name));
        if (fds[1].revents != 0)
            SION_CHECK(drain(child.out(), r.out, r.out_truncated, r.out_total, limit, name));
        if (fds[2].revents != 0)
            SION_CHECK(drain(child.err(), r.err, r.err_truncated, r.err_total, limit, name));
    }
}

} // namespace

Result<RunResult> run(ChildSpec spec, std::string_view input, size_t output_limit) {
    spec.in = Stdio::pipe();
    spec.out = Stdio::pipe();
    spec.err = Stdio::pipe();
    SION_TRY(Child child, Child::spawn(spec));
    RunResult result;
    SION_TRY(bool finished, pump(child, input, output_limit, result, spec.argv[0]));
    if (!finished)
        SION_CHECK(child.kill_group(SIGKILL));
    child.in().reset();
    child.out().reset();
    child.err().reset();
    SION_TRY(ExitStatus status, child.wait());
    static_cast<ExitStatus&>(result) = status;
    result.timed_out = result.timed_out || !finished;
    return result;
}

std::vector<std::string> own_environment() {
    std::vector<std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) // unistd.h declares environ
        env.emplace_back(*e);
    return env;
}

std::string first_said(const RunResult& r, std::string_view program) {
    std::string line = r.err.substr(0, r.err.find('\n'));
    std::string prefix = std::string(program) + ": ";
    if (line.rfind(prefix, 0) == 0)
        line.erase(0, prefix.size());
    return line.empty() ? std::string(program) + " exited " + std::to_string(r.status) : line;
}

} // namespace sion
