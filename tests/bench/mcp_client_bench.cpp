// SPDX-License-Identifier: MIT
// Sequential tools/call round trips through sion's MCP client (mcpd/client.hpp) to a server over
// stdio, and the same calls as bare lines written and read on the server's pipes with no client at
// all (--raw: the pipe's round trip with the server's own cost, the floor sion's client is held to).
// Prints one JSON line: {"mode","calls","connect_ms","seconds","calls_per_s","protocol"}.
//   mcp_client_bench [--raw] [--calls N] [--tool NAME] [--arguments JSON] -- COMMAND [ARGS...]
// Run by tests/bench/mcp.py; a report, never a test.
#include "mcpd/client.hpp"

#include "lib/child.hpp"
#include "lib/json.hpp"
#include "lib/rpc/line_reader.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace sion;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void fail(const std::string& why) {
    std::fprintf(stderr, "mcp_client_bench: %s\n", why.c_str());
    std::exit(1);
}

double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

ChildSpec spec_of(const std::vector<std::string>& command) {
    ChildSpec spec;
    spec.argv = command;
    spec.env = env_keep({"PATH", "HOME", "LANG", "TMPDIR"});
    spec.in = Stdio::pipe();
    spec.out = Stdio::pipe();
    spec.err = Stdio::null();
    return spec;
}

void print(const char* mode, int calls, double connect_ms, double seconds, const std::string& protocol) {
    std::printf("{\"mode\":\"%s\",\"calls\":%d,\"connect_ms\":%.3f,\"seconds\":%.6f,"
                "\"calls_per_s\":%.1f,\"protocol\":\"%s\"}\n",
                mode, calls, connect_ms, seconds, calls / seconds, protocol.c_str());
}

void with_client(const std::vector<std::string>& command, int calls, const std::string& tool,
                 const std::string& arguments) {
    uv_loop_t loop;
    uv_loop_init(&loop);
    auto started = Clock::now();
    auto client = mcpd::Client::start(&loop, spec_of(command), {"bench", {}, false, false, {},
                                                               std::chrono::seconds(30)},
                                      {});
    if (!client)
        fail(client.error().message());
    std::string protocol;
    double connect_ms = 0;
    Clock::time_point first;
    int done = 0;
    std::optional<Error> failure;
    std::function<void()> next = [&] {
        if (done == calls) {
            (*client)->close();
            return;
        }
        Json params = Json::object();
        params.set("name", std::string_view(tool));
        params.set("arguments", *Json::parse(arguments));
        (*client)->request("tools/call", std::move(params), [&](Result<Json> r) {
            if (!r) {
                failure = r.error();
                (*client)->close();
                return;
            }
            ++done;
            next();
        });
    };
    (*client)->connect([&](Result<mcpd::Connected> c) {
        if (!c) {
            failure = c.error();
            (*client)->close();
            return;
        }
        protocol = c->protocol;
        (*client)->list_all("tools/list", "tools", [&](Result<Json> tools) {
            if (!tools) {
                failure = tools.error();
                (*client)->close();
                return;
            }
            connect_ms = ms_since(started);
            first = Clock::now();
            next();
        });
    });
    uv_run(&loop, UV_RUN_DEFAULT);
    double seconds = std::chrono::duration<double>(Clock::now() - first).count();
    client->reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    if (failure)
        fail(failure->message());
    print("client", calls, connect_ms, seconds, protocol);
}

// Whether `text` holds `"id":<id>` followed by ',' or '}' (a response to request <id>).
bool answers(std::string_view text, const std::string& id_mark) {
    for (size_t at = text.find(id_mark); at != std::string_view::npos;
         at = text.find(id_mark, at + 1)) {
        size_t end = at + id_mark.size();
        if (end < text.size() && (text[end] == ',' || text[end] == '}'))
            return true;
    }
    return false;
}

// Writes `line` and reads lines until one answers it.
void round_trip(Child& child, rpc::LineReader& reader, const std::string& line, const std::string& id_mark) {
    if (::write(child.in().get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
        fail("cannot write to the server");
    char buf[65536];
    for (;;) {
        while (auto got = reader.next())
            if (answers(got->text, id_mark))
                return;
        ssize_t n = ::read(child.out().get(), buf, sizeof buf);
        if (n <= 0)
            fail("the server closed its output");
        reader.feed(std::string_view(buf, static_cast<size_t>(n)));
    }
}

void raw(const std::vector<std::string>& command, int calls, const std::string& tool,
         const std::string& arguments) {
    auto started = Clock::now();
    auto child = Child::spawn(spec_of(command));
    if (!child)
        fail(child.error().message());
    rpc::LineReader reader(size_t{32} << 20);
    round_trip(*child, reader,
               "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
               "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"0\"}}}\n",
               "\"id\":0");
    std::string initialized = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    if (::write(child->in().get(), initialized.data(), initialized.size()) < 0)
        fail("cannot write to the server");
    double connect_ms = ms_since(started);
    auto first = Clock::now();
    for (int i = 1; i <= calls; ++i) {
        std::string id = std::to_string(i);
        round_trip(*child, reader,
                   "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\""
                       + tool + "\",\"arguments\":" + arguments + "}}\n",
                   "\"id\":" + id);
    }
    double seconds = std::chrono::duration<double>(Clock::now() - first).count();
    child->in().reset();
    (void)child->wait_for(std::chrono::seconds(2));
    print("raw", calls, connect_ms, seconds, "2025-11-25");
}

} // namespace

int main(int argc, char** argv) {
    bool raw_mode = false;
    int calls = 10000;
    std::string tool = "echo";
    std::string arguments = "{\"message\":\"hi\"}";
    int i = 1;
    for (; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--raw")
            raw_mode = true;
        else if (a == "--calls" && i + 1 < argc)
            calls = std::atoi(argv[++i]);
        else if (a == "--tool" && i + 1 < argc)
            tool = argv[++i];
        else if (a == "--arguments" && i + 1 < argc)
            arguments = argv[++i];
        else if (a == "--") {
            ++i;
            break;
        } else
            fail("unknown argument '" + a + "'");
    }
    std::vector<std::string> command(argv + i, argv + argc);
    if (command.empty() || calls < 1 || !Json::parse(arguments))
        fail("usage: mcp_client_bench [--raw] [--calls N] [--tool NAME] [--arguments JSON] -- COMMAND...");
    if (raw_mode)
        raw(command, calls, tool, arguments);
    else
        with_client(command, calls, tool, arguments);
    return 0;
}
