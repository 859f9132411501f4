// SPDX-License-Identifier: MIT
// Tests for sandboxd/mounts' /etc: which entries are copied in rather than bound, the arguments
// that says, and what a command in a real bwrap sandbox then sees of them (the host's content,
// read-only).
#include "lib/child.hpp"
#include "sandboxd/bwrap.hpp"
#include "sandboxd/mounts.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sion::sandboxd {
namespace {

namespace fs = std::filesystem;
using Args = std::vector<std::string>;

bool has(const Args& args, const Args& seq) {
    return std::search(args.begin(), args.end(), seq.begin(), seq.end()) != args.end();
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

Config config(Network network = Network::none) {
    Config c;
    c.workspace = "/home/me/work";
    c.network = network;
    return c;
}

const HostRoot k_merged{{{"/bin", "usr/bin"}, {"/lib", "usr/lib"}, {"/lib64", "usr/lib64"}}, {}};

Layout layout_with(std::vector<EtcCopy> etc) {
    Layout l;
    l.exe = "/usr/bin/sion-sandbox";
    l.passwd = 7;
    l.group = 8;
    l.hosts = 9;
    l.etc = std::move(etc);
    return l;
}

struct Scratch {
    fs::path dir;

    Scratch() {
        std::string tmpl = (fs::temp_directory_path() / "sion-etc.XXXXXX").string();
        dir = ::mkdtemp(tmpl.data());
    }

    ~Scratch() {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }

    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;

    std::string file(const std::string& name, const std::string& text, mode_t mode) const {
        fs::path p = dir / name;
        std::ofstream(p) << text;
        ::chmod(p.c_str(), mode);
        return p.string();
    }
};

std::string read_fd(int fd) {
    auto text = read_all(fd, 1 << 20);
    return text ? *text : "(unreadable)";
}

TEST(EtcPaths, TheWhitelistAndTheResolverOnlyWithTheHostsNetwork) {
    std::vector<std::string> none = etc_paths(config());
    EXPECT_EQ(none, k_etc_whitelist);
    std::vector<std::string> host = etc_paths(config(Network::host));
    for (const char* p : {"/etc/resolv.conf", "/etc/gai.conf", "/etc/host.conf", "/etc/hosts"}) {
        EXPECT_FALSE(contains(none, p)) << p;
        EXPECT_TRUE(contains(host, p)) << p;
    }
    for (const std::string& p : host) {
        EXPECT_EQ(p.find("/etc/ssl/private"), std::string::npos);
        EXPECT_NE(p, "/etc/shadow");
        EXPECT_NE(p, "/etc/passwd");
    }
}

TEST(EtcLayout, ACopyReplacesTheBindAndKeepsTheMode) {
    Args a =
        layout_args(config(), k_merged,
                    layout_with({{"/etc/ld.so.cache", 0644, 12}, {"/etc/services", 0755, 13}}), {});
    EXPECT_TRUE(has(a, {"--perms", "0644", "--file", "12", "/etc/ld.so.cache"}));
    EXPECT_TRUE(has(a, {"--perms", "0755", "--file", "13", "/etc/services"}));
    EXPECT_FALSE(has(a, {"--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"}));
    EXPECT_FALSE(has(a, {"--ro-bind-try", "/etc/services", "/etc/services"}));
    // What has no copy is bound, as before.
    EXPECT_TRUE(has(a, {"--ro-bind-try", "/etc/ssl/certs", "/etc/ssl/certs"}));
    EXPECT_TRUE(has(a, {"--ro-bind-try", "/etc/protocols", "/etc/protocols"}));
    EXPECT_TRUE(has(a, {"--ro-bind-data", "9", "/etc/hosts"}));
}

TEST(EtcLayout, TheHostsOwnHostsIsCopiedWithTheHostsNetwork) {
    Args a =
        layout_args(config(Network::host), k_merged,
                    layout_with({{"/etc/hosts", 0644, 12}, {"/etc/resolv.conf", 0644, 13}}), {});
    EXPECT_TRUE(has(a, {"--perms", "0644", "--file", "12", "/etc/hosts"}));
    EXPECT_TRUE(has(a, {"--perms", "0644", "--file", "13", "/etc/resolv.conf"}));
    EXPECT_FALSE(has(a, {"--ro-bind-data", "9", "/etc/hosts"}));
    EXPECT_TRUE(has(a, {"--ro-bind-try", "/etc/gai.conf", "/etc/gai.conf"}));
}

TEST(OpenCopies, OnlyFilesAnyoneMayRead) {
    Scratch s;
    std::string readable = s.file("readable", "one\n", 0644);
    std::string program = s.file("program", "two\n", 0755);
    std::string secret = s.file("secret", "three\n", 0640);
    std::string link = (s.dir / "link").string();
    fs::create_symlink(readable, link);
    std::string dir = (s.dir / "dir").string();
    fs::create_directory(dir);
    std::string fifo = (s.dir / "fifo").string();
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    std::string missing = (s.dir / "missing").string();

    auto copies = open_copies({readable, program, secret, link, dir, fifo, missing});
    ASSERT_EQ(copies.size(), 3u);
    EXPECT_EQ(copies[0].first.path, readable);
    EXPECT_EQ(copies[0].first.mode, 0644u);
    EXPECT_EQ(read_fd(copies[0].second.get()), "one\n");
    EXPECT_EQ(copies[1].first.path, program);
    EXPECT_EQ(copies[1].first.mode, 0755u);
    EXPECT_EQ(read_fd(copies[1].second.get()), "two\n");
    // A symbolic link is followed, as a bind follows it.
    EXPECT_EQ(copies[2].first.path, link);
    EXPECT_EQ(copies[2].first.mode, 0644u);
    EXPECT_EQ(read_fd(copies[2].second.get()), "one\n");
}

// Each path's checksum and permission bits, and the count of entries in each directory; "missing"
// for what is not there. The same script runs on the host and in the sandbox.
std::string describe_script(const std::vector<std::string>& paths) {
    std::string script = "for f in";
    for (const std::string& p : paths)
        script += " '" + p + "'";
    script += "; do if [ -d \"$f\" ]; then echo \"$f $(ls -A \"$f\" | wc -l) entries\"; "
              "elif [ -e \"$f\" ]; then echo \"$f $(cksum < \"$f\") $(stat -L -c %a \"$f\")\"; "
              "else echo \"$f missing\"; fi; done";
    return script;
}

// A pipe's read end, the pipe holding `text` (empty if it cannot be made).
Fd holding(const std::string& text) {
    auto pipe = Pipe::make();
    if (!pipe || !write_all(pipe->write.get(), text))
        return {};
    return std::move(pipe->read);
}

ChildSpec shell(std::vector<std::string> argv) {
    ChildSpec spec;
    spec.argv = std::move(argv);
    spec.env = {"PATH=/usr/bin:/bin"};
    spec.time_limit = std::chrono::seconds(30);
    return spec;
}

TEST(EtcInBwrap, ACommandSeesTheHostsFilesReadOnly) {
    auto bwrap = find_bwrap();
    if (!bwrap)
        GTEST_SKIP() << "bwrap is not installed";
    Scratch s;
    Config c = config();
    c.workspace = (s.dir / "work").string();
    fs::create_directory(c.workspace);
    std::vector<std::string> paths = etc_paths(c);

    std::vector<Fd> keep;
    ChildSpec spec = shell({*bwrap});
    int next = 3;
    auto give = [&](Fd fd) {
        spec.extra_fds.push_back({fd.get(), next});
        keep.push_back(std::move(fd));
        return next++;
    };
    Layout layout = layout_with({});
    layout.exe = "/bin/sh";
    Fd passwd = holding("passwd\n"), group = holding("group\n"), hosts = holding("hosts\n");
    ASSERT_TRUE(passwd && group && hosts);
    layout.passwd = give(std::move(passwd));
    layout.group = give(std::move(group));
    layout.hosts = give(std::move(hosts));
    for (auto& [copy, fd] : open_copies(paths)) {
        copy.fd = give(std::move(fd));
        layout.etc.push_back(std::move(copy));
    }
    ASSERT_FALSE(layout.etc.empty()) << "this host's /etc has none of the whitelist's files";

    std::string script = describe_script(paths);
    Args args = layout_args(c, probe_host_root(), layout, {"PATH=/usr/bin:/bin"});
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.argv.insert(spec.argv.end(),
                     {"--", "/bin/sh", "-c",
                      script
                          + "; for f in /etc/ld.so.cache /etc/services /etc/passwd; do "
                            "(echo x >> \"$f\") 2>/dev/null && echo \"$f writable\"; done; "
                            "for f in /etc/ssl/private /etc/shadow; do [ -e \"$f\" ] && echo \"$f "
                            "shown\"; done; cat /etc/passwd"});
    auto inside = run(spec, "");
    ASSERT_TRUE(inside) << inside.error().message();
    ASSERT_EQ(inside->status, 0) << inside->err;

    auto outside = run(shell({"/bin/sh", "-c", script}), "");
    ASSERT_TRUE(outside);
    ASSERT_EQ(outside->status, 0) << outside->err;
    EXPECT_EQ(inside->out, outside->out + "passwd\n");
}

} // namespace
} // namespace sion::sandboxd
