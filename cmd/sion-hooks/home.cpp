// SPDX-License-Identifier: MIT
// Where the hooks file is: $SION_HOME/agents/hooks.json.
#include "lib/home.hpp"

#include "cmd/sion-hooks/commands.hpp"
#include "hooks/event.hpp"
#include "hooks/hooks_file.hpp"
#include "lib/log.hpp"
#include "lib/private_file.hpp"

namespace sion::hooks_cmd {

std::string hooks_file_or_die(bool prepare) {
    if (!prepare)
        return hooks::hooks_path(or_die(resolve_home()));
    std::string home = or_die(prepare_home());
    or_die(ensure_private_directory((home == "/" ? "" : home) + "/agents"));
    return hooks::hooks_path(home);
}

std::vector<std::string> known_hooks(std::string_view kind, const std::vector<std::string>&) {
    auto home = resolve_home();
    if (kind != "hook" || !home)
        return {};
    auto hooks = hooks::load_hooks(hooks::hooks_path(*home));
    if (!hooks)
        return {};
    std::vector<std::string> out;
    for (size_t i = 0; i < hooks->size(); ++i) {
        const hooks::Hook& h = (*hooks)[i];
        out.push_back(std::to_string(i + 1) + "\t" + hooks::event_name(h.event) + " "
                      + (h.command.empty() ? "" : h.command[0]));
    }
    return out;
}

} // namespace sion::hooks_cmd
