// SPDX-License-Identifier: MIT
// The tools' specs as the model sees them, from schemas/tools/ (built in by embed_tool_specs.cmake).
#include "session/tools.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>

namespace sion::session {

namespace {

const std::map<std::string_view, std::string_view>& specs() {
    static const std::map<std::string_view, std::string_view> table = {
#include "tool_specs.inc"
    };
    return table;
}

} // namespace

// A tool without its file, or with one that is not what t0003 checks, is a mistake of the build's:
// no session could tell the model what the tool is, so it stops at once.
models::ToolSpec tool_spec(std::string_view name) {
    auto found = specs().find(name);
    auto doc = found == specs().end() ? Result<Json>(Error(Exit::software, "")) : Json::parse(found->second);
    auto description = doc ? doc->view().string("description") : Result<std::string_view>(doc.error());
    if (!doc || !description || !doc->view().get("input_schema").is_object()) {
        std::fprintf(stderr, "sion-run: the tool %.*s has no valid schemas/tools/%.*s.json\n",
                     static_cast<int>(name.size()), name.data(), static_cast<int>(name.size()), name.data());
        std::abort();
    }
    return {std::string(name), std::string(*description), Json::copy_of(doc->view().get("input_schema"))};
}

} // namespace sion::session
