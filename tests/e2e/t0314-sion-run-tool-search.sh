#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Tool search (seed 001, "What a model is sent"): with more than 40 tools of MCP servers (here the
# real tool lists of the GitHub and Playwright servers, 51, played by tests/tools/fake-mcp-bridge.py
# found as sion-mcp), the model is sent its own tools, tools_search and tools_call, not the
# servers'; a search's tools come back with their input schemas and are loaded after the rest from
# the next call on (the list's start as it was), are called by name, and stay loaded when the
# session is continued; tools_call calls any of them as a direct call would, through the policy and
# the hooks of the tool it names. With 40 or fewer, every tool is sent as before. The requests are
# the Anthropic stand-in's (tests/models/anthropic_server.py), which checks each one.
. "$(dirname "$0")/lib.sh"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

cd "$scratch" || exit 1
mkdir -p fake bridge scripts bin
printf '#!/bin/sh\nexec python3 "%s/tests/tools/fake-mcp-bridge.py" "$@"\n' "$SION_SOURCE_DIR" >fake/sion-mcp
chmod +x fake/sion-mcp
export SION_EXEC_PATH="$scratch/fake" ANTHROPIC_API_KEY=sk-ant-test-0001
unset ANTHROPIC_BASE_URL

# bridge/many.json: the servers gh (GitHub's 26 tools) and pw (Playwright's 25); bridge/few.json:
# gh alone, 26.
python3 - "$SION_SOURCE_DIR/tests/fixtures/tool-lists" <<'PY'
import json, sys
def server(file, prefix):
    tools = []
    for t in json.load(open(f"{sys.argv[1]}/{file}"))["tools"]:
        reads = t["name"].split("_")[0] in ("get", "list", "search") or t["name"] == "browser_take_screenshot"
        tools.append({"name": prefix + t["name"], "description": t.get("description", ""),
                      "inputSchema": t["inputSchema"], "effect": "read" if reads else "write",
                      "idempotent": reads, "taints": False})
    return {"state": "connected", "protocol": "2025-06-18", "server": {"name": prefix, "version": "1"}, "tools": tools}
calls = {"gh_create_pull_request": [{"text": "pull request #7 opened: {title}"}],
         "pw_browser_take_screenshot": [{"text": "a screenshot of the page"}],
         "gh_get_issue": [{"text": "issue {issue_number}: the parser fails"}]}
json.dump({"servers": {"gh": server("github.json", "gh_"), "pw": server("playwright.json", "pw_")}, "calls": calls},
          open("bridge/many.json", "w"))
json.dump({"servers": {"gh": server("github.json", "gh_")}, "calls": calls}, open("bridge/few.json", "w"))
PY
script() { printf '%s\n' "$2" >"scripts/$1.json"; }
agent=$(sion agent create coder) || exit 1
short=${agent:0:8}
# run BRIDGE URL ARGS...: a run with the servers of bridge/BRIDGE.json, its model at URL.
run() {
    SION_FAKE_MCP="$scratch/bridge/$1.json" ANTHROPIC_BASE_URL=$2 timeout 60 setsid -w \
        sion agent run coder "$short" --mcp gh --mcp pw --model anthropic:claude-opus-5-5 "${@:3}" </dev/null
}

# -- a search, a loaded tool called by name, tools_call of one not loaded
script search '[{"calls": [{"name": "tools_search", "input": {"query": "create a pull request"}}]},
 {"calls": [{"name": "gh_create_pull_request", "input": {"owner": "o", "repo": "r", "title": "Fix the parser", "head": "fix", "base": "main"}}]},
 {"calls": [{"name": "tools_call", "input": {"name": "pw_browser_take_screenshot", "arguments": {}}}]},
 {"text": "Opened it."}]'
start_standin a anthropic_server scripts/search.json
expect_exit 0 run many "$a_url" --task 'Open a pull request for the fix.' --autonomy L3
sid=$(session_id)
expect_grep '^→ tools_search \{"query":"create a pull request"\}$' "$scratch/out"
expect_grep '^← 5 tools found and loaded: call them by name from now on\.$' "$scratch/out"
expect_grep '^gh_create_pull_request: Create a new pull request in a GitHub repository$' "$scratch/out"
expect_grep '^  input schema: \{"\$schema":' "$scratch/out"
expect_grep '^← pull request #7 opened: Fix the parser$' "$scratch/out"
# tools_call is shown, kept and judged as the call of the tool it names.
expect_grep '^→ pw_browser_take_screenshot \{\}$' "$scratch/out"
expect_grep '^← a screenshot of the page$' "$scratch/out"
expect_grep "^session $sid: done\$" "$scratch/out"
expect_query "$a_log" '[x for e in r for x in e["violations"]]' '[]'
# What each request offered: no server's tool at first; the five found after the rest from the
# next call on; the start of the list as it was, tool for tool.
expect_query "$a_log" '[[t["name"] for t in e["body"]["tools"]][:2] for e in r]' \
    '[["tools_search", "tools_call"], ["tools_search", "tools_call"], ["tools_search", "tools_call"], ["tools_search", "tools_call"]]'
expect_query "$a_log" '[len(e["body"]["tools"]) for e in r]' '[2, 7, 7, 7]'
expect_query "$a_log" '[t["name"] for t in r[1]["body"]["tools"]][2]' '"gh_create_pull_request"'
expect_query "$a_log" '[all({k: v for k, v in a.items() if k != "cache_control"} == {k: v for k, v in b.items() if k != "cache_control"} for a, b in zip(r[i]["body"]["tools"], r[i + 1]["body"]["tools"])) for i in range(3)]' \
    '[true, true, true]'
# Between loads the requests start as the one before did, for the provider's cache.
expect_query "$a_log" '[e["kept_start"] for e in r]' '[null, false, true, true]'
# tools_call is answered as tools_call, its result paired with its call.
expect_query "$a_log" '[b["name"] for b in r[3]["body"]["messages"][-2]["content"] if b["type"] == "tool_use"]' '["tools_call"]'
expect_query "$a_log" 'r[3]["body"]["messages"][-1]["content"][0]["tool_use_id"] == r[3]["body"]["messages"][-2]["content"][-1]["id"]' 'true'
# The calls table has the tool each call ran; the loaded tools are kept with the session.
expect_out_db() { sqlite3 "$SION_HOME/sion.db" "$1" >"$scratch/db" && expect_text "$scratch/db" "$1" "$2"; }
expect_out_db "SELECT tool FROM calls WHERE session = '$sid' ORDER BY rowid" 'tools_search
gh_create_pull_request
pw_browser_take_screenshot'
# The results are kept as the model's request named their calls: tools_call's as tools_call's.
expect_out_db "SELECT json_extract(content, '\$.tool') FROM messages WHERE session = '$sid' AND json_extract(content, '\$.role') = 'tool' ORDER BY seq" 'tools_search
gh_create_pull_request
tools_call'
expect_out_db "SELECT json_extract(content, '\$.loaded') FROM messages WHERE session = '$sid' AND json_extract(content, '\$.role') = 'tools'" \
    '["gh_create_pull_request","gh_create_pull_request_review","gh_get_pull_request","gh_get_pull_request_reviews","gh_get_pull_request_comments"]'

# -- continued: the loaded tools are offered from the first call on
script again '[{"calls": [{"name": "gh_get_issue", "input": {"owner": "o", "repo": "r", "issue_number": 3}}]},
 {"calls": [{"name": "tools_search", "input": {"query": "select:gh_create_pull_request,gh_get_issue", "limit": 10}}]},
 {"text": "Read it."}]'
start_standin b anthropic_server scripts/again.json
expect_exit 0 run many "$b_url" --session "$sid" --task 'Read issue 3.' --autonomy L3
expect_query "$b_log" '[len(e["body"]["tools"]) for e in r]' '[7, 7, 8]'
expect_query "$b_log" '[t["name"] for t in r[2]["body"]["tools"]][-1]' '"gh_get_issue"'
expect_grep '^← issue 3: the parser fails$' "$scratch/out"
expect_grep '^← 2 tools found and loaded: call them by name from now on\.$' "$scratch/out"
expect_query "$b_log" '[e["kept_start"] for e in r]' '[null, true, false]'

# -- tools_call goes through the policy and the hooks of the tool it names
script refused '[{"calls": [{"name": "tools_call", "input": {"name": "gh_create_pull_request", "arguments": {"owner": "o", "repo": "r", "title": "t", "head": "h", "base": "main"}}}]},
 {"calls": [{"name": "tools_call", "input": {"name": "gh_get_issue", "arguments": {"owner": "o", "repo": "r", "issue_number": 4}}}]},
 {"calls": [{"name": "tools_call", "input": {"name": "tools_call", "arguments": {}}}]},
 {"calls": [{"name": "tools_call", "input": {"name": "gh_nosuch", "arguments": {}}}]},
 {"calls": [{"name": "gh_create_pull_request", "input": {"owner": "o", "repo": "r", "title": "t", "head": "h", "base": "main"}}]},
 {"text": "Stopped."}]'
cat >bin/guard.sh <<'SH'
#!/bin/sh
echo "no reading issues here" >&2
exit 2
SH
chmod +x bin/guard.sh
expect_exit 0 sion agent hooks add --event before-tool --tool 'gh_get_*' -- "$scratch/bin/guard.sh"
start_standin c anthropic_server scripts/refused.json
expect_exit 0 run many "$c_url" --task 'Try.' --autonomy L1
expect_grep '^→ gh_create_pull_request \{"base":"main","head":"h","owner":"o","repo":"r","title":"t"\}$' "$scratch/out"
expect_grep '^✗ gh_create_pull_request is a write, refused at L1: it runs on its own from L3 and asks at L2$' "$scratch/out"
expect_grep '^→ gh_get_issue \{"issue_number":4,"owner":"o","repo":"r"\}$' "$scratch/out"
expect_grep '^✗ a hook blocked this call: no reading issues here$' "$scratch/out"
expect_grep '^✗ tools_call calls the MCP servers. tools, not tools_call$' "$scratch/out"
expect_grep '^✗ there is no tool named gh_nosuch$' "$scratch/out"
[ "$(grep -c 'refused at L1' "$scratch/out")" = 2 ] && ok || fail "tools_call and a direct call were not refused alike"
expect_query "$c_log" '[x for e in r for x in e["violations"]]' '[]'
expect_exit 0 sion agent hooks remove 1

# -- 40 or fewer: every tool, no search
script few '[{"text": "Nothing to do."}]'
start_standin d anthropic_server scripts/few.json
expect_exit 0 run few "$d_url" --task 'Look.'
expect_query "$d_log" '[len(e["body"]["tools"]) for e in r]' '[26]'
expect_query "$d_log" '"tools_search" in [t["name"] for t in r[0]["body"]["tools"]]' 'false'

done_testing
