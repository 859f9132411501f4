// SPDX-License-Identifier: MIT
// libcurl, loaded when a program first needs it rather than linked: linking it brings some thirty
// shared libraries (OpenSSL, GnuTLS, Kerberos, LDAP, ...) into every start of every program, most
// of which never make a request. curl's own headers still give the types and constants.
//
// Contract: curl_api() dlopens "libcurl.so.4" and looks up every function below on its first call,
// then runs curl_global_init; once, under std::call_once, so any thread may call it. Every later
// call returns the same table, or the same error: Exit::unavailable when the library or one of its
// functions is missing ("cannot load 'libcurl.so.4' (install the Debian package libcurl4): ..."),
// Exit::software when curl_global_init fails. The library is never unloaded.
//
// Internal to lib/: code outside it uses lib/http.hpp and lib/uv_http.hpp.
#pragma once

#include "lib/result.hpp"

#include <curl/curl.h>

namespace sion {

// The file dlopen looks for, and the Debian package that holds it.
inline constexpr const char* k_libcurl = "libcurl.so.4";
inline constexpr const char* k_libcurl_package = "libcurl4";

// The functions of libcurl that sion calls, each named as curl names it without "curl_".
struct CurlApi {
    decltype(&::curl_global_init) global_init;
    decltype(&::curl_easy_init) easy_init;
    decltype(&::curl_easy_cleanup) easy_cleanup;
    decltype(&::curl_easy_reset) easy_reset;
    decltype(&::curl_easy_setopt) easy_setopt;
    decltype(&::curl_easy_getinfo) easy_getinfo;
    decltype(&::curl_easy_perform) easy_perform;
    decltype(&::curl_easy_strerror) easy_strerror;
    decltype(&::curl_slist_append) slist_append;
    decltype(&::curl_slist_free_all) slist_free_all;
    decltype(&::curl_multi_init) multi_init;
    decltype(&::curl_multi_cleanup) multi_cleanup;
    decltype(&::curl_multi_setopt) multi_setopt;
    decltype(&::curl_multi_add_handle) multi_add_handle;
    decltype(&::curl_multi_remove_handle) multi_remove_handle;
    decltype(&::curl_multi_socket_action) multi_socket_action;
    decltype(&::curl_multi_info_read) multi_info_read;
    decltype(&::curl_multi_assign) multi_assign;
    decltype(&::curl_multi_strerror) multi_strerror;
    decltype(&::curl_url) url;
    decltype(&::curl_url_cleanup) url_cleanup;
    decltype(&::curl_url_set) url_set;
    decltype(&::curl_url_get) url_get;
    decltype(&::curl_free) free;
    decltype(&::curl_getdate) getdate;
};

// The table, loading libcurl on the first call (see the contract above).
[[nodiscard]] Result<const CurlApi*> curl_api();

// The table once curl_api() has succeeded, as it has for anyone holding a curl handle.
[[nodiscard]] const CurlApi& curl();

// Sets a handle's options in order and remembers the first that fails: status() says which went
// wrong, Exit::software ("cannot set curl option: …").
class CurlOptions {
public:
    explicit CurlOptions(CURL* handle) : m_handle(handle) {}

    template <class T>
    void set(CURLoption option, T value) {
        if (m_result == CURLE_OK)
            m_result = curl().easy_setopt(m_handle, option, value);
    }

    [[nodiscard]] Status status() const;

private:
    CURL* m_handle;
    CURLcode m_result = CURLE_OK;
};

// Loads `file` into a new table, without curl_global_init: what curl_api() does once, for tests
// that name a library that is not there.
[[nodiscard]] Result<CurlApi> load_curl_api(const char* file);

} // namespace sion
