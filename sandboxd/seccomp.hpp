// SPDX-License-Identifier: MIT
// The seccomp filter every command runs under, bubblewrap's (bwrap --seccomp, on init and all it
// starts) and Docker's (--security-opt seccomp=PROFILE, in place of the engine's default) alike:
// every system call is allowed but those refusals() names, on the machine's own ABI and its 32-bit
// companions (x86 and x32 beside x86_64, arm beside aarch64), so that no other ABI slips past it.
//
// Refused with EPERM (sion-sandbox(1) lists them):
// - set-user-ID and set-group-ID bits: chmod, fchmod, fchmodat and fchmodat2 with S_ISUID or
//   S_ISGID in the mode; open, openat and creat that create a file (O_CREAT, O_TMPFILE) with either
//   bit; mkdir, mkdirat, mknod and mknodat with either. Files a command writes land in the
//   workspace as its owner's, where a set-user-ID program would run as them for anyone.
// - the kernel's keyrings (keyctl, add_key, request_key), bpf, perf_event_open, userfaultfd,
//   kexec_load and kexec_file_load, open_by_handle_at and name_to_handle_at;
// - the mount family (mount, umount2, pivot_root, fsopen, fsconfig, fsmount, fspick, move_mount,
//   open_tree, mount_setattr) and new namespaces (unshare, setns, clone with CLONE_NEWUSER or
//   another CLONE_NEW* flag);
// - io_uring (io_uring_setup, io_uring_enter, io_uring_register), whose own open and mkdir would
//   pass a mode the filter never sees;
// - what administers the machine: init_module, finit_module, delete_module, reboot, swapon,
//   swapoff, acct, settimeofday, clock_settime, clock_adjtime, iopl, ioperm, quotactl,
//   quotactl_fd, lookup_dcookie, nfsservctl, uselib.
// Refused with ENOSYS, so that the C library falls back to the call the filter can read: clone3
// and openat2, whose flags and mode are in memory a filter cannot look at.
//
// The filter for bubblewrap is compiled when sion is built, with libseccomp
// (sandboxd/generate/seccomp_filter.cpp): making it costs milliseconds a command would pay.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sion::sandboxd {

// An argument test: argument `arg` (0-based) masked with `mask` equals `value`.
struct ArgTest {
    unsigned arg = 0;
    uint64_t mask = 0;
    uint64_t value = 0;
};

// One refusal: `call` fails with `error` when every test holds (always, when there is none).
struct Refusal {
    const char* call;
    int error;
    std::vector<ArgTest> when;
};

// Every refusal, as the header lists them.
[[nodiscard]] const std::vector<Refusal>& refusals();

// The filter for bubblewrap: a classic BPF program (struct sock_filter…), as bwrap --seccomp reads
// it from a descriptor.
[[nodiscard]] std::string_view filter_program();

// The same refusals as a Docker seccomp profile (JSON): everything else allowed.
[[nodiscard]] std::string docker_seccomp_profile();

} // namespace sion::sandboxd
