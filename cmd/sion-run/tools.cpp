// SPDX-License-Identifier: MIT
// Which tools a session has.
#include "cmd/sion-run/tools.hpp"

namespace sion::run_cmd {

std::vector<std::unique_ptr<Tool>> make_tools(const ToolOptions& options) {
    std::vector<std::unique_ptr<Tool>> tools;
    if (options.files) {
        tools.push_back(make_read_file_tool());
        tools.push_back(make_write_file_tool());
    }
    if (options.shell)
        tools.push_back(make_shell_tool(options.shell_external));
    return tools;
}

} // namespace sion::run_cmd
