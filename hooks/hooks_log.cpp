// SPDX-License-Identifier: MIT
// Writing down the hooks that failed: appended, one line each, never through a link.
#include "hooks/hooks_log.hpp"

#include "lib/fd.hpp"
#include "lib/text.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace sion::hooks {

namespace {

constexpr size_t k_excerpt = 200;

// One line of `text`, its first, cut at `limit` bytes on a character's boundary.
std::string first_line(const std::string& text, size_t limit) {
    std::string line = text.substr(0, text.find('\n'));
    if (line.size() > limit) {
        size_t keep = limit;
        while (keep > 0 && (static_cast<unsigned char>(line[keep]) & 0xC0) == 0x80)
            --keep;
        line = line.substr(0, keep) + "...";
    }
    for (char& c : line)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            c = ' ';
    return line;
}

} // namespace

std::string hooks_log_path(const std::string& home) {
    return (home == "/" ? std::string() : home) + "/agents/hooks.log";
}

std::string log_line(const Failure& failure, Event event, const std::string& session,
                     std::time_t when) {
    struct tm utc = {};
    char stamp[32] = "0000-00-00T00:00:00Z";
    if (::gmtime_r(&when, &utc) != nullptr)
        (void)std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
    std::string line = format("%s session %s %s: %s", stamp, first_line(session, 64).c_str(),
                              event_name(event), first_line(failure_text(failure), 4096).c_str());
    if (!failure.err.empty())
        line += ": " + first_line(failure.err, k_excerpt);
    return line;
}

Status append_hooks_log(const std::string& path, const std::vector<Failure>& failures, Event event,
                        const std::string& session) {
    if (failures.empty())
        return {};
    std::time_t now = std::time(nullptr);
    std::string text;
    for (const auto& f : failures)
        text += log_line(f, event, session, now) + "\n";
    Fd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd)
        return sys_error(errno == EACCES ? Exit::no_perm : Exit::os, errno, "cannot write '%s'",
                         path.c_str());
    if (Status written = write_all(fd.get(), text); !written)
        return written.error().context("cannot write '" + path + "'");
    return {};
}

} // namespace sion::hooks
