// SPDX-License-Identifier: MIT
// libcurl through dlopen: one table of function pointers, filled once.
#include "lib/curl_api.hpp"

#include <dlfcn.h>

#include <mutex>
#include <optional>
#include <string>

namespace sion {

namespace {

CurlApi g_table{};

// Fills `slot` with the function `name` of the library; false, with dlerror's text in `why`, when
// the library has none.
// glibc keeps dlerror's text per thread, hence the NOLINTs.
template <class Fn>
bool look_up(void* library, const char* name, Fn& slot, std::string& why) {
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

} // namespace

Result<CurlApi> load_curl_api(const char* file) {
    auto fail = [file](const std::string& why) {
        return make_error(Exit::unavailable, "cannot load '%s' (install the Debian package %s): %s",
                          file, k_libcurl_package, why.c_str());
    };
    dlerror(); // NOLINT(concurrency-mt-unsafe)
    void* library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        const char* text = dlerror(); // NOLINT(concurrency-mt-unsafe)
        return fail(text != nullptr ? text : "dlopen failed");
    }
    CurlApi t{};
    std::string why;
    bool ok = look_up(library, "curl_global_init", t.global_init, why)
              && look_up(library, "curl_easy_init", t.easy_init, why)
              && look_up(library, "curl_easy_cleanup", t.easy_cleanup, why)
              && look_up(library, "curl_easy_reset", t.easy_reset, why)
              && look_up(library, "curl_easy_setopt", t.easy_setopt, why)
              && look_up(library, "curl_easy_getinfo", t.easy_getinfo, why)
              && look_up(library, "curl_easy_perform", t.easy_perform, why)
              && look_up(library, "curl_easy_strerror", t.easy_strerror, why)
              && look_up(library, "curl_slist_append", t.slist_append, why)
              && look_up(library, "curl_slist_free_all", t.slist_free_all, why)
              && look_up(library, "curl_multi_init", t.multi_init, why)
              && look_up(library, "curl_multi_cleanup", t.multi_cleanup, why)
              && look_up(library, "curl_multi_setopt", t.multi_setopt, why)
              && look_up(library, "curl_multi_add_handle", t.multi_add_handle, why)
              && look_up(library, "curl_multi_remove_handle", t.multi_remove_handle, why)
              && look_up(library, "curl_multi_socket_action", t.multi_socket_action, why)
              && look_up(library, "curl_multi_info_read", t.multi_info_read, why)
              && look_up(library, "curl_multi_assign", t.multi_assign, why)
              && look_up(library, "curl_multi_strerror", t.multi_strerror, why)
              && look_up(library, "curl_url", t.url, why)
              && look_up(library, "curl_url_cleanup", t.url_cleanup, why)
              && look_up(library, "curl_url_set", t.url_set, why)
              && look_up(library, "curl_url_get", t.url_get, why)
              && look_up(library, "curl_free", t.free, why)
              && look_up(library, "curl_getdate", t.getdate, why);
    if (!ok) {
        dlclose(library);
        return fail(why);
    }
    return t; // the library stays loaded: the table points into it
}

// curl_global_init is not thread-safe and must run before any other curl call; it is the only
// global state here and is never undone (curl_global_cleanup at exit would race other threads).
Result<const CurlApi*> curl_api() {
    static std::once_flag once;
    static std::optional<Error> failure;
    std::call_once(once, [] {
        Result<CurlApi> loaded = load_curl_api(k_libcurl);
        if (!loaded) {
            failure = std::move(loaded).error();
            return;
        }
        if (CURLcode rc = loaded->global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
            failure = make_error(Exit::software, "cannot initialise libcurl: %s",
                                 loaded->easy_strerror(rc));
            return;
        }
        g_table = *loaded;
    });
    if (failure)
        return *failure;
    return &g_table;
}

const CurlApi& curl() {
    return g_table;
}

} // namespace sion
