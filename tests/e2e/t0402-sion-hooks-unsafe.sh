#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A hooks file that anyone but its owner may change (the file, its directory, or $SION_HOME above
# it), one that is a link, and one that is not well formed: every command refuses it with the
# message that says which and how (exit 77, or 65), no hook runs, and the file is left as it was.
# As root too: the checks are of modes and owners, which root's rights do not change.
. "$(dirname "$0")/lib.sh"

agents="$SION_HOME/agents"
hooks_file="$agents/hooks.json"
mkdir -p "$scratch/hooks"
printf '#!/bin/sh\ntouch "%s/ran"\n' "$scratch" >"$scratch/hooks/mark.sh"
chmod +x "$scratch/hooks/mark.sh"
expect_exit 0 sion-hooks add --event before-tool -- "$scratch/hooks/mark.sh"
expect_exit 0 sion-hooks add --event run-start -- "$scratch/hooks/mark.sh"
expect_exit 0 sion-hooks check && expect_out "ok: 2 hooks in '$hooks_file'"
cp "$hooks_file" "$scratch/good.json"
event='{"event":"before-tool","session":"9c32eec224d6ee13","tool":"shell","input":{"command":"ls"}}'

# every_command_refuses CODE MESSAGE [ADD-MESSAGE]: fire, check, list, add and remove each exit CODE
# with MESSAGE on stderr (add with ADD-MESSAGE, if given), no hook runs, and the file is as it was.
every_command_refuses() {
    local code=$1 message=$2 add_message=${3:-$2} before
    before=$(cat "$hooks_file" 2>/dev/null)
    rm -f "$scratch/ran"
    printf '%s\n' "$event" >"$scratch/event"
    expect_exit "$code" sion-hooks fire before-tool <"$scratch/event" && expect_err "sion-hooks: $message" && expect_out ""
    expect_exit "$code" sion-hooks check && expect_err "sion-hooks: $message" && expect_out ""
    expect_exit "$code" sion-hooks list && expect_err "sion-hooks: $message"
    expect_exit "$code" sion-hooks add --event run-end -- /bin/true && expect_err "sion-hooks: $add_message"
    expect_exit "$code" sion-hooks remove 1 && expect_err "sion-hooks: $message"
    expect_exit "$code" sion agent hooks list && expect_err "sion-hooks: $message"
    [ ! -e "$scratch/ran" ] && ok || fail "a hook ran from a refused hooks file"
    [ "$(cat "$hooks_file" 2>/dev/null)" = "$before" ] && ok || fail "a command changed the refused hooks file"
}

# The file, writable by others, then by its group.
chmod 666 "$hooks_file"
every_command_refuses 77 "refusing hooks file '$hooks_file': others may write it (chmod go-w '$hooks_file')"
chmod 620 "$hooks_file"
every_command_refuses 77 "refusing hooks file '$hooks_file': the group may write it (chmod go-w '$hooks_file')"
# The fix the message names works.
chmod go-w "$hooks_file"
expect_exit 0 sion-hooks check && expect_out "ok: 2 hooks in '$hooks_file'"

# Its directory, writable by others: whoever may write it may replace the file.
chmod 777 "$agents"
every_command_refuses 77 "refusing hooks file '$hooks_file': others may write its directory (chmod go-w '$agents')"
# ... and without the file, whoever may write the directory may put one there (or has removed it).
mv "$hooks_file" "$scratch/aside.json"
every_command_refuses 77 "refusing hooks directory '$agents': others may write it (chmod go-w '$agents')"
mv "$scratch/aside.json" "$hooks_file"
chmod go-w "$agents"
expect_exit 0 sion-hooks check
# $SION_HOME above it, writable by its group.
chmod 770 "$SION_HOME"
# (add, which makes $SION_HOME when it is missing, checks it as every program that writes state does.)
every_command_refuses 77 "refusing hooks directory '$agents': the group may write its directory (chmod go-w '$SION_HOME')" \
    "refusing SION_HOME '$SION_HOME': the group may write it (chmod 700 '$SION_HOME')"
chmod 700 "$SION_HOME"

# A link, even to a good file.
mv "$hooks_file" "$scratch/linked.json"
ln -s "$scratch/linked.json" "$hooks_file"
every_command_refuses 77 "refusing hooks file '$hooks_file': it is a symbolic link (put the file itself there)"
rm "$hooks_file" && mv "$scratch/linked.json" "$hooks_file"

# Owned by someone else (only root can make one).
if [ "$(id -u)" -eq 0 ]; then
    chown 65534 "$hooks_file"
    every_command_refuses 77 "refusing hooks file '$hooks_file': it is owned by uid 65534, not by you (chown 0 '$hooks_file')"
    chown 0 "$hooks_file"
fi
expect_exit 0 sion-hooks check && expect_out "ok: 2 hooks in '$hooks_file'"

# Not well formed: a clear error, exit 65, and the file untouched.
malformed() { # malformed TEXT MESSAGE
    printf '%s\n' "$1" >"$hooks_file"
    chmod 600 "$hooks_file"
    every_command_refuses 65 "invalid hooks file '$hooks_file': $2"
}
malformed '{"hooks": [' "invalid JSON at byte 12"
malformed '' "invalid JSON at byte 1"
malformed '{"hooks": [{"event": "before-tol", "command": ["/g"]}]}' \
    "hook 1: member 'event': unknown event 'before-tol' (give before-tool, after-tool, run-start or run-end)"
malformed '{"hooks": [{"event": "run-end", "command": ["/g"]}, {"event": "before-tool", "tool": "shell", "command": ["/g"]}]}' \
    "hook 2: unknown member 'tool' (a hook has event, tools, timeout and command)"
malformed '{"hooks": [{"event": "run-start", "tools": ["shell"], "command": ["/g"]}]}' \
    "hook 1: a run-start hook is for no tool, yet it has tool patterns"
malformed '{"hooks": [{"event": "before-tool", "timeout": 0, "command": ["/g"]}]}' \
    "hook 1: member 'timeout' is 0, not 1 to 3600 seconds"
malformed '{"hooks": [{"event": "before-tool", "command": ["guard/x.sh"]}]}' \
    "hook 1: the command 'guard/x.sh' is a relative path: give an absolute path, or a bare name found on PATH"
malformed '{"hooks": {}}' "member 'hooks' is an object, not an array"
malformed '{"hook": []}' "unknown member 'hook' (the file has only 'hooks')"
printf '{"hooks": [{"event": "run-end", "command": ["/g\377"]}]}\n' >"$hooks_file"
every_command_refuses 65 "invalid hooks file '$hooks_file': invalid UTF-8 at byte 47"
head -c 2000000 /dev/zero | tr '\0' ' ' >"$hooks_file"
every_command_refuses 65 "invalid hooks file '$hooks_file': larger than 1048576 bytes"
rm "$hooks_file" && mkdir "$hooks_file"
every_command_refuses 65 "invalid hooks file '$hooks_file': not a regular file"
rmdir "$hooks_file"

# No file at all is no hooks; and the good file back is used again.
expect_exit 0 sion-hooks check && expect_out "ok: no hooks ('$hooks_file' does not exist)"
cp "$scratch/good.json" "$hooks_file" && chmod 600 "$hooks_file"
printf '%s\n' "$event" >"$scratch/event"
expect_exit 0 sion-hooks fire before-tool <"$scratch/event" &&
    expect_grep '^\{"event":"before-tool","allow":true,"ran":1,"failures":\[\],"hooks":\[\{"hook":1,"command":"[^"]*mark.sh","start_us":[0-9.e+]+,"end_us":[0-9.e+]+\}\]\}$' "$scratch/out"
[ -e "$scratch/ran" ] && ok || fail "the hook did not run once the file was fixed"

# A SION_HOME that is not a path: bad configuration.
SION_HOME=relative expect_exit 78 sion-hooks fire before-tool <"$scratch/event" &&
    expect_err "sion-hooks: invalid SION_HOME 'relative': not an absolute path"

done_testing
