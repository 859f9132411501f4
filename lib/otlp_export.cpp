// SPDX-License-Identifier: MIT
#include "lib/otlp_export.hpp"

#include "lib/text.hpp"

#include <algorithm>
#include <chrono>
#include <system_error>

namespace sion::otlp {

Exporter::Exporter(Export where, Origin origin, Failed failed)
    : m_where(std::move(where)), m_origin(std::move(origin)), m_failed(std::move(failed)) {
    try {
        m_thread = std::thread([this] { loop(); });
    } catch (const std::system_error& e) {
        m_gave_up = true;
        if (m_failed)
            m_failed(std::string("no thread to export with: ") + e.what());
    }
}

Exporter::~Exporter() {
    {
        std::lock_guard<std::mutex> hold(m_lock);
        m_stopping = true;
        m_deadline =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(m_where.timeout_ms);
    }
    m_wake.notify_all();
    if (m_thread.joinable())
        m_thread.join();
}

void Exporter::add(std::vector<Span> spans) {
    if (spans.empty())
        return;
    {
        std::lock_guard<std::mutex> hold(m_lock);
        if (m_gave_up)
            return;
        for (Span& s : spans) {
            if (m_waiting.size() >= k_queue)
                break;
            m_waiting.push_back(std::move(s));
        }
    }
    m_wake.notify_all();
}

void Exporter::loop() {
    // Made ready while the run goes on, so that what is sent at its end costs only the sending.
    auto client = HttpClient::make();
    std::unique_lock<std::mutex> hold(m_lock);
    if (!client) {
        m_gave_up = true;
        m_waiting.clear();
        hold.unlock();
        if (m_failed)
            m_failed(client.error().message());
        return;
    }
    while (true) {
        // A batch goes when it is full, a second after it began, or at the end.
        m_wake.wait(hold, [this] { return m_stopping || !m_waiting.empty(); });
        if (!m_stopping)
            m_wake.wait_for(hold, std::chrono::seconds(1),
                            [this] { return m_stopping || m_waiting.size() >= k_batch; });
        while (!m_waiting.empty() && !m_gave_up) {
            // At most k_batch spans, and about k_batch_bytes of them (one at least).
            size_t n = 0;
            size_t bytes = 0;
            while (n < m_waiting.size() && n < k_batch && (n == 0 || bytes < k_batch_bytes)) {
                const Span& s = m_waiting[n++];
                bytes += 128 + s.name.size() + s.status_message.size() + s.attributes.dump().size();
            }
            std::vector<Span> batch;
            batch.assign(std::make_move_iterator(m_waiting.begin()),
                         std::make_move_iterator(m_waiting.begin() + static_cast<ptrdiff_t>(n)));
            m_waiting.erase(m_waiting.begin(), m_waiting.begin() + static_cast<ptrdiff_t>(n));
            auto timeout = std::chrono::milliseconds(m_where.timeout_ms);
            if (m_stopping) {
                auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    m_deadline - std::chrono::steady_clock::now());
                if (left.count() <= 0) { // the end's one timeout is spent: the rest is dropped
                    m_waiting.clear();
                    break;
                }
                timeout = std::min(timeout, left);
            }
            hold.unlock();
            std::string why = send(*client, batch, timeout);
            if (!why.empty() && m_failed)
                m_failed(why);
            hold.lock();
            if (!why.empty()) {
                m_gave_up = true;
                m_waiting.clear();
            }
            if (!m_stopping && m_waiting.size() < k_batch)
                break;
        }
        if (m_stopping && (m_waiting.empty() || m_gave_up))
            return;
    }
}

std::string Exporter::send(HttpClient& client, const std::vector<Span>& spans,
                           std::chrono::milliseconds timeout) const {
    HttpRequest request;
    request.method = "POST";
    request.url = m_where.endpoint;
    for (const auto& header : m_where.headers)
        request.headers.add(header.first, header.second);
    if (m_where.json) {
        request.headers.add("Content-Type", "application/json");
        request.body = encode_json(m_origin, spans).dump();
    } else {
        request.headers.add("Content-Type", "application/x-protobuf");
        request.body = encode_protobuf(m_origin, spans);
    }
    request.timeout = timeout;
    request.connect_timeout = timeout;
    request.max_response_size = size_t{1} << 20;
    auto response = client.send(request);
    if (!response)
        return response.error().message();
    if (response->status < 200 || response->status > 299)
        return format("'%s' answered HTTP %d", redact_url(m_where.endpoint).c_str(),
                      response->status);
    return "";
}

} // namespace sion::otlp
