// SPDX-License-Identifier: MIT
// Opening a model by its spec ("provider:model") and estimating the tokens of what a model is sent.
#include "lib/models/model.hpp"

#include "lib/home.hpp"
#include "lib/models/script.hpp"

#include <array>

namespace sion::models {

namespace {

using Opener = Result<std::unique_ptr<Model>> (*)(std::string spec, std::string_view model);

Result<std::unique_ptr<Model>> open_script(std::string spec, std::string_view model) {
    SION_TRY(auto script, ScriptModel::load(std::move(spec), std::string(model)));
    return std::unique_ptr<Model>(std::move(script));
}

struct Provider {
    std::string_view name;
    Opener open;
};

// One row a provider, each opened from its own file.
constexpr std::array k_providers{
    Provider{"script", open_script},
};

} // namespace

Result<std::unique_ptr<Model>> open_model(std::string_view spec) {
    // Only the first ':' ends the provider: a model's own name may have more
    // ("bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0").
    size_t colon = spec.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == spec.size())
        return make_error(Exit::usage, "invalid model '%.*s': give provider:model",
                          static_cast<int>(spec.size()), spec.data());
    std::string_view provider = spec.substr(0, colon);
    for (const Provider& p : k_providers)
        if (p.name == provider)
            return p.open(std::string(spec), spec.substr(colon + 1));
    return make_error(Exit::usage, "unknown model provider '%.*s' in '%.*s'",
                      static_cast<int>(provider.size()), provider.data(),
                      static_cast<int>(spec.size()), spec.data());
}

Result<std::string> kept_model_spec(std::string_view spec) {
    constexpr std::string_view script = "script:";
    if (spec.substr(0, script.size()) != script || spec.size() == script.size()
        || spec[script.size()] == '/')
        return std::string(spec);
    SION_TRY(std::string path, resolve_path(std::string(spec.substr(script.size()))));
    return std::string(script) + path;
}

namespace {

int64_t tokens_of_bytes(size_t bytes) {
    return static_cast<int64_t>((bytes + 3) / 4);
}

} // namespace

int64_t estimate_tokens(std::string_view text) {
    return tokens_of_bytes(text.size());
}

// The bytes are added up before the quarter is taken, so a request of many short parts is not
// rounded up once a part.
int64_t estimate_tokens(const Request& request) {
    size_t bytes = request.system.size();
    for (const ToolSpec& tool : request.tools)
        bytes += tool.name.size() + tool.description.size() + tool.input_schema.dump().size();
    for (const Json& message : request.conversation)
        bytes += message.dump().size();
    return tokens_of_bytes(bytes);
}

} // namespace sion::models
