// SPDX-License-Identifier: MIT
// git's exec path for sion: an override, the libexec directory beside the running program, PATH.
#include "lib/programs.hpp"

#include "lib/text.hpp"

#include <limits.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace sion {

namespace {

std::string self_dir() {
    char buf[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return {};
    std::string path(buf, static_cast<size_t>(n));
    return path.substr(0, path.rfind('/'));
}

} // namespace

Result<std::string> find_program(std::string_view program) {
    std::vector<std::string> dirs;
    if (const char* exec_path = std::getenv("SION_EXEC_PATH"); exec_path && *exec_path)
        dirs.emplace_back(exec_path);
    if (std::string self = self_dir(); !self.empty())
        dirs.push_back(self + "/../libexec/sion");
    if (const char* path = std::getenv("PATH")) {
        std::string_view rest = path;
        while (true) {
            size_t colon = rest.find(':');
            std::string_view dir = rest.substr(0, colon);
            dirs.emplace_back(dir.empty() ? "." : std::string(dir));
            if (colon == std::string_view::npos)
                break;
            rest.remove_prefix(colon + 1);
        }
    }
    for (const auto& dir : dirs) {
        std::string candidate = dir + "/" + std::string(program);
        if (::access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return make_error(Exit::not_found, "%.*s not found", static_cast<int>(program.size()),
                      program.data());
}

} // namespace sion
