// SPDX-License-Identifier: MIT
#include "lib/worktree.hpp"

#include "lib/child.hpp"
#include "lib/fd.hpp"
#include "lib/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

namespace sion {

namespace {

constexpr auto k_git_time = std::chrono::minutes(10);
constexpr off_t k_file_max = off_t{1} << 30;
constexpr size_t k_listing_max = size_t{1} << 30;

// Makes `path`'s missing directories (not `path` itself) with mode 0700, as XDG's base directories
// are made.
Status make_parents(const std::string& path) {
    for (size_t slash = path.find('/', 1); slash != std::string::npos;
         slash = path.find('/', slash + 1)) {
        std::string prefix = path.substr(0, slash);
        if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
            return sys_error(Exit::io, errno, "cannot make directory '%s'", prefix.c_str());
    }
    return {};
}

// The user's cache: $XDG_CACHE_HOME when it is absolute, else $HOME/.cache; "" without either.
// getenv: nothing in sion changes its environment once it runs.
std::string cache_home() {
    const char* xdg = std::getenv("XDG_CACHE_HOME"); // NOLINT(concurrency-mt-unsafe)
    if (xdg != nullptr && xdg[0] == '/')
        return xdg;
    const char* home = std::getenv("HOME"); // NOLINT(concurrency-mt-unsafe)
    return home != nullptr && home[0] == '/' ? std::string(home) + "/.cache" : std::string();
}

int64_t ns_of(const struct timespec& t) {
    return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// Whether `name`, one component of a path from a tree or the file system, may be written or
// committed: not empty, ".", "..", or .git in any case.
bool component_ok(std::string_view name) {
    return !name.empty() && name != "." && name != ".." && !ascii_iequals(name, ".git");
}

bool path_ok(std::string_view path) {
    if (path.empty())
        return false;
    size_t start = 0;
    while (true) {
        size_t slash = path.find('/', start);
        if (!component_ok(path.substr(start, slash - start)))
            return false;
        if (slash == std::string_view::npos)
            return true;
        start = slash + 1;
    }
}

// A path as fast-import reads it: always quoted, C style.
std::string import_path(std::string_view path) {
    std::string q = "\"";
    for (char c : path) {
        auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            q += '\\';
            q += c;
        } else if (u < 0x20 || u == 0x7f) {
            q += format("\\%03o", u);
        } else {
            q += c;
        }
    }
    return q + "\"";
}

// Directories beneath a root, opened one component at a time with no link followed, the last path's
// kept open for the next (paths come sorted, so most share it).
class Beneath {
public:
    explicit Beneath(int root) : m_root(root) {}

    // The directory holding `path` and its last component; with `make`, missing directories are
    // made (mode 0777 less the umask, chowned to `owner` when that is set). Returns -1 with errno
    // set when a component is missing, not a directory, or a link.
    int parent(std::string_view path, bool make, uid_t owner, gid_t group, std::string& name) {
        size_t slash = path.rfind('/');
        name = std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
        std::vector<std::string_view> dirs;
        for (size_t at = 0; slash != std::string_view::npos && at <= slash;) {
            size_t end = path.find('/', at);
            dirs.push_back(path.substr(at, end - at));
            at = end + 1;
        }
        size_t keep = 0;
        while (keep < m_open.size() && keep < dirs.size() && m_open[keep].name == dirs[keep])
            ++keep;
        m_open.resize(keep);
        for (size_t i = keep; i < dirs.size(); ++i) {
            std::string c(dirs[i]);
            int from = m_open.empty() ? m_root : m_open.back().fd.get();
            Fd fd(::openat(from, c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!fd && errno == ENOENT && make) {
                if (::mkdirat(from, c.c_str(), 0777) != 0)
                    return -1;
                fd.reset(
                    ::openat(from, c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (fd && owner != static_cast<uid_t>(-1) && ::fchown(fd.get(), owner, group) != 0)
                    return -1;
            }
            if (!fd)
                return -1;
            m_open.push_back({std::move(c), std::move(fd)});
        }
        return m_open.empty() ? m_root : m_open.back().fd.get();
    }

private:
    struct Open {
        std::string name;
        Fd fd;
    };

    int m_root;
    std::vector<Open> m_open;
};

// Reads a child's stdout as cat-file --batch writes it.
class Stream {
public:
    explicit Stream(int fd) : m_fd(fd) {}

    // A line, without its newline; false at end of file.
    Result<bool> line(std::string& out) {
        out.clear();
        while (true) {
            size_t nl = m_buf.find('\n', m_at);
            if (nl != std::string::npos) {
                out.assign(m_buf, m_at, nl - m_at);
                m_at = nl + 1;
                return true;
            }
            SION_TRY(bool more, fill());
            if (!more)
                return false;
        }
    }

    // Exactly `size` bytes, given to `put` as they come.
    template <typename Put>
    Status bytes(uint64_t size, Put put) {
        while (size > 0) {
            if (m_at == m_buf.size()) {
                SION_TRY(bool more, fill());
                if (!more)
                    return make_error(Exit::data, "git cat-file's output ended early");
            }
            size_t n = static_cast<size_t>(std::min<uint64_t>(size, m_buf.size() - m_at));
            SION_CHECK(put(std::string_view(m_buf).substr(m_at, n)));
            m_at += n;
            size -= n;
        }
        return {};
    }

private:
    Result<bool> fill() {
        if (m_at > 0) {
            m_buf.erase(0, m_at);
            m_at = 0;
        }
        char chunk[65536];
        ssize_t n;
        do {
            n = ::read(m_fd, chunk, sizeof chunk);
        } while (n < 0 && errno == EINTR);
        if (n < 0)
            return sys_error(Exit::io, errno, "cannot read git cat-file's output");
        m_buf.append(chunk, static_cast<size_t>(n));
        return n > 0;
    }

    int m_fd;
    std::string m_buf;
    size_t m_at = 0;
};

// How git is run here (see the header): the repository named outright, nothing of the
// environment's GIT_*, programs of the configuration off. `as` prefixes the argv when git writes
// to a repository of another user's, run by root.
struct Git {
    std::string git_dir;
    std::vector<std::string> as; // "setpriv --reuid=U --regid=G --clear-groups", or empty
    uid_t owner = static_cast<uid_t>(-1);
    gid_t group = static_cast<gid_t>(-1);

    explicit Git(std::string dir) : git_dir(std::move(dir)) {
        struct stat st {};

        if (::geteuid() == 0 && ::stat(git_dir.c_str(), &st) == 0 && st.st_uid != 0) {
            owner = st.st_uid;
            group = st.st_gid;
            as = {"setpriv", format("--reuid=%u", static_cast<unsigned>(owner)),
                  format("--regid=%u", static_cast<unsigned>(group)), "--clear-groups"};
        }
    }

    [[nodiscard]] ChildSpec spec(const std::vector<std::string>& args, bool writes,
                                 const std::string& work_tree = "") const {
        ChildSpec spec;
        if (writes)
            spec.argv = as;
        spec.argv.insert(spec.argv.end(), {"git", "-c", "core.hooksPath=/dev/null", "-c",
                                           "core.fsmonitor=false", "-c", "commit.gpgSign=false",
                                           "-c", "gc.auto=0", "-c", "maintenance.auto=false"});
        spec.argv.insert(spec.argv.end(), args.begin(), args.end());
        for (std::string& e : own_environment())
            if (e.compare(0, 4, "GIT_") != 0 && e.compare(0, 7, "LC_ALL=") != 0)
                spec.env.push_back(std::move(e));
        env_set(spec.env, "GIT_DIR", git_dir);
        env_set(spec.env, "LC_ALL", "C");
        env_set(spec.env, "GIT_TERMINAL_PROMPT", "0");
        if (!work_tree.empty()) {
            env_set(spec.env, "GIT_WORK_TREE", work_tree);
            spec.cwd = work_tree;
        } else {
            spec.cwd = git_dir;
        }
        spec.time_limit = k_git_time;
        return spec;
    }

    // Runs git with `args`; its stdout, or an error "git <command>: <what it said>".
    [[nodiscard]] Result<std::string> run_git(const std::vector<std::string>& args,
                                              std::string_view input = "", bool writes = false,
                                              const std::string& work_tree = "") const {
        SION_TRY(RunResult r, run(spec(args, writes, work_tree), input, k_listing_max));
        if (r.status != 0 || r.out_truncated)
            return make_error(Exit::software, "git %s: %s", args.front().c_str(),
                              r.out_truncated ? "it said too much" : first_said(r, "git").c_str());
        return std::move(r.out);
    }
};

// ls-tree -r -z's entries: "<mode> SP <type> SP <oid> TAB <path> NUL".
Result<std::vector<Worktree::Tracked>> parse_tree(std::string_view listing) {
    std::vector<Worktree::Tracked> entries;
    while (!listing.empty()) {
        size_t nul = listing.find('\0');
        std::string_view entry = listing.substr(0, nul);
        listing.remove_prefix(nul == std::string_view::npos ? listing.size() : nul + 1);
        size_t sp1 = entry.find(' ');
        size_t sp2 = entry.find(' ', sp1 + 1);
        size_t tab = entry.find('\t', sp2 + 1);
        if (sp1 == std::string_view::npos || sp2 == std::string_view::npos
            || tab == std::string_view::npos)
            return make_error(Exit::data, "git ls-tree: cannot read its entry '%s'",
                              one_line(entry).c_str());
        Worktree::Tracked t;
        t.mode = std::string(entry.substr(0, sp1));
        t.oid = std::string(entry.substr(sp2 + 1, tab - sp2 - 1));
        t.path = std::string(entry.substr(tab + 1));
        if (t.mode != "100644" && t.mode != "100755" && t.mode != "120000" && t.mode != "160000")
            return make_error(Exit::data, "git ls-tree: '%s' has mode %s, which is not a file's",
                              one_line(t.path).c_str(), t.mode.c_str());
        if (!path_ok(t.path))
            return make_error(Exit::data,
                              "the repository's HEAD holds the path '%s', which cannot "
                              "be checked out safely",
                              one_line(t.path).c_str());
        entries.push_back(std::move(t));
    }
    return entries;
}

// Waits until a file's change time, as the file system stamps it, is past `last_ns`: writes made
// from then on have later times than any the checkout made.
Status pass_clock(int dir, const std::string& probe, int64_t last_ns) {
    Fd fd(::openat(dir, probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd)
        return sys_error(Exit::io, errno, "cannot make '%s'", probe.c_str());
    Status status;
    for (int tries = 0; tries < 5000; ++tries) {
        struct stat st {};

        if (::fstat(fd.get(), &st) != 0) {
            status = sys_error(Exit::io, errno, "cannot stat '%s'", probe.c_str());
            break;
        }
        if (ns_of(st.st_ctim) > last_ns)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        (void)::futimens(fd.get(), nullptr);
    }
    ::unlinkat(dir, probe.c_str(), 0);
    return status;
}

// One process at a time here chooses and creates a branch.
std::mutex g_branching;

} // namespace

WorkspaceRepository find_workspace_repository(const std::string& workspace) {
    WorkspaceRepository found;
    std::string dot = workspace + "/.git";

    struct stat st {};

    if (::lstat(dot.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        found.git_dir = dot;
        return found;
    }
    if (::lstat(dot.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
        Fd fd(::open(dot.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        auto text = fd ? read_all(fd.get(), 4096) : Result<std::string>(std::string());
        std::string line = text ? std::string(trim_space(*text)) : std::string();
        if (line.compare(0, 8, "gitdir: ") == 0) {
            std::string dir = line.substr(8);
            found.git_dir = dir.front() == '/' ? dir : workspace + "/" + dir;
            return found;
        }
        found.why_not = format("the workspace %s has a .git file that names no git directory",
                               workspace.c_str());
        return found;
    }
    for (std::string up = workspace; up.size() > 1;) {
        up = up.substr(0, std::max<size_t>(up.rfind('/'), 1));
        if (::lstat((up == "/" ? std::string("/.git") : up + "/.git").c_str(), &st) == 0) {
            found.why_not = format("the workspace %s is a folder of the git repository at %s, "
                                   "not its root",
                                   workspace.c_str(), up.c_str());
            return found;
        }
        if (up == "/")
            break;
    }
    found.why_not = format("the workspace %s is not in a git repository", workspace.c_str());
    return found;
}

Result<std::string> worktrees_dir() {
    std::string cache = cache_home();
    if (cache.empty())
        return make_error(Exit::config,
                          "cannot find a cache directory: set XDG_CACHE_HOME or HOME");
    std::string dir = cache + "/sion-worktrees";
    SION_CHECK(make_parents(dir));
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return sys_error(Exit::io, errno, "cannot make directory '%s'", dir.c_str());

    struct stat st {};

    if (::lstat(dir.c_str(), &st) != 0)
        return sys_error(Exit::io, errno, "cannot stat '%s'", dir.c_str());
    if (!S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
        return make_error(Exit::no_perm,
                          "refusing '%s' for worktrees: it is not a directory of yours (move it "
                          "aside)",
                          dir.c_str());
    return dir;
}

Worktree::Worktree(Worktree&& other) noexcept
    : m_git_dir(std::move(other.m_git_dir)), m_name(std::move(other.m_name)),
      m_path(std::exchange(other.m_path, std::string())), m_base(std::move(other.m_base)),
      m_tracked(std::move(other.m_tracked)) {}

Worktree& Worktree::operator=(Worktree&& other) noexcept {
    if (this != &other) {
        remove();
        m_git_dir = std::move(other.m_git_dir);
        m_name = std::move(other.m_name);
        m_path = std::exchange(other.m_path, std::string());
        m_base = std::move(other.m_base);
        m_tracked = std::move(other.m_tracked);
    }
    return *this;
}

Worktree::~Worktree() {
    remove();
}

void Worktree::remove() {
    if (m_path.empty())
        return;
    std::error_code ignored; // remove_all does not follow links
    std::filesystem::remove_all(m_path, ignored);
    m_path.clear();
}

Result<Worktree> Worktree::make(const std::string& git_dir, std::string_view name,
                                const std::string& dir) {
    Git git(git_dir);
    auto failed = [&](const Error& e) {
        return e.context("cannot check out HEAD of '" + git_dir + "'");
    };
    Worktree tree;
    tree.m_git_dir = git_dir;
    tree.m_name = std::string(name);
    auto head = git.run_git({"rev-parse", "--verify", "HEAD^{commit}"});
    if (!head)
        return failed(head.error());
    tree.m_base = std::string(trim_space(*head));
    auto listing = git.run_git({"ls-tree", "-r", "-z", "--full-tree", tree.m_base});
    if (!listing)
        return failed(listing.error());
    auto entries = parse_tree(*listing);
    if (!entries)
        return failed(entries.error());
    tree.m_tracked = std::move(*entries);

    std::string path = dir + "/" + std::string(name) + "-XXXXXX";
    if (::mkdtemp(path.data()) == nullptr)
        return sys_error(Exit::io, errno, "cannot make a worktree in '%s'", dir.c_str());
    tree.m_path = path; // removed with `tree` from here on, whatever fails
    Fd root(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!root)
        return sys_error(Exit::io, errno, "cannot open '%s'", path.c_str());
    if (git.owner != static_cast<uid_t>(-1) && ::fchown(root.get(), git.owner, git.group) != 0)
        return sys_error(Exit::no_perm, errno, "cannot give '%s' to uid %u", path.c_str(),
                         static_cast<unsigned>(git.owner));

    // The blobs, in the entries' order, from one cat-file.
    std::string wanted;
    for (const Tracked& t : tree.m_tracked)
        if (t.mode != "160000")
            wanted += t.oid + "\n";
    SION_TRY(Fd input, memory_file(wanted, "sion-worktree-blobs"));
    ChildSpec spec = git.spec({"cat-file", "--batch"}, false);
    spec.in = Stdio::from_fd(input.get());
    spec.out = Stdio::pipe();
    spec.err = Stdio::null();
    SION_TRY(Child cat, Child::spawn(spec));
    Stream from(cat.out().get());
    Beneath beneath(root.get());
    int64_t last_ns = 0;
    std::string header;
    std::string name_in_dir;
    std::string link;
    for (Tracked& t : tree.m_tracked) {
        int at = beneath.parent(t.path, true, git.owner, git.group, name_in_dir);
        if (at < 0)
            return failed(
                sys_error(Exit::io, errno, "cannot make the directory of '%s'", t.path.c_str()));
        if (t.mode == "160000") { // a submodule: an empty directory, as git leaves one
            if (::mkdirat(at, name_in_dir.c_str(), 0777) != 0)
                return failed(sys_error(Exit::io, errno, "cannot make '%s'", t.path.c_str()));
            continue;
        }
        SION_TRY(bool got, from.line(header));
        // "<oid> blob <size>"
        size_t sp = header.rfind(' ');
        if (!got || header.compare(0, t.oid.size() + 6, t.oid + " blob ") != 0
            || sp == std::string::npos)
            return failed(make_error(Exit::data, "git cat-file: %s for '%s'",
                                     got ? one_line(header).c_str() : "no answer", t.path.c_str()));
        uint64_t size = std::strtoull(header.c_str() + sp + 1, nullptr, 10);

        struct stat st {};

        if (t.mode == "120000") {
            link.clear();
            SION_CHECK(from.bytes(size, [&](std::string_view part) -> Status {
                link.append(part);
                return {};
            }));
            if (::symlinkat(link.c_str(), at, name_in_dir.c_str()) != 0
                || ::fstatat(at, name_in_dir.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
                return failed(
                    sys_error(Exit::io, errno, "cannot make the link '%s'", t.path.c_str()));
            if (git.owner != static_cast<uid_t>(-1)
                && ::fchownat(at, name_in_dir.c_str(), git.owner, git.group, AT_SYMLINK_NOFOLLOW)
                       != 0)
                return sys_error(Exit::no_perm, errno, "cannot give '%s' to uid %u", t.path.c_str(),
                                 static_cast<unsigned>(git.owner));
        } else {
            Fd file(::openat(at, name_in_dir.c_str(),
                             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                             t.mode == "100755" ? 0777 : 0666));
            if (!file)
                return failed(sys_error(Exit::io, errno, "cannot make '%s'", t.path.c_str()));
            SION_CHECK(from.bytes(size, [&](std::string_view part) -> Status {
                return write_all(file.get(), part);
            }));
            if (git.owner != static_cast<uid_t>(-1)
                && ::fchown(file.get(), git.owner, git.group) != 0)
                return sys_error(Exit::no_perm, errno, "cannot give '%s' to uid %u", t.path.c_str(),
                                 static_cast<unsigned>(git.owner));
            if (::fstat(file.get(), &st) != 0)
                return sys_error(Exit::io, errno, "cannot stat '%s'", t.path.c_str());
        }
        SION_CHECK(from.bytes(1, [](std::string_view) -> Status { return {}; }));
        t.ino = st.st_ino;
        t.size = st.st_size;
        t.mtime_ns = ns_of(st.st_mtim);
        t.ctime_ns = ns_of(st.st_ctim);
        last_ns = std::max({last_ns, t.mtime_ns, t.ctime_ns});
    }
    SION_TRY(ExitStatus ended, cat.wait());
    if (ended.status != 0)
        return failed(make_error(Exit::software, "git cat-file exited %d", ended.status));
    Fd parent(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!parent)
        return sys_error(Exit::io, errno, "cannot open '%s'", dir.c_str());
    SION_CHECK(pass_clock(parent.get(), path.substr(path.rfind('/') + 1) + ".clock", last_ns));
    return tree;
}

Result<Worktree::Committed> Worktree::commit(std::string_view message) {
    Git git(m_git_dir);
    auto failed = [&](const Error& e) { return e.context("cannot commit the worktree " + m_path); };
    Fd root(::open(m_path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!root)
        return sys_error(Exit::io, errno, "cannot open '%s'", m_path.c_str());
    Beneath beneath(root.get());

    // What is there now: a tracked file as it was, changed, or gone; and new files.
    struct Now {
        std::string path;
        std::string mode;
        std::string oid; // "" for a file read from the worktree
    };

    std::vector<Now> now;
    bool changed = false;
    std::set<std::string, std::less<>> tracked_paths;
    std::vector<std::string> submodules;
    std::string name_in_dir;
    auto look = [&](const std::string& path, Now& seen, struct stat& st) {
        int at = beneath.parent(path, false, -1, -1, name_in_dir);
        if (at < 0 || ::fstatat(at, name_in_dir.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            return false;
        seen.path = path;
        if (S_ISLNK(st.st_mode))
            seen.mode = "120000";
        else if (S_ISREG(st.st_mode))
            seen.mode = (st.st_mode & S_IXUSR) != 0 ? "100755" : "100644";
        else
            return false;
        return true;
    };
    for (const Tracked& t : m_tracked) {
        tracked_paths.insert(t.path);
        if (t.mode == "160000") {
            now.push_back({t.path, t.mode, t.oid});
            submodules.push_back(t.path + "/");
            continue;
        }
        Now seen;

        struct stat st {};

        if (!look(t.path, seen, st)) {
            changed = true; // gone, or no longer a file or a link
            continue;
        }
        if (seen.mode == t.mode && st.st_ino == t.ino && st.st_size == t.size
            && ns_of(st.st_mtim) == t.mtime_ns && ns_of(st.st_ctim) == t.ctime_ns) {
            seen.oid = t.oid;
        } else {
            changed = true;
        }
        now.push_back(std::move(seen));
    }
    ChildSpec others =
        git.spec({"ls-files", "-z", "--others", "--exclude-standard"}, false, m_path);
    // No index: every file is listed but those ignored. The path names a file never made.
    env_set(others.env, "GIT_INDEX_FILE", m_path + ".no-index");
    auto listed = run(others, "", k_listing_max);
    if (!listed)
        return failed(listed.error());
    if (listed->status != 0 || listed->out_truncated)
        return failed(
            make_error(Exit::software, "git ls-files: %s", first_said(*listed, "git").c_str()));
    std::string_view names = listed->out;
    while (!names.empty()) {
        size_t nul = names.find('\0');
        std::string path(names.substr(0, nul));
        names.remove_prefix(nul == std::string_view::npos ? names.size() : nul + 1);
        // A nested repository ("x/"), a path git would refuse, a tracked file, or one inside a
        // submodule's directory.
        if (path.empty() || path.back() == '/' || !path_ok(path) || tracked_paths.count(path) != 0
            || std::any_of(submodules.begin(), submodules.end(),
                           [&](const std::string& s) { return path.compare(0, s.size(), s) == 0; }))
            continue;
        Now seen;

        struct stat st {};

        if (look(path, seen, st)) {
            now.push_back(std::move(seen));
            changed = true;
        }
    }
    Committed committed;
    if (!changed)
        return committed;

    // The commit, made by fast-import on a ref of its own, then given its branch.
    std::string tmp_ref = "refs/sion/worktrees/" + m_path.substr(m_path.rfind('/') + 1);
    std::string who = format("sion subagent %s <> %lld +0000", m_name.c_str(),
                             static_cast<long long>(std::time(nullptr)));
    std::string text(message);
    if (text.empty() || text.back() != '\n')
        text += '\n';
    std::string head = format("commit %s\nmark :1\nauthor %s\ncommitter %s\ndata %zu\n%sfrom "
                              "%s\ndeleteall\n",
                              tmp_ref.c_str(), who.c_str(), who.c_str(), text.size(), text.c_str(),
                              m_base.c_str());
    SION_TRY(Fd said, memory_file("", "sion-fast-import-stderr"));
    ChildSpec spec = git.spec({"fast-import", "--quiet", "--done", "--date-format=raw"}, true);
    spec.in = Stdio::pipe();
    spec.out = Stdio::pipe();
    spec.err = Stdio::from_fd(said.get());
    SION_TRY(Child importer, Child::spawn(spec));
    Status fed = [&]() -> Status {
        int to = importer.in().get();
        SION_CHECK(write_all(to, head));
        char buffer[65536];
        for (const Now& n : now) {
            if (!n.oid.empty()) {
                SION_CHECK(
                    write_all(to, "M " + n.mode + " " + n.oid + " " + import_path(n.path) + "\n"));
                continue;
            }
            int at = beneath.parent(n.path, false, -1, -1, name_in_dir);
            if (at < 0)
                return sys_error(Exit::io, errno, "cannot open the directory of '%s'",
                                 n.path.c_str());
            if (n.mode == "120000") {
                char target[4096];
                ssize_t len = ::readlinkat(at, name_in_dir.c_str(), target, sizeof target);
                if (len < 0)
                    return sys_error(Exit::io, errno, "cannot read the link '%s'", n.path.c_str());
                SION_CHECK(write_all(to, format("M 120000 inline %s\ndata %zd\n",
                                                import_path(n.path).c_str(), len)));
                SION_CHECK(write_all(to, std::string_view(target, static_cast<size_t>(len))));
                SION_CHECK(write_all(to, "\n"));
                continue;
            }
            Fd file(
                ::openat(at, name_in_dir.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
            struct stat st {};
            if (!file || ::fstat(file.get(), &st) != 0)
                return sys_error(Exit::io, errno, "cannot read '%s'", n.path.c_str());
            if (!S_ISREG(st.st_mode))
                return make_error(Exit::data, "cannot read '%s': it is no longer a file",
                                  n.path.c_str());
            if (st.st_size > k_file_max)
                return make_error(Exit::data,
                                  "'%s' is larger than 1 GiB: git keeps no such file "
                                  "well, and it is not committed",
                                  n.path.c_str());
            SION_CHECK(write_all(to, format("M %s inline %s\ndata %lld\n", n.mode.c_str(),
                                            import_path(n.path).c_str(),
                                            static_cast<long long>(st.st_size))));
            off_t left = st.st_size;
            while (left > 0) {
                ssize_t got = ::read(file.get(), buffer,
                                     static_cast<size_t>(std::min<off_t>(left, sizeof buffer)));
                if (got < 0 && errno == EINTR)
                    continue;
                if (got <= 0)
                    return make_error(Exit::io, "cannot read '%s': it changed while it was read",
                                      n.path.c_str());
                SION_CHECK(write_all(to, std::string_view(buffer, static_cast<size_t>(got))));
                left -= got;
            }
            SION_CHECK(write_all(to, "\n"));
        }
        return write_all(to, "\nget-mark :1\ndone\n");
    }();
    importer.in().reset();
    auto out = read_all(importer.out().get(), 4096);
    SION_TRY(ExitStatus imported, importer.wait());
    if (imported.status != 0 || !fed || !out) {
        std::string why;
        if (::lseek(said.get(), 0, SEEK_SET) == 0)
            if (auto text_said = read_all(said.get(), 65536))
                why = one_line(text_said->substr(0, text_said->find('\n')));
        (void)git.run_git({"update-ref", "-d", tmp_ref}, "", true);
        if (!fed)
            return failed(fed.error());
        return failed(
            make_error(Exit::software, "git fast-import: %s",
                       why.empty() ? format("exited %d", imported.status).c_str() : why.c_str()));
    }
    std::string made(trim_space(*out));
    auto stat = git.run_git({"diff-tree", "-r", "--shortstat", m_base, made});
    if (!stat || trim_space(*stat).empty()) {
        (void)git.run_git({"update-ref", "-d", tmp_ref}, "", true);
        if (!stat)
            return failed(stat.error());
        return committed; // written back as it was
    }
    committed.stat = std::string(trim_space(*stat));

    // The first of sion/<name>, sion/<name>-2, … that no branch has (nor a branch under it).
    std::lock_guard lock(g_branching);
    for (int attempt = 0; attempt < 3; ++attempt) {
        auto refs = git.run_git({"for-each-ref", "--format=%(refname)", "refs/heads/sion/"});
        if (!refs)
            return failed(refs.error());
        std::string taken = "\n" + *refs;
        std::string branch;
        for (int n = 1; n < 1000 && branch.empty(); ++n) {
            std::string candidate = "sion/" + m_name + (n == 1 ? "" : format("-%d", n));
            std::string ref = "\nrefs/heads/" + candidate;
            if (taken.find(ref + "\n") == std::string::npos
                && taken.find(ref + "/") == std::string::npos)
                branch = candidate;
        }
        std::string moves = format("create refs/heads/%s %s\ndelete %s\n", branch.c_str(),
                                   made.c_str(), tmp_ref.c_str());
        auto created = git.run_git({"update-ref", "--stdin"}, moves, true);
        if (created) {
            committed.branch = branch;
            return committed;
        }
        if (attempt == 2) {
            (void)git.run_git({"update-ref", "-d", tmp_ref}, "", true);
            return failed(created.error());
        }
    }
    return committed;
}

} // namespace sion
