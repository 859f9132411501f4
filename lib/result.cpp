// SPDX-License-Identifier: MIT
// Building Errors printf-style.
#include "lib/result.hpp"

#include "lib/text.hpp"

#include <cstring>

namespace sion {

Error make_error(Exit exit, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string msg = vformat(fmt, ap);
    va_end(ap);
    return {exit, std::move(msg)};
}

Error sys_error(Exit exit, int err, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string msg = vformat(fmt, ap);
    va_end(ap);
    msg += ": ";
    msg += std::strerror(err); // NOLINT(concurrency-mt-unsafe): glibc's table is read-only
    return {exit, std::move(msg)};
}

} // namespace sion
