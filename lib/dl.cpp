// SPDX-License-Identifier: MIT
#include "lib/dl.hpp"

namespace sion {

void* dl_open(const char* file, std::string& why) {
    dlerror(); // NOLINT(concurrency-mt-unsafe)
    void* library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        const char* text = dlerror(); // NOLINT(concurrency-mt-unsafe)
        why = text != nullptr ? text : "dlopen failed";
    }
    return library;
}

Error dl_unavailable(const char* file, const char* package, const std::string& why) {
    return make_error(Exit::unavailable, "cannot load '%s' (install the Debian package %s): %s",
                      file, package, why.c_str());
}

} // namespace sion
