// SPDX-License-Identifier: MIT
// Finding and guarding $SION_HOME, and comparing paths once their symlinks and ".." are resolved.
#include "lib/home.hpp"

#include "lib/text.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace sion {

namespace {

// Drops repeated and trailing slashes; "." and ".." stay, since only the file system knows what
// ".." after a symlink means.
std::string tidy(std::string_view path) {
    std::string out;
    for (char c : path) {
        if (c == '/' && !out.empty() && out.back() == '/')
            continue;
        out += c;
    }
    if (out.size() > 1 && out.back() == '/')
        out.pop_back();
    return out;
}

std::string join(const std::string& dir, std::string_view name) {
    std::string out = dir;
    if (out.empty() || out.back() != '/')
        out += '/';
    out += name;
    return out;
}

std::string parent_of(const std::string& path) {
    auto slash = path.find_last_of('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

Result<std::string> passwd_home() {
    long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
    std::vector<char> buf(size > 0 ? static_cast<size_t>(size) : 16384);

    struct passwd entry {};
    struct passwd* found = nullptr;
    uid_t uid = ::geteuid();
    int err = ::getpwuid_r(uid, &entry, buf.data(), buf.size(), &found);
    if (err != 0 || found == nullptr || found->pw_dir == nullptr || found->pw_dir[0] != '/')
        return make_error(Exit::config, "cannot find a home directory for uid %u: set SION_HOME",
                          static_cast<unsigned>(uid));
    return tidy(found->pw_dir);
}

// Why someone other than the user may change what `st` describes, with the fix, or "" when nobody
// can. `dir` says it is the directory holding the thing asked about; `mode` is chmod's argument.
std::string exposure(const struct stat& st, const std::string& path, bool dir, const char* mode,
                     bool root_ok) {
    uid_t me = ::geteuid();
    const char* it = dir ? "its directory" : "it";
    if (st.st_uid != me && !(root_ok && st.st_uid == 0))
        return format("%s owned by uid %u, not by you (chown %u '%s')",
                      dir ? "its directory is" : "it is", static_cast<unsigned>(st.st_uid),
                      static_cast<unsigned>(me), path.c_str());
    if ((st.st_mode & S_IWOTH) != 0)
        return format("others may write %s (chmod %s '%s')", it, mode, path.c_str());
    if ((st.st_mode & S_IWGRP) != 0)
        return format("the group may write %s (chmod %s '%s')", it, mode, path.c_str());
    return {};
}

// An existing home: a directory of its own, that nobody else may change.
Status check_home(const std::string& home) {
    struct stat st = {};
    if (::lstat(home.c_str(), &st) != 0)
        return sys_error(Exit::os, errno, "cannot inspect SION_HOME '%s'", home.c_str());
    const char* h = home.c_str();
    if (S_ISLNK(st.st_mode))
        return make_error(Exit::no_perm,
                          "refusing SION_HOME '%s': it is a symbolic link (set SION_HOME to the "
                          "directory it points to)",
                          h);
    if (!S_ISDIR(st.st_mode))
        return make_error(Exit::no_perm, "refusing SION_HOME '%s': not a directory (move it aside)",
                          h);
    std::string why = exposure(st, home, false, "700", false);
    if (!why.empty())
        return make_error(Exit::no_perm, "refusing SION_HOME '%s': %s", h, why.c_str());
    return {};
}

} // namespace

Result<std::string> resolve_home() {
    const char* sion_home =
        std::getenv("SION_HOME"); // NOLINT(concurrency-mt-unsafe): see the header
    if (sion_home != nullptr && *sion_home != '\0') {
        if (*sion_home != '/')
            return make_error(Exit::config, "invalid SION_HOME '%s': not an absolute path",
                              sion_home);
        return tidy(sion_home);
    }
    const char* home = std::getenv("HOME"); // NOLINT(concurrency-mt-unsafe): see the header
    if (home != nullptr && *home != '\0') {
        if (*home != '/')
            return make_error(Exit::config, "invalid HOME '%s': not an absolute path", home);
        return join(tidy(home), ".sion");
    }
    SION_TRY(std::string dir, passwd_home());
    return join(dir, ".sion");
}

Status ensure_home(const std::string& home) {
    if (home.empty() || home[0] != '/')
        return make_error(Exit::config, "invalid SION_HOME '%s': not an absolute path",
                          home.c_str());
    if (::mkdir(home.c_str(), 0700) == 0) {
        // mkdir's mode passes through the umask, which may take the owner's own bits.
        if (::chmod(home.c_str(), 0700) != 0)
            return sys_error(Exit::os, errno, "cannot change mode of SION_HOME '%s'", home.c_str());
    } else if (errno == ENOENT) {
        return make_error(Exit::config,
                          "cannot create SION_HOME '%s': its parent '%s' does not exist",
                          home.c_str(), parent_of(home).c_str());
    } else if (errno != EEXIST) {
        return sys_error(errno == EACCES ? Exit::no_perm : Exit::os, errno,
                         "cannot create SION_HOME '%s'", home.c_str());
    }
    return check_home(home);
}

Result<std::string> prepare_home() {
    SION_TRY(std::string home, resolve_home());
    SION_CHECK(ensure_home(home));
    return home;
}

Status check_private(const std::string& path, const char* what) {
    struct stat st = {};
    if (::lstat(path.c_str(), &st) != 0)
        return sys_error(errno == ENOENT ? Exit::no_input : Exit::os, errno,
                         "cannot inspect %s '%s'", what, path.c_str());
    if (S_ISLNK(st.st_mode))
        return make_error(Exit::no_perm,
                          "refusing %s '%s': it is a symbolic link (put the file itself there)",
                          what, path.c_str());
    std::string why = exposure(st, path, false, "go-w", true);
    if (why.empty()) {
        // The directory as the kernel finds it (following links): whoever may write it may replace
        // the entry.
        std::string dir = parent_of(path);
        if (::stat(dir.c_str(), &st) != 0)
            return sys_error(Exit::os, errno, "cannot inspect the directory of %s '%s'", what,
                             path.c_str());
        why = exposure(st, dir, true, "go-w", true);
    }
    if (!why.empty())
        return make_error(Exit::no_perm, "refusing %s '%s': %s", what, path.c_str(), why.c_str());
    return {};
}

Result<std::string> resolve_path(const std::string& path) {
    if (path.empty())
        return make_error(Exit::data, "cannot resolve path '': it is empty");
    std::string absolute = path;
    if (path[0] != '/') {
        char cwd[PATH_MAX];
        if (::getcwd(cwd, sizeof cwd) == nullptr)
            return sys_error(Exit::os, errno, "cannot resolve path '%s'", path.c_str());
        absolute = join(cwd, path);
    }
    std::vector<std::string> parts;
    for (size_t start = 0; start <= absolute.size();) {
        size_t end = absolute.find('/', start);
        if (end == std::string::npos)
            end = absolute.size();
        std::string part = absolute.substr(start, end - start);
        if (!part.empty() && part != ".") // "." is itself wherever it is, symlinks or not
            parts.push_back(std::move(part));
        start = end + 1;
    }
    // The longest prefix that exists, resolved by the kernel; what follows cannot hold symlinks.
    std::string base;
    size_t known = parts.size();
    for (;; --known) {
        std::string prefix = "/";
        for (size_t i = 0; i < known; ++i)
            prefix = join(prefix, parts[i]);
        if (char* real = ::realpath(prefix.c_str(), nullptr); real != nullptr) {
            base = real;
            std::free(real); // NOLINT(cppcoreguidelines-no-malloc): realpath's buffer
            break;
        }
        if ((errno != ENOENT && errno != ENOTDIR) || known == 0)
            return sys_error(errno == EACCES ? Exit::no_perm : Exit::os, errno,
                             "cannot resolve path '%s'", path.c_str());
    }
    for (size_t i = known; i < parts.size(); ++i) {
        if (parts[i] == "..")
            base = parent_of(base);
        else
            base = join(base, parts[i]);
    }
    return base;
}

Result<bool> paths_overlap(const std::string& a, const std::string& b) {
    SION_TRY(std::string ra, resolve_path(a));
    SION_TRY(std::string rb, resolve_path(b));
    auto inside = [](const std::string& outer, const std::string& inner) {
        return outer == "/"
               || (inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0
                   && inner[outer.size()] == '/');
    };
    return ra == rb || inside(ra, rb) || inside(rb, ra);
}

} // namespace sion
