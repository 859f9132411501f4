// SPDX-License-Identifier: MIT
// The lock a session's sandbox holds while it lives, $SION_HOME/sandboxes/<session>.lock: a run
// that continues the session finds there a sandbox an earlier run left running, and ends it before
// it starts its own, so that no command of the earlier run still writes to the workspace.
//
// Contract:
// - take() holds an exclusive flock(2) on the file. The run gives its fd to sion-sandbox serve
//   (SandboxClient::start(), as fd 3, which serve keeps and passes on to nothing), so the lock is
//   held while the run or its sandbox lives, and the kernel releases it when both have ended. The
//   file names them, one JSON line: {"run":"pid:start:boot","sandbox":"pid:start:boot"}
//   (store.hpp's process_name()).
// - Held at take() by an earlier run that still runs: Exit::temp_fail, "session 0123456789abcdef
//   is running (pid 1234)", as claim() says. Held by a sandbox whose run has ended (serve was
//   stopped when its run was killed, so it never took the parent-death signal): that sandbox and
//   all it started are ended (lib/processes.hpp: SIGTERM, for serve's own shutdown, and SIGKILL
//   after k_sandbox_grace) and waited for, and note() says so. Held by what the file does not name
//   (a run killed between starting its sandbox and naming it): waited for, k_sandbox_bound at most.
//   A sandbox that does not end in time is Exit::temp_fail, one that may not be signalled
//   Exit::no_perm: "session 0123456789abcdef's sandbox from an earlier run is still running
//   (pid 1234): 2 processes did not end within 5 s".
// - Only a process the file names, with the start time it names, is ever signalled: a pid taken
//   over by another process is left alone.
// - Dropping the lock removes the file while it is still held; take() locks again a file removed
//   meanwhile. A run that exits without dropping it (die()) leaves the file, unlocked.
#pragma once

#include "lib/fd.hpp"
#include "lib/result.hpp"

#include <sys/types.h>

#include <chrono>
#include <string>
#include <string_view>

namespace sion::session {

inline constexpr std::chrono::milliseconds k_sandbox_grace{2000};
inline constexpr std::chrono::milliseconds k_sandbox_bound{5000};

class SandboxLock {
public:
    // Takes the lock of session `session`'s sandbox under `home` (ready: ensure_home()), ending a
    // sandbox an earlier run left, as the contract says.
    [[nodiscard]] static Result<SandboxLock> take(const std::string& home,
                                                  std::string_view session);

    SandboxLock(SandboxLock&& other) noexcept = default;
    SandboxLock& operator=(SandboxLock&& other) noexcept;
    SandboxLock(const SandboxLock&) = delete;
    SandboxLock& operator=(const SandboxLock&) = delete;
    ~SandboxLock();

    // The locked file's fd, for the sandbox to hold.
    [[nodiscard]] int fd() const { return m_fd.get(); }

    // What take() did to an earlier run's sandbox, a line for standard error ("session … 's
    // sandbox from an earlier run was still running (pid 1234): ended it"); empty when nothing.
    [[nodiscard]] const std::string& note() const { return m_note; }

    // Names this process as the run, and `sandbox` (when it runs) as its sandbox. Exit::io.
    [[nodiscard]] Status record(pid_t sandbox = -1);

private:
    SandboxLock(Fd fd, std::string path, std::string note)
        : m_fd(std::move(fd)), m_path(std::move(path)), m_note(std::move(note)) {}

    void release();

    Fd m_fd;
    std::string m_path;
    std::string m_note;
};

} // namespace sion::session
