// SPDX-License-Identifier: MIT
// HTTP requests on a libuv loop: libcurl's multi interface driven by the loop's polls and timer,
// so that many transfers (long SSE streams among them) run at once on one thread without blocking.
//
// A transfer is an HttpRequest as lib/http.hpp takes it, with the same safe defaults, limits,
// errors and messages; on_headers and on_body are called on the loop's thread as the response
// arrives, and `done` once at its end (HttpResponse::body empty when on_body took it). A request
// with a `reach` has its name resolved within start(), blocking the loop for up to its
// connect_timeout (lib/address.hpp); an address or localhost costs nothing.
//
// Threads and lifetime: everything happens on the loop's thread. close() ends every transfer
// (their `done`s are not called) and closes the handles; the loop must run until they have closed.
#pragma once

#include "lib/http.hpp"
#include "lib/result.hpp"

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>

namespace sion {

class UvHttp {
public:
    using Id = uint64_t;
    using Done = std::function<void(Result<HttpResponse>)>;

    // Loads libcurl if no one has yet (lib/curl_api.hpp: Exit::unavailable when it is missing).
    [[nodiscard]] static Result<std::unique_ptr<UvHttp>> make(uv_loop_t* loop);

    UvHttp(const UvHttp&) = delete;
    UvHttp& operator=(const UvHttp&) = delete;
    UvHttp(UvHttp&&) = delete;
    UvHttp& operator=(UvHttp&&) = delete;
    // Closes, as close() does.
    ~UvHttp();

    // Starts a transfer; `done` is called once, later, never from within start(). A request that
    // cannot start (a bad URL or header) fails through `done` too.
    Id start(HttpRequest request, Done done);

    // Ends a transfer now; its `done` is not called. An id that has ended is ignored.
    void cancel(Id id);

    // Transfers under way.
    [[nodiscard]] size_t running() const;

    // After it, start() runs nothing and calls no `done`; close() may be called from any callback.
    void close();

    struct Impl;

private:
    explicit UvHttp(std::shared_ptr<Impl> impl) : m_impl(std::move(impl)) {}
    std::shared_ptr<Impl> m_impl;
};

} // namespace sion
