// SPDX-License-Identifier: MIT
// lib/confined with Links::refused where openat2 is refused with ENOSYS, as sion-sandbox's seccomp
// filter refuses it: in a child process under a filter of the test's own (openat2 is ENOSYS,
// everything else allowed), the lookups a name at a time still read, list and write beneath the
// root, and still refuse "..", absolute paths and every link; Links::inside cannot be had there.
#include "lib/confined.hpp"
#include "tests/unit/temp_dir.hpp"

#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>

namespace sion {
namespace {

// openat2 answers ENOSYS; every other call is allowed.
bool refuse_openat2() {
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
           && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0;
}

void put(const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

// What the child found, a line each; "" when all held.
std::string in_child(const std::string& root) {
    std::string wrong;
    auto expect = [&](bool held, const std::string& what) {
        if (!held)
            wrong += what + "\n";
    };
    if (!refuse_openat2())
        return "cannot install the filter\n";
    auto inside = Confined::open(root, "/folder", Confined::Links::inside);
    expect(!inside && inside.error().exit() == Exit::unavailable,
           "Links::inside opened without openat2");
    auto c = Confined::open(root, "/folder", Confined::Links::refused);
    if (!c)
        return "Links::refused did not open: " + c.error().message() + "\n";
    auto read = c->read("a/b/deep.md", 1000);
    expect(read && *read == "deep\n", "a nested file was not read");
    auto link = c->read("a/link.md", 1000);
    expect(!link && link.error().message()
                        == "cannot read 'a/link.md': it is a symbolic link, or in a folder that "
                           "is one",
           "a link to a file was followed: " + (link ? *link : link.error().message()));
    auto through = c->read("dirlink/deep.md", 1000);
    expect(!through && through.error().exit() == Exit::no_perm, "a link to a folder was followed");
    auto up = c->read("../outside.md", 1000);
    expect(!up && up.error().exit() == Exit::no_perm, "'..' led out");
    auto missing = c->read("a/none.md", 1000);
    expect(!missing && missing.error().exit() == Exit::no_input, "a missing file was found");
    auto st = c->stat("a/link.md");
    expect(st && st->is_link, "stat did not describe the link itself");
    int entries = 0;
    bool saw_link_inside = false;
    auto walked = c->walk(".", [&](const Confined::Entry& e) {
        ++entries;
        saw_link_inside = saw_link_inside || e.rel == "dirlink/deep.md";
        return true;
    });
    expect(walked && entries == 6 && !saw_link_inside,
           "the walk saw " + std::to_string(entries) + " entries");
    auto written = c->write("new/dir/n.md", "new\n");
    expect(written && c->read("new/dir/n.md", 100).value_or("") == "new\n",
           "a write in new folders failed");
    auto over = c->write("a/link.md", "x");
    expect(!over && over.error().exit() == Exit::no_perm, "a write replaced a link");
    auto via = c->write("dirlink/x.md", "x");
    expect(!via && via.error().exit() == Exit::no_perm,
           "a write through a linked folder: " + (via ? "done" : via.error().message()));
    return wrong;
}

TEST(ConfinedWithoutOpenat2, NameByNameFollowsNoLink) {
    test::TempDir tmp;
    ASSERT_FALSE(tmp.path().empty());
    std::string root = tmp.path() + "/root";
    put(root + "/a/b/deep.md", "deep\n");
    put(root + "/top.md", "top\n");
    put(tmp.path() + "/outside.md", "outside\n");
    ASSERT_EQ(::symlink("b/deep.md", (root + "/a/link.md").c_str()), 0);
    ASSERT_EQ(::symlink("a/b", (root + "/dirlink").c_str()), 0);
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::close(fds[0]);
        std::string wrong = in_child(root);
        (void)!::write(fds[1], wrong.data(), wrong.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string said;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;)
        said.append(buffer, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(said, "");
    // The writes made in the child are there, and nothing outside changed.
    std::ifstream n(root + "/new/dir/n.md");
    EXPECT_TRUE(n.good());
    std::ifstream outside(tmp.path() + "/outside.md");
    std::string text((std::istreambuf_iterator<char>(outside)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "outside\n");
}

} // namespace
} // namespace sion
