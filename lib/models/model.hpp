// SPDX-License-Identifier: MIT
// A model the session thinks with: it is sent the system prompt, the tools and the conversation so
// far, and answers with text, tool calls, or both. Each provider's wire format is one file beside
// this one (DESIGN.md, "Models"); `script:FILE` (script.hpp) plays a fixed list of answers.
//
// The conversation is provider-neutral JSON, as sion.db keeps it, one object a message:
//   {"role":"user","text":"…"}
//   {"role":"assistant","text":"…","reasoning":"…","calls":[{"id":"c1","tool":"shell","input":{…}}]}
//   {"role":"tool","call":"c1","tool":"shell","text":"…","error":false}
// ("text", "reasoning" and "calls" of an assistant's message may each be absent.) Providers turn
// it into their own format and back; what a provider must keep to be sent again (signed thinking,
// encrypted reasoning) goes in members of its own, which the others ignore.
//
// Failures are Errors whose exit code says what the session may do next: Exit::unavailable for a
// model that is busy, failing or unreachable (HTTP 429, 500, 502, 503, 504, 529; the next model is
// asked), anything else (Exit::data for a request refused as malformed, Exit::no_perm for one
// refused as unauthorized, Exit::no_input for a script with no turn left) is not retried. The
// message says what happened in one line, the HTTP status first when there is one:
//   "HTTP 529: Overloaded".
//
// Threads: a Model is used by one thread at a time.
#pragma once

#include "lib/json.hpp"
#include "lib/result.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sion::models {

struct ToolSpec {
    std::string name;
    std::string description;
    Json input_schema; // a JSON Schema object
};

struct ToolCall {
    std::string id; // unique within the session; the provider's, or made up when it gives none
    std::string tool;
    Json input; // an object
};

struct Usage {
    int64_t input_tokens = 0;  // everything the model read, cached or not
    int64_t output_tokens = 0; // everything it wrote, thinking included
    int64_t cache_read_tokens = 0;
    int64_t cache_write_tokens = 0;
};

struct Request {
    std::string_view system;
    std::span<const ToolSpec> tools;
    std::span<const Json> conversation;
    int64_t max_output_tokens = 16000;
};

struct Answer {
    std::string text;
    std::string reasoning; // what can be read of its thinking; "" when none
    std::vector<ToolCall> calls;
    Usage usage;
};

class Model {
public:
    Model() = default;
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;
    virtual ~Model() = default;

    // The name it was given by: "script:shell.json", "anthropic:claude-opus-5-5".
    [[nodiscard]] virtual const std::string& name() const = 0;
    [[nodiscard]] virtual Result<Answer> answer(const Request& request) = 0;
};

// The model `spec` names ("provider:model"). Exit::usage for a malformed spec or an unknown
// provider ("unknown model provider 'x' in 'x:y'"); a provider's own errors otherwise (a script
// file that cannot be read is Exit::no_input, one that is malformed Exit::data).
[[nodiscard]] Result<std::unique_ptr<Model>> open_model(std::string_view spec);

// `spec` as it should be kept (in a profile, a session's settings): a script's path made absolute
// against the current directory, so it names the same file wherever the session is continued;
// other specs as they are. Exit::usage as open_model() for a malformed spec.
[[nodiscard]] Result<std::string> kept_model_spec(std::string_view spec);

// Whether a failure should pass the request on to the next model.
[[nodiscard]] inline bool worth_another_model(const Error& error) {
    return error.exit() == Exit::unavailable || error.exit() == Exit::temp_fail;
}

// Tokens a text is taken to be when a model does not say: a quarter of its bytes, rounded up.
[[nodiscard]] int64_t estimate_tokens(std::string_view text);
// The same for what a request sends: the system prompt, the tools and the conversation.
[[nodiscard]] int64_t estimate_tokens(const Request& request);

} // namespace sion::models
