// SPDX-License-Identifier: MIT
// A shared library loaded when a program first needs it, rather than linked (lib/curl_api,
// lib/loaded_libs): dlopen, and its functions looked up into a table of pointers. Internal to lib/.
#pragma once

#include "lib/result.hpp"

#include <dlfcn.h>

#include <string>

namespace sion {

// dlopen(file, RTLD_NOW | RTLD_LOCAL); nullptr, with dlerror's text in `why`, when it fails.
[[nodiscard]] void* dl_open(const char* file, std::string& why);

// Exit::unavailable "cannot load 'FILE' (install the Debian package PACKAGE): WHY".
[[nodiscard]] Error dl_unavailable(const char* file, const char* package, const std::string& why);

// Fills `slot` with the function `name` of `library`; false, with dlerror's text in `why`, when
// the library has none. glibc keeps dlerror's text per thread, hence the NOLINTs.
template <class Fn>
[[nodiscard]] bool dl_look_up(void* library, const char* name, Fn& slot, std::string& why) {
    dlerror(); // NOLINT(concurrency-mt-unsafe)
    void* found = dlsym(library, name);
    if (found == nullptr) {
        const char* text = dlerror(); // NOLINT(concurrency-mt-unsafe)
        why = text != nullptr ? text : std::string(name) + ": not found";
        return false;
    }
    slot = reinterpret_cast<Fn>(found); // NOLINT: dlsym's void* is the function's address
    return true;
}

} // namespace sion
