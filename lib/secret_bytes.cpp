// SPDX-License-Identifier: MIT
// Random bytes from getrandom(2), constant-time comparison and wiping, the last two over mbedTLS.
#include "lib/secret_bytes.hpp"

#include <mbedtls/platform_util.h>
// mbedTLS 2.28 forgot the C++ guard in this one header.
extern "C" {
#include <mbedtls/constant_time.h>
}

#include <sys/random.h>

#include <cerrno>

namespace sion {

bool constant_time_equal(std::string_view a, std::string_view b) {
    return a.size() == b.size() && mbedtls_ct_memcmp(a.data(), b.data(), a.size()) == 0;
}

// getrandom(2) rather than an mbedTLS ctr_drbg: the kernel's CSPRNG needs no seeding, no lock
// between threads and no reseed after fork, and it blocks only until the kernel pool is first
// initialised at boot. A DRBG would add state to get wrong for no gain at our rates.
Status fill_random(void* buffer, size_t size) {
    auto* p = static_cast<unsigned char*>(buffer);
    while (size > 0) {
        ssize_t n = ::getrandom(p, size, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return sys_error(Exit::os, errno, "cannot get random bytes");
        }
        p += n;
        size -= static_cast<size_t>(n);
    }
    return {};
}

int mbedtls_random(void* /*unused*/, unsigned char* out, size_t size) noexcept {
    return fill_random(out, size) ? 0 : -1;
}

Result<std::string> random_bytes(size_t size) {
    std::string out(size, '\0');
    SION_CHECK(fill_random(out.data(), out.size()));
    return out;
}

void wipe(std::string& secret) {
    mbedtls_platform_zeroize(secret.data(), secret.size());
    secret.clear();
}

} // namespace sion
