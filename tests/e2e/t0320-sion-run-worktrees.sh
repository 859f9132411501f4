#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Subagents that change code (seed 000): a session whose workspace is a git repository's root gives
# three subagents spawned together worktrees of their own; each changes a file there, finds no
# repository with git in its sandbox, and its change comes back committed on sion/<name> by "sion
# subagent <name>", with the diffstat and how to look and merge. A name taken gets a number; a
# subagent that changes nothing leaves no branch. A hostile repository (hooks, core.hooksPath,
# core.fsmonitor, signing with a program, a filter) and a hostile subagent (a .gitattributes naming
# that filter, a .git file naming another repository) never get a marker written nor another
# repository touched. A subfolder of a repository, and a session with no shell, get no worktree and
# say why.
. "$(dirname "$0")/lib.sh"
need_bwrap
need_jsonschema
command -v git >/dev/null || skip "git is not installed (Debian package git)"

cd "$scratch" || exit 1
g() { git -C work -c user.name=t -c user.email=t@example.com "$@"; }
mkdir -p work/src
printf 'hello\n' >work/README.md
printf 'print("hi")\n' >work/src/app.py
g init -q -b main && g add -A && g commit -q -m first || exit 1

spawn() { printf '{"tool": "agent_spawn", "input": {"name": "%s", "task": "%s", "budget": 20000, "worktree": true}}' "$1" "$2"; }
printf '{"turns": [{"calls": [%s, %s, %s]}, {"text": "Three fixes are on their branches."}]}\n' \
    "$(spawn fix-a 'Add a note.')" "$(spawn fix-b 'Add a note.')" "$(spawn fix-c 'Add a note.')" >lead.json
# Each subagent proves git finds no repository where it works (git is there: the sandbox has the
# host's /usr), then adds a file of its own.
cat >child.json <<'EOF'
{"turns": [{"calls": [{"tool": "shell", "input": {"command": "command -v git >/dev/null || exit 3; cd /workspace && if git rev-parse --git-dir 2>/dev/null; then exit 4; fi; printf 'noted\\n' > note-$(cat /proc/sys/kernel/random/uuid).txt"}}]},
           {"text": "Fixed it."}]}
EOF
agent=$(sion agent create coder --model script:lead.json) || exit 1
run() { timeout 120 setsid -w sion agent run coder "$agent" --autonomy L6 --delegate "$@" </dev/null; }

# --- three together, each on its branch ----------------------------------------------------------
expect_exit 0 run --model script:lead.json --workspace work --shell --sandbox-timeout 60 \
    --task 'Have three notes added.' --subagent-model script:child.json
expect_grep '^→ agent_spawn \{"budget":20000,"name":"fix-a","task":"Add a note\.","worktree":true\}$' "$scratch/out"
for name in fix-a fix-b fix-c; do
    expect_grep "^← subagent coder-$name \(agent [0-9a-f]{8}, budget 20000 tokens\) worked in session [0-9a-f]{16}: done; it said: Fixed it\. Its calls: shell ok\. Its changes are committed on branch sion/$name: 1 file changed, 1 insertion\(\+\)\. See them with git diff HEAD\.\.\.sion/$name; merge them with git merge sion/$name\.$" "$scratch/out"
    [ "$(g log -1 --format='%an|%cn|%s' "sion/$name")" = "sion subagent $name|sion subagent $name|Add a note." ] &&
        ok || fail "sion/$name: $(g log -1 --format='%an|%cn|%s' "sion/$name")"
    [ "$(g rev-parse "sion/$name^")" = "$(g rev-parse main)" ] && ok || fail "sion/$name is not on HEAD"
    [ "$(g diff --name-only "HEAD...sion/$name" | grep -c '^note-.*\.txt$')" = 1 ] && ok ||
        fail "sion/$name does not add one note: $(g diff --name-only "HEAD...sion/$name")"
done
# Three files, one on each branch; the parent's checkout untouched; the worktrees gone.
[ "$(for b in fix-a fix-b fix-c; do g diff --name-only "HEAD...sion/$b"; done | sort -u | wc -l)" = 3 ] &&
    ok || fail "the three branches do not hold three different files"
[ -z "$(g status --porcelain)" ] && [ "$(g rev-parse HEAD)" = "$(g rev-parse main)" ] && ok ||
    fail "the parent's checkout changed: $(g status --porcelain)"
[ -d home/.cache/sion-worktrees ] && [ -z "$(ls -A home/.cache/sion-worktrees)" ] && ok ||
    fail "worktrees left in the cache: $(ls -A home/.cache/sion-worktrees 2>&1)"
[ -z "$(g for-each-ref refs/sion/)" ] && ok || fail "a ref of fast-import's left: $(g for-each-ref refs/sion/)"
expect_exit 0 g merge -q sion/fix-a && [ "$(ls work/note-*.txt | wc -l)" = 1 ] && ok || fail "sion/fix-a does not merge"

# --- a name taken, nothing changed, and --json under XDG_CACHE_HOME ------------------------------
g branch sion/fix
# The quiet subagent's budget is too small for a single request: it changes nothing.
printf '{"turns": [{"calls": [%s, {"tool": "agent_spawn", "input": {"name": "quiet", "task": "Look.", "budget": 1, "worktree": true}}]}, {"text": "Done."}]}\n' \
    "$(spawn fix 'Add a note.')" >two.json
mkdir -p xdg
expect_exit 0 env XDG_CACHE_HOME="$scratch/xdg" timeout 120 setsid -w sion agent run coder "$agent" \
    --model script:two.json --autonomy L6 --delegate --workspace work --shell --sandbox-timeout 60 \
    --task 'Two.' --subagent-model script:child.json --json </dev/null &&
    expect_json_lines run.event.json "$(wc -l <"$scratch/out")" && cp "$scratch/out" two.jsonl
expect_grep '"text":"subagent coder-fix \(agent [0-9a-f]{8}, budget 20000 tokens\) worked in session [0-9a-f]{16}: done; it said: Fixed it\. Its calls: shell ok\. Its changes are committed on branch sion/fix-2: 1 file changed, 1 insertion\(\+\)\. See them with git diff HEAD\.\.\.sion/fix-2; merge them with git merge sion/fix-2\."' two.jsonl
expect_grep '"text":"subagent coder-quiet \(agent [0-9a-f]{8}, budget 1 tokens\) worked in session [0-9a-f]{16}: out of budget; it said nothing\. It made no calls\. It changed nothing in its worktree: no branch was made\."' two.jsonl
expect_grep '"event":"subagent","state":"started",.*"worktree":"'"$scratch"'/xdg/sion-worktrees/fix-[A-Za-z0-9]{6}"' two.jsonl
expect_grep '"event":"subagent","state":"ended",.*"branch":"sion/fix-2","changed":"1 file changed, 1 insertion\(\+\)"' two.jsonl
[ "$(g rev-parse sion/fix)" = "$(g rev-parse main)" ] && ok || fail "the taken branch sion/fix moved"
g rev-parse -q --verify sion/quiet >/dev/null && fail "a subagent that changed nothing left a branch" || ok
[ -z "$(ls -A xdg/sion-worktrees)" ] && ok || fail "worktrees left under XDG_CACHE_HOME"

# --- a hostile repository and a hostile subagent -------------------------------------------------
cat >marker.sh <<EOF
#!/bin/sh
echo "\$0 \$*" >> "$scratch/marker"
cat
EOF
chmod +x marker.sh
printf '*.py filter=evil\n' >work/.gitattributes
g add .gitattributes && g commit -q -m attributes
git init -q other && before_other=$(cd other && find . | sort | md5sum)
for hook in pre-commit post-commit post-checkout reference-transaction prepare-commit-msg commit-msg; do
    cp marker.sh "work/.git/hooks/$hook"
done
mkdir -p hooks && cp marker.sh hooks/pre-commit && cp marker.sh hooks/reference-transaction
g config core.hooksPath "$scratch/hooks"
g config core.fsmonitor "$scratch/marker.sh"
g config commit.gpgsign true
g config gpg.program "$scratch/marker.sh"
g config filter.evil.clean "$scratch/marker.sh"
g config filter.evil.smudge "$scratch/marker.sh"
g config filter.evil.required true
# The subagent plants a filter for every file, points its worktree's .git at another repository,
# and changes a file the filter would clean.
cat >hostile.json <<EOF
{"turns": [{"calls": [{"tool": "shell", "input": {"command": "cd /workspace && printf '* filter=evil\\\\n' > .gitattributes && printf 'gitdir: $scratch/other/.git\\\\n' > .git && printf 'print(1)\\\\n' > src/app.py"}}]},
           {"text": "Fixed it."}]}
EOF
printf '{"turns": [{"calls": [%s]}, {"text": "Done."}]}\n' "$(spawn evil 'Change the app.')" >one.json
expect_exit 0 run --model script:one.json --workspace work --shell --sandbox-timeout 60 --task 'Hostile.' \
    --subagent-model script:hostile.json
expect_grep "^← subagent coder-evil .*: done; it said: Fixed it\. Its calls: shell ok\. Its changes are committed on branch sion/evil: 2 files changed, 2 insertions\(\+\), 2 deletions\(-\)\." "$scratch/out"
[ ! -e marker ] && ok || fail "a program of the repository's ran: $(cat marker)"
[ "$(cd other && find . | sort | md5sum)" = "$before_other" ] && ok || fail "another repository was touched"
[ "$(git -C work -c core.fsmonitor=false show sion/evil:src/app.py)" = 'print(1)' ] && ok || fail "sion/evil's app.py"
git -C work -c core.fsmonitor=false cat-file -e sion/evil:.git 2>/dev/null && fail "the planted .git was committed" || ok
[ ! -e marker ] && ok || fail "a program of the repository's ran: $(cat marker)"
g config --unset core.fsmonitor && g config --unset core.hooksPath && g config commit.gpgsign false
rm -f work/.git/hooks/*[a-z]

# --- no worktree: a subfolder, no shell ----------------------------------------------------------
expect_exit 0 run --model script:one.json --workspace work/src --shell --task 'Sub.' --subagent-model script:child.json
expect_grep "^✗ agent_spawn gives no worktree here: the workspace $scratch/work/src is a folder of the git repository at $scratch/work, not its root; spawn it without \"worktree\", to work in this session's workspace$" "$scratch/out"
expect_exit 0 run --model script:one.json --workspace work --task 'No shell.' --subagent-model script:child.json
expect_grep "^✗ agent_spawn gives no worktree here: this session has no shell; spawn it without \"worktree\", to work in this session's workspace$" "$scratch/out"
printf '{"turns": [{"calls": [{"tool": "agent_spawn", "input": {"name": "odd", "task": "x", "budget": 100, "worktree": "yes"}}]}, {"text": "Done."}]}\n' >odd.json
expect_exit 0 run --model script:odd.json --workspace work --shell --task 'Odd.' --subagent-model script:child.json
expect_grep "^✗ agent_spawn's worktree is true or false$" "$scratch/out"
g rev-parse -q --verify sion/evil-2 >/dev/null && fail "a refused spawn made a branch" || ok

# --- run by root in a repository of another user's -----------------------------------------------
# What git adds to the repository (objects, the branch) is its owner's, and the worktree is too, so
# that the owner's own git can still clean up after it.
if [ "$(id -u)" = 0 ]; then
    chown -R 65534:65534 work && chmod o+x "$scratch"
    printf '{"turns": [{"calls": [%s]}, {"text": "Done."}]}\n' "$(spawn owned 'Add a note.')" >owned.json
    expect_exit 0 run --model script:owned.json --workspace work --shell --sandbox-timeout 60 --task 'Owned.' \
        --subagent-model script:child.json
    expect_grep "^← subagent coder-owned .*: done; .* Its changes are committed on branch sion/owned: 1 file changed, 1 insertion\(\+\)\." "$scratch/out"
    [ -z "$(find work -not -user 65534 -o -not -group 65534)" ] && ok ||
        fail "files of root's in the repository: $(find work -not -user 65534 | head -3)"
fi

done_testing
