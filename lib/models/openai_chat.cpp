// SPDX-License-Identifier: MIT
// Chat completions: the conversation as chat messages, the stream's chunks gathered by index.
#include "lib/models/openai_chat.hpp"

#include "lib/hash.hpp"
#include "lib/models/wire.hpp"
#include "lib/picture.hpp"
#include "lib/secrets.hpp"
#include "lib/text.hpp"

#include <array>
#include <map>

namespace sion::models {

namespace {

constexpr std::string_view k_member = "chat";

struct ChatProvider {
    std::string_view name;
    const char* key_variable;
    const char* base_variable;
    const char* default_base; // "" for none (azure's comes from its endpoint)
    bool key_required;
    Reach reach;
    bool api_key_header;    // azure: "api-key: KEY" rather than a bearer token
    bool completion_tokens; // max_completion_tokens rather than max_tokens
};

constexpr std::array k_chat_providers{
    ChatProvider{"openai", "OPENAI_API_KEY", "OPENAI_BASE_URL", "https://api.openai.com/v1", false,
                 Reach::remote, false, true},
    ChatProvider{"local", "SION_LOCAL_MODEL_KEY", "SION_LOCAL_MODEL_URL",
                 "http://127.0.0.1:11434/v1", false, Reach::network, false, false},
    ChatProvider{"azure", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_BASE_URL", "", true, Reach::remote,
                 true, true},
    ChatProvider{"openrouter", "OPENROUTER_API_KEY", "OPENROUTER_BASE_URL",
                 "https://openrouter.ai/api/v1", true, Reach::remote, false, false},
    ChatProvider{"deepseek", "DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "https://api.deepseek.com",
                 true, Reach::remote, false, false},
    ChatProvider{"moonshot", "MOONSHOT_API_KEY", "MOONSHOT_BASE_URL", "https://api.moonshot.ai/v1",
                 true, Reach::remote, false, false},
    ChatProvider{"xai", "XAI_API_KEY", "XAI_BASE_URL", "https://api.x.ai/v1", true, Reach::remote,
                 false, false},
    ChatProvider{"groq", "GROQ_API_KEY", "GROQ_BASE_URL", "https://api.groq.com/openai/v1", true,
                 Reach::remote, false, false},
    ChatProvider{"together", "TOGETHER_API_KEY", "TOGETHER_BASE_URL", "https://api.together.xyz/v1",
                 true, Reach::remote, false, false},
    ChatProvider{"fireworks", "FIREWORKS_API_KEY", "FIREWORKS_BASE_URL",
                 "https://api.fireworks.ai/inference/v1", true, Reach::remote, false, false},
    ChatProvider{"mistral", "MISTRAL_API_KEY", "MISTRAL_BASE_URL", "https://api.mistral.ai/v1",
                 true, Reach::remote, false, false},
    ChatProvider{"cerebras", "CEREBRAS_API_KEY", "CEREBRAS_BASE_URL", "https://api.cerebras.ai/v1",
                 true, Reach::remote, false, false},
};

// The names a server gives its reasoning text by, in the order they are looked for.
constexpr std::array<std::string_view, 2> k_reasoning_fields{"reasoning_content", "reasoning"};

Error malformed(const std::string& why) {
    return Error(Exit::unavailable, "the answer is malformed: " + why);
}

// Mistral takes only ids of nine letters and digits: each id is made one, the same each time. One
// that is one already (Mistral's own) goes back as it came, so the server knows its calls again.
std::string mistral_id(std::string_view id) {
    static constexpr std::string_view alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    if (id.size() == 9 && id.find_first_not_of(alphabet) == std::string_view::npos)
        return std::string(id);
    std::string digest = sha256(id);
    std::string out;
    for (size_t i = 0; i < 9; ++i)
        out += alphabet[static_cast<unsigned char>(digest[i]) % alphabet.size()];
    return out;
}

struct BodyOptions {
    const ChatProvider* provider;
    std::string model;
    Effort effort;
    int64_t thinking_room;
    const Origin* origin;
    bool with_kept;
};

Json assistant_message(JsonView m, const BodyOptions& o, bool in_task) {
    Json out = Json::object();
    out.set("role", "assistant");
    auto text = m.string("text");
    out.set("content", text && !text->empty() ? Json::string(*text) : Json::null());
    if (m.get("calls").size() > 0) {
        Json calls = Json::array();
        for (JsonView c : m.get("calls")) {
            std::string id(c.string_or("id", "").value_or(""));
            Json function = Json::object();
            function.set("name", c.string_or("tool", "").value_or(""));
            function.set("arguments", c.get("input").is_object() ? c.get("input").dump() : "{}");
            Json call = Json::object();
            call.set("id", o.provider->name == "mistral" ? mistral_id(id) : id);
            call.set("type", "function");
            call.set("function", std::move(function));
            calls.push(std::move(call));
        }
        out.set("tool_calls", std::move(calls));
    }
    if (o.with_kept && in_task)
        if (JsonView kept = kept_for(m, k_member, *o.origin); kept.exists())
            for (std::string_view field : k_reasoning_fields)
                if (auto said = kept.string(field))
                    out.set(field, *said);
    return out;
}

Json text_part(std::string_view text) {
    Json part = Json::object();
    part.set("type", "text");
    part.set("text", text);
    return part;
}

void add_image_parts(Json& parts, JsonView m) {
    for (JsonView image : m.get("images")) {
        std::string url = picture_data_url(image);
        Json where = Json::object();
        where.set("url", std::string_view(url));
        Json part = Json::object();
        part.set("type", "image_url");
        part.set("image_url", std::move(where));
        parts.push(std::move(part));
    }
}

// What the person said: a string, or with pictures ({"images": [{"media_type", "data"}]}) an
// array of a text part and an image_url part a picture, its bytes in a data URL.
Json user_content(JsonView m) {
    std::string_view text = m.string_or("text", "").value_or("");
    if (m.get("images").size() == 0)
        return Json::string(text);
    Json parts = Json::array();
    if (!text.empty())
        parts.push(text_part(text));
    add_image_parts(parts, m);
    return parts;
}

// The pictures a call returned, which a tool message cannot hold: a user message after the
// turn's results, saying whose they are.
Json call_pictures(JsonView m) {
    std::string_view call = m.string_or("call", "").value_or("");
    std::string_view tool = m.string_or("tool", "").value_or("");
    Json parts = Json::array();
    parts.push(text_part(format("The pictures of call %.*s (%.*s):", static_cast<int>(call.size()),
                                call.data(), static_cast<int>(tool.size()), tool.data())));
    add_image_parts(parts, m);
    Json out = Json::object();
    out.set("role", "user");
    out.set("content", std::move(parts));
    return out;
}

Json chat_body(const Request& request, const BodyOptions& o) {
    Json messages = Json::array();
    if (!request.system.empty()) {
        Json system = Json::object();
        system.set("role", "system");
        system.set("content", request.system);
        messages.push(std::move(system));
    }
    // The task a message is for: those after the person's last message are this one's (a note
    // of the session's is not the person's).
    std::span<const Json> conversation = request.conversation;
    size_t task_start = persons_last(conversation);
    // A note that follows a call's result is sent as the end of that result's text: a user
    // message after the calls would end the task for the server, which then takes no reasoning
    // back for the calls it made in it.
    std::string_view note;
    if (conversation.size() >= 2 && is_note(conversation.back().view())
        && conversation[conversation.size() - 2].view().string_or("role", "").value_or("")
               == "tool") {
        note = conversation.back().view().string_or("text", "").value_or("");
        conversation = conversation.first(conversation.size() - 1);
    }
    // Tool messages follow their assistant's message unbroken: the pictures of a turn's calls
    // wait until its last result.
    std::vector<JsonView> pictured;
    auto flush_pictures = [&] {
        for (JsonView m : pictured)
            messages.push(call_pictures(m));
        pictured.clear();
    };
    for (size_t i = 0; i < conversation.size(); ++i) {
        JsonView m = conversation[i];
        std::string_view role = m.string_or("role", "").value_or("");
        if (role != "tool")
            flush_pictures();
        if (role == "assistant") {
            messages.push(assistant_message(m, o, i > task_start));
            continue;
        }
        Json out = Json::object();
        if (role == "tool") {
            std::string id(m.string_or("call", "").value_or(""));
            out.set("role", "tool");
            out.set("tool_call_id", o.provider->name == "mistral" ? mistral_id(id) : id);
            std::string_view text = m.string_or("text", "").value_or("");
            if (i + 1 == conversation.size() && !note.empty())
                out.set("content", std::string(text) + "\n\n" + std::string(note));
            else
                out.set("content", text);
            if (m.get("images").size() > 0)
                pictured.push_back(m);
        } else {
            out.set("role", "user");
            out.set("content", user_content(m));
        }
        messages.push(std::move(out));
    }
    flush_pictures();
    Json body = Json::object();
    body.set("model", std::string_view(o.model));
    // The tools before the conversation: what stays the same from call to call comes first.
    if (!request.tools.empty()) {
        Json tools = Json::array();
        for (const ToolSpec& t : request.tools) {
            Json function = Json::object();
            function.set("name", std::string_view(t.name));
            function.set("description", std::string_view(t.description));
            function.set("parameters", Json::copy_of(t.input_schema));
            Json tool = Json::object();
            tool.set("type", "function");
            tool.set("function", std::move(function));
            tools.push(std::move(tool));
        }
        body.set("tools", std::move(tools));
    }
    body.set("messages", std::move(messages));
    body.set(o.provider->completion_tokens ? "max_completion_tokens" : "max_tokens",
             answer_room(request.max_output_tokens, o.thinking_room));
    if (o.effort.level) {
        EffortLevel level =
            *o.effort.level == EffortLevel::max ? EffortLevel::xhigh : *o.effort.level;
        body.set("reasoning_effort", effort_name(level));
    }
    body.set("stream", true);
    Json stream_options = Json::object();
    stream_options.set("include_usage", true);
    body.set("stream_options", std::move(stream_options));
    return body;
}

// Reads one answer: chunks of a stream, or a whole completion.
class ChatReader {
public:
    explicit ChatReader(const Origin& origin) : m_origin(origin) {}

    // Told the answer's text as it comes (Request::on_text).
    std::function<void(std::string_view)> on_text;

    Status on_event(const SseEvent& event) {
        if (event.data == "[DONE]") {
            m_done = true;
            return {};
        }
        auto doc = Json::parse(event.data);
        if (!doc)
            return malformed("a chunk: " + doc.error().message());
        JsonView chunk = doc->view();
        if (JsonView e = chunk.get("error"); e.exists())
            return Error(Exit::unavailable,
                         "the stream failed: "
                             + std::string(e.string_or("message", "no message").value_or("?")));
        read_usage(chunk.get("usage"));
        read_about(chunk);
        JsonView choice = chunk.get("choices").at(0);
        if (!choice.exists())
            return {};
        if (auto finish = choice.string("finish_reason"))
            m_finish = std::string(*finish);
        return read_part(choice.get("delta"), true);
    }

    Result<Answer> finish() {
        if (!m_done && m_finish.empty())
            return Error(Exit::unavailable, "the answer was cut off before its end");
        return answer();
    }

    Result<Answer> whole(std::string_view body) {
        auto doc = Json::parse(body);
        if (!doc)
            return malformed(doc.error().message());
        JsonView choice = doc->view().get("choices").at(0);
        if (!choice.get("message").is_object())
            return malformed("it has no choices[0].message");
        read_usage(doc->view().get("usage"));
        read_about(doc->view());
        m_finish = std::string(choice.string_or("finish_reason", "").value_or(""));
        SION_CHECK(read_part(choice.get("message"), false));
        return answer();
    }

private:
    struct Call {
        std::string id;
        std::string name;
        std::string arguments;
    };

    Status read_part(JsonView part, bool fragments) {
        if (auto text = part.string("content")) {
            m_text += *text;
            if (on_text && !text->empty())
                on_text(*text);
        }
        for (std::string_view field : k_reasoning_fields)
            if (auto text = part.string(field); text && !text->empty()) {
                m_reasoning += *text;
                m_reasoning_field = field;
            }
        int64_t n = 0;
        for (JsonView c : part.get("tool_calls")) {
            int64_t index = fragments ? c.integer_or("index", n).value_or(n) : n;
            ++n;
            Call& call = m_calls[index];
            if (auto id = c.string("id"); id && !id->empty())
                call.id = std::string(*id);
            JsonView f = c.get("function");
            if (auto name = f.string("name"); name && !name->empty())
                call.name = std::string(*name);
            if (auto args = f.string("arguments"))
                call.arguments += *args;
            else if (f.get("arguments").is_object())
                call.arguments += f.get("arguments").dump();
        }
        return {};
    }

    // The completion's model and id, which each chunk repeats; a chunk without them (a usage
    // chunk of some servers) leaves what came before.
    void read_about(JsonView completion) {
        if (auto model = completion.string("model"); model && !model->empty())
            m_model = std::string(*model);
        if (auto id = completion.string("id"); id && !id->empty())
            m_id = std::string(*id);
    }

    void read_usage(JsonView usage) {
        if (!usage.is_object())
            return;
        m_usage.input_tokens = usage.integer_or("prompt_tokens", 0).value_or(0);
        m_usage.output_tokens = usage.integer_or("completion_tokens", 0).value_or(0);
        int64_t cached =
            usage.get("prompt_tokens_details").integer_or("cached_tokens", 0).value_or(0);
        if (cached == 0)
            cached = usage.integer_or("prompt_cache_hit_tokens", 0).value_or(0);
        m_usage.cache_read_tokens = cached;
    }

    Result<Answer> answer() {
        Answer a;
        a.text = m_text;
        a.reasoning = m_reasoning;
        for (auto& [index, c] : m_calls) {
            Json input = Json::object();
            if (!c.arguments.empty()) {
                auto parsed = Json::parse(c.arguments);
                if (!parsed && m_finish == "length")
                    continue;
                if (!parsed || !parsed->view().is_object())
                    return malformed("the arguments of call '" + c.name
                                     + "' are not a JSON object");
                input = std::move(*parsed);
            }
            if (c.name.empty())
                return malformed("a call names no function");
            a.calls.push_back(ToolCall{c.id, c.name, std::move(input)});
        }
        if (!m_reasoning.empty())
            a.kept = kept_member(k_member, m_origin, m_reasoning_field,
                                 Json::string(m_reasoning));
        a.usage = m_usage;
        a.model = m_model;
        a.id = m_id;
        a.finish_reason = m_finish;
        return a;
    }

    const Origin& m_origin;
    std::string m_text;
    std::string m_reasoning;
    std::string_view m_reasoning_field = k_reasoning_fields[0];
    std::map<int64_t, Call> m_calls;
    std::string m_finish;
    std::string m_model;
    std::string m_id;
    Usage m_usage;
    bool m_done = false;
};

class ChatModel final : public KeyedModel {
public:
    ChatModel(std::string name, const ChatProvider& provider, std::string model, std::string base,
              KeyRing keys)
        : KeyedModel(std::move(name), k_member, {"chat", std::move(base), std::move(model)},
                     std::move(keys), provider.reach),
          m_provider(provider) {}

private:
    Result<Answer> call(const Request& request, const std::string& key, bool with_kept) override {
        BodyOptions o{&m_provider, origin().model, effort(), thinking_room(), &origin(), with_kept};
        Json body = chat_body(request, o);
        WireRequest w;
        w.url = origin().base_url + "/chat/completions";
        if (!key.empty())
            w.headers.add(m_provider.api_key_header ? "api-key" : "Authorization",
                          m_provider.api_key_header ? key : "Bearer " + key);
        w.headers.add("Content-Type", "application/json");
        w.headers.add("Accept", "text/event-stream");
        w.body = body.dump();
        ChatReader reader(origin());
        return send_streamed(wire(), w, reader, request);
    }

    const ChatProvider& m_provider;
};

Result<std::string> azure_base() {
    SION_TRY(auto endpoint, secrets::lookup("AZURE_OPENAI_ENDPOINT"));
    std::string fallback;
    if (endpoint) {
        fallback = *endpoint;
        while (!fallback.empty() && fallback.back() == '/')
            fallback.pop_back();
        fallback += "/openai/v1";
    }
    SION_TRY(auto given, secrets::lookup("AZURE_OPENAI_BASE_URL"));
    if (!given && fallback.empty())
        return make_error(
            Exit::config,
            "azure: needs AZURE_OPENAI_ENDPOINT (https://<resource>.openai.azure.com) "
            "or AZURE_OPENAI_BASE_URL");
    return base_url_from("AZURE_OPENAI_BASE_URL", fallback, Reach::remote);
}

} // namespace

Result<std::unique_ptr<Model>> open_chat(const ModelSpec& spec) {
    const ChatProvider* provider = nullptr;
    for (const ChatProvider& p : k_chat_providers)
        if (p.name == spec.provider)
            provider = &p;
    if (provider == nullptr)
        return make_error(Exit::software, "'%s' is no chat completions provider",
                          spec.provider.c_str());
    std::string base;
    if (provider->name == "azure") {
        SION_TRY(base, azure_base());
    } else {
        SION_TRY(base,
                 base_url_from(provider->base_variable, provider->default_base, provider->reach));
    }
    SION_TRY(auto key, secrets::lookup(provider->key_variable));
    KeyRing keys(provider->key_variable, key.value_or(""));
    if (keys.empty() && provider->key_required)
        return make_error(Exit::config,
                          "%s needs a key: set %s, or keep it with 'sion agent credential add %s'",
                          spec.name.c_str(), provider->key_variable, provider->key_variable);
    return std::unique_ptr<Model>(
        new ChatModel(spec.name, *provider, spec.model, std::move(base), std::move(keys)));
}

} // namespace sion::models
