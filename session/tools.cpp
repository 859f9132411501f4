// SPDX-License-Identifier: MIT
// Which tools a session has.
#include "session/tools.hpp"

namespace sion::session {

std::vector<std::unique_ptr<Tool>> make_tools(const ToolOptions& options) {
    std::vector<std::unique_ptr<Tool>> tools;
    if (options.files) {
        tools.push_back(make_read_file_tool());
        tools.push_back(make_find_files_tool());
        tools.push_back(make_search_files_tool());
        tools.push_back(make_write_file_tool());
        tools.push_back(make_edit_file_tool());
        tools.push_back(make_apply_patch_tool());
    }
    if (options.shell) {
        tools.push_back(make_shell_tool(options.shell_external));
        tools.push_back(make_diagnostics_tool(options.shell_external));
        tools.push_back(make_run_tests_tool(options.shell_external));
    }
    if (!options.code_sandbox.empty())
        tools.push_back(make_run_code_tool(options.code_sandbox));
    if (options.web) {
        tools.push_back(make_fetch_url_tool(options.web_allow));
        if (options.search)
            tools.push_back(make_web_search_tool(*options.search));
    }
    if (options.skills != nullptr) {
        tools.push_back(make_skill_read_tool());
        tools.push_back(make_skill_write_tool());
        if (options.shell)
            tools.push_back(make_skill_run_tool(options.skills, options.shell_network));
    }
    if (options.delegate)
        tools.push_back(make_agent_spawn_tool());
    return tools;
}

} // namespace sion::session
