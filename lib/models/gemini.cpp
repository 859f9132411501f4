// SPDX-License-Identifier: MIT
// Gemini's generateContent: the conversation as contents and parts, the stream read back with its
// thought signatures where they came.
#include "lib/models/gemini.hpp"

#include "lib/models/wire.hpp"
#include "lib/picture.hpp"
#include "lib/secrets.hpp"
#include "lib/text.hpp"

#include <array>
#include <set>

namespace sion::models {

namespace {

constexpr std::string_view k_member = "gemini";
// What Google documents for a call it did not sign (one another model made).
constexpr std::string_view k_unsigned = "skip_thought_signature_validator";

Json one(std::string_view key, Json value) {
    Json o = Json::object();
    o.set(key, std::move(value));
    return o;
}

Json text_part(std::string_view text) {
    return one("text", Json::string(text));
}

// Pictures of a neutral message ({"images": [{"media_type", "data"}]}) as inlineData parts.
void add_images(Json& parts, JsonView message) {
    for (JsonView image : message.get("images")) {
        Json data = Json::object();
        data.set("mimeType", picture_type(image));
        data.set("data", image.string_or("data", "").value_or(""));
        parts.push(one("inlineData", std::move(data)));
    }
}

// A model's turn: its kept parts as they came, or its text and calls, each call with the value
// for one Google did not sign. The ids of calls that carry Gemini's own go in `own_ids`, for
// their responses to name.
void add_model_parts(Json& parts, JsonView message, JsonView kept, std::set<std::string>& own_ids) {
    if (kept.exists()) {
        for (JsonView part : kept.get("parts")) {
            if (auto id = part.get("functionCall").string("id"))
                own_ids.insert(std::string(*id));
            parts.push(Json::copy_of(part));
        }
        return;
    }
    if (auto text = message.string_or("text", ""); text && !text->empty())
        parts.push(text_part(*text));
    for (JsonView call : message.get("calls")) {
        Json fc = Json::object();
        fc.set("name", call.string_or("tool", "").value_or(""));
        fc.set("args",
               call.get("input").is_object() ? Json::copy_of(call.get("input")) : Json::object());
        Json part = one("functionCall", std::move(fc));
        part.set("thoughtSignature", k_unsigned);
        parts.push(std::move(part));
    }
}

Json function_response(JsonView message, const std::set<std::string>& own_ids) {
    Json fr = Json::object();
    std::string id(message.string_or("call", "").value_or(""));
    if (own_ids.count(id) != 0)
        fr.set("id", std::string_view(id));
    fr.set("name", message.string_or("tool", "").value_or(""));
    bool error = message.boolean_or("error", false).value_or(false);
    fr.set("response", one(error ? "error" : "result",
                           Json::string(message.string_or("text", "").value_or(""))));
    return one("functionResponse", std::move(fr));
}

// Gemini's contents: a turn's function responses and the person's next words are one user turn.
Json contents_of(std::span<const Json> conversation, const Origin& origin, bool with_kept) {
    Json contents = Json::array();
    std::string role;
    Json parts = Json::array();
    std::set<std::string> own_ids;
    auto flush = [&] {
        if (parts.view().size() > 0) {
            Json c = Json::object();
            c.set("role", std::string_view(role));
            c.set("parts", std::move(parts));
            contents.push(std::move(c));
        }
        parts = Json::array();
    };
    for (const Json& message : conversation) {
        std::string_view said = message.view().string_or("role", "").value_or("");
        std::string want = said == "assistant" ? "model" : "user";
        if (want != role)
            flush();
        role = want;
        if (said == "assistant") {
            JsonView kept = with_kept ? kept_for(message, k_member, origin) : JsonView();
            add_model_parts(parts, message, kept, own_ids);
        } else if (said == "tool") {
            parts.push(function_response(message, own_ids));
            add_images(parts, message);
        } else {
            if (auto text = message.view().string_or("text", ""); text && !text->empty())
                parts.push(text_part(*text));
            add_images(parts, message);
        }
    }
    flush();
    return contents;
}

Json thinking_config(const Effort& effort) {
    Json config = Json::object();
    if (effort.budget) {
        config.set("thinkingBudget", *effort.budget);
    } else {
        EffortLevel level = *effort.level;
        if (level == EffortLevel::none)
            level = EffortLevel::minimal;
        if (level > EffortLevel::high)
            level = EffortLevel::high;
        config.set("thinkingLevel", effort_name(level));
    }
    config.set("includeThoughts", true);
    return config;
}

Error malformed(const std::string& why) {
    return Error(Exit::unavailable, "the answer is malformed: " + why);
}

} // namespace

Status gemini_takes_pictures(std::span<const Json> conversation) {
    static constexpr std::array<std::string_view, 5> k_types{"image/png", "image/jpeg",
                                                             "image/webp", "image/heic",
                                                             "image/heif"};
    return pictures_taken(conversation, k_types, "Gemini API");
}

Json gemini_body(const Request& request, const Effort& effort, int64_t thinking_room,
                 const Origin& origin, bool with_kept) {
    Json body = Json::object();
    if (!request.system.empty()) {
        Json parts = Json::array();
        parts.push(text_part(request.system));
        body.set("systemInstruction", one("parts", std::move(parts)));
    }
    // The tools before the conversation: what stays the same from call to call comes first.
    if (!request.tools.empty()) {
        Json declarations = Json::array();
        for (const ToolSpec& tool : request.tools) {
            Json d = Json::object();
            d.set("name", std::string_view(tool.name));
            d.set("description", std::string_view(tool.description));
            d.set("parametersJsonSchema", Json::copy_of(tool.input_schema));
            declarations.push(std::move(d));
        }
        Json tools = Json::array();
        tools.push(one("functionDeclarations", std::move(declarations)));
        body.set("tools", std::move(tools));
    }
    body.set("contents", contents_of(request.conversation, origin, with_kept));
    Json config = Json::object();
    config.set("maxOutputTokens", answer_room(request.max_output_tokens, thinking_room));
    if (effort.given())
        config.set("thinkingConfig", thinking_config(effort));
    body.set("generationConfig", std::move(config));
    return body;
}

Status GeminiReader::on_event(const SseEvent& event) {
    auto doc = Json::parse(event.data);
    if (!doc)
        return malformed(doc.error().message());
    return take(doc->view());
}

Status GeminiReader::take(JsonView response) {
    if (JsonView error = response.get("error"); error.exists()) {
        int64_t code = error.integer_or("code", 500).value_or(500);
        std::string status(error.string_or("status", "").value_or(""));
        std::string said(error.string_or("message", "").value_or(""));
        return Error(exit_for_http_status(static_cast<int>(code)),
                     format("HTTP %lld: %s", static_cast<long long>(code),
                            (said.empty() ? status : said).c_str()));
    }
    if (!response.is_object())
        return malformed("a response is not an object");
    if (auto version = response.string("modelVersion"); version && !version->empty())
        m_model = std::string(*version);
    if (auto id = response.string("responseId"); id && !id->empty())
        m_id = std::string(*id);
    if (JsonView usage = response.get("usageMetadata"); usage.is_object()) {
        m_prompt = usage.integer_or("promptTokenCount", 0).value_or(0)
                   + usage.integer_or("toolUsePromptTokenCount", 0).value_or(0);
        m_output = usage.integer_or("candidatesTokenCount", 0).value_or(0)
                   + usage.integer_or("thoughtsTokenCount", 0).value_or(0);
        m_cached = usage.integer_or("cachedContentTokenCount", 0).value_or(0);
    }
    JsonView candidate = response.get("candidates").at(0);
    if (!candidate.exists()) {
        if (auto blocked = response.get("promptFeedback").string("blockReason"))
            return make_error(Exit::data, "the prompt was blocked: %.*s",
                              static_cast<int>(blocked->size()), blocked->data());
        return {};
    }
    for (JsonView part : candidate.get("content").get("parts")) {
        if (!part.is_object())
            return malformed("a part is not an object");
        // A run of text streams as many parts: they are one, carrying the signature that ends it.
        JsonView text = part.get("text");
        JsonView before = m_parts.empty() ? JsonView() : m_parts.back().view();
        bool joins = text.is_string() && before.get("text").is_string()
                     && !before.get("thoughtSignature").exists()
                     && before.boolean_or("thought", false).value_or(false)
                            == part.boolean_or("thought", false).value_or(false);
        if (on_text && text.is_string() && !part.boolean_or("thought", false).value_or(false)) {
            // Runs of text are joined by a line break, as finish() joins them.
            if (!joins && m_told_text)
                on_text("\n");
            on_text(*text.as_string());
            m_told_text = true;
        }
        if (!joins) {
            m_parts.push_back(Json::copy_of(part));
            continue;
        }
        std::string joined =
            std::string(*before.get("text").as_string()) + std::string(*text.as_string());
        Json merged = Json::copy_of(part);
        merged.set("text", std::string_view(joined));
        m_parts.back() = std::move(merged);
    }
    if (auto reason = candidate.string("finishReason"); reason && !reason->empty())
        m_finish = std::string(*reason);
    return {};
}

Result<Answer> GeminiReader::finish() {
    if (m_finish.empty())
        return Error(Exit::unavailable,
                     "the answer was cut off: the stream ended before it finished");
    Answer answer;
    Json kept = Json::array();
    bool signed_any = false;
    auto join = [](std::string& to, std::string_view text) {
        if (!to.empty() && !text.empty())
            to += "\n";
        to += text;
    };
    size_t n = 0;
    for (const Json& p : m_parts) {
        JsonView part = p.view();
        bool thought = part.boolean_or("thought", false).value_or(false);
        bool signature = part.get("thoughtSignature").is_string();
        signed_any = signed_any || signature;
        if (auto text = part.string("text"); text && thought)
            join(answer.reasoning, *text);
        else if (text)
            join(answer.text, *text);
        if (JsonView fc = part.get("functionCall"); fc.is_object()) {
            auto name = fc.string("name");
            if (!name)
                return malformed("a functionCall has no name");
            ToolCall call;
            call.id = std::string(fc.string_or("id", "").value_or(""));
            if (call.id.empty())
                call.id = format("call_%zu", ++n);
            call.tool = std::string(*name);
            call.input = fc.get("args").exists() ? Json::copy_of(fc.get("args")) : Json::object();
            answer.calls.push_back(std::move(call));
        }
        // Thought summaries go back only when they carry a signature.
        if (!thought || signature)
            kept.push(Json::copy_of(part));
    }
    answer.usage.input_tokens = m_prompt;
    answer.usage.output_tokens = m_output;
    answer.usage.cache_read_tokens = m_cached;
    answer.model = m_model;
    answer.id = m_id;
    answer.finish_reason = m_finish;
    if (signed_any)
        answer.kept = kept_member(k_member, m_origin, "parts", std::move(kept));
    return answer;
}

Result<Answer> GeminiReader::whole(std::string_view body) {
    auto doc = Json::parse(body);
    if (!doc)
        return malformed(doc.error().message());
    // streamGenerateContent without alt=sse answers with an array of responses.
    if (doc->view().is_array()) {
        for (JsonView response : doc->view())
            SION_CHECK(take(response));
    } else {
        SION_CHECK(take(doc->view()));
    }
    return finish();
}

namespace {

class GeminiModel final : public KeyedModel {
public:
    GeminiModel(std::string name, std::string model, std::string base, KeyRing keys)
        : KeyedModel(std::move(name), k_member, {"gemini", std::move(base), std::move(model)},
                     std::move(keys), Reach::remote) {}

private:
    Result<Answer> call(const Request& request, const std::string& key, bool with_kept) override {
        SION_CHECK(gemini_takes_pictures(request.conversation));
        WireRequest w;
        w.url = origin().base_url + "/v1beta/models/" + origin().model
                + ":streamGenerateContent?alt=sse";
        w.headers.add("x-goog-api-key", key);
        w.headers.add("Content-Type", "application/json");
        w.headers.add("Accept", "text/event-stream");
        w.body = gemini_body(request, effort(), thinking_room(), origin(), with_kept).dump();
        GeminiReader reader(origin());
        return send_streamed(wire(), w, reader, request);
    }
};

} // namespace

Result<std::unique_ptr<Model>> open_gemini(const ModelSpec& spec) {
    SION_TRY(std::string base,
             base_url_from("GEMINI_BASE_URL", "https://generativelanguage.googleapis.com",
                           Reach::remote));
    const char* variable = "GEMINI_API_KEY";
    SION_TRY(auto key, secrets::lookup(variable));
    if (!key) {
        variable = "GOOGLE_API_KEY";
        SION_TRY(key, secrets::lookup(variable));
    }
    KeyRing keys(variable, key.value_or(""));
    if (keys.empty())
        return make_error(Exit::config,
                          "%s needs a key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or keep it "
                          "with 'sion agent credential add GEMINI_API_KEY'",
                          spec.name.c_str());
    return std::unique_ptr<Model>(
        new GeminiModel(spec.name, spec.model, std::move(base), std::move(keys)));
}

} // namespace sion::models
