// SPDX-License-Identifier: MIT
// Caller: calls over one Connection from several threads at once, so that a session's calls that
// only read run side by side (seed 001, "What a model is sent"): each call sends its request and
// waits for its answer, whichever order the peer answers in. One thread at a time reads the peer:
// it hands each answer to the call waiting for it, and each request of the peer's own to
// `on_request`, one at a time. Once reading fails (the peer closed, or a line could not be read),
// that call and every other, waiting or later, fail with the same error ("it closed its output",
// or the read error). Sending is not under the Caller's lock: a request that takes long to write
// holds up no answer.
//
// `on_request` runs on whichever thread reads at the time, with reading held: while it runs no
// answer is read, and it must not make a call of this Caller itself (such a call fails).
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
#include <thread>

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
    std::thread::id m_answering;          // the thread in on_request, while one is
    std::optional<Error> m_failure;
};

} // namespace sion::rpc
