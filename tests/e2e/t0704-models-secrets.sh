#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A provider's error that shows the key: cut short, upper-cased, split across lines, and in base64
# at each of the three offsets it can have in a longer encoded text. None of it reaches the
# transcript, the --json events, show, or any row of sion.db (lib/redact.hpp); what is not the
# key is still shown.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"
. "$SION_SOURCE_DIR/tests/models/standin.sh"

mkdir -p "$scratch/scripts" "$scratch/shown"
cd "$scratch" || exit 1
unset ANTHROPIC_API_KEY ANTHROPIC_BASE_URL SION_MODEL_TIMEOUT
agent=$(sion agent create coder) || exit 1
key=sk-ant-api03-Zq8v2LmN4xR7tK1pW9yB3cD6fH0jS5gA-abc
export ANTHROPIC_API_KEY=$key

# The provider's messages, one failing session each. The key's base64 forms are written out, so
# that the suite does not lean on the code it checks: base64 of "u:KEY" (the key 2 bytes into a
# group of three), of ":KEY" (1) and of "us:KEY" (0).
python3 - "$key" "$scratch/scripts" <<'PY'
import base64, json, sys
key, at = sys.argv[1], sys.argv[2]
b64 = lambda s: base64.b64encode(s.encode()).decode()
messages = {
    "cut": "invalid key prefix " + key[:17] + "…" + key[-3:] + " (it ends " + key[-14:] + ")",
    "upper": "key " + key.upper() + " is not known",
    "split": "key " + key[:20] + "\n" + key[20:35] + "\r\n" + key[35:] + " refused",
    "base64": "basic " + b64("u:" + key) + " " + b64(":" + key) + " " + b64("us:" + key)[:-8] + " refused",
    "url64": "token " + base64.urlsafe_b64encode(("u:" + key).encode()).decode().rstrip("=") + " refused",
}
for name, message in messages.items():
    with open("%s/%s.json" % (at, name), "w") as f:
        json.dump([{"status": 401, "message": message}], f)
PY

# What each run printed, with and without --json, and what show prints of it.
for name in cut upper split base64 url64; do
    start_standin "$name" anthropic_server "$scratch/scripts/$name.json"
    url_var="${name}_url"
    expect_exit 69 run_with ANTHROPIC_BASE_URL="${!url_var}" -- --task "Fail $name" --model anthropic:claude-a
    cp "$scratch/out" "$scratch/shown/$name.txt"
    cat "$scratch/err" >>"$scratch/shown/stderr.txt"
    sid=$(session_id)
    expect_exit 0 sion agent show "$sid" && cp "$scratch/out" "$scratch/shown/$name.show.txt"
    expect_exit 0 sion agent show "$sid" --json && cp "$scratch/out" "$scratch/shown/$name.show.jsonl"
    # The same provider, asked again for the --json run: its one reply is given again.
    start_standin "${name}j" anthropic_server "$scratch/scripts/$name.json"
    url_var="${name}j_url"
    expect_exit 69 run_with ANTHROPIC_BASE_URL="${!url_var}" -- --task "Fail $name" --model anthropic:claude-a --json
    cp "$scratch/out" "$scratch/shown/$name.jsonl"
    cat "$scratch/err" >>"$scratch/shown/stderr.txt"
done

# The last lines, whole: what is the key's is gone, what is not stays. (The cut key's "…abc" is
# three characters of it: too few to be the key.)
last() { tail -n 1 "$scratch/shown/$1.txt" | sed 's/^session [0-9a-f]\{16\}: //'; }
want() { expect_text <(last "$1") "the last line of $1" "failed: the model anthropic:claude-a failed: HTTP 401: $2"; }
want cut 'invalid key prefix [redacted]…abc (it ends [redacted])'
want upper 'key [redacted] is not known'
want split 'key [redacted] refused'
# What is left of the encoded texts is what stands for "u:", ":" and "us:", up to the character
# each shares with the key (and, for the last, cut in the middle of the key, nothing more).
prefixes=$(python3 -c 'import base64, sys; k = sys.argv[1]; e = lambda s: base64.b64encode(s.encode()).decode(); print(e("u:" + k)[:3], e(":" + k)[:2], e("us:" + k)[:4])' "$key")
read -r p2 p1 p0 <<<"$prefixes"
want base64 "basic $p2[redacted] $p1[redacted] $p0[redacted] refused"
expect_text <(printf '%s\n' "$p0") 'what stands for "us:"' 'dXM6'
url2=$(python3 -c 'import base64, sys; print(base64.urlsafe_b64encode(("u:" + sys.argv[1]).encode()).decode()[:3])' "$key")
want url64 "token $url2[redacted] refused"

# The --json events say it as the transcript does, redacted alike.
for name in cut upper split base64 url64; do
    tail -n 1 "$scratch/shown/$name.jsonl" |
        python3 -c 'import json, sys; e = json.load(sys.stdin); print(e["state"] + ": " + e["why"])' >"$scratch/why"
    expect_text "$scratch/why" "the end event of $name" "$(last "$name")"
done

# Nowhere, in any case: no 12 characters of the key, nor 16 of any of its base64 forms.
sqlite3 "$SION_HOME/sion.db" .dump >"$scratch/shown/sion.db.sql"
expect_exit 0 python3 - "$key" "$scratch/shown" <<'PY'
import base64, os, sys
key, at = sys.argv[1], sys.argv[2]
forms = [key]
for pad in ("", "x", "xy"):
    for enc in (base64.b64encode, base64.urlsafe_b64encode):
        text = enc((pad + key).encode()).decode()
        forms.append(text[4:-4])
pieces = {f[i:i + (12 if f == key else 16)].lower() for f in forms for i in range(len(f) - 11)}
pieces = {p for p in pieces if len(p) >= 12}
found = []
names = sorted(os.listdir(at))
for name in names:
    text = open(os.path.join(at, name), encoding="utf-8", errors="replace").read().lower()
    # Split keys are looked for with the line breaks and blanks taken out, too.
    for shown in (text, "".join(text.split()), text.replace("\\n", "").replace("\\r", "")):
        found += ["%s: %s" % (name, p) for p in pieces if p in shown]
print("\n".join(sorted(set(found))))
sys.exit(1 if found or len(names) < 20 else 0)
PY
expect_out ''
# The database does hold the sessions, so the search above had something to search.
expect_exit 0 sqlite3 "$SION_HOME/sion.db" "SELECT count(*) FROM sessions WHERE state = 'failed'" && expect_out 10
expect_grep 'invalid key prefix \[redacted\]…abc' "$scratch/shown/sion.db.sql"

done_testing
