#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sion agent chatgpt and chatgpt: against a stand-in of OpenAI's sign-in for open-source apps and
# the API behind it (tests/models/chatgpt_server.py), which checks every request as OpenAI's guide
# has it: login (discovery, the first registration by dynamic_agent_client with agent_name_hint and
# this machine's host id, the issued client used from then on, PKCE, nonce, scopes and resource,
# the loopback way back on 1455 or another port when it is taken, the ID token checked, the plan's
# scope granted), status, models (those to list), sessions on the plan (streamed, not stored, no
# room sent, the account's header, reasoning given back), tokens renewed before they lapse and
# when the API refuses one with the refresh token rotating, logout (the refresh token revoked, the
# registration kept); each refusal of the ID token (signature, key, issuer, audience, expiry,
# nonce), the plan not granted, a sign-in refused, a changed token store (refused and left as it
# was; logout forgets it), and no token in anything sion keeps in the clear.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

mkdir -p "$scratch/work" "$scratch/scripts"
cd "$scratch" || exit 1
unset BROWSER DISPLAY WAYLAND_DISPLAY SION_CHATGPT_ISSUER SION_CHATGPT_BASE_URL SION_MODEL_TIMEOUT
agent=$(sion agent create coder) || exit 1
script() { printf '%s\n' "$2" >"$scratch/scripts/$1.json"; }
write_call='"calls": [{"name": "write_file", "input": {"path": "c.txt", "content": "c"}}]'
# The browser: follows the sign-in's redirect back to sion's loopback port, as a person's would.
cat >"$scratch/browser" <<'EOF'
#!/bin/sh
exec python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=30).read().decode())' "$1"
EOF
chmod +x "$scratch/browser"
# at NAME: the variables that point sion at the stand-in NAME.
at() {
    local url_var="${1}_url"
    printf '%s\n' "BROWSER=$scratch/browser" "SION_CHATGPT_ISSUER=${!url_var}" \
        "SION_CHATGPT_BASE_URL=${!url_var}/v1"
}
chatgpt() { # chatgpt NAME COMMAND: sion agent chatgpt COMMAND at the stand-in NAME, bounded
    local name=$1
    shift
    mapfile -t vars < <(at "$name")
    env "${vars[@]}" timeout 60 sion agent chatgpt "$@" </dev/null
}
session() { # session NAME ARGS...: a run at the stand-in NAME
    local name=$1
    shift
    mapfile -t vars < <(at "$name")
    run_with "${vars[@]}" -- "$@"
}
# The issuers' RSA key, made once (the stand-ins share it) before the first has to listen.
python3 -B -c 'import sys; sys.path.insert(0, sys.argv[1]); import chatgpt_server; chatgpt_server.kept_key(sys.argv[2])' \
    "$SION_SOURCE_DIR/tests/models" "$scratch/issuer.key" || exit 1
issuer_verdicts() { query "$1" '[e["verdict"] for e in entries if "verdict" in e]'; }
hosts='[e["host"] for e in entries if "host" in e]'

# Not signed in.
expect_exit 1 sion agent chatgpt status && expect_out "not signed in"
expect_exit 78 run_with -- --task 'Hi' --model chatgpt:gpt-5.2 &&
    expect_err "sion-run: chatgpt: no ChatGPT account is signed in: run 'sion agent chatgpt login'"
expect_exit 64 sion agent chatgpt sign-in &&
    expect_err "sion-run: unknown command 'sign-in': give login, status, models or logout (see --help)"

# login: registered, signed in through the browser on port 1455; status and the plan's models
# (the API refuses the first token it is shown: renewed, and asked again; a model not to be listed
# is not).
script a "[{\"reasoning\": \"Write c first.\", $write_call}, {\"text\": \"Wrote c.txt.\", \"usage\": {\"input_tokens\": 400, \"output_tokens\": 9, \"cached_tokens\": 256}}]"
start_standin a chatgpt_server "$scratch/scripts/a.json" --key-file "$scratch/issuer.key" --reasoning-back --refuse-token 1
expect_exit 0 chatgpt a login && expect_out "signed in as ada@example.com (ChatGPT plus)"
expect_grep "^Sign in with ChatGPT in your browser: $a_url/api/accounts/authorize\?client_id=dynamic_agent_client&ext_agent_host_id=urn%3Auuid%3A[0-9a-f-]{36}&response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%3A1455%2Fauth%2Fcallback&scope=openid%20profile%20email%20offline_access%20resource.invoke%20chatgpt.tokens.use.direct&resource=https%3A%2F%2Fapi.openai.com%2Fv1&state=[A-Za-z0-9_-]{32}&nonce=[A-Za-z0-9_-]{32}&code_challenge_method=S256&code_challenge=[A-Za-z0-9_-]{43}&agent_name_hint=Siontology$" "$scratch/err"
expect_query "$a_log" '[e["port"] for e in entries if "port" in e]' '[1455]'
expect_exit 0 chatgpt a status
expect_grep '^signed in as ada@example.com$' "$scratch/out" && expect_grep '^plan: plus$' "$scratch/out" &&
    expect_grep '^account: acct-stand-in$' "$scratch/out"
expect_exit 0 chatgpt a models && expect_out "gpt-5.2-codex
gpt-5.2"
expect_text <(issuer_verdicts "$a_log") verdicts '["registered oaiapp_stand_in_1", "authorization_code: issued at-1", "token refused: at-1", "refresh_token: issued at-2"]'

# A session on the plan: streamed and not stored, no room sent, the tools in an input item of their
# own, the account named, the reasoning given back to the same model, effort as Responses' (max is
# xhigh).
expect_exit 0 session a --task 'Write c.txt' --model 'chatgpt:gpt-5.2-codex#max' --workspace work --autonomy L3
sid=$(session_id)
expect_out "session $sid for agent ${agent:0:8}
~ Write c first.
→ write_file {\"content\":\"c\",\"path\":\"c.txt\"}
← wrote 1 byte to c.txt
agent: Wrote c.txt.
session $sid: done"
expect_clean "$a_log"
expect_query "$a_log" '[(e["headers"]["authorization"], e["headers"]["chatgpt-account-id"], e["body"]["model"], e["body"]["reasoning"]["effort"], e["body"]["store"], "max_output_tokens" in e["body"]) for e in r]' \
    '[["Bearer at-2", "acct-stand-in", "gpt-5.2-codex", "xhigh", false, false], ["Bearer at-2", "acct-stand-in", "gpt-5.2-codex", "xhigh", false, false]]'
expect_query "$a_log" '[i["type"] for i in r[1]["body"]["input"]]' '["additional_tools", "message", "reasoning", "function_call", "function_call_output"]'
expect_query "$a_log" '[[t["name"] for t in e["body"]["input"][0]["tools"]] == [t["name"] for t in r[0]["body"]["input"][0]["tools"]] and "tools" not in e["body"] for e in r]' '[true, true]'
# No token is kept in the clear anywhere in sion's home.
expect_exit 1 grep -rqaE '(^|[^a-z])(at|rt)-[0-9]' "$SION_HOME"

# Another sign-in while port 1455 is taken comes back on another port; the app is registered once
# and signs in again by the client issued, from the same host.
python3 -c 'import socket, time; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 1455)); s.listen(); time.sleep(60)' &
holder=$!
standin_pids="$standin_pids $holder"
for _ in $(seq 100); do
    python3 -c 'import socket, sys; s = socket.socket(); sys.exit(0 if s.connect_ex(("127.0.0.1", 1455)) == 0 else 1)' && break
    sleep 0.05
done
expect_exit 0 chatgpt a login
expect_query "$a_log" '[e["port"] != 1455 for e in entries if "port" in e]' '[false, true]'
expect_query "$a_log" '[e["verdict"] for e in entries if e.get("endpoint") == "/api/accounts/authorize"]' '["registered oaiapp_stand_in_1", "redirected"]'
expect_grep "^Sign in with ChatGPT in your browser: $a_url/api/accounts/authorize\?client_id=oaiapp_stand_in_1&.*&code_challenge=[A-Za-z0-9_-]{43}$" "$scratch/err"
host=$(query "$a_log" "$hosts[0]")
expect_query "$a_log" "$hosts" "[$host, $host]"
kill "$holder" 2>/dev/null

# Tokens that lapse within a minute are renewed before each call, and a token the API refuses
# renewed again: every renewal spends the newest refresh token (the stand-in refuses an old one).
script b "[{$write_call}, {\"text\": \"Done.\"}]"
start_standin b chatgpt_server "$scratch/scripts/b.json" --key-file "$scratch/issuer.key" --expires-in 30 --refuse-token 1
expect_exit 0 chatgpt b login
rm -f work/c.txt
expect_exit 0 session b --task 'Write c.txt' --model chatgpt:gpt-5.2-codex --workspace work --autonomy L3
expect_grep '^agent: Done\.$' "$scratch/out"
expect_clean "$b_log"
expect_text <(issuer_verdicts "$b_log") verdicts '["registered oaiapp_stand_in_1", "authorization_code: issued at-1", "refresh_token: issued at-2", "token refused: at-2", "refresh_token: issued at-3", "refresh_token: issued at-4"]'
expect_query "$b_log" '[e["headers"]["authorization"] for e in r]' '["Bearer at-3", "Bearer at-4"]'
# Another issuer registers the app anew, from the same host.
expect_query "$b_log" "$hosts" "[$host]"

# A usage limit reported partway is the model being busy: the next model is asked.
script limit '[{"text": "Par", "failed": {"code": "usage_limit_reached", "message": "You have hit your usage limit"}}]'
start_standin l chatgpt_server "$scratch/scripts/limit.json" --key-file "$scratch/issuer.key"
expect_exit 0 chatgpt l login
printf '%s\n' '{"turns": [{"text": "From the script."}]}' >"$scratch/scripts/fallback.json"
expect_exit 0 session l --task 'Hi' --model chatgpt:gpt-5.2 --model "script:$scratch/scripts/fallback.json"
expect_grep '^agent: From the script\.$' "$scratch/out"
expect_clean "$l_log"

# A changed token store is refused, and left as it was.
cp "$SION_HOME/agents/chatgpt.bin" "$scratch/kept.bin"
python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 1; open(p, "wb").write(b)' "$SION_HOME/agents/chatgpt.bin"
cp "$SION_HOME/agents/chatgpt.bin" "$scratch/changed.bin"
expect_exit 65 sion agent chatgpt status &&
    expect_grep "^sion-run: cannot read the ChatGPT sign-in '$SION_HOME/agents/chatgpt.bin': " "$scratch/err"
expect_exit 0 cmp "$SION_HOME/agents/chatgpt.bin" "$scratch/changed.bin"
cp "$scratch/kept.bin" "$SION_HOME/agents/chatgpt.bin"

# logout revokes the refresh token where it was issued and forgets the account; the next sign-in
# there is by the client issued before.
expect_exit 0 sion agent chatgpt logout && expect_out "signed out ada@example.com"
expect_text <(issuer_verdicts "$l_log") verdicts '["registered oaiapp_stand_in_1", "authorization_code: issued at-1", "revoked rt-1"]'
expect_exit 1 sion agent chatgpt status && expect_out "not signed in"
expect_exit 1 sion agent chatgpt logout && expect_err "sion-run: no ChatGPT account is signed in"
expect_exit 0 chatgpt l login && expect_grep "client_id=oaiapp_stand_in_1&" "$scratch/err"
# A store that no longer opens is forgotten too, whole.
cp "$scratch/changed.bin" "$SION_HOME/agents/chatgpt.bin"
expect_exit 0 sion agent chatgpt logout && expect_out "signed out" &&
    expect_grep "^sion-run: note: cannot read the ChatGPT sign-in '$SION_HOME/agents/chatgpt.bin': " "$scratch/err"
expect_exit 1 test -e "$SION_HOME/agents/chatgpt.bin"

# Each refusal of the ID token, the plan not granted, and a sign-in the person refused: nothing is
# kept.
refuses() { # refuses NAME MESSAGE STAND-IN-ARG...
    local name=$1 why=$2
    shift 2
    start_standin "$name" chatgpt_server "$scratch/scripts/a.json" --key-file "$scratch/issuer.key" "$@"
    expect_exit 77 chatgpt "$name" login && expect_grep "^sion-run: $why\$" "$scratch/err"
    expect_exit 1 sion agent chatgpt status
}
refuses s "the ID token's signature does not verify" --id-token bad-signature
refuses k "the ID token's key 'old-key' is not among the issuer's" --id-token unknown-kid
refuses i "the ID token's issuer 'https://issuer.invalid' is not 'http://127.0.0.1:[0-9]+'" --id-token wrong-iss
refuses u "the ID token is for audience '\"app_someone_else\"', not 'oaiapp_stand_in_1'" --id-token wrong-aud
refuses e "the ID token has expired" --id-token expired
refuses n "the ID token's nonce does not match" --id-token wrong-nonce
refuses p "the plan may not be used by other apps: allow chatgpt.tokens.use.direct when signing in" --no-plan
start_standin d chatgpt_server "$scratch/scripts/a.json" --key-file "$scratch/issuer.key" --deny
expect_exit 77 chatgpt d login && expect_err "$(grep '^Sign in' "$scratch/err")
sion-run: the sign-in was refused: access_denied"
expect_exit 1 sion agent chatgpt status

done_testing
