// SPDX-License-Identifier: MIT
// A new session's task routed (seed 001, "A model for each task"): when its profile has routes and
// a route's --when holds, it goes there, decided here; when the sorter must choose, `sion-route
// pick` (sion-route(1)) is asked, one short process with the request on its stdin and the choice on
// its stdout. The session keeps the models it chose; its first run is then noted in the profile's
// log of routed sessions.
#pragma once

#include "lib/agents.hpp"
#include "lib/db.hpp"
#include "lib/json.hpp"
#include "lib/models/model.hpp"
#include "lib/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sion::session {

struct Routed {
    // The session's message {"role":"route","route","why","models"[,"sorter","usage"]}: route is
    // null when no route took the task.
    Json record;
    std::vector<std::string> models; // the session's, first first
    models::Usage usage;             // the sorter's
};

// Routes the task of a new session of `profile`; nullopt when the profile has no routes. When
// sion-route cannot be asked, or answers nothing it should, the task goes to no route with the
// reason as why, and the session runs on the profile's models. Errors are sion.db's alone.
[[nodiscard]] Result<std::optional<Routed>> route_task(Db& db, const Profile& profile,
                                                       std::string_view task, size_t pictures);

// The line the transcript shows for a route record: routes::choice_line()'s.
[[nodiscard]] std::string routed_line(JsonView record);

} // namespace sion::session
