// SPDX-License-Identifier: MIT
// The Responses API: the conversation as input items, the stream's items gathered by output index.
#include "lib/models/openai_responses.hpp"

#include "lib/picture.hpp"
#include "lib/text.hpp"

#include <vector>

namespace sion::models {

namespace {

constexpr std::string_view k_member = "responses";

Error malformed(const std::string& why) {
    return Error(Exit::unavailable, "the answer is malformed: " + why);
}

Json text_content(std::string_view type, std::string_view text) {
    Json part = Json::object();
    part.set("type", type);
    part.set("text", text);
    Json content = Json::array();
    content.push(std::move(part));
    return content;
}

Json message_item(std::string_view role, std::string_view type, std::string_view text) {
    Json item = Json::object();
    item.set("type", "message");
    item.set("role", role);
    item.set("content", text_content(type, text));
    return item;
}

// A message's pictures as input_image parts, each a data URL with the detail left to the model
// ("auto", the API's default, said outright).
void add_image_parts(Json& content, JsonView message) {
    for (JsonView image : message.get("images")) {
        std::string url = picture_data_url(image);
        Json part = Json::object();
        part.set("type", "input_image");
        part.set("image_url", std::string_view(url));
        part.set("detail", "auto");
        content.push(std::move(part));
    }
}

// The person's words and pictures ({"images": [{"media_type", "data"}]}): an input_text part
// when there are words, then the pictures.
Json user_item(JsonView message) {
    std::string_view text = message.string_or("text", "").value_or("");
    bool words = !text.empty() || message.get("images").size() == 0;
    Json content = words ? text_content("input_text", text) : Json::array();
    add_image_parts(content, message);
    Json item = Json::object();
    item.set("type", "message");
    item.set("role", "user");
    item.set("content", std::move(content));
    return item;
}

// A kept reasoning item as it goes back: without its id (nothing is stored to look it up by).
Json reasoning_item(JsonView kept) {
    Json item = Json::copy_of(kept);
    (void)item.take("id");
    (void)item.take("status");
    return item;
}

// An assistant's message as items: its text, its calls, and the reasoning kept before each.
void push_assistant(Json& input, JsonView message, JsonView kept) {
    std::vector<std::pair<int64_t, JsonView>> reasoning;
    for (JsonView k : kept.get("items"))
        reasoning.emplace_back(k.integer_or("at", 0).value_or(0), k.get("item"));
    size_t next = 0;
    int64_t at = 0;
    auto reasoning_before = [&](int64_t position) {
        while (next < reasoning.size() && reasoning[next].first <= position)
            input.push(reasoning_item(reasoning[next++].second));
    };
    if (auto text = message.string("text"); text && !text->empty()) {
        reasoning_before(at++);
        input.push(message_item("assistant", "output_text", *text));
    }
    for (JsonView call : message.get("calls")) {
        reasoning_before(at++);
        Json item = Json::object();
        item.set("type", "function_call");
        item.set("call_id", call.string_or("id", "").value_or(""));
        item.set("name", call.string_or("tool", "").value_or(""));
        item.set("arguments", call.get("input").is_object() ? call.get("input").dump() : "{}");
        input.push(std::move(item));
    }
    reasoning_before(INT64_MAX);
}

// The tools as flat function tools.
Json function_tools(std::span<const ToolSpec> specs) {
    Json tools = Json::array();
    for (const ToolSpec& t : specs) {
        Json tool = Json::object();
        tool.set("type", "function");
        tool.set("name", std::string_view(t.name));
        tool.set("description", std::string_view(t.description));
        tool.set("parameters", Json::copy_of(t.input_schema));
        tool.set("strict", false);
        tools.push(std::move(tool));
    }
    return tools;
}

} // namespace

Json responses_body(const Request& request, const ResponsesOptions& o) {
    Json input = Json::array();
    if (!request.tools.empty() && o.tools_in_input) {
        // First, so that the start of the input stays the same from call to call.
        Json item = Json::object();
        item.set("type", "additional_tools");
        item.set("role", "developer");
        item.set("tools", function_tools(request.tools));
        input.push(std::move(item));
    }
    for (JsonView m : request.conversation) {
        std::string_view role = m.string_or("role", "").value_or("");
        if (role == "assistant") {
            JsonView kept =
                o.with_kept && o.origin != nullptr ? kept_for(m, k_member, *o.origin) : JsonView();
            push_assistant(input, m, kept);
        } else if (role == "tool") {
            Json item = Json::object();
            item.set("type", "function_call_output");
            item.set("call_id", m.string_or("call", "").value_or(""));
            std::string_view text = m.string_or("text", "").value_or("");
            if (m.get("images").size() > 0) {
                // What the call returned, words and pictures.
                Json output = text_content("input_text", text);
                add_image_parts(output, m);
                item.set("output", std::move(output));
            } else {
                item.set("output", text);
            }
            input.push(std::move(item));
        } else {
            input.push(user_item(m));
        }
    }
    Json body = Json::object();
    body.set("model", o.model);
    if (!request.system.empty())
        body.set("instructions", request.system);
    body.set("input", std::move(input));
    if (!request.tools.empty() && !o.tools_in_input) {
        body.set("tools", function_tools(request.tools));
        body.set("tool_choice", "auto");
    }
    if (o.ask_reasoning) {
        Json reasoning = Json::object();
        if (o.effort.level) {
            EffortLevel level =
                *o.effort.level == EffortLevel::max ? EffortLevel::xhigh : *o.effort.level;
            reasoning.set("effort", effort_name(level));
        }
        reasoning.set("summary", "auto");
        body.set("reasoning", std::move(reasoning));
        Json include = Json::array();
        include.push(Json::string("reasoning.encrypted_content"));
        body.set("include", std::move(include));
    }
    if (o.max_output_tokens > 0)
        body.set("max_output_tokens", o.max_output_tokens);
    body.set("store", false);
    body.set("stream", true);
    return body;
}

// --- reading an answer ----------------------------------------------------------------------

Status ResponsesReader::on_event(const SseEvent& event) {
    auto doc = Json::parse(event.data);
    if (!doc)
        return malformed("an event: " + doc.error().message());
    JsonView e = doc->view();
    std::string type(e.string_or("type", event.type).value_or(""));
    int64_t index = e.integer_or("output_index", 0).value_or(0);
    if (type == "response.output_item.added") {
        JsonView item = e.get("item");
        Item& it = m_items[index];
        it.type = std::string(item.string_or("type", "").value_or(""));
        it.call_id = std::string(item.string_or("call_id", "").value_or(""));
        it.name = std::string(item.string_or("name", "").value_or(""));
    } else if (type == "response.output_text.delta") {
        std::string_view text = e.string_or("delta", "").value_or("");
        m_items[index].text += text;
        if (on_text && !text.empty())
            on_text(text);
    } else if (type == "response.function_call_arguments.delta") {
        m_items[index].arguments += e.string_or("delta", "").value_or("");
    } else if (type == "response.reasoning_summary_text.delta"
               || type == "response.reasoning_text.delta") {
        m_reasoning += e.string_or("delta", "").value_or("");
    } else if (type == "response.reasoning_summary_part.added") {
        if (!m_reasoning.empty())
            m_reasoning += "\n";
    } else if (type == "response.output_item.done") {
        read_done(index, e.get("item"));
    } else if (type == "response.completed" || type == "response.incomplete") {
        read_response(e.get("response"));
        m_ended = true;
    } else if (type == "response.failed" || type == "error") {
        JsonView error = type == "error" ? e : e.get("response").get("error");
        std::string code(error.string_or("code", "").value_or(""));
        std::string message(error.string_or("message", "no message").value_or("no message"));
        return Error(Exit::unavailable,
                     "the response failed: " + (code.empty() ? message : code + ": " + message));
    }
    return {};
}

void ResponsesReader::read_done(int64_t index, JsonView item) {
    Item& it = m_items[index];
    it.type = std::string(item.string_or("type", it.type).value_or(""));
    if (auto id = item.string("call_id"))
        it.call_id = std::string(*id);
    if (auto name = item.string("name"))
        it.name = std::string(*name);
    if (auto args = item.string("arguments"))
        it.arguments = std::string(*args);
    if (it.type == "message") {
        std::string text;
        for (JsonView part : item.get("content"))
            if (part.string_or("type", "").value_or("") == "output_text")
                text += part.string_or("text", "").value_or("");
        if (!text.empty())
            it.text = std::move(text);
    }
    it.done = Json::copy_of(item);
}

void ResponsesReader::read_response(JsonView response) {
    m_status = std::string(response.string_or("status", "").value_or(""));
    m_model = std::string(response.string_or("model", "").value_or(""));
    m_id = std::string(response.string_or("id", "").value_or(""));
    // An incomplete response says why in its own words ("max_output_tokens", "content_filter").
    m_finish_reason = m_status;
    if (auto reason = response.get("incomplete_details").string("reason");
        m_status == "incomplete" && reason && !reason->empty())
        m_finish_reason = std::string(*reason);
    JsonView usage = response.get("usage");
    if (!usage.is_object())
        return;
    m_usage.input_tokens = usage.integer_or("input_tokens", 0).value_or(0);
    m_usage.output_tokens = usage.integer_or("output_tokens", 0).value_or(0);
    m_usage.cache_read_tokens =
        usage.get("input_tokens_details").integer_or("cached_tokens", 0).value_or(0);
}

Result<Answer> ResponsesReader::finish() {
    if (!m_ended)
        return Error(Exit::unavailable, "the answer was cut off before its end");
    return answer();
}

Result<Answer> ResponsesReader::whole(std::string_view body) {
    auto doc = Json::parse(body);
    if (!doc)
        return malformed(doc.error().message());
    JsonView response = doc->view();
    if (!response.get("output").is_array())
        return malformed("it has no output");
    if (response.string_or("status", "").value_or("") == "failed")
        return Error(Exit::unavailable, "the response failed: "
                                            + std::string(response.get("error")
                                                              .string_or("message", "no message")
                                                              .value_or("no message")));
    int64_t index = 0;
    for (JsonView item : response.get("output"))
        read_done(index++, item);
    read_response(response);
    return answer();
}

Result<Answer> ResponsesReader::answer() const {
    Answer a;
    Json kept = Json::array();
    int64_t at = 0;
    a.reasoning = m_reasoning;
    for (const auto& [index, it] : m_items) {
        if (it.type == "message") {
            if (a.text.empty() && !it.text.empty())
                ++at;
            a.text += it.text;
        } else if (it.type == "function_call") {
            Json input = Json::object();
            if (!it.arguments.empty()) {
                auto parsed = Json::parse(it.arguments);
                // A call cut off by the answer's length is no call; any other broken input is.
                if (!parsed && m_status == "incomplete")
                    continue;
                if (!parsed || !parsed->view().is_object())
                    return malformed("the arguments of call '" + it.name
                                     + "' are not a JSON object");
                input = std::move(*parsed);
            }
            if (it.name.empty())
                return malformed("a call names no function");
            a.calls.push_back(ToolCall{it.call_id, it.name, std::move(input)});
            ++at;
        } else if (it.type == "reasoning") {
            // Reasoning cut off before its encrypted content came cannot be given back.
            if (!it.done.exists() || !it.done.get("encrypted_content").is_string())
                continue;
            if (a.reasoning.empty())
                for (JsonView s : it.done.get("summary"))
                    a.reasoning += std::string(a.reasoning.empty() ? "" : "\n")
                                   + std::string(s.string_or("text", "").value_or(""));
            Json one = Json::object();
            one.set("at", at);
            one.set("item", Json::copy_of(it.done));
            kept.push(std::move(one));
        }
    }
    if (kept.view().size() > 0)
        a.kept = kept_member(k_member, m_origin, "items", std::move(kept));
    a.usage = m_usage;
    a.model = m_model;
    a.id = m_id;
    a.finish_reason = m_finish_reason;
    return a;
}

// --- the model ------------------------------------------------------------------------------

namespace {

bool has_reasoning_item(JsonView body) {
    for (JsonView item : body.get("input"))
        if (item.string_or("type", "").value_or("") == "reasoning")
            return true;
    return false;
}

// Whether a 400 says the model takes no reasoning asked of it.
bool refuses_reasoning(const Error& error) {
    std::string m = ascii_lower(error.message());
    return m.find("reasoning") != std::string::npos || m.find("encrypted") != std::string::npos;
}

} // namespace

ResponsesModel::ResponsesModel(std::string name, std::string kind, std::string model,
                               std::string base, KeyRing keys, bool room)
    : KeyedModel(std::move(name), k_member, {std::move(kind), std::move(base), std::move(model)},
                 std::move(keys), Reach::remote),
      m_room(room) {}

Result<Answer> ResponsesModel::call(const Request& request, const std::string& key,
                                    bool with_kept) {
    HttpHeaders auth;
    if (!key.empty())
        auth.add("Authorization", "Bearer " + key);
    return call_with(request, auth, with_kept);
}

Result<Answer> ResponsesModel::call_with(const Request& request, const HttpHeaders& auth,
                                         bool with_kept) {
    bool carried = false;
    auto answer = send_once(request, auth, with_kept, &carried);
    if (!answer && m_ask_reasoning && !carried && wire().last_status() == 400
        && refuses_reasoning(answer.error())) {
        m_ask_reasoning = false;
        answer = send_once(request, auth, with_kept, &carried);
    }
    return answer;
}

Result<Answer> ResponsesModel::send_once(const Request& request, const HttpHeaders& auth,
                                         bool with_kept, bool* carried_kept) {
    ResponsesOptions o;
    o.model = origin().model;
    o.effort = effort();
    o.origin = &origin();
    o.with_kept = with_kept;
    o.ask_reasoning = m_ask_reasoning;
    o.max_output_tokens = m_room ? answer_room(request.max_output_tokens, thinking_room()) : 0;
    o.tools_in_input = m_tools_in_input;
    Json body = responses_body(request, o);
    *carried_kept = has_reasoning_item(body);
    WireRequest w;
    w.url = origin().base_url + "/responses";
    w.headers = auth;
    w.headers.add("Content-Type", "application/json");
    w.headers.add("Accept", "text/event-stream");
    w.body = body.dump();
    ResponsesReader reader(origin());
    return send_streamed(wire(), w, reader, request);
}

Result<std::unique_ptr<Model>> open_responses(const ModelSpec& spec) {
    SION_TRY(std::string base,
             base_url_from("OPENAI_BASE_URL", "https://api.openai.com/v1", Reach::remote));
    SION_TRY(std::string key, credential("OPENAI_API_KEY"));
    KeyRing keys("OPENAI_API_KEY", key);
    if (keys.empty())
        return make_error(Exit::config,
                          "%s needs a key: set OPENAI_API_KEY, or keep it with 'sion agent "
                          "credential add OPENAI_API_KEY'",
                          spec.name.c_str());
    return std::unique_ptr<Model>(new ResponsesModel(spec.name, "responses", spec.model,
                                                     std::move(base), std::move(keys), true));
}

} // namespace sion::models
