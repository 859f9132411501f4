// SPDX-License-Identifier: MIT
// The calls the sandbox's seccomp filter refuses (seccomp.hpp), as data: the filter made when sion
// is built and the Docker profile made at run time both read them.
#include "sandboxd/seccomp.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>

#include <cerrno>

namespace sion::sandboxd {

namespace {

constexpr uint64_t k_set_id[] = {S_ISUID, S_ISGID};
// O_TMPFILE holds O_DIRECTORY too: the bit of its own.
constexpr uint64_t k_creating[] = {O_CREAT, O_TMPFILE & ~static_cast<uint64_t>(O_DIRECTORY)};
constexpr uint64_t k_new_namespaces = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC
                                      | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET;

// `call` with either bit in its mode, argument `mode`.
void refuse_set_id(std::vector<Refusal>& out, const char* call, unsigned mode) {
    for (uint64_t bit : k_set_id)
        out.push_back({call, EPERM, {{mode, bit, bit}}});
}

// `call` creating a file (its flags, argument `flags`) with either bit in its mode.
void refuse_set_id_created(std::vector<Refusal>& out, const char* call, unsigned flags,
                           unsigned mode) {
    for (uint64_t creating : k_creating)
        for (uint64_t bit : k_set_id)
            out.push_back({call, EPERM, {{flags, creating, creating}, {mode, bit, bit}}});
}

std::vector<Refusal> make_refusals() {
    std::vector<Refusal> out;
    refuse_set_id(out, "chmod", 1);
    refuse_set_id(out, "fchmod", 1);
    refuse_set_id(out, "fchmodat", 2);
    refuse_set_id(out, "fchmodat2", 2);
    refuse_set_id(out, "creat", 1);
    refuse_set_id_created(out, "open", 1, 2);
    refuse_set_id_created(out, "openat", 2, 3);
    refuse_set_id(out, "mkdir", 1);
    refuse_set_id(out, "mkdirat", 2);
    refuse_set_id(out, "mknod", 1);
    refuse_set_id(out, "mknodat", 2);
    for (uint64_t flag = 1; flag != 0; flag <<= 1)
        if ((k_new_namespaces & flag) != 0)
            out.push_back({"clone", EPERM, {{0, flag, flag}}});
    for (const char* call :
         {"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
          "kexec_load", "kexec_file_load", "open_by_handle_at", "name_to_handle_at", "mount",
          "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick", "move_mount",
          "open_tree", "mount_setattr", "unshare", "setns", "io_uring_setup", "io_uring_enter",
          "io_uring_register", "init_module", "finit_module", "delete_module", "reboot", "swapon",
          "swapoff", "acct", "settimeofday", "clock_settime", "clock_adjtime", "iopl", "ioperm",
          "quotactl", "quotactl_fd", "lookup_dcookie", "nfsservctl", "uselib"})
        out.push_back({call, EPERM, {}});
    for (const char* call : {"clone3", "openat2"})
        out.push_back({call, ENOSYS, {}});
    return out;
}

} // namespace

const std::vector<Refusal>& refusals() {
    static const std::vector<Refusal> all = make_refusals();
    return all;
}

} // namespace sion::sandboxd
