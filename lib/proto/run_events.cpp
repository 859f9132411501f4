// SPDX-License-Identifier: MIT
// A session's --json events, read back.
#include "lib/proto/run_events.hpp"

#include "lib/json.hpp"

namespace sion::proto {

RunSeen read_run_events(std::string_view out) {
    RunSeen seen;
    for (size_t at = 0; at < out.size();) {
        size_t nl = out.find('\n', at);
        std::string_view line = out.substr(at, nl == std::string_view::npos ? nl : nl - at);
        at = nl == std::string_view::npos ? out.size() : nl + 1;
        auto event = Json::parse(line);
        if (!event)
            continue;
        JsonView v = event->view();
        std::string_view kind = v.string_or("event", "").value_or("");
        if (kind == "session") {
            seen.session = std::string(v.string_or("session", "").value_or(""));
        } else if (kind == "text") {
            seen.said = std::string(v.string_or("text", "").value_or(""));
        } else if (kind == "result" && !v.get("parent").exists()) {
            seen.calls.push_back(std::string(v.string_or("tool", "").value_or("")) + " "
                                 + std::string(v.string_or("state", "").value_or("")));
        } else if (kind == "end") {
            seen.state = std::string(v.string_or("state", "").value_or(""));
            seen.why = std::string(v.string_or("why", "").value_or(""));
            seen.tainted = v.boolean_or("tainted", false).value_or(false);
            JsonView u = v.get("usage");
            seen.usage = {u.integer_or("input_tokens", 0).value_or(0),
                          u.integer_or("output_tokens", 0).value_or(0),
                          u.integer_or("cache_read_tokens", 0).value_or(0),
                          u.integer_or("cache_write_tokens", 0).value_or(0)};
        }
    }
    return seen;
}

} // namespace sion::proto
