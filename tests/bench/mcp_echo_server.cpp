// SPDX-License-Identifier: MIT
// mcp_echo_server: a minimal MCP server over stdio, the benchmark's own, against which the MCP
// client's round trips are measured: the 2025-era initialize, ping, tools/list with one tool
// echo {message}, and tools/call answering the message back as text. One JSON-RPC 2.0 message a
// line on fds 0 and 1 with plain read and write; the answers to all the lines one read brought are
// written together. Exit 0 at the end of input, 74 when it ended mid-line or a read or write
// failed. Not installed.
#include "lib/json.hpp"
#include "lib/rpc/line_reader.hpp"
#include "lib/rpc/message.hpp"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

namespace {

using namespace sion;

constexpr std::array<std::string_view, 4> k_versions{"2025-11-25", "2025-06-18", "2025-03-26",
                                                     "2024-11-05"};

Json tools_list_result() {
    Json message = Json::object();
    message.set("type", "string");
    Json properties = Json::object();
    properties.set("message", std::move(message));
    Json schema = Json::object();
    schema.set("type", "object").set("properties", std::move(properties));
    schema.set("required", std::move(Json::array().push(Json::string("message"))));
    Json annotations = Json::object();
    annotations.set("readOnlyHint", true).set("openWorldHint", false);
    Json echo = Json::object();
    echo.set("name", "echo").set("description", "Say the message back.");
    echo.set("inputSchema", std::move(schema)).set("annotations", std::move(annotations));
    Json result = Json::object();
    result.set("tools", std::move(Json::array().push(std::move(echo))));
    return result;
}

Json initialize_result(JsonView params) {
    std::string_view version = k_versions[0];
    if (auto asked = params.string("protocolVersion"))
        for (std::string_view known : k_versions)
            if (*asked == known)
                version = known;
    Json info = Json::object();
    info.set("name", "mcp-echo").set("version", "1.0");
    Json capabilities = Json::object();
    capabilities.set("tools", Json::object());
    Json result = Json::object();
    result.set("protocolVersion", version).set("capabilities", std::move(capabilities));
    result.set("serverInfo", std::move(info));
    return result;
}

// The answer to a tools/call: the message as text, or -32602.
void call(const rpc::Message& m, std::string& out) {
    auto name = m.params.string("name");
    if (!name || *name != "echo") {
        out += rpc::encode_error(m.id, rpc::k_invalid_params, "invalid params: unknown tool");
        return;
    }
    auto text = m.params.get("arguments").string("message");
    if (!text) {
        out += rpc::encode_error(m.id, rpc::k_invalid_params,
                                 "invalid params: echo needs a string 'message'");
        return;
    }
    // The answer the benchmark times, written straight rather than built as a tree and printed:
    // the same bytes encode_result() gives, without its allocations. decode() took only ids that
    // are integers or strings.
    out += R"({"jsonrpc":"2.0","id":)";
    if (auto n = m.id.as_int())
        out += std::to_string(*n); // cJSON prints numbers through printf and scanf: slow
    else
        append_json_string(out, m.id.as_string().value_or(""));
    out += R"(,"result":{"content":[{"type":"text","text":)";
    append_json_string(out, *text);
    out += "}]}}\n";
}

// Appends to `out` the answer to one line, if it needs one.
void answer(const rpc::Line& line, const Json& tools, std::string& out) {
    if (line.overlong) {
        out += rpc::encode_failure(rpc::overlong_failure(line.length, rpc::k_default_max_line));
        return;
    }
    rpc::Decoded d = rpc::decode(line.text);
    if (d.failure) {
        out += rpc::encode_failure(*d.failure);
        return;
    }
    const rpc::Message& m = *d.message;
    if (m.kind != rpc::Kind::request)
        return; // notifications/initialized, cancellations and answers need nothing here
    if (m.method == "tools/call")
        call(m, out);
    else if (m.method == "tools/list")
        out += rpc::encode_result(m.id, tools);
    else if (m.method == "initialize")
        out += rpc::encode_result(m.id, initialize_result(m.params));
    else if (m.method == "ping")
        out += rpc::encode_result(m.id, Json::object());
    else
        out += rpc::encode_error(m.id, rpc::k_method_not_found,
                                 "method not found: " + std::string(m.method));
}

bool write_all(std::string_view data) {
    while (!data.empty()) {
        ssize_t n = write(STDOUT_FILENO, data.data(), data.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return false;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
}

} // namespace

int main() {
    const Json tools = tools_list_result();
    rpc::LineReader lines;
    std::string out;
    std::array<char, 64 * 1024> buf{};
    for (;;) {
        ssize_t n = read(STDIN_FILENO, buf.data(), buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            std::fprintf(stderr, "mcp_echo_server: read error: %s\n", std::strerror(errno));
            return 74;
        }
        if (n == 0)
            break;
        lines.feed(std::string_view(buf.data(), static_cast<size_t>(n)));
        while (auto line = lines.next())
            answer(*line, tools, out);
        if (!write_all(out)) {
            std::fprintf(stderr, "mcp_echo_server: write error: %s\n", std::strerror(errno));
            return 74;
        }
        out.clear();
    }
    if (lines.mid_line()) {
        std::fprintf(stderr, "mcp_echo_server: peer closed mid-line\n");
        return 74;
    }
    return 0;
}
