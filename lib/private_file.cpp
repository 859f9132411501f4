// SPDX-License-Identifier: MIT
// Writing a private file so that no reader ever sees half of it (the hooks file, a sealed file),
// and locking its directory so that two writers at once (two `sion-hooks add`s) both land.
#include "lib/private_file.hpp"

#include "lib/hash.hpp"
#include "lib/secret_bytes.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace sion {

namespace {

std::string directory_of(const std::string& path) {
    size_t slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

Exit exit_for(int err) {
    return err == EACCES || err == EPERM || err == EROFS ? Exit::no_perm : Exit::os;
}

// Messages name `path`, the file being replaced.
Status write_temp(const std::string& temp, const std::string& path, std::string_view data) {
    const char* p = path.c_str();
    Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd)
        return sys_error(exit_for(errno), errno, "cannot write '%s'", p);
    // The umask may have taken bits away; 0600 is what check_private and the user expect.
    if (::fchmod(fd.get(), 0600) != 0)
        return sys_error(Exit::os, errno, "cannot change the mode of '%s'", p);
    if (Status written = write_all(fd.get(), data); !written)
        return written.error().context("cannot write '" + path + "'");
    if (::fsync(fd.get()) != 0)
        return sys_error(Exit::io, errno, "cannot sync '%s'", p);
    if (::close(fd.release()) != 0)
        return sys_error(Exit::io, errno, "cannot close '%s'", p);
    return {};
}

// Renames without replacing; where the filesystem has no RENAME_NOREPLACE, link(2) gives the same
// guarantee. Sets errno to EEXIST when `to` exists.
int rename_noreplace(const char* from, const char* to) {
    if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL)
        return -1;
    if (::link(from, to) != 0)
        return -1;
    ::unlink(from);
    return 0;
}

// A temporary file beside `path` renamed to it, over an old one with `replace`; without it, false
// when another file was at `path`.
Result<bool> install(const std::string& path, std::string_view data, bool replace) {
    SION_TRY(std::string suffix, random_bytes(6));
    std::string temp = path + ".tmp-" + to_hex(suffix);
    if (Status written = write_temp(temp, path, data); !written) {
        ::unlink(temp.c_str());
        return std::move(written).error();
    }
    int rc = replace ? ::rename(temp.c_str(), path.c_str())
                     : rename_noreplace(temp.c_str(), path.c_str());
    if (rc != 0) {
        int err = errno;
        ::unlink(temp.c_str());
        if (!replace && err == EEXIST)
            return false;
        return sys_error(exit_for(err), err, "cannot replace '%s'", path.c_str());
    }
    SION_CHECK(sync_directory_of(path));
    return true;
}

} // namespace

Status ensure_private_directory(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0700) == 0) {
        if (::chmod(dir.c_str(), 0700) != 0)
            return sys_error(Exit::os, errno, "cannot change the mode of '%s'", dir.c_str());
        return {};
    }
    if (errno == EEXIST)
        return {};
    return sys_error(exit_for(errno), errno, "cannot create directory '%s'", dir.c_str());
}

Status write_private_file(const std::string& path, std::string_view data) {
    Result<bool> installed = install(path, data, true);
    if (!installed)
        return std::move(installed).error();
    return {};
}

Result<bool> create_private_file(const std::string& path, std::string_view data) {
    return install(path, data, false);
}

// The rename is durable once the directory's entry is on disk.
Status sync_directory_of(const std::string& path) {
    std::string dir = directory_of(path);
    Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!d)
        return sys_error(Exit::os, errno, "cannot open directory '%s'", dir.c_str());
    if (::fsync(d.get()) != 0)
        return sys_error(Exit::io, errno, "cannot sync directory '%s'", dir.c_str());
    return {};
}

Result<Fd> lock_directory(const std::string& dir) {
    Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!d)
        return sys_error(exit_for(errno), errno, "cannot lock directory '%s'", dir.c_str());
    while (::flock(d.get(), LOCK_EX) != 0)
        if (errno != EINTR)
            return sys_error(Exit::os, errno, "cannot lock directory '%s'", dir.c_str());
    return d;
}

} // namespace sion
