// SPDX-License-Identifier: MIT
// Where the hooks file is: $SION_HOME/agents/hooks.json.
#include "lib/home.hpp"

#include "cmd/sion-hooks/commands.hpp"
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

} // namespace sion::hooks_cmd
