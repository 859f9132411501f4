// SPDX-License-Identifier: MIT
// UvConnection: the pipes protocol on a libuv loop, both directions, many requests in flight each
// way. The long-lived programs answer on it (sion-sandbox serve and the sandbox's init, sion-mcp
// serve) and sion-mcp calls its stdio servers through it; sion-run, which waits for one answer at a
// time, calls them through the blocking rpc::Connection (connection.hpp).
//
// Threads: everything happens on the loop's thread. Lifetime: the libuv handles are freed in their
// close callbacks, which run on the loop after close(); the loop must run until they have.
#pragma once

#include "lib/result.hpp"
#include "lib/rpc/connection.hpp"

#include <uv.h>

#include <functional>
#include <memory>

namespace sion::rpc {

// Answers one request; call it once, now or later. After the connection closed it does nothing.
using Responder = std::function<void(const Reply&)>;

struct UvHandlers {
    std::map<std::string, std::function<void(Message, Responder)>, std::less<>> requests;
    std::map<std::string, std::function<void(Message)>, std::less<>> notifications;
    // Input ended: an ok Status at the end of a line, an error when the peer closed mid-line or
    // reading or writing failed. Called once, unless close() came first; calls still waiting for
    // answers have been failed, and no message is dispatched after it.
    std::function<void(Status)> on_end;
    // A line over max_line arrived (and was answered with -32600 and skipped): its length. For a
    // peer whose answers may be that long, the call it answered will not hear.
    std::function<void(size_t length)> on_overlong;
    // A line that is not a JSON-RPC message arrived (it was answered with -32700 or -32600, and
    // skipped): its text, for a peer that must speak only messages to be told it did not.
    std::function<void(std::string_view line)> on_undecodable;
};

class UvConnection {
public:
    // Reads messages from in_fd and writes to out_fd, which must be different descriptors (dup a
    // socket first); each may be a pipe, a socket, a terminal or a regular file (or /dev/null).
    // Takes both descriptors, whether opening succeeds or fails: each is closed when the
    // connection closes, except 0-2, which stay open (libuv never closes them) until the process
    // ends. Pipes and sockets are set non-blocking.
    [[nodiscard]] static Result<std::unique_ptr<UvConnection>>
    open(uv_loop_t* loop, int in_fd, int out_fd, UvHandlers handlers,
         size_t max_line = k_default_max_line);

    UvConnection(const UvConnection&) = delete;
    UvConnection& operator=(const UvConnection&) = delete;
    UvConnection(UvConnection&&) = delete;
    UvConnection& operator=(UvConnection&&) = delete;
    // Closes, as close() does.
    ~UvConnection();

    // Sends a request; `done` gets its answer (a response or an error message), or an Error
    // (Exit::unavailable) if the connection ends first. Returns the request's id (0 when the
    // connection had closed and `done` was called already), for a cancellation to name.
    int64_t call(std::string_view method, JsonView params,
                 std::function<void(Result<Message>)> done);
    void notify(std::string_view method, JsonView params = {});
    // Flushes what was written, then closes both handles. Calls still waiting are failed.
    void close();
    // The first write that failed (an Exit::io error, "write error: Broken pipe"), or ok. Nothing is
    // written after a failed write. A write can fail after input ended or while close() flushes,
    // when on_end has nobody to tell: check this once the loop has run the close to its end, as
    // finish_stdout() does for stdout.
    [[nodiscard]] Status write_status() const;

    struct Impl;

private:
    explicit UvConnection(std::shared_ptr<Impl> impl) : m_impl(std::move(impl)) {}
    std::shared_ptr<Impl> m_impl;
};

} // namespace sion::rpc
