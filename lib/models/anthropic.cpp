// SPDX-License-Identifier: MIT
// Anthropic's Messages API: the conversation as its turns and blocks, the stream read back.
#include "lib/models/anthropic.hpp"

#include "lib/models/wire.hpp"
#include "lib/picture.hpp"
#include "lib/secrets.hpp"

#include <algorithm>
#include <array>

namespace sion::models {

namespace {

constexpr std::string_view k_member = "anthropic";
// The version of the Messages API this file speaks.
constexpr const char* k_api_version = "2023-06-01";
constexpr int64_t k_min_budget = 1'024;

Json cache_marker() {
    Json c = Json::object();
    c.set("type", "ephemeral");
    return c;
}

Json text_block(std::string_view text) {
    Json b = Json::object();
    b.set("type", "text");
    b.set("text", text);
    return b;
}

// The only kinds of picture the Messages API takes.
constexpr std::array<std::string_view, 4> k_picture_types{"image/jpeg", "image/png", "image/gif",
                                                          "image/webp"};

} // namespace

Status messages_api_takes_pictures(std::span<const Json> conversation) {
    return pictures_taken(conversation, k_picture_types, "Messages API");
}

namespace {

Json image_block(JsonView image) {
    Json source = Json::object();
    source.set("type", "base64");
    source.set("media_type", picture_type(image));
    source.set("data", image.string_or("data", "").value_or(""));
    Json b = Json::object();
    b.set("type", "image");
    b.set("source", std::move(source));
    return b;
}

// What the person said: the pictures first ({"images": [{"media_type", "data"}]}, base64), as
// the API's guide advises, then the words.
Json user_blocks(JsonView message) {
    Json blocks = Json::array();
    for (JsonView image : message.get("images"))
        blocks.push(image_block(image));
    if (auto text = message.string("text"); text && !text->empty())
        blocks.push(text_block(*text));
    return blocks;
}

// An assistant's message as blocks: its text, its calls, and the thinking kept before each.
Json assistant_blocks(JsonView message, JsonView kept) {
    Json blocks = Json::array();
    std::vector<std::pair<int64_t, JsonView>> thinking;
    for (JsonView k : kept.get("blocks"))
        thinking.emplace_back(k.integer_or("at", 0).value_or(0), k.get("block"));
    size_t next = 0;
    int64_t at = 0;
    auto thinking_before = [&](int64_t position) {
        while (next < thinking.size() && thinking[next].first <= position)
            blocks.push(Json::copy_of(thinking[next++].second));
    };
    if (auto text = message.string("text"); text && !text->empty()) {
        thinking_before(at++);
        blocks.push(text_block(*text));
    }
    for (JsonView call : message.get("calls")) {
        thinking_before(at++);
        Json b = Json::object();
        b.set("type", "tool_use");
        b.set("id", plain_tool_id(call.string_or("id", "").value_or("")));
        b.set("name", call.string_or("tool", "").value_or(""));
        b.set("input",
              call.get("input").is_object() ? Json::copy_of(call.get("input")) : Json::object());
        blocks.push(std::move(b));
    }
    thinking_before(INT64_MAX);
    return blocks;
}

Json tool_result_block(JsonView message) {
    Json b = Json::object();
    b.set("type", "tool_result");
    b.set("tool_use_id", plain_tool_id(message.string_or("call", "").value_or("")));
    auto text = message.string("text");
    if (message.get("images").size() > 0) {
        // The words, then the pictures the call returned.
        Json content = Json::array();
        if (text && !text->empty())
            content.push(text_block(*text));
        for (JsonView image : message.get("images"))
            content.push(image_block(image));
        b.set("content", std::move(content));
    } else if (text && !text->empty()) {
        b.set("content", *text);
    }
    if (message.boolean_or("error", false).value_or(false))
        b.set("is_error", true);
    return b;
}

// The turns of the conversation, roles alternating: blocks of one role in a row go in one turn
// (a call's results, then what the person said).
Json messages_of(std::span<const Json> conversation, const Origin& origin, bool with_kept) {
    Json turns = Json::array();
    std::string last_role;
    Json current;
    auto flush = [&] {
        if (current.exists() && current.get("content").size() > 0)
            turns.push(std::move(current));
        current = Json();
    };
    for (const Json& m : conversation) {
        std::string_view role = m.view().string_or("role", "").value_or("");
        Json blocks = Json::array();
        std::string as = "user";
        if (role == "assistant") {
            as = "assistant";
            blocks = assistant_blocks(m, with_kept ? kept_for(m, k_member, origin) : JsonView());
        } else if (role == "tool") {
            blocks.push(tool_result_block(m));
        } else {
            blocks = user_blocks(m);
        }
        if (blocks.view().size() == 0)
            continue;
        if (as != last_role) {
            flush();
            current = Json::object();
            current.set("role", std::string_view(as));
            current.set("content", Json::array());
            last_role = as;
        }
        Json content = current.take("content");
        for (JsonView b : blocks.view())
            content.push(Json::copy_of(b));
        current.set("content", std::move(content));
    }
    flush();
    return turns;
}

// Marks the last block of the last turn for the cache, unless it is thinking, which takes none.
void mark_last_block(Json& turns) {
    size_t n = turns.view().size();
    if (n == 0)
        return;
    Json last = Json::copy_of(turns.view().at(n - 1));
    Json content = last.take("content");
    size_t blocks = content.view().size();
    Json marked = Json::array();
    size_t i = 0;
    for (JsonView b : content.view()) {
        Json copy = Json::copy_of(b);
        std::string_view type = b.string_or("type", "").value_or("");
        if (++i == blocks && type != "thinking" && type != "redacted_thinking")
            copy.set("cache_control", cache_marker());
        marked.push(std::move(copy));
    }
    last.set("content", std::move(marked));
    Json out = Json::array();
    i = 0;
    for (JsonView t : turns.view())
        out.push(++i == n ? std::move(last) : Json::copy_of(t));
    turns = std::move(out);
}

void set_thinking(Json& body, const Effort& effort) {
    Json thinking = Json::object();
    if ((effort.level && *effort.level == EffortLevel::none)
        || (effort.budget && *effort.budget == 0)) {
        thinking.set("type", "disabled");
    } else if (effort.budget) {
        thinking.set("type", "enabled");
        thinking.set("budget_tokens", std::max(*effort.budget, k_min_budget));
    } else if (effort.level) {
        thinking.set("type", "adaptive");
        EffortLevel level =
            *effort.level == EffortLevel::minimal ? EffortLevel::low : *effort.level;
        Json config = Json::object();
        config.set("effort", effort_name(level));
        body.set("output_config", std::move(config));
    } else {
        return;
    }
    body.set("thinking", std::move(thinking));
}

Exit exit_for_error_type(std::string_view type) {
    if (type == "invalid_request_error")
        return Exit::data;
    if (type == "authentication_error" || type == "permission_error")
        return Exit::no_perm;
    return Exit::unavailable;
}

Error malformed(const std::string& why) {
    return Error(Exit::unavailable, "the answer is malformed: " + why);
}

} // namespace

Json anthropic_body(const Request& request, const Effort& effort, int64_t thinking_room,
                    const Origin& origin, bool with_kept) {
    Json body = Json::object();
    body.set("max_tokens", answer_room(request.max_output_tokens, thinking_room));
    if (!request.system.empty()) {
        Json system = Json::array();
        Json block = text_block(request.system);
        block.set("cache_control", cache_marker());
        system.push(std::move(block));
        body.set("system", std::move(system));
    }
    if (!request.tools.empty()) {
        Json tools = Json::array();
        size_t i = 0;
        for (const ToolSpec& t : request.tools) {
            Json tool = Json::object();
            tool.set("name", std::string_view(t.name));
            tool.set("description", std::string_view(t.description));
            tool.set("input_schema", Json::copy_of(t.input_schema));
            if (++i == request.tools.size())
                tool.set("cache_control", cache_marker());
            tools.push(std::move(tool));
        }
        body.set("tools", std::move(tools));
    }
    Json turns = messages_of(request.conversation, origin, with_kept);
    mark_last_block(turns);
    body.set("messages", std::move(turns));
    set_thinking(body, effort);
    return body;
}

// --- reading an answer ----------------------------------------------------------------------

void AnthropicReader::read_usage(JsonView usage) {
    auto take = [&](std::string_view key, int64_t& into) {
        if (auto n = usage.integer(key); n && *n >= 0)
            into = *n;
    };
    take("input_tokens", m_input);
    take("output_tokens", m_output);
    take("cache_read_input_tokens", m_cache_read);
    take("cache_creation_input_tokens", m_cache_write);
}

void AnthropicReader::read_message(JsonView message) {
    m_model = std::string(message.string_or("model", "").value_or(""));
    m_id = std::string(message.string_or("id", "").value_or(""));
    read_usage(message.get("usage"));
}

Status AnthropicReader::start_block(JsonView event) {
    SION_TRY(int64_t index, event.integer("index"));
    SION_TRY(JsonView block, event.object("content_block"));
    Block b;
    b.type = std::string(block.string_or("type", "").value_or(""));
    b.text =
        std::string(block.string_or(b.type == "thinking" ? "thinking" : "text", "").value_or(""));
    b.signature = std::string(block.string_or("signature", "").value_or(""));
    b.data = std::string(block.string_or("data", "").value_or(""));
    b.id = std::string(block.string_or("id", "").value_or(""));
    b.name = std::string(block.string_or("name", "").value_or(""));
    if (JsonView input = block.get("input"); input.is_object() && input.size() > 0)
        b.input_json = input.dump();
    m_blocks[index] = std::move(b);
    return {};
}

Status AnthropicReader::delta(JsonView event) {
    SION_TRY(int64_t index, event.integer("index"));
    SION_TRY(JsonView d, event.object("delta"));
    auto found = m_blocks.find(index);
    if (found == m_blocks.end())
        return make_error(Exit::data, "a delta for block %lld, which did not start",
                          static_cast<long long>(index));
    Block& b = found->second;
    std::string_view type = d.string_or("type", "").value_or("");
    if (type == "text_delta") {
        std::string_view text = d.string_or("text", "").value_or("");
        b.text += text;
        if (on_text && !text.empty())
            on_text(text);
    } else if (type == "thinking_delta")
        b.text += d.string_or("thinking", "").value_or("");
    else if (type == "signature_delta")
        b.signature += d.string_or("signature", "").value_or("");
    else if (type == "input_json_delta")
        b.input_json += d.string_or("partial_json", "").value_or("");
    return {};
}

Status AnthropicReader::on_event(const SseEvent& event) {
    auto doc = Json::parse(event.data);
    if (!doc)
        return malformed("event '" + event.type + "': " + doc.error().message());
    JsonView data = doc->view();
    std::string_view type = data.string_or("type", event.type).value_or(event.type);
    Status done;
    if (type == "message_start") {
        m_started = true;
        read_message(data.get("message"));
    } else if (type == "content_block_start") {
        done = start_block(data);
    } else if (type == "content_block_delta") {
        done = delta(data);
    } else if (type == "message_delta") {
        if (auto stop = data.get("delta").string("stop_reason"))
            m_stop_reason = std::string(*stop);
        read_usage(data.get("usage"));
    } else if (type == "message_stop") {
        m_stopped = true;
    } else if (type == "error") {
        JsonView e = data.get("error");
        std::string_view kind = e.string_or("type", "error").value_or("error");
        std::string_view message = e.string_or("message", "").value_or("");
        return make_error(exit_for_error_type(kind), "%.*s: %.*s", static_cast<int>(kind.size()),
                          kind.data(), static_cast<int>(message.size()), message.data());
    }
    if (!done)
        return malformed("event '" + std::string(type) + "': " + done.error().message());
    return {};
}

Result<Answer> AnthropicReader::finish() {
    if (!m_started || !m_stopped)
        return Error(Exit::unavailable, "the answer was cut off before its end");
    return answer();
}

Result<Answer> AnthropicReader::whole(std::string_view body) {
    auto doc = Json::parse(body);
    if (!doc)
        return malformed(doc.error().message());
    JsonView message = doc->view();
    auto content = message.array("content");
    if (!content)
        return malformed(content.error().message());
    m_blocks.clear();
    int64_t index = 0;
    for (JsonView block : *content) {
        Json event = Json::object();
        event.set("index", index);
        event.set("content_block", Json::copy_of(block));
        if (Status s = start_block(event); !s)
            return malformed(s.error().message());
        ++index;
    }
    m_stop_reason = std::string(message.string_or("stop_reason", "").value_or(""));
    read_message(message);
    return answer();
}

Result<Answer> AnthropicReader::answer() const {
    Answer a;
    Json kept = Json::array();
    int64_t at = 0;
    for (const auto& [index, b] : m_blocks) {
        if (b.type == "text") {
            if (a.text.empty() && !b.text.empty())
                ++at;
            a.text += b.text;
        } else if (b.type == "tool_use") {
            Json input = Json::object();
            if (!b.input_json.empty()) {
                auto parsed = Json::parse(b.input_json);
                // A call cut off by the answer's length is no call; any other broken input is.
                if (!parsed && m_stop_reason == "max_tokens")
                    continue;
                if (!parsed || !parsed->view().is_object())
                    return malformed("the input of call '" + b.name + "' is not a JSON object");
                input = std::move(*parsed);
            }
            a.calls.push_back(ToolCall{b.id, b.name, std::move(input)});
            ++at;
        } else if (b.type == "thinking" || b.type == "redacted_thinking") {
            if (b.type == "thinking" && !b.text.empty())
                a.reasoning += (a.reasoning.empty() ? "" : "\n") + b.text;
            Json block = Json::object();
            block.set("type", std::string_view(b.type));
            if (b.type == "thinking") {
                // Thinking cut off before it was signed cannot be given back.
                if (b.signature.empty())
                    continue;
                block.set("thinking", std::string_view(b.text));
                block.set("signature", std::string_view(b.signature));
            } else {
                block.set("data", std::string_view(b.data));
            }
            Json one = Json::object();
            one.set("at", at);
            one.set("block", std::move(block));
            kept.push(std::move(one));
        }
    }
    if (kept.view().size() > 0)
        a.kept = kept_member(k_member, m_origin, "blocks", std::move(kept));
    a.usage.input_tokens = m_input + m_cache_read + m_cache_write;
    a.usage.output_tokens = m_output;
    a.usage.cache_read_tokens = m_cache_read;
    a.usage.cache_write_tokens = m_cache_write;
    a.model = m_model;
    a.id = m_id;
    a.finish_reason = m_stop_reason;
    return a;
}

// --- the model ------------------------------------------------------------------------------

namespace {

class AnthropicModel final : public KeyedModel {
public:
    AnthropicModel(std::string name, std::string model, std::string base, KeyRing keys)
        : KeyedModel(std::move(name), k_member, {"anthropic", std::move(base), std::move(model)},
                     std::move(keys), Reach::remote) {}

private:
    Result<Answer> call(const Request& request, const std::string& key, bool with_kept) override {
        SION_CHECK(messages_api_takes_pictures(request.conversation));
        Json body = anthropic_body(request, effort(), thinking_room(), origin(), with_kept);
        body.set("model", std::string_view(origin().model));
        body.set("stream", true);
        WireRequest w;
        w.url = origin().base_url + "/v1/messages";
        w.headers.add("x-api-key", key);
        w.headers.add("anthropic-version", k_api_version);
        w.headers.add("Content-Type", "application/json");
        w.headers.add("Accept", "text/event-stream");
        w.body = body.dump();
        AnthropicReader reader(origin());
        return send_streamed(wire(), w, reader, request);
    }
};

} // namespace

Result<std::unique_ptr<Model>> open_anthropic(const ModelSpec& spec) {
    SION_TRY(std::string base,
             base_url_from("ANTHROPIC_BASE_URL", "https://api.anthropic.com", Reach::remote));
    SION_TRY(auto key, secrets::lookup("ANTHROPIC_API_KEY"));
    KeyRing keys("ANTHROPIC_API_KEY", key.value_or(""));
    if (keys.empty())
        return make_error(Exit::config,
                          "%s needs a key: set ANTHROPIC_API_KEY, or keep it with 'sion agent "
                          "credential add ANTHROPIC_API_KEY'",
                          spec.name.c_str());
    return std::unique_ptr<Model>(
        new AnthropicModel(spec.name, spec.model, std::move(base), std::move(keys)));
}

} // namespace sion::models
