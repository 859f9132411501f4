// SPDX-License-Identifier: MIT
// Opening a model by its spec ("provider:model#effort"), how hard it thinks, whose kept reasoning a
// message holds, and estimating the tokens of what a model is sent.
#include "lib/models/model.hpp"

#include "lib/home.hpp"
#include "lib/models/anthropic.hpp"
#include "lib/models/bedrock.hpp"
#include "lib/models/chatgpt.hpp"
#include "lib/models/gemini.hpp"
#include "lib/models/openai_chat.hpp"
#include "lib/models/openai_responses.hpp"
#include "lib/models/script.hpp"
#include "lib/models/vertex.hpp"
#include "lib/picture.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace sion::models {

namespace {

using Opener = Result<std::unique_ptr<Model>> (*)(const ModelSpec& spec);

Result<std::unique_ptr<Model>> open_script(const ModelSpec& spec) {
    SION_TRY(auto script, ScriptModel::load(spec.name, spec.model));
    return std::unique_ptr<Model>(std::move(script));
}

struct Provider {
    std::string_view name;
    Opener open;
    bool takes_budget; // whether a number after '#' is a thinking budget it is given
};

// One row a provider, each opened from its own file.
// clang-format off
constexpr std::array k_providers{
    Provider{"script", open_script, true},
    Provider{"anthropic", open_anthropic, true},
    Provider{"openai", open_chat, false},
    Provider{"local", open_chat, false},
    Provider{"azure", open_chat, false},
    Provider{"openrouter", open_chat, false},
    Provider{"deepseek", open_chat, false},
    Provider{"moonshot", open_chat, false},
    Provider{"xai", open_chat, false},
    Provider{"groq", open_chat, false},
    Provider{"together", open_chat, false},
    Provider{"fireworks", open_chat, false},
    Provider{"mistral", open_chat, false},
    Provider{"cerebras", open_chat, false},
    Provider{"openai-responses", open_responses, false},
    Provider{"chatgpt", chatgpt::open_chatgpt, false},
    Provider{"bedrock", open_bedrock, true},
    Provider{"gemini", open_gemini, true},
    Provider{"vertex", open_vertex, true},
};
// clang-format on

constexpr std::array<std::string_view, 7> k_levels{"none", "minimal", "low", "medium",
                                                   "high", "xhigh",   "max"};
constexpr std::array<int64_t, 7> k_level_room{0, 1'024, 4'096, 8'192, 16'384, 32'768, 60'000};

Error malformed(std::string_view spec) {
    return make_error(Exit::usage, "invalid model '%.*s': give provider:model",
                      static_cast<int>(spec.size()), spec.data());
}

// The spec taken apart, the provider not yet looked up.
Result<ModelSpec> split_spec(std::string_view spec) {
    // Only the first ':' ends the provider: a model's own name may have more
    // ("bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0").
    size_t colon = spec.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == spec.size())
        return malformed(spec);
    ModelSpec out{std::string(spec),
                  std::string(spec.substr(0, colon)),
                  std::string(spec.substr(colon + 1)),
                  {}};
    if (size_t hash = out.model.rfind('#'); hash != std::string::npos) {
        auto effort = parse_effort(std::string_view(out.model).substr(hash + 1));
        if (!effort)
            return effort.error().context("invalid model '" + out.name + "'");
        out.effort = *effort;
        out.model.resize(hash);
        if (out.model.empty())
            return malformed(spec);
    }
    return out;
}

} // namespace

Exit exit_for_http_status(int status) {
    if (status == 400)
        return Exit::data;
    if (status >= 401 && status <= 403)
        return Exit::no_perm;
    return Exit::unavailable;
}

Result<Effort> parse_effort(std::string_view text) {
    Effort effort;
    for (size_t i = 0; i < k_levels.size(); ++i)
        if (text == k_levels[i]) {
            effort.level = static_cast<EffortLevel>(i);
            return effort;
        }
    int64_t budget = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), budget);
    if (!text.empty() && ec == std::errc() && end == text.data() + text.size() && budget >= 0
        && budget <= k_max_thinking_budget) {
        effort.budget = budget;
        return effort;
    }
    return make_error(Exit::usage,
                      "invalid effort '#%.*s': give none, minimal, low, medium, high, xhigh, max "
                      "or a budget of 0 to %lld tokens",
                      static_cast<int>(text.size()), text.data(),
                      static_cast<long long>(k_max_thinking_budget));
}

std::string_view effort_name(EffortLevel level) {
    return k_levels[static_cast<size_t>(level)];
}

int64_t thinking_room(const Effort& effort) {
    if (effort.budget)
        return *effort.budget;
    if (effort.level)
        return k_level_room[static_cast<size_t>(*effort.level)];
    return 0;
}

int64_t answer_room(int64_t max_output_tokens, int64_t thinking_room) {
    return std::min(max_output_tokens + thinking_room, k_max_answer_tokens);
}

Json Origin::to_json() const {
    Json o = Json::object();
    o.set("kind", std::string_view(kind));
    o.set("base_url", std::string_view(base_url));
    o.set("model", std::string_view(model));
    return o;
}

JsonView kept_for(JsonView message, std::string_view member, const Origin& origin) {
    JsonView kept = message.get(member);
    JsonView by = kept.get("by");
    auto same = [&](std::string_view key, const std::string& want) {
        auto got = by.string(key);
        return got && *got == want;
    };
    if (!same("kind", origin.kind) || !same("base_url", origin.base_url)
        || !same("model", origin.model))
        return {};
    return kept;
}

bool is_note(JsonView message) {
    return message.string_or("role", "").value_or("") == "user"
           && message.get("note").as_bool().value_or(false);
}

size_t persons_last(std::span<const Json> conversation) {
    size_t last = 0;
    for (size_t i = 0; i < conversation.size(); ++i)
        if (conversation[i].view().string_or("role", "").value_or("") == "user"
            && !is_note(conversation[i].view()))
            last = i;
    return last;
}

bool keeps_any(std::span<const Json> conversation, std::string_view member, const Origin& origin) {
    for (const Json& m : conversation)
        if (kept_for(m, member, origin).exists())
            return true;
    return false;
}

Json kept_member(std::string_view member, const Origin& origin, std::string_view field,
                 Json value) {
    Json by = Json::object();
    by.set("by", origin.to_json());
    by.set(field, std::move(value));
    Json kept = Json::object();
    kept.set(member, std::move(by));
    return kept;
}

std::vector<std::string_view> provider_names() {
    std::vector<std::string_view> out;
    for (const Provider& p : k_providers)
        out.push_back(p.name);
    return out;
}

Result<std::unique_ptr<Model>> open_model(std::string_view spec) {
    SION_TRY(ModelSpec parts, split_spec(spec));
    for (const Provider& p : k_providers) {
        if (p.name != parts.provider)
            continue;
        SION_TRY(std::unique_ptr<Model> model, p.open(parts));
        model->m_effort = parts.effort;
        model->m_thinking_room =
            parts.effort.budget && !p.takes_budget ? 0 : thinking_room(parts.effort);
        return model;
    }
    return make_error(Exit::usage, "unknown model provider '%s' in '%.*s'", parts.provider.c_str(),
                      static_cast<int>(spec.size()), spec.data());
}

Result<std::string> kept_model_spec(std::string_view spec) {
    SION_TRY(ModelSpec parts, split_spec(spec));
    bool known = false;
    for (const Provider& p : k_providers)
        known = known || p.name == parts.provider;
    if (!known)
        return make_error(Exit::usage, "unknown model provider '%s' in '%.*s'",
                          parts.provider.c_str(), static_cast<int>(spec.size()), spec.data());
    if (parts.provider != "script" || parts.model[0] == '/')
        return std::string(spec);
    SION_TRY(std::string path, resolve_path(parts.model));
    // The effort, '#' and all, follows the model's name.
    return "script:" + path + std::string(spec.substr(spec.find(':') + 1 + parts.model.size()));
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
    int64_t pictures = 0;
    for (const Json& message : request.conversation) {
        bytes += message.dump().size();
        // A picture is counted as a picture, not as its base64.
        for (JsonView image : message.view().get("images")) {
            bytes -= std::min(bytes, image.string_or("data", "").value_or("").size());
            ++pictures;
        }
    }
    return tokens_of_bytes(bytes) + pictures * k_picture_tokens;
}

} // namespace sion::models
