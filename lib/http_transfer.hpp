// SPDX-License-Identifier: MIT
// One HTTP transfer on a curl easy handle, as lib/http.hpp promises it: the request checked, every
// option set (safe defaults, limits, callbacks that never throw), and curl's outcome turned into a
// response or the house's error. HttpClient (blocking) and UvHttp (libuv) both use it, so a
// transfer is configured in one place. Internal to lib/.
#pragma once

#include "lib/http.hpp"
#include "lib/result.hpp"

#include <curl/curl.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion {

// A curl_slist, freed with it.
class CurlHeaderList {
public:
    CurlHeaderList() = default;
    CurlHeaderList(const CurlHeaderList&) = delete;
    CurlHeaderList& operator=(const CurlHeaderList&) = delete;

    CurlHeaderList(CurlHeaderList&& other) noexcept
        : m_list(std::exchange(other.m_list, nullptr)) {}

    CurlHeaderList& operator=(CurlHeaderList&& other) noexcept;
    ~CurlHeaderList();

    [[nodiscard]] Status append(const std::string& line);

    [[nodiscard]] curl_slist* get() const { return m_list; }

private:
    curl_slist* m_list = nullptr;
};

// The state curl's callbacks share with the code that runs the transfer. `request` must outlive
// the transfer, and the transfer must stay where it is while the handle points at it.
class HttpTransfer {
public:
    explicit HttpTransfer(const HttpRequest& request) : m_request(request) {}

    HttpTransfer(const HttpTransfer&) = delete;
    HttpTransfer& operator=(const HttpTransfer&) = delete;
    HttpTransfer(HttpTransfer&&) = delete;
    HttpTransfer& operator=(HttpTransfer&&) = delete;
    ~HttpTransfer() = default;

    // Checks the request (method, headers, and its reach when it has one: resolving blocks, see
    // lib/http.hpp) and sets every option on `easy`, its callbacks pointing here. On an error, some options may have been set: reset or drop the handle.
    [[nodiscard]] Status configure(CURL* easy);

    // What curl's `code` for the finished transfer on `easy` means: the response, or the error.
    [[nodiscard]] Result<HttpResponse> finish(CURL* easy, CURLcode code);

    // From now on the callbacks stop the transfer and call nothing of the request's.
    void abandon() { m_abandoned = true; }

    // curl's callbacks (through C trampolines in lib/http.cpp).
    bool header_line(std::string_view line);
    bool body_chunk(std::string_view chunk);
    // Whether curl may open a connection to `to`: with a reach, only to an address it was shown
    // (the pin should see to that; this makes sure).
    bool may_connect(const sockaddr* to);
    // Whether the transfer goes on (the request's go_on, when it has one).
    bool goes_on();

    [[nodiscard]] bool asks_to_go_on() const { return static_cast<bool>(m_request.go_on); }

    enum class Failure {
        none,
        body_too_large,
        headers_too_large,
        stopped,
        threw,
        abandoned,
        unchecked_address,
        told_to_stop
    };

    void fail(Failure failure) { m_failure = failure; }

private:
    [[nodiscard]] Error error(CURLcode code) const;

    const HttpRequest& m_request;
    CurlHeaderList m_headers;
    CurlHeaderList m_pins;              // CURLOPT_RESOLVE's entries
    std::vector<std::string> m_checked; // with a reach: the addresses it was shown
    std::string m_unchecked;            // an address curl was about to connect to, not among them
    HttpResponse m_response;
    size_t m_header_bytes = 0;
    size_t m_body_bytes = 0;
    bool m_head_done = false;
    bool m_abandoned = false;
    Failure m_failure = Failure::none;
    char m_detail[CURL_ERROR_SIZE] = "";
};

} // namespace sion
