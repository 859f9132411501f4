// SPDX-License-Identifier: MIT
// Spans sent to an OpenTelemetry collector off the caller's thread (issue 24): add() only queues
// them; a thread of the exporter's own sends them in batches, each one POST of an
// ExportTraceServiceRequest (http/protobuf or http/json, as the Export says) with the Export's
// headers, taking at most its timeout. A batch goes when 512 spans (or 4 MiB of them) wait or a
// second after the first of them was queued, and whatever waits goes when the exporter is
// destroyed, all of it within one export timeout from then (what is left after is dropped).
//
// Export never fails its caller and never slows it beyond the destructor's last send: the first
// export that fails (the collector cannot be reached, answers with a status that is not 2xx, or
// takes longer than the timeout) is told to `failed`, once (on the exporter's thread; on the
// caller's when no thread could be had), and nothing more is sent: the caller keeps its spans
// elsewhere. Past 2048 spans waiting, more are dropped.
//
// Threads: add() may be called from any thread.
#pragma once

#include "lib/http.hpp"
#include "lib/otlp.hpp"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sion::otlp {

class Exporter {
public:
    using Failed = std::function<void(const std::string& why)>;

    // Starts its thread, which makes ready to send (libcurl loaded, its handle made) while the
    // caller goes on; nothing is sent before the first add().
    Exporter(Export where, Origin origin, Failed failed);
    Exporter(const Exporter&) = delete;
    Exporter& operator=(const Exporter&) = delete;
    // Sends what waits (at most the Export's timeout), then ends its thread.
    ~Exporter();

    void add(std::vector<Span> spans);

    static constexpr size_t k_batch = 512;
    static constexpr size_t k_batch_bytes = size_t{4} << 20;
    static constexpr size_t k_queue = 2048;

private:
    void loop();
    // One POST of `spans` on `client`, taking at most `timeout`; "" when the collector took
    // them, else why not.
    std::string send(HttpClient& client, const std::vector<Span>& spans,
                     std::chrono::milliseconds timeout) const;

    Export m_where;
    Origin m_origin;
    Failed m_failed;
    std::mutex m_lock;
    std::condition_variable m_wake;
    std::vector<Span> m_waiting;
    bool m_stopping = false;
    std::chrono::steady_clock::time_point m_deadline; // once stopping: the last send's end
    bool m_gave_up = false;
    std::thread m_thread;
};

} // namespace sion::otlp
