// SPDX-License-Identifier: MIT
#include "mcpd/oneshot.hpp"

#include <optional>

namespace sion::mcpd {

Result<Json> with_server(std::string_view name, const ServerConfig& config, std::string try_first,
                         const Work& work, Connected* connected, const Person& person,
                         std::vector<std::string>* last_words) {
    uv_loop_t loop;
    if (int rc = uv_loop_init(&loop); rc != 0)
        return Error(Exit::os, std::string("cannot make an event loop: ") + uv_strerror(rc));
    std::optional<Result<Json>> outcome;
    {
        // Introduced as a session that may ask a person and sample would introduce it, so that it
        // lists every tool a session may be offered; what it asks meanwhile is declined.
        ClientOptions options = client_options(name, config, std::move(try_first));
        options.can_elicit = true;
        options.can_sample = true;
        options.keep_last_words = last_words != nullptr;
        auto started = open_client(&loop, name, config, std::move(options), {}, &person);
        if (!started) {
            uv_run(&loop, UV_RUN_DEFAULT);
            uv_loop_close(&loop);
            // Its exit: 127 for a command that is not found, 126 for one that cannot run.
            return Error(started.error().exit(),
                         (config.url.empty() ? "cannot start MCP server " : "cannot reach MCP server ")
                             + std::string(name) + ": " + started.error().message());
        }
        std::unique_ptr<Client> client = std::move(*started);
        client->connect([&](Result<Connected> c) {
            if (!c) {
                outcome = std::move(c).error();
                client->close();
                return;
            }
            if (connected)
                *connected = std::move(*c);
            const Connected& now = connected ? *connected : *c;
            work(*client, now, [&](Result<Json> r) {
                outcome = std::move(r);
                client->close();
            });
        });
        while (!outcome && uv_run(&loop, UV_RUN_ONCE) != 0) {
        }
        client->close();
        uv_run(&loop, UV_RUN_DEFAULT);
        if (last_words && outcome && !*outcome)
            *last_words = client->last_words();
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    if (!outcome)
        return Error(Exit::software, "MCP server " + std::string(name) + " was left unanswered");
    return std::move(*outcome);
}

} // namespace sion::mcpd
