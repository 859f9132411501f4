#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Skills (seed 000, "Skills' scripts"): the seed's word-count transcript byte for byte from a
# released bundle installed with `sion agent skills install`; list, show and remove; a script
# changed after it was installed is refused, and so is one that did not come with the release;
# skill_write keeps the front matter and writes no script; a skill's script reaches its declared
# host and no other, and only with a network; a secret its skill names reaches the script and
# nothing else (transcript, --json, show, sion.db); hostile bundles (a path out, a link, a device,
# a bomb, a sum that does not match, a file not listed) are each refused with one line and leave
# nothing behind; a workspace overlapping a skill's folder is refused before the session starts.
. "$(dirname "$0")/lib.sh"
need_bwrap
command -v python3 >/dev/null || skip "python3 is not installed"
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed (Debian package sqlite3)"

cd "$scratch" || exit 1
examples="$SION_SOURCE_DIR/examples/skills"
mkdir work
cp "$examples/notes.txt" work/
tar -C "$examples" -czf word-count.tar.gz word-count
id=$(sion agent create coder) || exit 1
agent="${id:0:8}…${id:60:4}"
run() { timeout 120 sion agent run coder "$agent" "$@" </dev/null; }
nothing_left() { # no folder of a failed install, and no row
    [ -z "$(find "$SION_HOME/skills" -mindepth 2 -maxdepth 2 2>/dev/null)" ] &&
        [ "$(sqlite3 "$SION_HOME/sion.db" 'SELECT count(*) FROM skills')" = 0 ] && ok ||
        fail "an install that failed left something: $(find "$SION_HOME/skills" -mindepth 1 2>&1)"
}

# --- hostile bundles, refused with one line, nothing left ----------------------------------------
python3 - "$examples/word-count" <<'PY'
import hashlib, io, os, sys, tarfile, zipfile
src = sys.argv[1]
skill = open(os.path.join(src, "SKILL.md"), "rb").read()
script = open(os.path.join(src, "scripts/count.py"), "rb").read()
def sums(files):
    return "".join(f"{hashlib.sha256(b).hexdigest()}  {p}\n" for p, b in files.items()).encode()
def tar(name, members, extra=None):
    with tarfile.open(name, "w:gz") as t:
        for path, data in members.items():
            info = tarfile.TarInfo(path); info.size = len(data); info.mode = 0o644
            t.addfile(info, io.BytesIO(data))
        for info in extra or []:
            t.addfile(info)
good = {"SKILL.md": skill, "scripts/count.py": script}
tar("traversal.tar.gz", {**good, "../escape.txt": b"out\n", "SHA256SUMS": sums({**good, "../escape.txt": b"out\n"})})
link = tarfile.TarInfo("scripts/link"); link.type = tarfile.SYMTYPE; link.linkname = "/etc/passwd"
tar("link.tar.gz", {**good, "SHA256SUMS": sums(good)}, [link])
dev = tarfile.TarInfo("scripts/null"); dev.type = tarfile.CHRTYPE; dev.devmajor = 1; dev.devminor = 3
tar("device.tar.gz", {**good, "SHA256SUMS": sums(good)}, [dev])
tar("badsum.tar.gz", {**good, "SHA256SUMS": sums({**good, "scripts/count.py": b"print(1)\n"})})
tar("unlisted.tar.gz", {**good, "scripts/extra.sh": b"echo\n", "SHA256SUMS": sums(good)})
# A bomb: a zip whose one member unpacks to far more than 64 MiB.
with zipfile.ZipFile("bomb.zip", "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("SKILL.md", skill)
    z.writestr("big.bin", b"\0" * (80 << 20))
open("notabundle.tar.gz", "wb").write(b"hello, not an archive\n")
PY
for case in "traversal:it holds the path '../escape.txt', which leads outside its folder" \
    "link:it holds a link 'scripts/link' (a bundle holds files and folders only)" \
    "device:it holds 'scripts/null', which is not a file (a bundle holds files and folders only)" \
    "badsum:'scripts/count.py' does not match its SHA-256 in SHA256SUMS" \
    "unlisted:it holds 'scripts/extra.sh', which its SHA256SUMS does not list"; do
    name=${case%%:*}
    expect_exit 65 sion agent skills install coder "$name.tar.gz" &&
        expect_err "sion-run: cannot install $name.tar.gz: ${case#*:}"
    nothing_left
done
expect_exit 65 sion agent skills install coder bomb.zip &&
    expect_err "sion-run: cannot install bomb.zip: 'big.bin' is larger than 16 MiB"
nothing_left
expect_exit 65 sion agent skills install coder notabundle.tar.gz &&
    expect_grep "^sion-run: cannot install notabundle\.tar\.gz: it is not a \.tar\.gz or \.zip bundle" "$scratch/err"
expect_exit 66 sion agent skills install coder nothere.tar.gz &&
    expect_err "sion-run: cannot install nothere.tar.gz: No such file or directory"
expect_exit 66 sion agent skills install nobody word-count.tar.gz &&
    expect_err "sion-run: no profile 'nobody': make it with sion agent create nobody"
nothing_left

# --- installed, listed, shown --------------------------------------------------------------------
expect_exit 0 sion agent skills install coder word-count.tar.gz &&
    expect_out "installed word-count for coder: 2 files checked against its SHA256SUMS"
expect_exit 65 sion agent skills install coder word-count.tar.gz &&
    expect_err "sion-run: cannot install word-count.tar.gz: profile coder has a skill word-count already: remove it first (sion agent skills remove coder word-count)"
expect_exit 0 sion agent skills list coder &&
    expect_out "word-count (installed): Count the words of a text file in the workspace, and the most common ones."
expect_exit 0 sion agent skills list coder --json && expect_json_lines run.skills.json 1 &&
    expect_grep '^\{"profile":"coder","name":"word-count","description":"Count the words of a text file in the workspace, and the most common ones\.","origin":"installed","dir":"[^"]*/skills/coder/word-count","source":"'"$scratch"'/word-count\.tar\.gz"\}$' "$scratch/out"

# --- the seed's transcript, byte for byte once ids are normalised ---------------------------------
expect_exit 0 run --task 'How many words does notes.txt have?' --model "script:$examples/skill.json" \
    --workspace work --shell --autonomy L3
sed -E -e 's/^session [0-9a-f]{16}/session 9c32eec224d6ee13/' -e "s/agent ${id:0:8}\$/agent d85ed254/" "$scratch/out" >got.txt
cat >want.txt <<'TXT'
session 9c32eec224d6ee13 for agent d85ed254
→ skill_read {"name":"word-count"}
← ---
name: word-count
description: Count the words of a text file in the workspace, and the most common ones.
---
Run `scripts/count.py FILE` with skill_run. It prints the number of words,
then the five most common, with their counts.
→ skill_run {"args":["notes.txt"],"name":"word-count","script":"scripts/count.py"}
← exit status 0
--- stdout
22 words
7 the
2 sandbox
2 what
2 agent
2 asks
agent: notes.txt has 22 words; the most common is "the", 7 times.
session 9c32eec224d6ee13: done
TXT
if cmp -s want.txt got.txt; then ok; else
    fail "the word-count transcript differs from the seed's"
    diff want.txt got.txt >&2
fi

# --- a script changed after it was installed, and one that did not come with it -----------------
folder="$SION_HOME/skills/coder/word-count"
chmod u+w "$folder/scripts"
printf 'print("changed")\n' >>"$folder/scripts/count.py"
printf '#!/bin/sh\necho planted\n' >"$folder/scripts/planted.sh"
printf '{"turns": [{"calls": [{"tool": "skill_run", "input": {"name": "word-count", "script": "scripts/count.py", "args": ["notes.txt"]}}, {"tool": "skill_run", "input": {"name": "word-count", "script": "scripts/planted.sh"}}, {"tool": "skill_run", "input": {"name": "word-count", "script": "../../../../etc/passwd"}}]}, {"text": "Refused."}]}\n' >changed.json
expect_exit 0 run --task 'Count again.' --model script:changed.json --workspace work --shell --autonomy L3
expect_grep "^✗ the script scripts/count\.py of word-count changed since it was installed: reinstall the skill \(sion agent skills install\)$" "$scratch/out"
expect_grep "^✗ the script scripts/planted\.sh of word-count did not come with it: only a script of its release runs \(sion agent skills install\)$" "$scratch/out"
expect_grep "^✗ '\.\./\.\./\.\./\.\./etc/passwd' is outside the skill word-count$" "$scratch/out"
grep -q '^planted$' "$scratch/out" && fail "a script that did not come with the release ran" || ok
expect_exit 0 sion agent skills show coder word-count &&
    expect_grep "^  scripts/count\.py \(changed since it was installed\)$" "$scratch/out" &&
    expect_grep "^  scripts/planted\.sh \(not in its release\)$" "$scratch/out"
expect_exit 0 sion agent skills remove coder word-count
[ ! -e "$folder" ] && ok || fail "remove left the installed skill's folder"
expect_exit 66 sion agent skills remove coder word-count &&
    expect_err "sion-run: profile coder has no skill 'word-count' (sion agent skills list coder)"

# --- the operator's own folder: a declared host, a secret, skill_write --------------------------
# A server on the machine's loopback, on a port the kernel picks; stopped at the end.
mkdir site && echo "hello from the host" >site/index.html
python3 - "$scratch/site" "$scratch/port" <<'PY' 2>/dev/null &
import functools, http.server, os, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
open(sys.argv[2] + ".tmp", "w").write(str(server.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
server.timeout = 300
server.serve_forever()
PY
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$scratch"' EXIT
wait_until 10 test -s port || fail "the test server did not start"
port=$(cat port)
other=$((port == 65535 ? port - 1 : port + 1))
mkdir -p fetcher/scripts
cat >fetcher/SKILL.md <<EOF
---
name: fetcher
description: Fetch a page of the test server.
license: MIT
metadata:
  sion-network: 127.0.0.1:$port
  sion-secrets: FETCH_TOKEN
---
Run scripts/get.py URL.
EOF
cat >fetcher/scripts/get.py <<'EOF'
import os, sys, urllib.request
os.environ.pop("NO_PROXY", None); os.environ.pop("no_proxy", None)
print("token:", os.environ.get("FETCH_TOKEN", "none"))
for url in sys.argv[1:]:
    try:
        print(urllib.request.urlopen(url, timeout=10).read().decode().strip())
    except urllib.error.HTTPError as e:
        print("HTTP", e.code)
    except Exception as e:
        print(type(e).__name__)
EOF
secret="s3cr3t-fetch-token-0123456789"
printf '%s\n' "$secret" | sion agent credential add FETCH_TOKEN >/dev/null || fail "credential add"
expect_exit 0 sion agent skills add coder fetcher &&
    expect_out "added fetcher for coder, from $scratch/fetcher"
expect_exit 0 sion agent skills show coder fetcher --json && expect_json_lines run.skills.json 1 &&
    expect_grep '"hosts":\["127\.0\.0\.1:'"$port"'"\],"secrets":\["FETCH_TOKEN"\]' "$scratch/out"
printf '{"turns": [{"calls": [{"tool": "skill_run", "input": {"name": "fetcher", "script": "scripts/get.py", "args": ["http://127.0.0.1:%s/index.html", "http://127.0.0.1:%s/"]}}]}, {"text": "Fetched."}]}\n' "$port" "$other" >fetch.json
expect_exit 0 run --task 'Fetch.' --model script:fetch.json --workspace work --shell --sandbox-network declared --autonomy L6 --json
cp "$scratch/out" fetch.jsonl
expect_grep 'token: \[redacted\]\\nhello from the host\\nHTTP 403\\n' fetch.jsonl
grep -q "$secret" fetch.jsonl && fail "the secret reached --json" || ok
session=$(head -1 fetch.jsonl | python3 -c 'import json,sys; print(json.load(sys.stdin)["session"])')
expect_exit 0 sion agent show "$session"
expect_grep '^token: \[redacted\]$' "$scratch/out"
grep -q "$secret" "$scratch/out" && fail "the secret reached show" || ok
grep -aq "$secret" "$SION_HOME/sion.db" "$SION_HOME"/sion.db-wal 2>/dev/null && fail "the secret reached sion.db" || ok
# A secret the skill names that nobody kept refuses the call, naming how to keep it.
expect_exit 0 sion agent credential remove FETCH_TOKEN
expect_exit 0 run --task 'Fetch.' --model script:fetch.json --workspace work --shell --autonomy L3
expect_grep "^✗ the skill fetcher needs the secret FETCH_TOKEN: keep it with sion agent credential add FETCH_TOKEN$" "$scratch/out"
printf '%s\n' "$secret" | sion agent credential add FETCH_TOKEN >/dev/null || fail "credential add"
# Without a network the script reaches nothing, even its declared host; the call is a write.
expect_exit 0 run --task 'Fetch.' --model script:fetch.json --workspace work --shell --autonomy L3
grep -q '^hello from the host$' "$scratch/out" && fail "a script reached its host with no network" || ok
expect_grep '^(URLError|ConnectionRefusedError)$' "$scratch/out"

# skill_write: instructions only, the front matter kept, a new skill of instructions alone.
printf '{"turns": [{"calls": [{"tool": "skill_write", "input": {"name": "fetcher", "instructions": "Run scripts/get.py URL, one URL at a time."}}, {"tool": "skill_write", "input": {"name": "notes", "description": "How to keep notes.", "instructions": "Keep them short."}}, {"tool": "skill_write", "input": {"name": "other", "instructions": "Do it."}}, {"tool": "skill_write", "input": {"name": "fetcher", "instructions": "x", "script": "scripts/get.py", "content": "print(1)"}}]}, {"text": "Written."}]}\n' >write.json
expect_exit 0 run --task 'Write.' --model script:write.json --workspace work --shell --autonomy L6
expect_grep "^← wrote the instructions of fetcher \([0-9]+ bytes\)$" "$scratch/out"
expect_grep "^✗ a new skill needs a description: what it is for, and when to use it$" "$scratch/out"
expect_grep "^✗ skill_write writes a skill's instructions only, never a script or another file: give 'name', 'instructions' and 'description', not '(script|content)'$" "$scratch/out"
[ "$(head -1 fetcher/scripts/get.py)" = "import os, sys, urllib.request" ] && ok || fail "skill_write changed a script"
[ "$(sed -n 5,8p fetcher/SKILL.md)" = "metadata:
  sion-network: 127.0.0.1:$port
  sion-secrets: FETCH_TOKEN
---" ] && ok || fail "skill_write changed the front matter: $(cat fetcher/SKILL.md)"
[ "$(tail -1 fetcher/SKILL.md)" = "Run scripts/get.py URL, one URL at a time." ] && ok || fail "skill_write did not write"
expect_exit 0 sion agent skills list coder
expect_out "fetcher (added): Fetch a page of the test server.
notes (written): How to keep notes."

# --- pre-flight: a workspace overlapping a skill's folder ----------------------------------------
expect_exit 1 run --task 'x' --model script:fetch.json --workspace fetcher/scripts
expect_err "error: the workspace $scratch/fetcher/scripts and the folder of the skill fetcher, $scratch/fetcher, overlap: give a workspace apart from it"
# Nor an MCP server's directory (seed 000, "What the runtime checks first").
mkdir -p fetcher/notes
expect_exit 0 sion agent mcp add notes --dir fetcher/notes -- python3 "$SION_SOURCE_DIR/examples/mcp-notes/notes-server.py"
expect_exit 1 run --task 'x' --model script:fetch.json --mcp notes
expect_err "error: the directory $scratch/fetcher/notes of the MCP server notes and the folder of the skill fetcher, $scratch/fetcher, overlap: give the server a directory apart from it"

done_testing
