// SPDX-License-Identifier: MIT
// A model the session thinks with: it is sent the system prompt, the tools and the conversation so
// far, and answers with text, tool calls, or both. Each provider's wire format is one file beside
// this one (DESIGN.md, "Models"); `script:FILE` (script.hpp) plays a fixed list of answers.
//
// The conversation is provider-neutral JSON, as sion.db keeps it, one object a message:
//   {"role":"user","text":"…","images":[…]}
//   {"role":"assistant","text":"…","reasoning":"…","calls":[{"id":"c1","tool":"shell","input":{…}}]}
//   {"role":"tool","call":"c1","tool":"shell","text":"…","error":false,"images":[…]}
// ("images", pictures as lib/picture.hpp has them, may be absent, as may "text", "reasoning" and
// "calls" of an assistant's message.) A user message with "note": true is the session's own note
// to the model (the MCP servers it has this turn), last in what is sent and never stored: it is
// not the person's, so the task it is in goes on (persons_last()). Providers turn
// it into their own format and back; what a provider must keep to be sent again (signed thinking,
// encrypted reasoning) goes in members of its own, which the others ignore: Answer::kept holds
// them, and the session puts them on the assistant's message as they are. Each such member says
// whom it is for ({"by": Origin::to_json(), …}), and is given back only to that provider kind,
// base URL and model (kept_for()): a model the session falls back to is not shown another's.
//
// `provider:model#effort` says how hard the model thinks (Effort): a level (none minimal low
// medium high xhigh max), which each provider maps to the nearest it has, or a budget of thinking
// tokens (#8000) for the providers that take one. A model told how hard to think is given room
// for it besides its answer (thinking_room()), at most k_max_answer_tokens an answer in all.
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
#include <functional>
#include <memory>
#include <optional>
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
    int64_t input_tokens = 0;       // everything the model read, cached or not
    int64_t output_tokens = 0;      // everything it wrote, thinking included
    int64_t cache_read_tokens = 0;  // of input_tokens, those read from the provider's cache
    int64_t cache_write_tokens = 0; // of input_tokens, those written to it
};

enum class EffortLevel { none, minimal, low, medium, high, xhigh, max };

// How hard a model is told to think: a level, a budget, or neither (the provider's default).
struct Effort {
    std::optional<EffortLevel> level;
    std::optional<int64_t> budget; // thinking tokens, 0 to k_max_thinking_budget

    [[nodiscard]] bool given() const { return level.has_value() || budget.has_value(); }
};

// An answer and its thinking, all told, are given at most this many tokens.
constexpr int64_t k_max_answer_tokens = 64'000;
// The largest budget of thinking tokens a spec may give (#60000), as much as `max` has room for.
constexpr int64_t k_max_thinking_budget = 60'000;

// "high" or "8000" (what follows the '#' of a spec). Exit::usage otherwise: "invalid effort
// '#x': give none, minimal, low, medium, high, xhigh, max or a budget of 0 to 60000 tokens".
[[nodiscard]] Result<Effort> parse_effort(std::string_view text);
// "none", …, "max".
[[nodiscard]] std::string_view effort_name(EffortLevel level);
// The room a model told how hard to think is given for its thinking, besides its answer: by
// level none 0, minimal 1,024, low 4,096, medium 8,192, high 16,384, xhigh 32,768, max 60,000; a
// budget its own number; nothing when no effort is given.
[[nodiscard]] int64_t thinking_room(const Effort& effort);
// The most a model may write: the answer's room and the thinking's, at most k_max_answer_tokens.
[[nodiscard]] int64_t answer_room(int64_t max_output_tokens, int64_t thinking_room);

// Who kept reasoning on an assistant's message, to give it back only to the same.
struct Origin {
    std::string kind;     // the wire format: "anthropic", "chat", "responses", "gemini", …
    std::string base_url; // where it was sent
    std::string model;    // the provider's model id

    [[nodiscard]] Json to_json() const;
};

// The member `member` of `message` when its "by" is `origin`; an empty view otherwise.
[[nodiscard]] JsonView kept_for(JsonView message, std::string_view member, const Origin& origin);
// Whether any message of `conversation` keeps `member` for `origin`.
[[nodiscard]] bool keeps_any(std::span<const Json> conversation, std::string_view member,
                             const Origin& origin);
// What an answer keeps for `origin` (Answer::kept): {member: {"by": origin, field: value}}.
[[nodiscard]] Json kept_member(std::string_view member, const Origin& origin,
                               std::string_view field, Json value);

// Whether `message` is the session's note (see above).
[[nodiscard]] bool is_note(JsonView message);
// The index of the person's last message in `conversation` (notes passed over); 0 when there is
// none. The messages after it are the task's that is under way.
[[nodiscard]] size_t persons_last(std::span<const Json> conversation);

// What a request is for: a turn of the session, the narrative of a compaction's summary, a
// completion an MCP server asked for, or a sorter's choice of a route (sion-route). Providers send
// each alike; the scripted model answers a summary and a sorter's request from turns of their own.
enum class Purpose { turn, summary, completion, sort };

struct Request {
    std::string_view system;
    std::span<const ToolSpec> tools;
    std::span<const Json> conversation;
    int64_t max_output_tokens = 16000;
    Purpose purpose = Purpose::turn;
    // Told the answer's text piece by piece as a provider streams it (not its thinking, nor its
    // calls); a provider that does not stream tells nothing. The pieces joined are the start of
    // Answer::text, all of it when nothing failed. Called on the thread that asks.
    std::function<void(std::string_view)> on_text{};
    // Asked while the answer is awaited, about once a second; false stops the request, which then
    // fails with Exit::temp_fail ("… the transfer was stopped"): a console's /stop.
    std::function<bool()> go_on{};
};

struct Answer {
    std::string text;
    std::string reasoning; // what can be read of its thinking; "" when none
    std::vector<ToolCall> calls;
    Usage usage;
    // What the provider's answer says of itself, as it says it (for the session's traces):
    std::string model;         // the model that answered ("" when it does not say)
    std::string id;            // its id of the answer ("" when none)
    std::string finish_reason; // why it stopped: "end_turn", "tool_use", "stop", "tool_calls",
                               // "STOP", "completed", "max_output_tokens", …; "" when none
    // Members the session puts on the assistant's message as they are, for the provider to be
    // given back ({"anthropic": {"by": …, "blocks": […]}}); empty when there are none.
    Json kept;
};

// A spec taken apart: "anthropic:claude-opus-5-5#high".
struct ModelSpec {
    std::string name;     // the whole spec, as the model is called by
    std::string provider; // "anthropic"
    std::string model;    // "claude-opus-5-5": everything after the first ':', the effort cut off
    Effort effort;        // the '#' part's; not given when there is none
};

class Model {
public:
    Model() = default;
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;
    virtual ~Model() = default;

    // The name it was given by: "script:shell.json", "anthropic:claude-opus-5-5#high".
    [[nodiscard]] virtual const std::string& name() const = 0;
    [[nodiscard]] virtual Result<Answer> answer(const Request& request) = 0;

    // How hard it was told to think (the spec's '#'), and the room that gives it for thinking
    // (0 for a budget its provider does not take), which a run's token budget counts before
    // each call. Set by open_model().
    [[nodiscard]] const Effort& effort() const { return m_effort; }

    [[nodiscard]] int64_t thinking_room() const { return m_thinking_room; }

private:
    friend Result<std::unique_ptr<Model>> open_model(std::string_view spec);
    Effort m_effort;
    int64_t m_thinking_room = 0;
};

// The model `spec` names ("provider:model", "provider:model#effort"). Exit::usage for a malformed
// spec, an unknown provider ("unknown model provider 'x' in 'x:y'") or effort; a provider's own
// errors otherwise (a script file that cannot be read is Exit::no_input, one that is malformed
// Exit::data; a provider's key that is not set, or a base URL it may not use, Exit::config).
[[nodiscard]] Result<std::unique_ptr<Model>> open_model(std::string_view spec);

// The providers' names, in the order open_model() knows them ("script", "anthropic", …).
[[nodiscard]] std::vector<std::string_view> provider_names();

// `spec` as it should be kept (in a profile, a session's settings): a script's path made absolute
// against the current directory, so it names the same file wherever the session is continued;
// other specs as they are. Exit::usage as open_model() for a malformed spec or an unknown
// provider; nothing else is checked (a provider's key may be set later).
[[nodiscard]] Result<std::string> kept_model_spec(std::string_view spec);

// The exit code of a provider's HTTP status that is not a success: 400 Exit::data (malformed),
// 401, 402 and 403 Exit::no_perm (unauthorized), anything else Exit::unavailable (busy, failing:
// another model may answer).
[[nodiscard]] Exit exit_for_http_status(int status);

// Whether a failure should pass the request on to the next model.
[[nodiscard]] inline bool worth_another_model(const Error& error) {
    return error.exit() == Exit::unavailable || error.exit() == Exit::temp_fail;
}

// Tokens a text is taken to be when a model does not say: a quarter of its bytes, rounded up.
[[nodiscard]] int64_t estimate_tokens(std::string_view text);
// The same for what a request sends: the system prompt, the tools and the conversation, each
// picture as k_picture_tokens (lib/picture.hpp).
[[nodiscard]] int64_t estimate_tokens(const Request& request);

} // namespace sion::models
