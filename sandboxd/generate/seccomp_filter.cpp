// SPDX-License-Identifier: MIT
// Made and run when sion is built: compiles refusals() (seccomp.hpp) with libseccomp for this
// machine's ABI and its 32-bit companions, and writes the BPF program as a C++ include,
//   sion-seccomp-filter OUTPUT
// for sandboxd/seccomp.cpp. A call this libseccomp does not know stops the build: a refusal
// quietly left out would be a hole.
#include "sandboxd/seccomp.hpp"

#include <seccomp.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace {

using sion::sandboxd::Refusal;

[[noreturn]] void fail(const char* what, int err) {
    std::fprintf(stderr, "sion-seccomp-filter: %s: %s\n", what, std::strerror(err < 0 ? -err : err));
    std::exit(1);
}

void add(scmp_filter_ctx ctx, const Refusal& r) {
    int nr = seccomp_syscall_resolve_name(r.call);
    if (nr == __NR_SCMP_ERROR) {
        std::fprintf(stderr, "sion-seccomp-filter: libseccomp does not know '%s'\n", r.call);
        std::exit(1);
    }
    scmp_arg_cmp tests[6];
    unsigned n = 0;
    for (const auto& t : r.when)
        tests[n++] = SCMP_CMP64(t.arg, SCMP_CMP_MASKED_EQ, t.mask, t.value);
    int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(static_cast<uint32_t>(r.error)), nr, n,
                                    tests);
    if (rc != 0)
        fail(r.call, rc);
}

// The 32-bit ABIs the kernel runs beside this one.
void add_companions(scmp_filter_ctx ctx) {
    uint32_t native = seccomp_arch_native();
    uint32_t companions[2] = {0, 0};
    if (native == SCMP_ARCH_X86_64) {
        companions[0] = SCMP_ARCH_X86;
        companions[1] = SCMP_ARCH_X32;
    } else if (native == SCMP_ARCH_AARCH64) {
        companions[0] = SCMP_ARCH_ARM;
    }
    for (uint32_t arch : companions)
        if (arch != 0)
            if (int rc = seccomp_arch_add(ctx, arch); rc != 0 && rc != -EEXIST)
                fail("cannot add an ABI", rc);
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: sion-seccomp-filter OUTPUT\n");
        return 64;
    }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx == nullptr)
        fail("cannot make a filter", ENOMEM);
    add_companions(ctx);
    for (const Refusal& r : sion::sandboxd::refusals())
        add(ctx, r);
    int fd = memfd_create("seccomp filter", 0);
    if (fd < 0)
        fail("cannot make a memory file", errno);
    if (int rc = seccomp_export_bpf(ctx, fd); rc != 0)
        fail("cannot export the filter", rc);
    seccomp_release(ctx);
    std::string bpf;
    char buf[4096];
    lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
        bpf.append(buf, static_cast<size_t>(n));
    close(fd);
    FILE* out = std::fopen(argv[1], "w");
    if (out == nullptr)
        fail(argv[1], errno);
    std::fprintf(out, "// Made by sion-seccomp-filter when sion was built: do not edit.\n");
    std::fprintf(out, "static const unsigned char k_filter_bytes[] = {");
    for (size_t i = 0; i < bpf.size(); ++i)
        std::fprintf(out, "%s0x%02x", i == 0 ? "\n    " : i % 12 == 0 ? ",\n    " : ", ",
                     static_cast<unsigned char>(bpf[i]));
    std::fprintf(out, "\n};\n");
    if (std::fclose(out) != 0)
        fail(argv[1], errno);
    return 0;
}
