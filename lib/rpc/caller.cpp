// SPDX-License-Identifier: MIT
// Caller: calls over one connection from several threads, one thread reading at a time.
#include "lib/rpc/caller.hpp"

namespace sion::rpc {

std::optional<Error> Caller::failure() const {
    std::lock_guard lock(m_mutex);
    return m_failure;
}

Result<Message> Caller::call(std::string_view method, JsonView params) {
    std::unique_lock lock(m_mutex);
    if (m_answering == std::this_thread::get_id())
        return make_error(Exit::software, "'%.*s' asked while answering the peer's request",
                          static_cast<int>(method.size()), method.data());
    if (m_failure)
        return *m_failure;
    // Waited for before it is sent, so that its answer, read at once by another thread, is kept.
    int64_t id = m_connection.next_id();
    m_waiting.insert(id);
    lock.unlock();
    Status sent = m_connection.send_request(id, method, params);
    lock.lock();
    if (!sent && !m_failure) {
        m_failure = sent.error();
        m_changed.notify_all();
    }
    for (;;) {
        if (auto it = m_answers.find(id); it != m_answers.end()) {
            Message answer = std::move(it->second);
            m_answers.erase(it);
            m_waiting.erase(id);
            return answer;
        }
        if (m_failure) {
            m_waiting.erase(id);
            return *m_failure;
        }
        if (m_reading) {
            m_changed.wait(lock);
            continue;
        }
        // This thread reads, for every call, until its own answer or a failure.
        m_reading = true;
        lock.unlock();
        auto next = m_connection.read();
        if (next && *next && (*next)->kind == Kind::request) {
            // Answered with reading still held, so that the peer's requests go one at a time.
            if (m_on_request) {
                {
                    std::lock_guard answering(m_mutex);
                    m_answering = std::this_thread::get_id();
                }
                m_on_request(**next);
                std::lock_guard answered(m_mutex);
                m_answering = {};
            } else {
                (void)m_connection.reply(
                    **next, Reply::fail(k_method_not_found,
                                        "method not found: " + std::string((*next)->method)));
            }
        }
        lock.lock();
        m_reading = false;
        if (!next) {
            m_failure = next.error();
        } else if (!*next) {
            m_failure = Error(Exit::unavailable, "it closed its output");
        } else {
            Message& m = **next;
            bool answer = m.kind == Kind::response || m.kind == Kind::error;
            int64_t of = m.id.is_number() ? m.id.as_int().value_or(-1) : -1;
            // Notifications, and answers no call waits for, need nothing.
            if (answer && m_waiting.count(of) != 0)
                m_answers.emplace(of, std::move(m));
        }
        m_changed.notify_all();
    }
}

} // namespace sion::rpc
