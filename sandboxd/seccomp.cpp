// SPDX-License-Identifier: MIT
// The sandbox's seccomp filter as bubblewrap and Docker take it.
#include "sandboxd/seccomp.hpp"

#include "lib/json.hpp"

#include "seccomp_filter.inc"

namespace sion::sandboxd {

namespace {

// Docker's names of this machine's ABI and its 32-bit companions, as the filter has them.
std::vector<const char*> docker_architectures() {
#if defined(__x86_64__)
    return {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
#elif defined(__aarch64__)
    return {"SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"};
#else
    return {};
#endif
}

} // namespace

std::string_view filter_program() {
    return {reinterpret_cast<const char*>(k_filter_bytes), sizeof k_filter_bytes};
}

std::string docker_seccomp_profile() {
    Json profile = Json::object();
    profile.set("defaultAction", "SCMP_ACT_ALLOW");
    Json arches = Json::array();
    for (const char* arch : docker_architectures())
        arches.push(Json::string(arch));
    profile.set("architectures", std::move(arches));
    Json calls = Json::array();
    for (const Refusal& r : refusals()) {
        Json call = Json::object();
        Json names = Json::array();
        names.push(Json::string(r.call));
        call.set("names", std::move(names));
        call.set("action", "SCMP_ACT_ERRNO");
        call.set("errnoRet", r.error);
        Json args = Json::array();
        for (const ArgTest& t : r.when) {
            Json arg = Json::object();
            arg.set("index", static_cast<int64_t>(t.arg));
            arg.set("value", static_cast<int64_t>(t.mask));
            arg.set("valueTwo", static_cast<int64_t>(t.value));
            arg.set("op", "SCMP_CMP_MASKED_EQ");
            args.push(std::move(arg));
        }
        call.set("args", std::move(args));
        calls.push(std::move(call));
    }
    profile.set("syscalls", std::move(calls));
    return profile.dump();
}

} // namespace sion::sandboxd
