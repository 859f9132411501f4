// SPDX-License-Identifier: MIT
// Reviewing a server's tools: what each call is taken to do (its effect, from the annotations as
// reviewed or the user's --effect), the digest it is pinned by, the names a model can be given,
// and how a review reads.
//
// A tool's effect: openWorldHint true or absent (the protocol's default) is external; readOnlyHint
// true with openWorldHint false is a read; anything else a write. idempotentHint true shows as
// "repeats run again" and keeps its calls out of the journal. The digest is SHA-256 of the
// canonical JSON of {name, description, inputSchema, annotations} (members absent stay absent), so
// any change to what the model is told or to what the tool claims of itself changes it.
#pragma once

#include "lib/json.hpp"
#include "lib/policy.hpp"
#include "lib/result.hpp"
#include "lib/text.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sion::mcpd {

// One tool as the server lists it.
struct ToolDef {
    std::string name;
    std::string description;
    Json definition; // the tool object as listed (name, description, inputSchema, annotations, …)
    std::string digest;
    Effect effect = Effect::external;
    bool idempotent = false; // from the annotations, or a read
    bool local = false;      // the user said it reaches only this machine: it does not taint
    // Why it cannot be offered whatever its pin ("its name has characters a model cannot be
    // given"), or empty.
    std::string unusable;
};

// The tools of a tools/list result's "tools" array, in the server's order. `effects` are the user's
// overrides by tool name, `local` the tools the user said reach only this machine (a read or a
// write made local keeps its effect; one of another effect is not local). A tool that is not an
// object with a string name is skipped; one whose name a model cannot be given, that is listed
// twice, or whose x-mcp-header marks break their rules (mcpd/http_headers.hpp), is kept with
// `unusable` set.
[[nodiscard]] std::vector<ToolDef> tool_defs(JsonView tools,
                                             const std::map<std::string, Effect>& effects,
                                             std::string_view server,
                                             const std::set<std::string>& local = {});

// Whether what the tool returns taints a session: not for a local one; else for an external one,
// for one whose own annotations say it reaches the open world, whatever --effect made it, and for
// every tool of a server whose data is from outside however its tools reach it (`from_outside`:
// sion's mail and calendar servers, whose reads are reads, mcpd/first_party.hpp).
[[nodiscard]] bool taints(const ToolDef& tool, bool from_outside = false);

// The effect a tool's annotations give it, before overrides.
[[nodiscard]] Effect effect_of_annotations(JsonView annotations);

// "read", "write, repeats run again", "read-local", … as review lines show it.
[[nodiscard]] std::string effect_label(const ToolDef& tool);

// A tool's name as messages show it: on one line, and cut to its first 64 characters and "…"
// when longer (a hostile server's names can be of any length).
[[nodiscard]] std::string shown_name(std::string_view name);

// A tool name a model can be given once prefixed: 1 to 64 characters of [A-Za-z0-9_-] in all.
[[nodiscard]] bool offerable_name(std::string_view server, std::string_view tool);

// What a tool is, against its pin.
enum class PinState { unchanged, changed, added, removed };

struct Pin {
    std::string tool;
    std::string digest;
    Json definition;
};

struct Reviewed {
    PinState state = PinState::unchanged;
    const ToolDef* tool = nullptr; // nullptr for a removed one
    const Pin* pin = nullptr;      // nullptr for an added one
};

// Each listed tool against `pins`, in the server's order, then the pinned tools the server no
// longer lists, in their pins' order.
[[nodiscard]] std::vector<Reviewed> compare(const std::vector<ToolDef>& tools,
                                            const std::vector<Pin>& pins);

// "list_notes (read): List the notes kept, by name." — a review line without its mark.
[[nodiscard]] std::string review_line(const ToolDef& tool);

// The line for a tool that cannot be offered whatever its pin (`tool.unusable` is set):
//   "MCP server x: the tool \"get weather\" is not offered: its name is not 1 to 64 …"
[[nodiscard]] std::string unusable_notice(std::string_view server, const ToolDef& tool);

// The line a session shows for a tool it does not offer (empty for an unchanged one):
//   "MCP server notes: export_notes is new and was not reviewed, so it is not offered (`sion agent
//   mcp review notes`)"
[[nodiscard]] std::string not_offered_notice(std::string_view server, const Reviewed& r);

} // namespace sion::mcpd
