// SPDX-License-Identifier: MIT
// `openai-responses:MODEL`: OpenAI's Responses API (POST {OPENAI_BASE_URL}/responses, by default
// https://api.openai.com/v1), streamed and not stored (store: false), the key in OPENAI_API_KEY
// (Authorization: Bearer; a comma-separated list rotates, wire.hpp). chatgpt.hpp sends the same
// body to a signed-in ChatGPT plan.
//
// What it is sent: the system prompt as `instructions`, the conversation as `input` items (the
// person's messages, their pictures as input_image parts, each a data URL with detail "auto"; the
// assistant's messages; function_call and function_call_output items), the tools as function
// tools (for a ChatGPT plan, in an additional_tools input item first: the plan takes no `tools`),
// the answer's room in max_output_tokens. How hard it thinks: a level is
// reasoning.effort (max is xhigh); a budget is not taken.
//
// What it thought: reasoning items are asked for (include: ["reasoning.encrypted_content"],
// reasoning.summary "auto"), and those that came with their encrypted content are kept on the
// assistant's message (member "responses": {"by": Origin, "items": [{"at": N, "item": {…}}]}, N
// the number of message and function_call items before it) and given back without their ids,
// each before what followed it, only to the same kind, base URL and model. A reasoning item
// without encrypted content (cut off) is not kept. The summaries' text is Answer::reasoning. A
// request with kept reasoning refused as malformed (400) is sent once more without it; a model
// that refuses to be asked for reasoning (400 naming reasoning or encrypted content, on a request
// that gave none back) is sent the request once more without asking, and is not asked again.
//
// Usage: input_tokens, of them input_tokens_details.cached_tokens read from the cache, and
// output_tokens. A `response.failed` or `error` event, or a stream that ends before
// response.completed or response.incomplete, is the model's failure (Exit::unavailable).
#pragma once

#include "lib/http.hpp"
#include "lib/models/model.hpp"
#include "lib/models/sse.hpp"
#include "lib/models/wire.hpp"

#include <map>

namespace sion::models {

[[nodiscard]] Result<std::unique_ptr<Model>> open_responses(const ModelSpec& spec);

struct ResponsesOptions {
    std::string_view model;
    Effort effort;
    const Origin* origin = nullptr;
    bool with_kept = true;         // give kept reasoning back (when it was kept for `origin`)
    bool ask_reasoning = true;     // ask for reasoning items and their summaries
    int64_t max_output_tokens = 0; // 0: not sent
    // The tools as the first input item ({"type": "additional_tools", "role": "developer",
    // "tools": […]}) rather than the body's `tools`: what a ChatGPT plan takes.
    bool tools_in_input = false;
};

// The Responses API's body for `request`, streamed and not stored, as this file says.
[[nodiscard]] Json responses_body(const Request& request, const ResponsesOptions& options);

// Reads one answer of the Responses API: streamed, event by event, then finish(); or whole.
class ResponsesReader {
public:
    explicit ResponsesReader(Origin origin) : m_origin(std::move(origin)) {}

    // Told the answer's text as it comes (Request::on_text).
    std::function<void(std::string_view)> on_text;

    // One event. Errors: response.failed and error events (Exit::unavailable: "the response
    // failed: usage_limit_reached: …"), a malformed event (Exit::unavailable).
    [[nodiscard]] Status on_event(const SseEvent& event);
    // The answer, once the stream ended; Exit::unavailable when it ended before its last event.
    [[nodiscard]] Result<Answer> finish();
    // An answer that came whole (a response object).
    [[nodiscard]] Result<Answer> whole(std::string_view body);

private:
    struct Item {
        std::string type;
        std::string text;      // a message's output text
        std::string arguments; // a function call's
        std::string call_id;
        std::string name;
        Json done; // the item as output_item.done gave it
    };

    void read_done(int64_t index, JsonView item);
    void read_response(JsonView response);
    [[nodiscard]] Result<Answer> answer() const;

    Origin m_origin;
    std::map<int64_t, Item> m_items;
    std::string m_reasoning;
    std::string m_status;
    std::string m_model;
    std::string m_id;
    std::string m_finish_reason; // m_status, or why it is incomplete
    bool m_ended = false;
    Usage m_usage;
};

// A model of the Responses API: one call sends responses_body() to {base}/responses with the
// headers a subclass gives (a bearer key by default).
class ResponsesModel : public KeyedModel {
public:
    ResponsesModel(std::string name, std::string kind, std::string model, std::string base,
                   KeyRing keys, bool room);

protected:
    [[nodiscard]] Result<Answer> call(const Request& request, const std::string& key,
                                      bool with_kept) override;
    // One call with `auth`'s headers, asking for reasoning unless the model refused it.
    [[nodiscard]] Result<Answer> call_with(const Request& request, const HttpHeaders& auth,
                                           bool with_kept);

    bool m_tools_in_input = false; // ResponsesOptions::tools_in_input

private:
    [[nodiscard]] Result<Answer> send_once(const Request& request, const HttpHeaders& auth,
                                           bool with_kept, bool* carried_kept);

    bool m_room;                 // whether max_output_tokens is sent
    bool m_ask_reasoning = true; // false once the model refused to be asked
};

} // namespace sion::models
