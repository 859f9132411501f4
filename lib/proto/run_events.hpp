// SPDX-License-Identifier: MIT
// What a session printed with `sion-run run --json` (schemas/run.event.json), as the programs that
// run one read it back: sion-route eval's runs, and a session's subagents (agent_spawn).
#pragma once

#include "lib/models/model.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace sion::proto {

struct RunSeen {
    std::string session;            // its id; "" when it printed none (it never began)
    std::string state;              // the end's: done, stopped, failed; "" when it came to none
    std::string why;                // the end's, when it says one
    std::string said;               // the model's last text
    std::vector<std::string> calls; // the model's calls as they ended: "write_file ok"
    bool tainted = false;
    models::Usage usage; // the run's, from the end
};

// Reads the events, one a line; a line that is not one is passed over.
[[nodiscard]] RunSeen read_run_events(std::string_view out);

} // namespace sion::proto
