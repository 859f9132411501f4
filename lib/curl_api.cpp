// SPDX-License-Identifier: MIT
// libcurl through dlopen: one table of function pointers, filled once.
#include "lib/curl_api.hpp"

#include "lib/dl.hpp"

#include <mutex>
#include <optional>
#include <string>

namespace sion {

namespace {

CurlApi g_table{};

} // namespace

Result<CurlApi> load_curl_api(const char* file) {
    auto fail = [file](const std::string& why) {
        return dl_unavailable(file, k_libcurl_package, why);
    };
    std::string why;
    void* library = dl_open(file, why);
    if (library == nullptr)
        return fail(why);
    CurlApi t{};
    bool ok = dl_look_up(library, "curl_global_init", t.global_init, why)
              && dl_look_up(library, "curl_easy_init", t.easy_init, why)
              && dl_look_up(library, "curl_easy_cleanup", t.easy_cleanup, why)
              && dl_look_up(library, "curl_easy_reset", t.easy_reset, why)
              && dl_look_up(library, "curl_easy_setopt", t.easy_setopt, why)
              && dl_look_up(library, "curl_easy_getinfo", t.easy_getinfo, why)
              && dl_look_up(library, "curl_easy_perform", t.easy_perform, why)
              && dl_look_up(library, "curl_easy_strerror", t.easy_strerror, why)
              && dl_look_up(library, "curl_slist_append", t.slist_append, why)
              && dl_look_up(library, "curl_slist_free_all", t.slist_free_all, why)
              && dl_look_up(library, "curl_multi_init", t.multi_init, why)
              && dl_look_up(library, "curl_multi_cleanup", t.multi_cleanup, why)
              && dl_look_up(library, "curl_multi_setopt", t.multi_setopt, why)
              && dl_look_up(library, "curl_multi_add_handle", t.multi_add_handle, why)
              && dl_look_up(library, "curl_multi_remove_handle", t.multi_remove_handle, why)
              && dl_look_up(library, "curl_multi_socket_action", t.multi_socket_action, why)
              && dl_look_up(library, "curl_multi_info_read", t.multi_info_read, why)
              && dl_look_up(library, "curl_multi_assign", t.multi_assign, why)
              && dl_look_up(library, "curl_multi_strerror", t.multi_strerror, why)
              && dl_look_up(library, "curl_url", t.url, why)
              && dl_look_up(library, "curl_url_cleanup", t.url_cleanup, why)
              && dl_look_up(library, "curl_url_set", t.url_set, why)
              && dl_look_up(library, "curl_url_get", t.url_get, why)
              && dl_look_up(library, "curl_free", t.free, why)
              && dl_look_up(library, "curl_getdate", t.getdate, why);
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

Status CurlOptions::status() const {
    if (m_result != CURLE_OK)
        return make_error(Exit::software, "cannot set curl option: %s",
                          curl().easy_strerror(m_result));
    return {};
}

} // namespace sion
