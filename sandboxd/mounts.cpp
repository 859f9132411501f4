// SPDX-License-Identifier: MIT
// The bubblewrap layout as bwrap's arguments, and the files synthesized for it.
#include "sandboxd/mounts.hpp"

#include "lib/text.hpp"
#include "sandboxd/grants.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>

namespace sion::sandboxd {

// What programs need of /etc, and nothing that could hold a secret: /etc/ssl/private is left out.
const std::vector<std::string> k_etc_whitelist = {
    "/etc/alternatives",   "/etc/ca-certificates", "/etc/ca-certificates.conf",
    "/etc/debian_version", "/etc/ld.so.cache",     "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",   "/etc/localtime",       "/etc/mime.types",
    "/etc/nsswitch.conf",  "/etc/os-release",      "/etc/protocols",
    "/etc/services",       "/etc/ssl/certs",       "/etc/ssl/openssl.cnf",
    "/etc/timezone",
};

const std::vector<std::string> k_etc_host_network = {
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/host.conf",
};

namespace {

void add(std::vector<std::string>& args, std::initializer_list<std::string> more) {
    args.insert(args.end(), more);
}

void add_namespaces(std::vector<std::string>& args, const Config& config) {
    add(args, {"--unshare-all", "--unshare-user"});
    if (config.network == Network::host)
        args.emplace_back("--share-net");
    add(args, {"--disable-userns", "--die-with-parent", "--new-session", "--as-pid-1"});
    std::string id = std::to_string(k_sandbox_id);
    add(args, {"--uid", id, "--gid", id});
    // The host's network keeps the host's name, which its /etc/hosts resolves; otherwise the
    // sandbox's name is in the sandbox's own /etc/hosts.
    if (config.network != Network::host)
        add(args, {"--hostname", "sandbox"});
    add(args, {"--cap-drop", "ALL"});
}

// What of /proc a command may not change, and what it may not read.
const std::vector<std::string> k_proc_read_only = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
                                                   "/proc/bus"};
const std::vector<std::string> k_proc_masked = {"/proc/kcore", "/proc/keys", "/proc/timer_list"};

void add_system(std::vector<std::string>& args, const HostRoot& root) {
    add(args, {"--ro-bind", "/usr", "/usr"});
    for (const auto& [path, target] : root.entries) {
        if (target.empty())
            add(args, {"--ro-bind", path, path});
        else
            add(args, {"--symlink", target, path});
    }
    add(args, {"--proc", "/proc"});
    for (const std::string& path : k_proc_read_only)
        add(args, {"--ro-bind-try", path, path});
    for (const std::string& path : root.proc_masked)
        add(args, {"--ro-bind", "/dev/null", path});
    add(args, {"--dev", "/dev"});
    add(args, {"--size", std::to_string(k_shm_size), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"});
    add(args, {"--size", std::to_string(k_tmp_size), "--tmpfs", "/tmp"});
}

void add_etc(std::vector<std::string>& args, const Config& config, const Layout& fds) {
    for (const std::string& path : etc_paths(config)) {
        auto copy = std::find_if(fds.etc.begin(), fds.etc.end(),
                                 [&](const EtcCopy& c) { return c.path == path; });
        if (copy != fds.etc.end())
            add(args, {"--perms", format("%04o", copy->mode), "--file", std::to_string(copy->fd),
                       path});
        else
            add(args, {"--ro-bind-try", path, path});
    }
    if (config.network != Network::host)
        add(args, {"--perms", "0644", "--ro-bind-data", std::to_string(fds.hosts), "/etc/hosts"});
    add(args, {"--perms", "0644", "--ro-bind-data", std::to_string(fds.passwd), "/etc/passwd"});
    add(args, {"--perms", "0644", "--ro-bind-data", std::to_string(fds.group), "/etc/group"});
    add(args, {"--symlink", "/proc/self/mounts", "/etc/mtab"});
}

} // namespace

std::vector<std::string> etc_paths(const Config& config) {
    std::vector<std::string> paths = k_etc_whitelist;
    if (config.network == Network::host) {
        paths.insert(paths.end(), k_etc_host_network.begin(), k_etc_host_network.end());
        paths.emplace_back("/etc/hosts");
    }
    return paths;
}

std::vector<std::pair<EtcCopy, Fd>> open_copies(const std::vector<std::string>& paths) {
    auto copyable = [](const struct stat& st) {
        return S_ISREG(st.st_mode) && (st.st_mode & S_IROTH) != 0;
    };
    std::vector<std::pair<EtcCopy, Fd>> copies;
    for (const std::string& path : paths) {
        // Looked at before it is opened, so that nothing but a file is opened; O_NONBLOCK: a FIFO
        // put there in between opens at once, and is left out after fstat.
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0 || !copyable(st))
            continue;
        Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (!fd || ::fstat(fd.get(), &st) != 0 || !copyable(st))
            continue;
        copies.emplace_back(EtcCopy{path, static_cast<unsigned>(st.st_mode & 0777), -1},
                            std::move(fd));
    }
    return copies;
}

HostRoot probe_host_root() {
    HostRoot root;
    for (const char* path : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
        struct stat st {};
        if (::lstat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            root.entries.emplace_back(path, "");
        } else if (S_ISLNK(st.st_mode)) {
            std::array<char, PATH_MAX> buf{};
            ssize_t n = ::readlink(path, buf.data(), buf.size() - 1);
            if (n > 0)
                root.entries.emplace_back(path, std::string(buf.data(), static_cast<size_t>(n)));
        }
    }
    for (const std::string& path : k_proc_masked)
        if (::access(path.c_str(), F_OK) == 0)
            root.proc_masked.push_back(path);
    return root;
}

std::vector<std::string> layout_args(const Config& config, const HostRoot& root,
                                     const Layout& layout,
                                     const std::vector<std::string>& env) {
    std::vector<std::string> args;
    add_namespaces(args, config);
    add_system(args, root);
    for (size_t i = 0; i < config.reads.size(); ++i)
        add(args, {"--ro-bind", i < layout.reads.size() ? layout.reads[i] : config.reads[i],
                   config.reads[i]});
    add_etc(args, config, layout);
    add(args, {"--bind", layout.workspace.empty() ? config.workspace : layout.workspace,
               k_workspace_inside});
    add(args, {"--ro-bind", layout.exe, k_exe_inside});
    if (!config.skill_dir.empty())
        add(args, {"--ro-bind", layout.skill.empty() ? config.skill_dir : layout.skill,
                   proto::k_skill_inside});
    if (!layout.proxy_socket.empty())
        add(args, {"--bind", layout.proxy_socket, k_proxy_inside});
    if (layout.ca_bundle >= 0)
        add(args, {"--perms", "0644", "--ro-bind-data", std::to_string(layout.ca_bundle),
                   k_ca_bundle_inside});
    if (layout.egress_ca >= 0)
        add(args, {"--perms", "0644", "--ro-bind-data", std::to_string(layout.egress_ca),
                   k_egress_ca_inside});
    if (!config.channel.empty())
        add(args, {"--bind", layout.channel.empty() ? config.channel : layout.channel,
                   k_channel_inside});
    add(args, {"--remount-ro", "/", "--chdir", k_workspace_inside, "--clearenv"});
    if (layout.seccomp >= 0)
        add(args, {"--seccomp", std::to_string(layout.seccomp)});
    for (const std::string& entry : env) {
        size_t eq = entry.find('=');
        if (eq != std::string::npos && eq > 0)
            add(args, {"--setenv", entry.substr(0, eq), entry.substr(eq + 1)});
    }
    return args;
}

std::vector<std::string> sandbox_env(const std::string& term) {
    std::vector<std::string> env = {
        std::string("PATH=") + k_sandbox_path,
        std::string("HOME=") + k_workspace_inside,
        "USER=sandbox",
        "LOGNAME=sandbox",
        "SHELL=/bin/sh",
        "LANG=C.UTF-8",
    };
    if (!term.empty())
        env.push_back("TERM=" + term);
    return env;
}

std::string passwd_text() {
    return format("root:x:0:0:root:/root:/usr/sbin/nologin\n"
                  "sandbox:x:%u:%u:sandbox:%s:/bin/sh\n"
                  "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
                  k_sandbox_id, k_sandbox_id, k_workspace_inside);
}

std::string group_text() {
    return format("root:x:0:\nsandbox:x:%u:\nnogroup:x:65534:\n", k_sandbox_id);
}

std::string hosts_text() {
    return "127.0.0.1\tlocalhost\n127.0.1.1\tsandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n";
}

} // namespace sion::sandboxd
