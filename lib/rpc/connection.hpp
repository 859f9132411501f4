// SPDX-License-Identifier: MIT
// Connection: the pipes protocol over a pair of blocking file descriptors, for short programs that
// read a request and answer it, and for tests. UvConnection (uv_connection.hpp) is the same
// protocol on a libuv loop, for long-lived ones.
#pragma once

#include "lib/result.hpp"
#include "lib/rpc/line_reader.hpp"
#include "lib/rpc/message.hpp"

#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace sion::rpc {

// What a request's handler answers: a result, or an error with its code.
struct Reply {
    Json result;
    int code = 0; // non-zero: an error
    std::string message;
    Json data;

    static Reply ok(Json result) { return {std::move(result), 0, {}, {}}; }
    static Reply fail(int code, std::string message, Json data = {}) {
        return {{}, code, std::move(message), std::move(data)};
    }
};

// The answer line for `request` (its id) with `reply`.
[[nodiscard]] std::string encode_reply(JsonView id, const Reply& reply);

struct Handlers {
    std::map<std::string, std::function<Reply(const Message&)>, std::less<>> requests;
    std::map<std::string, std::function<void(const Message&)>, std::less<>> notifications;
};

class Connection {
public:
    // Does not own the fds. Lines longer than max_line are answered with -32600 and skipped.
    Connection(int in_fd, int out_fd, size_t max_line = k_default_max_line)
        : m_in(in_fd), m_out(out_fd), m_reader(max_line) {}

    // The next message from the peer. Lines that are not messages are answered (-32700, -32600)
    // and skipped. nullopt at end of input between lines; an error (Exit::io) when the peer closed
    // in the middle of a line or reading failed.
    [[nodiscard]] Result<std::optional<Message>> read();

    // Each line is written whole, one at a time, whatever thread sends it (Caller, caller.hpp).
    [[nodiscard]] Status send(std::string_view line);
    // Sends a request with a fresh integer id and returns the id.
    [[nodiscard]] Result<int64_t> request(std::string_view method, JsonView params = {});
    // The two halves of request(), for a caller that must know the id before the request goes:
    // a fresh id, and the request sent with it.
    [[nodiscard]] int64_t next_id();
    [[nodiscard]] Status send_request(int64_t id, std::string_view method, JsonView params = {});
    [[nodiscard]] Status notify(std::string_view method, JsonView params = {});
    [[nodiscard]] Status reply(const Message& request, const Reply& reply);

    // Sends a request and reads until its answer (a response or an error message). Messages that
    // arrive meanwhile are kept, in order, for read(). Exit::unavailable if the peer closes first.
    [[nodiscard]] Result<Message> call(std::string_view method, JsonView params = {});

    // Answers requests until end of input: each goes to its method's handler, an unknown method gets
    // -32601; notifications go to theirs, unknown ones are dropped; answers are dropped.
    [[nodiscard]] Status serve(const Handlers& handlers);

private:
    [[nodiscard]] Result<std::optional<Message>> read_line_message();

    int m_in;
    int m_out;
    LineReader m_reader;
    std::deque<Message> m_kept;
    std::mutex m_sending; // a line written whole at a time; the next id
    int64_t m_next_id = 1;
    bool m_eof = false;
};

} // namespace sion::rpc
