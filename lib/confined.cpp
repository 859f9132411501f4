// SPDX-License-Identifier: MIT
// Confined: every path looked up by the kernel beneath a directory held open (openat2), so that no
// check can be outrun by a change to the tree made between it and the use.
#include "lib/confined.hpp"

#include "lib/hash.hpp"
#include "lib/secret_bytes.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

namespace sion {

namespace {

constexpr uint64_t k_beneath = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
// A walk enters directories one name at a time from the one above it: no link is followed there.
constexpr uint64_t k_walk = k_beneath | RESOLVE_NO_SYMLINKS;
constexpr int k_max_depth = 64;

// Sorted: passed_over() looks names up by binary search. Why each is here, and why "build",
// "dist", "out", "vendor" and "venv" are not, is in the header.
constexpr std::string_view k_passed_over[] = {
    ".bundle",       ".bzr",         ".cache",      ".dart_tool",    ".eggs",
    ".git",          ".gradle",      ".hg",         ".jj",           ".mypy_cache",
    ".next",         ".nox",         ".nuxt",       ".parcel-cache", ".pnpm-store",
    ".pytest_cache", ".ruff_cache",  ".stack-work", ".svelte-kit",   ".svn",
    ".terraform",    ".tox",         ".turbo",      ".venv",         ".yarn",
    ".zig-cache",    "CMakeFiles",   "__pycache__", "_darcs",        "bower_components",
    "dist-newstyle", "node_modules", "target",      "zig-cache",     "zig-out",
};

constexpr bool sorted_names() {
    for (size_t i = 1; i < std::size(k_passed_over); ++i)
        if (!(k_passed_over[i - 1] < k_passed_over[i]))
            return false;
    return true;
}

static_assert(sorted_names(), "k_passed_over must stay sorted");

// Files whose presence marks a directory as a build's or a virtual environment's, whatever its
// name: the Cache Directory Tagging spec's tag (cargo's target, many caches), a CMake build tree,
// a Python virtual environment.
constexpr std::array<const char*, 3> k_markers = {"CACHEDIR.TAG", "CMakeCache.txt", "pyvenv.cfg"};

// What openat2 with RESOLVE_NO_SYMLINKS does, one name at a time with openat(2) and O_NOFOLLOW,
// for where openat2 is refused (ENOSYS: sion-sandbox's seccomp filter refuses it, as its flags are
// in memory a filter cannot read). `path` is relative and holds no "..": every directory on the way
// is opened without following a link and checked to be a directory (a link is ELOOP), and the last
// name is opened with O_NOFOLLOW (a link is ELOOP, or with O_PATH the link itself, as openat2 has
// it). Without a link followed there is neither a way up nor a magic link.
int openat_no_links(int dir, const char* path, int flags, mode_t mode) {
    std::string_view rest = path;
    if (rest.empty() || rest.front() == '/') {
        errno = EXDEV;
        return -1;
    }
    Fd held;
    int at = dir;
    for (;;) {
        size_t slash = rest.find('/');
        std::string name(rest.substr(0, slash));
        if (name == "..") {
            errno = EXDEV;
            return -1;
        }
        if (slash == std::string_view::npos) {
            int fd = ::openat(at, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
            // O_DIRECTORY on a link is ENOTDIR: a link is ELOOP, as openat2 has it.
            struct stat st {};
            if (fd < 0 && errno == ENOTDIR
                && ::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0
                && S_ISLNK(st.st_mode))
                errno = ELOOP;
            return fd;
        }
        rest.remove_prefix(slash + 1);
        if (name.empty() || name == ".")
            continue;
        int fd = ::openat(at, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return -1;
        held.reset(fd);
        struct stat st {};
        if (::fstat(fd, &st) != 0)
            return -1;
        if (!S_ISDIR(st.st_mode)) {
            errno = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
            return -1;
        }
        at = fd;
        if (rest.empty())
            return ::openat(at, ".", flags | O_NOFOLLOW | O_CLOEXEC, mode);
    }
}

// openat2(2), which glibc 2.36 does not wrap. EAGAIN (a rename elsewhere raced a ".." lookup) and
// EINTR are tried again. Where openat2 is refused, a lookup that follows no link is made with
// openat_no_links(); one that may follow links inside cannot be, and fails with ENOSYS.
int openat2_fd(int dir, const char* path, int flags, mode_t mode, uint64_t resolve) {
    struct open_how how {};

    how.flags = static_cast<uint64_t>(static_cast<unsigned>(flags | O_CLOEXEC));
    bool creates = (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
    how.mode = creates ? mode : 0; // openat2 refuses a mode it would not use
    how.resolve = resolve;
    for (int tries = 0;; ++tries) {
        long fd = ::syscall(SYS_openat2, dir, path, &how, sizeof how);
        if (fd >= 0)
            return static_cast<int>(fd);
        if (errno == ENOSYS && (resolve & RESOLVE_NO_SYMLINKS) != 0)
            return openat_no_links(dir, path, flags, creates ? mode : 0);
        if ((errno != EAGAIN && errno != EINTR) || tries >= 100)
            return -1;
    }
}

// "a/b/c" as ("a/b", "c"); "c" as (".", "c").
std::pair<std::string, std::string> split_last(const std::string& rel) {
    size_t slash = rel.rfind('/');
    if (slash == std::string::npos)
        return {".", rel};
    return {rel.substr(0, slash), rel.substr(slash + 1)};
}

Confined::Entry entry_of(std::string rel, const struct stat& st) {
    Confined::Entry e;
    e.rel = std::move(rel);
    e.is_dir = S_ISDIR(st.st_mode);
    e.is_file = S_ISREG(st.st_mode);
    e.is_link = S_ISLNK(st.st_mode);
    e.size = static_cast<uint64_t>(st.st_size);
    e.mode = st.st_mode;
    return e;
}

bool marked_as_build(int dir) {
    struct stat st {};

    return std::any_of(k_markers.begin(), k_markers.end(), [&](const char* name) {
        return ::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    });
}

} // namespace

bool passed_over(std::string_view dir_name) {
    return std::binary_search(std::begin(k_passed_over), std::end(k_passed_over), dir_name);
}

Result<Confined> Confined::open(const std::string& root, std::string shown_as, Links links) {
    if (root.empty() || root.front() != '/')
        return make_error(Exit::software, "the directory '%s' is not an absolute path",
                          root.c_str());
    std::string normal = root;
    while (normal.size() > 1 && normal.back() == '/')
        normal.pop_back();
    int fd = ::open(normal.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return sys_error(errno == ENOENT || errno == ENOTDIR ? Exit::no_input : Exit::io, errno,
                         "cannot open the directory '%s'", root.c_str());
    Fd dir(fd);
    // Found now rather than at the first tool call: a kernel before Linux 5.6, or a seccomp
    // filter that refuses the call, leaves no safe way to open a path beneath the directory.
    uint64_t resolve = links == Links::refused ? k_beneath | RESOLVE_NO_SYMLINKS : k_beneath;
    int probe = openat2_fd(dir.get(), ".", O_PATH | O_DIRECTORY, 0, resolve);
    if (probe < 0)
        return sys_error(errno == ENOSYS ? Exit::unavailable : Exit::io, errno,
                         "cannot open files beneath '%s' with openat2 (Linux 5.6 or later)",
                         root.c_str());
    ::close(probe);
    return Confined(std::move(dir), std::move(normal), std::move(shown_as), resolve);
}

std::string Confined::outside(std::string_view given) const {
    size_t slash = m_shown_as.rfind('/');
    std::string called = slash == std::string::npos ? m_shown_as : m_shown_as.substr(slash + 1);
    return "'" + std::string(given) + "' is outside the " + (called.empty() ? "root" : called);
}

Result<std::string> Confined::relative(std::string_view given) const {
    if (given.find('\0') != std::string_view::npos)
        return make_error(Exit::data, "the path '%s' holds a NUL byte", std::string(given).c_str());
    std::string_view rest = given;
    if (!rest.empty() && rest.front() == '/') {
        auto under = [&](std::string_view base) {
            return base.size() > 1 && rest.substr(0, base.size()) == base
                   && (rest.size() == base.size() || rest[base.size()] == '/');
        };
        if (under(m_root))
            rest.remove_prefix(m_root.size());
        else if (under(m_shown_as))
            rest.remove_prefix(m_shown_as.size());
        else if (m_root != "/")
            return Error(Exit::no_perm, outside(given));
    }
    std::vector<std::string_view> parts;
    while (!rest.empty()) {
        size_t slash = rest.find('/');
        std::string_view part = rest.substr(0, slash);
        rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
        if (part.empty() || part == ".")
            continue;
        if (part == "..") {
            if (parts.empty())
                return Error(Exit::no_perm, outside(given));
            parts.pop_back();
            continue;
        }
        parts.push_back(part);
    }
    if (parts.empty())
        return std::string(".");
    std::string rel;
    for (std::string_view part : parts) {
        if (!rel.empty())
            rel += '/';
        rel.append(part);
    }
    return rel;
}

namespace {

// What a failed lookup or call on `given` says: "cannot <verb> 'given': why".
Error failure(const char* verb, std::string_view given, int err, const std::string& outside_text,
              bool links_refused = false) {
    std::string what = std::string("cannot ") + verb + " '" + std::string(given) + "'";
    if (err == ELOOP && links_refused)
        return Error(Exit::no_perm, what + ": it is a symbolic link, or in a folder that is one");
    switch (err) {
    case EXDEV:
        return Error(Exit::no_perm, what + ": " + outside_text);
    case ENOENT:
    case ENOTDIR:
        return sys_error(Exit::no_input, err, "%s", what.c_str());
    case EISDIR:
        return Error(Exit::data, what + ": it is a directory");
    case EACCES:
    case EPERM:
        return sys_error(Exit::no_perm, err, "%s", what.c_str());
    default:
        return sys_error(Exit::io, err, "%s", what.c_str());
    }
}

} // namespace

Error Confined::fail(const char* verb, std::string_view given, int err) const {
    return failure(verb, given, err, outside(given), (m_resolve & RESOLVE_NO_SYMLINKS) != 0);
}

Result<Fd> Confined::open_at(std::string_view rel, int flags, mode_t mode) const {
    auto path = relative(rel);
    if (!path)
        return path.error().context("cannot open '" + std::string(rel) + "'");
    int fd = openat2_fd(m_fd.get(), path->c_str(), flags, mode, m_resolve);
    if (fd < 0)
        return fail("open", rel, errno);
    return Fd(fd);
}

Result<Confined::Entry> Confined::stat(std::string_view rel) const {
    auto path = relative(rel);
    if (!path)
        return path.error().context("cannot look up '" + std::string(rel) + "'");
    // O_PATH | O_NOFOLLOW opens a link itself: its stat is the link's, as lstat's would be.
    int fd = openat2_fd(m_fd.get(), path->c_str(), O_PATH | O_NOFOLLOW, 0, m_resolve);
    if (fd < 0)
        return fail("look up", rel, errno);
    Fd file(fd);

    struct stat st {};

    if (::fstat(file.get(), &st) != 0)
        return fail("look up", rel, errno);
    return entry_of(std::move(*path), st);
}

Result<std::string> Confined::read(std::string_view rel, size_t limit) const {
    std::string out;
    SION_TRY(std::optional<size_t> size, read_into(rel, limit, out));
    if (!size)
        return make_error(Exit::data, "cannot read '%s': it is larger than %zu bytes",
                          std::string(rel).c_str(), limit);
    out.resize(*size);
    return out;
}

Result<std::optional<size_t>> Confined::read_into(std::string_view rel, size_t limit,
                                                  std::string& buffer) const {
    auto path = relative(rel);
    if (!path)
        return path.error().context("cannot read '" + std::string(rel) + "'");
    // O_NONBLOCK: a FIFO planted at the path opens at once (and is refused below) instead of
    // waiting for a writer.
    int fd = openat2_fd(m_fd.get(), path->c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, m_resolve);
    if (fd < 0)
        return fail("read", rel, errno);
    Fd file(fd);

    struct stat st {};

    if (::fstat(file.get(), &st) != 0)
        return fail("read", rel, errno);
    if (S_ISDIR(st.st_mode))
        return make_error(Exit::data, "cannot read '%s': it is a directory", std::string(rel).c_str());
    if (!S_ISREG(st.st_mode))
        return make_error(Exit::data, "cannot read '%s': it is not a regular file",
                          std::string(rel).c_str());
    if (static_cast<uint64_t>(st.st_size) > limit)
        return std::optional<size_t>();
    if (buffer.size() <= static_cast<size_t>(st.st_size))
        buffer.resize(static_cast<size_t>(st.st_size) + 1);
    size_t have = 0;
    // Read to the end, not to the size fstat gave: the file may be growing.
    for (;;) {
        if (have == buffer.size()) {
            if (have > limit)
                return std::optional<size_t>();
            buffer.resize(std::min(buffer.size() * 2 + 4096, limit + 1));
        }
        ssize_t n = ::read(file.get(), buffer.data() + have, buffer.size() - have);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return sys_error(Exit::io, errno, "cannot read '%s'", std::string(rel).c_str());
        }
        if (n == 0)
            break;
        have += static_cast<size_t>(n);
    }
    if (have > limit)
        return std::optional<size_t>();
    return std::optional<size_t>(have);
}

Confined::Staged::Staged(Staged&& other) noexcept
    : m_dir(std::move(other.m_dir)), m_temp(std::move(other.m_temp)),
      m_name(std::move(other.m_name)), m_given(std::move(other.m_given)) {
    other.m_temp.clear();
}

Confined::Staged& Confined::Staged::operator=(Staged&& other) noexcept {
    if (this != &other) {
        drop();
        m_dir = std::move(other.m_dir);
        m_temp = std::move(other.m_temp);
        m_name = std::move(other.m_name);
        m_given = std::move(other.m_given);
        other.m_temp.clear();
    }
    return *this;
}

Confined::Staged::~Staged() {
    drop();
}

void Confined::Staged::drop() {
    if (!m_temp.empty() && m_dir)
        ::unlinkat(m_dir.get(), m_temp.c_str(), 0); // nothing to do if it is already gone
    m_temp.clear();
}

Status Confined::Staged::commit() {
    if (m_temp.empty() || !m_dir)
        return make_error(Exit::software, "cannot write '%s': it was committed already",
                          m_given.c_str());
    // Renamed within the directory fd: the target's name is replaced whatever it is now (a link
    // included), and nothing above the directory is looked up again.
    if (::renameat(m_dir.get(), m_temp.c_str(), m_dir.get(), m_name.c_str()) != 0) {
        int err = errno;
        drop();
        return sys_error(err == EISDIR ? Exit::data : Exit::io, err,
                         "cannot write '%s': cannot rename into place", m_given.c_str());
    }
    m_temp.clear();
    return {};
}

namespace {

// The directory `dir` (relative, normalised) opened beneath the root, its missing directories
// made one by one, each in its parent as opened beneath the root.
Result<Fd> open_making(int root, const std::string& dir, std::string_view given,
                       const std::string& outside_text, uint64_t resolve) {
    bool refused = (resolve & RESOLVE_NO_SYMLINKS) != 0;
    int fd = openat2_fd(root, dir.c_str(), O_RDONLY | O_DIRECTORY, 0, resolve);
    if (fd >= 0)
        return Fd(fd);
    if (errno != ENOENT)
        return failure("write", given, errno, outside_text, refused);
    fd = openat2_fd(root, ".", O_RDONLY | O_DIRECTORY, 0, resolve);
    if (fd < 0)
        return failure("write", given, errno, outside_text, refused);
    Fd parent(fd);
    std::string prefix;
    size_t at = 0;
    while (at <= dir.size()) {
        size_t slash = dir.find('/', at);
        if (slash == std::string::npos)
            slash = dir.size();
        std::string part = dir.substr(at, slash - at);
        prefix += (prefix.empty() ? "" : "/") + part;
        at = slash + 1;
        fd = openat2_fd(root, prefix.c_str(), O_RDONLY | O_DIRECTORY, 0, resolve);
        if (fd < 0 && errno == ENOENT) {
            if (::mkdirat(parent.get(), part.c_str(), 0777) != 0 && errno != EEXIST)
                return sys_error(errno == EACCES || errno == EPERM ? Exit::no_perm : Exit::io,
                                 errno, "cannot create directory '%s'", prefix.c_str());
            fd = openat2_fd(root, prefix.c_str(), O_RDONLY | O_DIRECTORY, 0, resolve);
        }
        if (fd < 0)
            return failure("write", given, errno, outside_text, refused);
        parent.reset(fd);
    }
    return parent;
}

} // namespace

Result<Confined::Staged> Confined::stage(std::string_view rel, std::string_view content) const {
    std::string given(rel);
    std::string what = "cannot write '" + given + "'";
    auto path = relative(rel);
    if (!path)
        return path.error().context(what);
    if (*path == ".")
        return Error(Exit::data, what + ": it is a directory");
    auto [dir_rel, name] = split_last(*path);
    SION_TRY(Fd dir, open_making(m_fd.get(), dir_rel, rel, outside(rel), m_resolve));

    mode_t mode = 0666; // less the umask, as open(2) makes it
    bool keep_mode = false;

    struct stat st {};

    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISDIR(st.st_mode))
            return Error(Exit::data, what + ": it is a directory");
        if (S_ISLNK(st.st_mode) && (m_resolve & RESOLVE_NO_SYMLINKS) != 0)
            return Error(Exit::no_perm, what + ": it is a symbolic link, or in a folder that is one");
        if (S_ISREG(st.st_mode)) {
            mode = st.st_mode & 07777;
            keep_mode = true;
        }
    } else if (errno != ENOENT) {
        return fail("write", rel, errno);
    }
    SION_TRY(std::string tag, random_bytes(6));
    std::string temp = name + ".sion-" + to_hex(tag);
    if (temp.size() > NAME_MAX)
        temp = ".sion-" + to_hex(tag) + ".tmp";
    int fd = openat2_fd(dir.get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode,
                        m_resolve);
    if (fd < 0)
        return sys_error(Exit::io, errno, "%s: cannot create a file beside it", what.c_str());
    Fd file(fd);
    Staged staged(std::move(dir), std::move(temp), std::move(name), given);
    // From here a failure drops `staged`, which removes the new file.
    if (Status ok = write_all(file.get(), content); !ok)
        return ok.error().context(what);
    if (keep_mode && ::fchmod(file.get(), mode) != 0)
        return sys_error(Exit::io, errno, "%s: cannot keep its mode", what.c_str());
    if (::fsync(file.get()) != 0)
        return sys_error(Exit::io, errno, "%s", what.c_str());
    return staged;
}

Status Confined::write(std::string_view rel, std::string_view content) const {
    SION_TRY(Staged staged, stage(rel, content));
    return staged.commit();
}

Status Confined::remove(std::string_view rel) const {
    std::string what = "cannot remove '" + std::string(rel) + "'";
    auto path = relative(rel);
    if (!path)
        return path.error().context(what);
    if (*path == ".")
        return Error(Exit::data, what + ": it is a directory");
    auto [dir_rel, name] = split_last(*path);
    int fd = openat2_fd(m_fd.get(), dir_rel.c_str(), O_PATH | O_DIRECTORY, 0, m_resolve);
    if (fd < 0)
        return fail("remove", rel, errno);
    Fd dir(fd);

    struct stat st {};

    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return fail("remove", rel, errno);
    if (S_ISDIR(st.st_mode))
        return Error(Exit::data, what + ": it is a directory");
    if (::unlinkat(dir.get(), name.c_str(), 0) != 0)
        return fail("remove", rel, errno);
    return {};
}

namespace {

struct Walker {
    const std::function<Confined::Visit(const Confined::Entry&)>& visit;
    size_t max_entries;
    std::string given;
    size_t visited = 0;

    struct Item {
        std::string key; // the name, "/" after a directory's: the order of whole paths
        std::string name;
        mode_t kind; // S_IFREG, S_IFDIR, S_IFLNK, …
    };

    // The kind of file `ent` is, as the directory's listing says, looked up only where the
    // filesystem does not say (DT_UNKNOWN); 0 when it is gone or cannot be looked up.
    static mode_t kind_of(int dir, const struct dirent* ent) {
        switch (ent->d_type) {
        case DT_REG:
            return S_IFREG;
        case DT_DIR:
            return S_IFDIR;
        case DT_LNK:
            return S_IFLNK;
        case DT_FIFO:
            return S_IFIFO;
        case DT_SOCK:
            return S_IFSOCK;
        case DT_CHR:
            return S_IFCHR;
        case DT_BLK:
            return S_IFBLK;
        default:
            break;
        }
        struct stat st {};
        if (::fstatat(dir, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            return 0;
        return st.st_mode & S_IFMT;
    }

    static std::vector<Item> list(int dir) {
        std::vector<Item> items;
        // fdopendir takes the fd it is given: a duplicate, so `dir` stays ours.
        int copy = ::fcntl(dir, F_DUPFD_CLOEXEC, 0);
        if (copy < 0)
            return items;
        DIR* d = ::fdopendir(copy);
        if (d == nullptr) {
            ::close(copy);
            return items;
        }
        // readdir is safe on a DIR* no other thread has (glibc's lock is per stream).
        while (struct dirent* ent = ::readdir(d)) { // NOLINT(concurrency-mt-unsafe)
            std::string_view name = ent->d_name;
            if (name == "." || name == "..")
                continue;
            Item item{std::string(name), std::string(name), kind_of(dir, ent)};
            // A name gone since readdir, or unreadable, is not there.
            if (item.kind == 0)
                continue;
            if (S_ISDIR(item.kind))
                item.key += '/';
            items.push_back(std::move(item));
        }
        ::closedir(d);
        std::sort(items.begin(), items.end(),
                  [](const Item& a, const Item& b) { return a.key < b.key; });
        return items;
    }

    // false: stopped (by `visit` or the limit, `status` says which).
    bool walk(int dir, const std::string& prefix, int depth, Status& status) {
        for (Item& item : list(dir)) {
            std::string rel = prefix.empty() ? item.name : prefix + "/" + item.name;
            bool is_dir = S_ISDIR(item.kind);
            Fd child;
            if (is_dir) {
                if (passed_over(item.name))
                    continue;
                // One name, no link followed: a directory swapped for a link since its stat is
                // refused (ELOOP, ENOTDIR) and passed over.
                int fd = openat2_fd(dir, item.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0,
                                    k_walk);
                if (fd < 0)
                    continue;
                child.reset(fd);
                if (marked_as_build(child.get()))
                    continue;
            }
            if (++visited > max_entries) {
                status = make_error(Exit::data, "cannot list '%s': more than %zu entries",
                                    given.c_str(), max_entries);
                return false;
            }
            Confined::Entry entry;
            entry.rel = std::move(rel);
            entry.is_dir = is_dir;
            entry.is_file = S_ISREG(item.kind);
            entry.is_link = S_ISLNK(item.kind);
            entry.mode = item.kind;
            Confined::Visit next = visit(entry);
            if (next == Confined::Visit::stop)
                return false;
            if (is_dir && next == Confined::Visit::go_on && depth < k_max_depth) {
                std::string sub = prefix.empty() ? item.name : prefix + "/" + item.name;
                if (!walk(child.get(), sub, depth + 1, status))
                    return false;
            }
        }
        return true;
    }
};

} // namespace

Status Confined::walk(std::string_view rel, const std::function<Visit(const Entry&)>& visit,
                      size_t max_entries) const {
    auto path = relative(rel);
    if (!path)
        return path.error().context("cannot list '" + std::string(rel) + "'");
    int fd = openat2_fd(m_fd.get(), path->c_str(), O_RDONLY | O_DIRECTORY, 0, m_resolve);
    if (fd < 0)
        return fail("list", rel, errno);
    Fd dir(fd);
    Walker walker{visit, max_entries, std::string(rel)};
    Status status;
    walker.walk(dir.get(), *path == "." ? std::string() : *path, 1, status);
    return status;
}

Status Confined::walk(std::string_view rel, const std::function<bool(const Entry&)>& visit,
                      size_t max_entries) const {
    std::function<Visit(const Entry&)> adapted = [&visit](const Entry& e) {
        return visit(e) ? Visit::go_on : Visit::stop;
    };
    return walk(rel, adapted, max_entries);
}

} // namespace sion
