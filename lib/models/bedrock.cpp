// SPDX-License-Identifier: MIT
// Bedrock's Converse API: the request built from the neutral conversation, signed, and its whole
// answer read back.
#include "lib/models/bedrock.hpp"

#include "lib/fd.hpp"
#include "lib/models/anthropic.hpp"
#include "lib/picture.hpp"
#include "lib/secret_bytes.hpp"
#include "lib/text.hpp"

#include <fcntl.h>

#include <cstdlib>
#include <map>

namespace sion::models {

namespace {

constexpr std::string_view k_member = "bedrock"; // the assistant message's member of kept blocks
constexpr size_t k_max_file = size_t{1} << 20;   // of AWS's own files

// --- AWS's own files ------------------------------------------------------------------------

using Section = std::map<std::string, std::string>;

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// The section `name` of an INI file as AWS's CLI writes it, if the file has it (a file that cannot
// be read has none). Indented lines belong to a nested setting, which nothing here reads.
std::optional<Section> ini_section(const std::string& path, std::string_view name) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return std::nullopt;
    auto text = read_all(fd.get(), k_max_file);
    if (!text)
        return std::nullopt;
    std::optional<Section> found;
    bool inside = false;
    std::string_view rest = *text;
    while (!rest.empty()) {
        size_t nl = rest.find('\n');
        std::string_view line = rest.substr(0, nl);
        rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
        if (!line.empty() && (line[0] == ' ' || line[0] == '\t'))
            continue;
        std::string_view l = trimmed(line);
        if (l.empty() || l[0] == '#' || l[0] == ';')
            continue;
        if (l.front() == '[' && l.back() == ']') {
            inside = trimmed(l.substr(1, l.size() - 2)) == name;
            if (inside && !found)
                found.emplace();
            continue;
        }
        size_t eq = l.find('=');
        if (inside && eq != std::string_view::npos)
            (*found)[std::string(trimmed(l.substr(0, eq)))] =
                std::string(trimmed(l.substr(eq + 1)));
    }
    wipe(*text);
    return found;
}

std::string aws_file(const char* variable, const char* file) {
    return env_or(variable, env_or("HOME", "") + "/.aws/" + file);
}

struct Profile {
    std::string name;
    std::optional<Section> credentials; // its section of the credentials file
    std::optional<Section> config;      // and of the config file
};

Profile read_profile() {
    Profile p;
    p.name = env_or("AWS_PROFILE", env_or("AWS_DEFAULT_PROFILE", "default"));
    p.credentials = ini_section(aws_file("AWS_SHARED_CREDENTIALS_FILE", "credentials"), p.name);
    p.config = ini_section(aws_file("AWS_CONFIG_FILE", "config"),
                           p.name == "default" ? p.name : "profile " + p.name);
    return p;
}

std::string member(const std::optional<Section>& s, const std::string& key) {
    if (!s)
        return {};
    auto it = s->find(key);
    return it == s->end() ? std::string() : it->second;
}

// How a profile signs in when it has no keys of its own, for the error that says it is not
// followed; "" when it names none.
std::string other_sign_in(const Profile& p) {
    static const std::pair<const char*, const char*> k_ways[] = {
        {"sso_session", "single sign-on"},
        {"sso_start_url", "single sign-on"},
        {"role_arn", "a role"},
        {"credential_process", "a process"},
        {"web_identity_token_file", "a web identity"},
    };
    for (const auto& [key, what] : k_ways)
        if (!member(p.config, key).empty() || !member(p.credentials, key).empty())
            return format("%s (%s)", what, key);
    return {};
}

Result<sigv4::Credentials> access_key(const Profile& profile) {
    sigv4::Credentials c;
    SION_TRY(c.access_key_id, credential("AWS_ACCESS_KEY_ID"));
    SION_TRY(c.secret_access_key, credential("AWS_SECRET_ACCESS_KEY"));
    if (!c.access_key_id.empty() && !c.secret_access_key.empty()) {
        SION_TRY(c.session_token, credential("AWS_SESSION_TOKEN"));
        return c;
    }
    for (const auto* section : {&profile.credentials, &profile.config}) {
        c.access_key_id = member(*section, "aws_access_key_id");
        c.secret_access_key = member(*section, "aws_secret_access_key");
        c.session_token = member(*section, "aws_session_token");
        if (!c.access_key_id.empty() && !c.secret_access_key.empty())
            return c;
    }
    if (std::string way = other_sign_in(profile); !way.empty())
        return make_error(Exit::config,
                          "AWS profile '%s' signs in with %s, which sion does not follow: put its "
                          "credentials in the environment first (eval \"$(aws configure "
                          "export-credentials --format env)\")",
                          profile.name.c_str(), way.c_str());
    if (!profile.credentials && !profile.config && profile.name != "default")
        return make_error(Exit::config,
                          "AWS profile '%s' is in neither AWS's credentials file "
                          "nor its config file",
                          profile.name.c_str());
    return make_error(Exit::config,
                      "no credentials for bedrock: set AWS_BEARER_TOKEN_BEDROCK, or "
                      "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile's keys in "
                      "~/.aws/credentials");
}

// --- the request ----------------------------------------------------------------------------

bool contains(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}

// {key: value}
Json one(std::string_view key, Json value) {
    Json o = Json::object();
    o.set(key, std::move(value));
    return o;
}

Json one(std::string_view key, std::string_view value) {
    return one(key, Json::string(value));
}

Json text_block(std::string_view text) {
    return one("text", text);
}

Json cache_point() {
    return one("cachePoint", one("type", "default"));
}

// Pictures of a neutral message ({"images": [{"media_type": "image/png", "data": base64}]}) as
// Converse's image blocks.
void add_images(Json& content, JsonView message) {
    for (JsonView image : message.get("images")) {
        std::string_view type = picture_type(image);
        std::string_view format = type.substr(type.find('/') + 1);
        if (format == "jpg")
            format = "jpeg";
        Json source = Json::object();
        source.set("bytes", image.string_or("data", "").value_or(""));
        Json block = Json::object();
        block.set("format", format);
        block.set("source", std::move(source));
        content.push(one("image", std::move(block)));
    }
}

// An assistant's turn: the reasoning kept for `origin` as it came, then its text and calls.
void add_assistant_content(Json& content, JsonView message, const Origin& origin, bool with_kept) {
    if (with_kept)
        for (JsonView block : kept_for(message, k_member, origin).get("blocks"))
            content.push(Json::copy_of(block));
    if (auto text = message.string_or("text", ""); text && !text->empty())
        content.push(text_block(*text));
    for (JsonView call : message.get("calls")) {
        Json use = Json::object();
        use.set("toolUseId", plain_tool_id(call.string_or("id", "").value_or("")));
        use.set("name", call.string_or("tool", "").value_or(""));
        use.set("input",
                call.get("input").is_object() ? Json::copy_of(call.get("input")) : Json::object());
        content.push(one("toolUse", std::move(use)));
    }
}

Json tool_result(JsonView message, BedrockFamily family) {
    Json content = Json::array();
    std::string_view text = message.string_or("text", "").value_or("");
    if (!text.empty() || message.get("images").size() == 0)
        content.push(text_block(text.empty() ? "(no output)" : text));
    add_images(content, message);
    Json result = Json::object();
    result.set("toolUseId", plain_tool_id(message.string_or("call", "").value_or("")));
    result.set("content", std::move(content));
    // Only Claude takes a result's status; others refuse the member.
    if (family == BedrockFamily::claude)
        result.set("status",
                   message.boolean_or("error", false).value_or(false) ? "error" : "success");
    return one("toolResult", std::move(result));
}

// Converse's messages: roles alternate, so a turn's tool results and the person's next words are
// one user message. With `caches`, the last one ends with a cache point, so that the next call
// reads all of this one from the cache.
Json converse_messages(std::span<const Json> conversation, BedrockFamily family, bool caches,
                       const Origin& origin, bool with_kept) {
    Json messages = Json::array();
    std::string role;
    Json content = Json::array();
    auto flush = [&] {
        if (content.view().size() > 0)
            messages.push(std::move(Json::object()
                                        .set("role", std::string_view(role))
                                        .set("content", std::move(content))));
        content = Json::array();
    };
    for (const Json& message : conversation) {
        std::string_view said = message.view().string_or("role", "").value_or("");
        std::string want = said == "assistant" ? "assistant" : "user";
        if (want != role)
            flush();
        role = want;
        if (said == "assistant") {
            add_assistant_content(content, message, origin, with_kept);
        } else if (said == "tool") {
            content.push(tool_result(message, family));
        } else {
            if (auto text = message.view().string_or("text", ""); text && !text->empty())
                content.push(text_block(*text));
            add_images(content, message);
        }
    }
    if (caches && content.view().size() > 0)
        content.push(cache_point());
    flush();
    return messages;
}

// Claude's thinking as anthropic: asks for it (its "thinking" and "output_config"), in the
// fields Bedrock passes on to the model.
Json thinking_fields(const Effort& effort) {
    Request nothing;
    Json asked = anthropic_body(nothing, effort, thinking_room(effort), Origin{}, false);
    Json fields = Json::object();
    for (std::string_view name : {"thinking", "output_config"})
        if (Json field = asked.take(name); field.exists())
            fields.set(name, std::move(field));
    return fields;
}

} // namespace

BedrockFamily bedrock_family(std::string_view model) {
    if (contains(model, "anthropic.claude"))
        return BedrockFamily::claude;
    if (contains(model, "amazon.nova"))
        return BedrockFamily::nova;
    return BedrockFamily::other;
}

Result<BedrockSettings> bedrock_settings(std::string model, const Effort& effort) {
    BedrockSettings s;
    s.model = std::move(model);
    s.effort = effort;
    Profile profile = read_profile();
    s.region = env_or("AWS_REGION", env_or("AWS_DEFAULT_REGION", member(profile.config, "region")));
    if (s.region.empty())
        s.region = "us-east-1";
    SION_TRY(s.endpoint, base_url_from("AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
                                       "https://bedrock-runtime." + s.region + ".amazonaws.com",
                                       Reach::remote));
    SION_TRY(std::string api_keys, credential("AWS_BEARER_TOKEN_BEDROCK"));
    s.api_keys = KeyRing("AWS_BEARER_TOKEN_BEDROCK", api_keys);
    if (s.api_keys.empty()) {
        SION_TRY(s.credentials, access_key(profile));
    }
    return s;
}

Json converse_body(const Request& request, const BedrockSettings& settings, const Origin& origin,
                   bool with_kept) {
    BedrockFamily family = bedrock_family(settings.model);
    bool caches = family != BedrockFamily::other;
    // The system prompt and the tools, which stay the same from call to call, come first, so
    // that what a call sends starts as the last one's did.
    Json body = Json::object();
    if (!request.system.empty()) {
        Json system = Json::array();
        system.push(text_block(request.system));
        if (caches)
            system.push(cache_point());
        body.set("system", std::move(system));
    }
    if (!request.tools.empty()) {
        Json tools = Json::array();
        for (const ToolSpec& tool : request.tools) {
            Json spec = Json::object();
            spec.set("name", std::string_view(tool.name));
            spec.set("description", std::string_view(tool.description));
            spec.set("inputSchema", one("json", Json::copy_of(tool.input_schema)));
            tools.push(one("toolSpec", std::move(spec)));
        }
        body.set("toolConfig", one("tools", std::move(tools)));
    }
    body.set("messages",
             converse_messages(request.conversation, family, caches, origin, with_kept));
    bool thinks = family == BedrockFamily::claude && settings.effort.given();
    int64_t room = thinks ? answer_room(request.max_output_tokens, thinking_room(settings.effort))
                          : request.max_output_tokens;
    body.set("inferenceConfig", one("maxTokens", Json::integer(room)));
    if (thinks)
        body.set("additionalModelRequestFields", thinking_fields(settings.effort));
    return body;
}

Result<Answer> converse_answer(std::string_view body, const Origin& origin) {
    auto malformed = [](const std::string& why) {
        return Error(Exit::unavailable, "the answer is malformed: " + why);
    };
    auto doc = Json::parse(body);
    if (!doc)
        return malformed(doc.error().message());
    JsonView content = doc->get("output").get("message").get("content");
    if (!content.is_array())
        return malformed("it has no output.message.content");
    Answer answer;
    Json kept = Json::array();
    auto join = [](std::string& to, std::string_view text) {
        if (!to.empty() && !text.empty())
            to += "\n";
        to += text;
    };
    for (JsonView block : content) {
        if (auto text = block.get("text"); text.is_string()) {
            join(answer.text, *text.as_string());
        } else if (JsonView use = block.get("toolUse"); use.is_object()) {
            ToolCall call;
            call.id = std::string(use.string_or("toolUseId", "").value_or(""));
            auto name = use.string("name");
            if (!name)
                return malformed("a toolUse block has no name");
            call.tool = std::string(*name);
            call.input = Json::copy_of(use.get("input"));
            answer.calls.push_back(std::move(call));
        } else if (JsonView reasoning = block.get("reasoningContent"); reasoning.is_object()) {
            JsonView said = reasoning.get("reasoningText");
            join(answer.reasoning, said.string_or("text", "").value_or(""));
            // Thinking cut off before it was signed cannot be given back.
            if (said.get("signature").is_string() || reasoning.get("redactedContent").is_string())
                kept.push(Json::copy_of(block));
        }
    }
    JsonView usage = doc->get("usage");
    int64_t read = usage.integer_or("cacheReadInputTokens", 0).value_or(0);
    int64_t written = usage.integer_or("cacheWriteInputTokens", 0).value_or(0);
    answer.usage.input_tokens = usage.integer_or("inputTokens", 0).value_or(0) + read + written;
    answer.usage.output_tokens = usage.integer_or("outputTokens", 0).value_or(0);
    answer.usage.cache_read_tokens = read;
    answer.usage.cache_write_tokens = written;
    // Converse names neither the model nor the answer: only why it stopped.
    answer.finish_reason = std::string(doc->view().string_or("stopReason", "").value_or(""));
    if (kept.view().size() > 0)
        answer.kept = kept_member(k_member, origin, "blocks", std::move(kept));
    return answer;
}

BedrockModel::BedrockModel(std::string name, BedrockSettings settings, Clock clock, WallClock wall)
    : KeyedModel(std::move(name), k_member, {"bedrock", settings.endpoint, settings.model},
                 std::move(settings.api_keys), Reach::remote, std::move(clock)),
      m_settings(std::move(settings)), m_wall(std::move(wall)) {}

namespace {

struct Endpoint {
    std::string host;   // the Host header curl sends: the authority without a default port
    std::string prefix; // the endpoint's own path, if it has one
};

// What of `endpoint` (scheme://authority[/prefix]) the signature covers as it is sent.
Endpoint split_endpoint(std::string_view endpoint) {
    size_t scheme_end = endpoint.find("://");
    std::string_view scheme = endpoint.substr(0, scheme_end);
    std::string_view rest = endpoint.substr(scheme_end + 3);
    size_t slash = rest.find('/');
    std::string_view host = rest.substr(0, slash);
    if ((scheme == "https" && host.ends_with(":443"))
        || (scheme == "http" && host.ends_with(":80")))
        host.remove_suffix(host.size() - host.rfind(':'));
    return {std::string(host),
            slash == std::string_view::npos ? std::string() : std::string(rest.substr(slash))};
}

} // namespace

Result<Answer> BedrockModel::call(const Request& request, const std::string& key, bool with_kept) {
    Endpoint endpoint = split_endpoint(m_settings.endpoint);
    std::string path = "/model/" + percent_encode(m_settings.model) + "/converse";
    WireRequest w;
    w.url = m_settings.endpoint + path;
    w.body = converse_body(request, m_settings, origin(), with_kept).dump();
    w.headers.add("Content-Type", "application/json");
    w.headers.add("Accept", "application/json");
    if (!key.empty()) {
        w.headers.add("Authorization", "Bearer " + key);
    } else {
        sigv4::Request signable;
        signable.method = w.method;
        signable.path = endpoint.prefix + path;
        signable.headers = w.headers;
        signable.headers.add("Host", endpoint.host);
        signable.body = w.body;
        SION_TRY(auto signature,
                 sigv4::sign_headers(signable, m_settings.credentials,
                                     sigv4::Scope{m_settings.region, "bedrock", m_wall()}));
        for (const auto& [name, value] : signature.added.entries())
            w.headers.add(name, value);
    }
    w.go_on = request.go_on;
    SION_TRY(WireReply reply, wire().send(w));
    return converse_answer(reply.body, origin());
}

Result<std::unique_ptr<Model>> open_bedrock(const ModelSpec& spec) {
    SION_TRY(BedrockSettings settings, bedrock_settings(spec.model, spec.effort));
    return std::unique_ptr<Model>(std::make_unique<BedrockModel>(spec.name, std::move(settings)));
}

} // namespace sion::models
