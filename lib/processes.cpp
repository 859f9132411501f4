// SPDX-License-Identifier: MIT
// Processes read from /proc, and a tree of them ended without signalling a stranger.
#include "lib/processes.hpp"

#include "lib/fd.hpp"
#include "lib/text.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <thread>

namespace sion {

namespace {

// How often end_process_tree() looks again.
constexpr std::chrono::milliseconds k_poll{20};

std::string read_small_file(const char* path) {
    Fd file(::open(path, O_RDONLY | O_CLOEXEC));
    if (!file)
        return {};
    auto text = read_all(file.get(), 4096);
    return text ? *text : std::string();
}

// One line of /proc/PID/stat, the fields used here.
struct Stat {
    ProcessId id;
    pid_t parent = -1;
    bool zombie = false;
};

// The command name (field 2) is in parentheses and may hold spaces and parentheses itself: the
// fields after it are counted from the last ')'.
std::optional<Stat> read_stat(pid_t pid) {
    std::string text = read_small_file(format("/proc/%ld/stat", static_cast<long>(pid)).c_str());
    size_t paren = text.rfind(')');
    if (paren == std::string::npos || paren + 2 >= text.size())
        return std::nullopt;
    std::vector<std::string_view> fields; // from field 3, the state
    std::string_view rest = std::string_view(text).substr(paren + 2);
    while (!rest.empty() && fields.size() < 20) {
        size_t space = rest.find(' ');
        fields.push_back(rest.substr(0, space));
        rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
    }
    if (fields.size() < 20)
        return std::nullopt;
    Stat s;
    s.id.pid = pid;
    s.zombie = fields[0] == "Z" || fields[0] == "X";
    s.parent = static_cast<pid_t>(std::strtol(std::string(fields[1]).c_str(), nullptr, 10));
    s.id.start = std::strtoull(std::string(fields[19]).c_str(), nullptr, 10);
    return s;
}

// Every process /proc shows now.
std::vector<Stat> scan() {
    std::vector<Stat> all;
    DIR* dir = ::opendir("/proc");
    if (dir == nullptr)
        return all;
    // readdir is safe on a DIR* no other thread has (glibc's lock is per stream).
    while (const dirent* entry = ::readdir(dir)) { // NOLINT(concurrency-mt-unsafe)
        if (std::isdigit(static_cast<unsigned char>(entry->d_name[0])) == 0)
            continue;
        if (auto s = read_stat(static_cast<pid_t>(std::atol(entry->d_name))))
            all.push_back(*s);
    }
    ::closedir(dir);
    return all;
}

bool runs_in(const std::vector<Stat>& all, const ProcessId& who) {
    for (const Stat& s : all)
        if (s.id == who)
            return !s.zombie;
    return false;
}

// Adds to `known` the children of its members that still run (and theirs), as `all` shows them;
// returns the members that still run. A child started before the member it names as its parent
// is a stranger that took a pid over: left out.
std::vector<ProcessId> grow(std::vector<ProcessId>& known, const std::vector<Stat>& all) {
    std::vector<ProcessId> running;
    for (size_t i = 0; i < known.size(); ++i) {
        ProcessId member = known[i];
        if (!runs_in(all, member))
            continue;
        running.push_back(member);
        for (const Stat& s : all) {
            if (s.parent != member.pid || s.id.start < member.start || s.zombie)
                continue;
            bool seen = false;
            for (const ProcessId& k : known)
                seen = seen || k == s.id;
            if (!seen)
                known.push_back(s.id);
        }
    }
    return running;
}

// Sends `signal` to `who` if it is still who it was. A process gone meanwhile is not an error.
Status signal_process(const ProcessId& who, int signal) {
    if (process_id(who.pid) != std::optional<ProcessId>(who))
        return {};
    if (::kill(who.pid, signal) != 0 && errno != ESRCH)
        return sys_error(errno == EPERM ? Exit::no_perm : Exit::os, errno, "cannot signal pid %ld",
                         static_cast<long>(who.pid));
    return {};
}

} // namespace

std::optional<ProcessId> process_id(pid_t pid) {
    if (pid <= 0)
        return std::nullopt;
    auto s = read_stat(pid);
    if (!s || s->zombie)
        return std::nullopt;
    return s->id;
}

std::string boot_id() {
    std::string id = read_small_file("/proc/sys/kernel/random/boot_id");
    while (!id.empty() && std::isspace(static_cast<unsigned char>(id.back())) != 0)
        id.pop_back();
    return id;
}

bool still_runs(const ProcessId& who) {
    return process_id(who.pid) == std::optional<ProcessId>(who);
}

std::vector<ProcessId> process_tree(const ProcessId& root) {
    std::vector<ProcessId> known{root};
    std::vector<Stat> all = scan();
    if (!runs_in(all, root))
        return {};
    (void)grow(known, all);
    return known;
}

Result<TreeEnding> end_process_tree(const ProcessId& root, std::chrono::milliseconds grace,
                                    std::chrono::milliseconds bound) {
    using Clock = std::chrono::steady_clock;
    auto started = Clock::now();
    std::vector<ProcessId> known{root};
    if (grow(known, scan()).empty())
        return TreeEnding{};
    SION_CHECK(signal_process(root, SIGTERM));
    SION_CHECK(signal_process(root, SIGCONT));
    TreeEnding ending;
    while (true) {
        std::vector<ProcessId> running = grow(known, scan());
        if (running.empty())
            return ending;
        auto now = Clock::now();
        if (now - started >= bound)
            return make_error(Exit::temp_fail, "%zu process%s did not end within %g s",
                              running.size(), running.size() == 1 ? "" : "es",
                              std::chrono::duration<double>(bound).count());
        if (now - started >= grace) {
            ending.killed = true;
            for (const ProcessId& who : running)
                SION_CHECK(signal_process(who, SIGKILL));
        }
        std::this_thread::sleep_for(k_poll);
    }
}

} // namespace sion
