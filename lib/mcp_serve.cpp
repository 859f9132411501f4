// SPDX-License-Identifier: MIT
// The protocol loop of sion's own servers: lines read with the pipes' codec (lib/rpc), answered in
// order.
#include "lib/mcp_serve.hpp"

#include "lib/fd.hpp"
#include "lib/log.hpp"
#include "lib/rpc/line_reader.hpp"
#include "lib/rpc/message.hpp"
#include "lib/text.hpp"
#include "lib/version.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace sion::mcp_serve {

namespace {

Json initialize_result(const Tools& tools, JsonView params) {
    std::string_view version = k_versions[0];
    if (auto asked = params.string("protocolVersion"))
        for (std::string_view known : k_versions)
            if (*asked == known)
                version = known;
    Json info = Json::object();
    info.set("name", tools.server_name()).set("version", sion::version());
    Json capabilities = Json::object();
    capabilities.set("tools", Json::object());
    Json result = Json::object();
    result.set("protocolVersion", version).set("capabilities", std::move(capabilities));
    result.set("serverInfo", std::move(info));
    return result;
}

std::string call(Tools& tools, const rpc::Message& m) {
    auto name = m.params.string("name");
    if (!name)
        return rpc::encode_error(m.id, rpc::k_invalid_params,
                                 "invalid params: " + name.error().message());
    if (!tools.has(*name))
        return rpc::encode_error(m.id, rpc::k_invalid_params,
                                 "invalid params: there is no tool named '" + one_line(*name)
                                     + "'");
    Answer a = tools.call(*name, m.params.get("arguments"));
    Json content = Json::object();
    content.set("type", "text").set("text", a.text);
    Json result = Json::object();
    result.set("content", std::move(Json::array().push(std::move(content))));
    result.set("isError", a.is_error);
    return rpc::encode_result(m.id, result);
}

} // namespace

void answer_line(Tools& tools, std::string_view line, bool overlong, size_t length,
                 std::string& out) {
    if (overlong) {
        out += rpc::encode_failure(rpc::overlong_failure(length, rpc::k_default_max_line));
        return;
    }
    rpc::Decoded d = rpc::decode(line);
    if (d.failure) {
        out += rpc::encode_failure(*d.failure);
        return;
    }
    const rpc::Message& m = *d.message;
    if (m.kind != rpc::Kind::request)
        return; // notifications/initialized, cancellations, answers: nothing to say
    if (m.method == "tools/call")
        out += call(tools, m);
    else if (m.method == "tools/list") {
        Json result = Json::object();
        result.set("tools", tools.list());
        out += rpc::encode_result(m.id, result);
    } else if (m.method == "initialize")
        out += rpc::encode_result(m.id, initialize_result(tools, m.params));
    else if (m.method == "ping")
        out += rpc::encode_result(m.id, Json::object());
    else
        out += rpc::encode_error(m.id, rpc::k_method_not_found,
                                 "method not found: " + one_line(m.method));
}

int serve(Tools& tools) {
    rpc::LineReader lines;
    std::string out;
    std::array<char, size_t{64} << 10> buf{};
    for (;;) {
        ssize_t n = ::read(STDIN_FILENO, buf.data(), buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            report(sys_error(Exit::io, errno, "cannot read standard input"));
            return to_int(Exit::io);
        }
        if (n == 0)
            break;
        lines.feed(std::string_view(buf.data(), static_cast<size_t>(n)));
        while (auto line = lines.next()) {
            answer_line(tools, line->text, line->overlong, line->length, out);
            // Each answer as soon as it is made: a client waits for it before its next request.
            if (!out.empty()) {
                if (Status written = write_all(STDOUT_FILENO, out); !written) {
                    report(written.error().context("cannot write standard output"));
                    return to_int(Exit::io);
                }
                out.clear();
            }
        }
    }
    if (lines.mid_line()) {
        report(Error(Exit::io, "the input ended inside a line"));
        return to_int(Exit::io);
    }
    return 0;
}

Json tool(const char* name, const char* title, const char* description, Json properties,
          const std::vector<std::string>& required, Hints hints) {
    Json schema = Json::object();
    schema.set("type", "object").set("properties", std::move(properties));
    if (!required.empty())
        schema.set("required", Json::strings(required));
    schema.set("additionalProperties", false);
    Json annotations = Json::object();
    annotations.set("title", title);
    annotations.set("readOnlyHint", hints.read_only);
    if (!hints.read_only)
        annotations.set("destructiveHint", hints.destructive)
            .set("idempotentHint", hints.idempotent);
    annotations.set("openWorldHint", hints.open_world);
    Json t = Json::object();
    t.set("name", name).set("title", title).set("description", description);
    t.set("inputSchema", std::move(schema)).set("annotations", std::move(annotations));
    return t;
}

Json string_property(const char* description) {
    Json p = Json::object();
    p.set("type", "string").set("description", description);
    return p;
}

Json integer_property(const char* description, int64_t min, int64_t max) {
    Json p = Json::object();
    p.set("type", "integer").set("description", description);
    p.set("minimum", Json::integer(min)).set("maximum", Json::integer(max));
    return p;
}

Json boolean_property(const char* description) {
    Json p = Json::object();
    p.set("type", "boolean").set("description", description);
    return p;
}

Json strings_property(const char* description) {
    Json items = Json::object();
    items.set("type", "string");
    Json p = Json::object();
    p.set("type", "array").set("items", std::move(items)).set("description", description);
    return p;
}

} // namespace sion::mcp_serve
