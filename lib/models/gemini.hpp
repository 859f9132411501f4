// SPDX-License-Identifier: MIT
// `gemini:MODEL`: Google's Gemini API, natively (POST {GEMINI_BASE_URL}/v1beta/models/MODEL:
// streamGenerateContent?alt=sse, by default at https://generativelanguage.googleapis.com), the key
// in GEMINI_API_KEY, else GOOGLE_API_KEY (sent as x-goog-api-key; a comma-separated list rotates,
// wire.hpp).
//
// What it is sent: the system prompt as systemInstruction, the conversation as contents (the
// person's words and pictures, the model's text and calls, the calls' results as
// functionResponse parts of the next user turn), the tools as functionDeclarations with their JSON
// Schemas (parametersJsonSchema). How hard it thinks: a level is thinkingLevel (none is minimal;
// above high is high), for Gemini 3 and later; a budget is thinkingBudget, for Gemini 2.5 (#0
// turns thinking off where a model allows it); either asks for its thought summaries too, which
// are Answer::reasoning.
//
// What it thought: the parts of each answer (the thought signatures on its text and its calls
// among them) are kept on the assistant's message, {"gemini": {"by": Origin, "parts": [...]}}, and
// given back as they came, only to the same base URL and model; a call another model made (or one
// whose parts were not kept) goes with the value Google gives for a call it did not sign. A
// request with kept parts refused as malformed (400) is sent once more without them.
//
// Usage: promptTokenCount (cached tokens among them, cachedContentTokenCount, reported apart) and
// the answer's and thoughts' tokens. An error in the stream is the model's failure when its code
// is busy or failing (429, 500, 503, 504: Exit::unavailable), as is a stream that ends before a
// candidate says why it finished.
//
// The body and the reading of an answer are exposed for Vertex AI, which takes the same.
#pragma once

#include "lib/models/model.hpp"
#include "lib/models/sse.hpp"

#include <span>
#include <vector>

namespace sion::models {

[[nodiscard]] Result<std::unique_ptr<Model>> open_gemini(const ModelSpec& spec);

// Whether the Gemini API takes the pictures of the conversation: it reads PNG, JPEG and WebP of
// the kinds sion sends, so a GIF is Exit::data before anything is sent.
[[nodiscard]] Status gemini_takes_pictures(std::span<const Json> conversation);

// The generateContent body for `request`. Kept parts go back when `with_kept` is set and they
// were kept for `origin`.
[[nodiscard]] Json gemini_body(const Request& request, const Effort& effort, int64_t thinking_room,
                               const Origin& origin, bool with_kept);

// Reads one answer of generateContent: streamed, event by event, then finish(); or whole.
class GeminiReader {
public:
    explicit GeminiReader(Origin origin) : m_origin(std::move(origin)) {}

    // Told the answer's text as it comes (Request::on_text).
    std::function<void(std::string_view)> on_text;

    // One event of the stream: a GenerateContentResponse, or an error.
    [[nodiscard]] Status on_event(const SseEvent& event);
    // The answer, once the stream ended; Exit::unavailable when no candidate said it finished.
    [[nodiscard]] Result<Answer> finish();
    // An answer that came whole (one GenerateContentResponse).
    [[nodiscard]] Result<Answer> whole(std::string_view body);

private:
    [[nodiscard]] Status take(JsonView response);

    Origin m_origin;
    std::vector<Json> m_parts; // the answer's parts, text runs joined
    std::string m_finish;
    std::string m_model; // modelVersion
    std::string m_id;    // responseId
    int64_t m_prompt = 0, m_output = 0, m_cached = 0;
    bool m_told_text = false; // on_text was told some text
};

} // namespace sion::models
