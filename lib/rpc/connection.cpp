// SPDX-License-Identifier: MIT
// The pipes protocol over blocking fds.
#include "lib/rpc/connection.hpp"

#include "lib/fd.hpp"

#include <unistd.h>

#include <cerrno>

namespace sion::rpc {

std::string encode_reply(JsonView id, const Reply& reply) {
    if (reply.code != 0)
        return encode_error(id, reply.code, reply.message, reply.data.view());
    return encode_result(id, reply.result.view());
}

Status Connection::send(std::string_view line) {
    std::lock_guard lock(m_sending);
    return write_all(m_out, line);
}

Result<std::optional<Message>> Connection::read_line_message() {
    for (;;) {
        while (auto line = m_reader.next()) {
            if (line->overlong) {
                SION_CHECK(send(encode_failure(overlong_failure(line->length, m_reader.max_line()))));
                continue;
            }
            if (line->text.find_first_not_of(" \t") == std::string_view::npos)
                continue; // blank lines between messages are allowed
            Decoded d = decode(line->text);
            if (d.failure) {
                SION_CHECK(send(encode_failure(*d.failure)));
                continue;
            }
            return std::move(d.message);
        }
        if (m_eof)
            return std::optional<Message>{};
        char buf[65536];
        ssize_t n = ::read(m_in, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return sys_error(Exit::io, errno, "read error");
        }
        if (n == 0) {
            m_eof = true;
            if (m_reader.mid_line())
                return make_error(Exit::io, "peer closed mid-line");
            continue;
        }
        m_reader.feed({buf, static_cast<size_t>(n)});
    }
}

Result<std::optional<Message>> Connection::read() {
    if (!m_kept.empty()) {
        Message m = std::move(m_kept.front());
        m_kept.pop_front();
        return std::optional<Message>(std::move(m));
    }
    return read_line_message();
}

Result<int64_t> Connection::request(std::string_view method, JsonView params) {
    int64_t id = next_id();
    SION_CHECK(send_request(id, method, params));
    return id;
}

int64_t Connection::next_id() {
    std::lock_guard lock(m_sending);
    return m_next_id++;
}

Status Connection::send_request(int64_t id, std::string_view method, JsonView params) {
    return send(encode_request(id, method, params));
}

Status Connection::notify(std::string_view method, JsonView params) {
    return send(encode_notification(method, params));
}

Status Connection::reply(const Message& request, const Reply& reply) {
    return send(encode_reply(request.id, reply));
}

Result<Message> Connection::call(std::string_view method, JsonView params) {
    SION_TRY(int64_t id, request(method, params));
    for (;;) {
        SION_TRY(auto next, read_line_message());
        if (!next)
            return make_error(Exit::unavailable, "peer closed before answering '%.*s'",
                              static_cast<int>(method.size()), method.data());
        bool answer = next->kind == Kind::response || next->kind == Kind::error;
        if (answer && next->id.is_number() && next->id.as_int().value_or(-1) == id)
            return std::move(*next);
        m_kept.push_back(std::move(*next));
    }
}

Status Connection::serve(const Handlers& handlers) {
    for (;;) {
        SION_TRY(auto next, read());
        if (!next)
            return {};
        const Message& m = *next;
        if (m.kind == Kind::request) {
            auto h = handlers.requests.find(m.method);
            Reply r = h == handlers.requests.end()
                          ? Reply::fail(k_method_not_found,
                                        "method not found: " + std::string(m.method))
                          : h->second(m);
            SION_CHECK(reply(m, r));
        } else if (m.kind == Kind::notification) {
            auto h = handlers.notifications.find(m.method);
            if (h != handlers.notifications.end())
                h->second(m);
        }
    }
}

} // namespace sion::rpc
