// SPDX-License-Identifier: MIT
// Caller: calls over one Connection from several threads at once, so that a session's calls that
// only read run side by side (seed 001, "What a model is sent"): each call sends its request and
// waits for its answer, whichever order the peer answers in. One thread at a time reads the peer:
// it hands each answer to the call waiting for it, and each request of the peer's own to
// `on_request`, one at a time. Once reading fails (the peer closed, or a line could not be read),
// that call and every other, waiting or later, fail with the same error.
#pragma once

#include "lib/result.hpp"
#include "lib/rpc/connection.hpp"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>

namespace sion::rpc {

class Caller {
public:
    // What the peer asks while calls wait: answered with connection().reply(). Without one, the
    // peer's requests are answered -32601.
    using OnRequest = std::function<void(const Message& request)>;

    // Does not own `connection`, which must outlive it; every read of it goes through the Caller.
    explicit Caller(Connection& connection, OnRequest on_request = {})
        : m_connection(connection), m_on_request(std::move(on_request)) {}

    Caller(const Caller&) = delete;
    Caller& operator=(const Caller&) = delete;

    // Sends a request and returns its answer (a response or an error message). Exit::unavailable
    // when the peer closes first; the read error when reading fails.
    [[nodiscard]] Result<Message> call(std::string_view method, JsonView params = {});

    [[nodiscard]] Connection& connection() { return m_connection; }

    // Why calls fail now, once they do.
    [[nodiscard]] std::optional<Error> failure() const;

private:
    Connection& m_connection;
    OnRequest m_on_request;
    mutable std::mutex m_mutex; // guards what follows
    std::condition_variable m_changed;
    std::map<int64_t, Message> m_answers; // read, for the calls waiting for them
    std::set<int64_t> m_waiting;          // the calls waiting
    bool m_reading = false;               // a thread reads (or answers the peer's request)
    std::optional<Error> m_failure;
};

} // namespace sion::rpc
