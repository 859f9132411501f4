// SPDX-License-Identifier: MIT
// `anthropic:MODEL`: Anthropic's Messages API (POST {ANTHROPIC_BASE_URL}/v1/messages, by default
// https://api.anthropic.com), streamed, with the key in ANTHROPIC_API_KEY (sent as x-api-key; a
// comma-separated list rotates, wire.hpp).
//
// What it is sent: the tools, the system prompt and the conversation, with prompt caching asked
// for on the stable prefix (cache_control on the last tool, on the system prompt and on the last
// block of the conversation: three of the four breakpoints the API allows). How hard it thinks
// (model.hpp's Effort): a level is adaptive thinking at that effort (output_config.effort; minimal
// is low), none and #0 turn thinking off; a budget is thinking on that budget (budget_tokens, at
// least 1,024). max_tokens is the request's answer room and the thinking room, at most 64,000.
//
// What it thought: thinking blocks, signed, and redacted ones are kept on the assistant's message
// (member "anthropic": {"by": Origin, "blocks": [{"at": N, "block": {…as it came…}}]}, N the
// number of text and tool_use blocks before it) and given back as they came, only to the same
// base URL and model; a thinking block cut off before its signature is not kept. A request with
// kept thinking refused as malformed (400) is sent once more without it. What can be read of the
// thinking is Answer::reasoning.
//
// Usage: input tokens are the uncached ones, those read from the cache and those written to it,
// all told; the last two also apart. An `error` event in the stream (overloaded_error, api_error)
// is the model's failure (Exit::unavailable), as is a stream cut off before message_stop.
//
// The request's body and the reading of an answer are exposed for Claude on other platforms
// (Vertex AI's rawPredict takes the same body without "model").
#pragma once

#include "lib/models/model.hpp"
#include "lib/models/sse.hpp"

#include <map>
#include <span>

namespace sion::models {

[[nodiscard]] Result<std::unique_ptr<Model>> open_anthropic(const ModelSpec& spec);

// Whether the Messages API takes the pictures of the conversation (a person's, a tool's): a picture
// of another type than jpeg, png, gif or webp is Exit::data, before anything is sent ("cannot send
// a picture of type 'image/bmp': the Messages API takes only …").
[[nodiscard]] Status messages_api_takes_pictures(std::span<const Json> conversation);

// The Messages API's body for `request` as this file says, without "model" and "stream". Kept
// thinking goes back when `with_kept` is set and it was kept for `origin`.
[[nodiscard]] Json anthropic_body(const Request& request, const Effort& effort,
                                  int64_t thinking_room, const Origin& origin, bool with_kept);

// Reads one answer of the Messages API: streamed, event by event, then finish(); or whole.
class AnthropicReader {
public:
    explicit AnthropicReader(Origin origin) : m_origin(std::move(origin)) {}

    // Told the answer's text as it comes (Request::on_text).
    std::function<void(std::string_view)> on_text;

    // One event of the stream. Errors: an `error` event (Exit::unavailable, or as its type says:
    // "overloaded_error: Overloaded"), a malformed one (Exit::unavailable).
    [[nodiscard]] Status on_event(const SseEvent& event);
    // The answer, once the stream ended; Exit::unavailable when it ended before message_stop.
    [[nodiscard]] Result<Answer> finish();
    // An answer that came whole (a JSON message).
    [[nodiscard]] Result<Answer> whole(std::string_view body);

private:
    struct Block {
        std::string type;
        std::string text; // a text block's text, a thinking block's thinking
        std::string signature;
        std::string data; // a redacted block's
        std::string id;
        std::string name;
        std::string input_json;
    };

    [[nodiscard]] Status start_block(JsonView event);
    [[nodiscard]] Status delta(JsonView event);
    void read_usage(JsonView usage);
    // A message's model, id and usage (message_start's, or a whole answer's).
    void read_message(JsonView message);
    [[nodiscard]] Result<Answer> answer() const;

    Origin m_origin;
    std::map<int64_t, Block> m_blocks;
    std::string m_stop_reason;
    std::string m_model;
    std::string m_id;
    int64_t m_input = 0, m_output = 0, m_cache_read = 0, m_cache_write = 0;
    bool m_started = false;
    bool m_stopped = false;
};

} // namespace sion::models
