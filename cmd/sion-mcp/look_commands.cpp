// SPDX-License-Identifier: MIT
// sion-mcp resources and prompts: what a server offers besides tools, shown to you.
#include "cmd/sion-mcp/commands.hpp"

#include "mcpd/authorize.hpp"
#include "mcpd/oneshot.hpp"
#include "mcpd/render.hpp"
#include "mcpd/review.hpp"

#include "lib/db_schema.hpp"
#include "lib/home.hpp"
#include "lib/listing.hpp"
#include "lib/log.hpp"
#include "lib/proto/mcp_names.hpp"
#include "lib/text.hpp"

#include <cstdio>

namespace sion::mcp_cmd {

namespace {

mcpd::ShelfEntry entry_or_die(const Args& args, const char* usage) {
    if (args.operands().size() != 1)
        die(usage_error(std::string("give a server's name: ") + usage));
    or_die(proto::check_server_name(args.operands()[0]));
    Db db = or_die(open_state(or_die(prepare_home())));
    return or_die(mcpd::Shelf(db).get(args.operands()[0]));
}

// "  name: description" parts of a listed item, on one line.
std::string item_line(JsonView item, std::string_view address_key) {
    std::string line = one_line(item.string_or(address_key, "").value_or(""));
    std::string name = one_line(item.string_or("name", "").value_or(""));
    std::string description = one_line(item.string_or("description", "").value_or(""));
    std::string mime = one_line(item.string_or("mimeType", "").value_or(""));
    if (!name.empty())
        line += line.empty() ? name : "  " + name;
    if (!description.empty())
        line += ": " + description;
    if (!mime.empty())
        line += " (" + mime + ")";
    return line;
}

// What `--json` prints of a listed item: the members item_line() shows, as the server gave them
// (MCP's spelling), each only when the server gave it as a string; but the address always, ""
// when the server gave none, as the text shows it.
Json item_entry(JsonView item, std::string_view address_key) {
    Json entry = Json::object();
    if (!address_key.empty())
        entry.set(address_key, item.string_or(address_key, "").value_or(""));
    for (std::string_view key : {"name", "description", "mimeType"})
        if (auto value = item.string(key))
            entry.set(key, *value);
    return entry;
}

} // namespace

int resources_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-mcp resources",
        "sion-mcp resources NAME [--read URI | --json]",
        "List what the server offers at addresses (its resources and templates), or with --json\n"
        "one JSON object a line (schemas/mcp.resources.json); or read one.",
        {{"read", 0, "URI", "print the resource at URI"}, json_lines_option()},
        false,
        {":mcp-server"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    if (args.has("read") && args.has("json"))
        die(usage_error("--json lists: it does not go with --read"));
    mcpd::ShelfEntry e = entry_or_die(args, spec.usage);
    if (auto uri = args.value("read")) {
        Json params = Json::object();
        params.set("uri", std::string_view(*uri));
        std::vector<std::string> words;
        Json read = served_or_die(
            mcpd::with_server(
                e.name, e.config, e.protocol,
                [&params](mcpd::Client& client, const mcpd::Connected&, mcpd::Done done) {
                    client.request("resources/read", std::move(params), std::move(done));
                },
                nullptr, mcpd::Person{}, &words),
            e.name, e.config, words, true);
        std::string text = mcpd::render_resource(read);
        std::fwrite(text.data(), 1, text.size(), stdout);
        if (!text.empty() && text.back() != '\n')
            std::fputc('\n', stdout);
        return 0;
    }
    std::vector<std::string> words;
    Json both = served_or_die(mcpd::with_server(
        e.name, e.config, e.protocol,
        [](mcpd::Client& client, const mcpd::Connected& connected, mcpd::Done done) {
            if (!connected.capabilities.get("resources").exists()) {
                done(Json::object());
                return;
            }
            auto out = std::make_shared<Json>(Json::object());
            client.list_all("resources/list", "resources",
                            [&client, out, done](Result<Json> resources) {
                                if (!resources) {
                                    done(std::move(resources).error());
                                    return;
                                }
                                out->set("resources", std::move(*resources));
                                client.list_all("resources/templates/list", "resourceTemplates",
                                                [out, done](Result<Json> templates) {
                                                    // Templates are optional: a server may not
                                                    // know the method.
                                                    if (templates)
                                                        out->set("templates",
                                                                 std::move(*templates));
                                                    done(std::move(*out));
                                                });
                            });
        },
        nullptr, mcpd::Person{}, &words), e.name, e.config, words, true);
    const Listing listing(args.has("json"));
    for (JsonView r : both.get("resources"))
        listing.print(item_entry(r, "uri"), item_line(r, "uri"));
    for (JsonView t : both.get("templates"))
        listing.print(item_entry(t, "uriTemplate"), item_line(t, "uriTemplate") + " (template)");
    return 0;
}

int prompts_command(int argc, const char* const* argv) {
    const CommandSpec spec{
        "sion-mcp prompts",
        "sion-mcp prompts NAME [--json]",
        "List the prompts the server offers, with their arguments; or with --json one JSON\n"
        "object a prompt (schemas/mcp.prompts.json).",
        {json_lines_option()},
        false,
        {":mcp-server"},
    };
    Args args = parse_args_or_exit(spec, argc, argv);
    mcpd::ShelfEntry e = entry_or_die(args, spec.usage);
    std::vector<std::string> words;
    Json prompts = served_or_die(mcpd::with_server(
        e.name, e.config, e.protocol,
        [](mcpd::Client& client, const mcpd::Connected& connected, mcpd::Done done) {
            if (!connected.capabilities.get("prompts").exists()) {
                done(Json::array());
                return;
            }
            client.list_all("prompts/list", "prompts", std::move(done));
        },
        nullptr, mcpd::Person{}, &words), e.name, e.config, words, true);
    const Listing listing(args.has("json"));
    for (JsonView p : prompts.view()) {
        std::string text = item_line(p, "");
        Json entry = item_entry(p, "");
        Json arguments = Json::array();
        for (JsonView a : p.get("arguments")) {
            bool required = a.boolean_or("required", false).value_or(false);
            std::string line = "  " + one_line(a.string_or("name", "").value_or(""));
            if (required)
                line += " (required)";
            std::string d = one_line(a.string_or("description", "").value_or(""));
            if (!d.empty())
                line += ": " + d;
            text += "\n" + line;
            Json argument = item_entry(a, "");
            argument.set("required", required);
            arguments.push(std::move(argument));
        }
        entry.set("arguments", std::move(arguments));
        listing.print(entry, text);
    }
    return 0;
}

} // namespace sion::mcp_cmd
