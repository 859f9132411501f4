#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Shell completions. `sion completion bash|zsh|fish` prints scripts that load in each shell from
# Debian (bash through bash-completion's loader, zsh through compinit, fish from its completion
# path, each as the packages install them) and complete, typed on a terminal: the front door's
# words, a program's command, an option, an option's values (fixed words, a provider, a
# directory) and what sion keeps (a session, a hook). `PROGRAM __complete` answers for every
# program's every command with exactly the options its --help lists, offers the agents, profiles,
# sessions, MCP servers, credentials and hooks kept, and makes nothing when there is no home.
. "$(dirname "$0")/lib.sh"

for shell in bash zsh fish; do
    command -v "$shell" >/dev/null || fail "$shell is not installed: scripts/install-deps --test installs it"
done
[ -f /usr/share/bash-completion/bash_completion ] ||
    fail "bash-completion is not installed: scripts/install-deps --test installs it"

# -- sion completion SHELL
expect_exit 64 sion completion && expect_err "sion: give a shell: sion completion bash|zsh|fish"
expect_exit 64 sion completion tcsh && expect_err "sion: unknown shell 'tcsh': give bash, zsh or fish"
expect_exit 64 sion completion bash zsh && expect_err "sion: unexpected operand 'zsh'"
expect_exit 0 sion completion bash && expect_grep '^complete -F _sion_complete sion sion-run ' "$scratch/out"
cmp -s "$scratch/out" "$SION_BUILD_DIR/completions/sion.bash" && ok || fail "sion completion bash is not what the build installs"
bash -n "$scratch/out" && ok || fail "the bash script does not parse"
expect_exit 0 sion completion zsh && expect_grep '^#compdef sion sion-run ' "$scratch/out"
zsh -n "$scratch/out" && ok || fail "the zsh script does not parse"
expect_exit 0 sion completion fish && expect_grep '^    complete -c \$program -f' "$scratch/out"
fish -n "$scratch/out" && ok || fail "the fish script does not parse"

# -- __complete offers what --help lists: each program's commands, and each command's options.
words() { sed 1d "$scratch/out" | cut -f1 | sort; }
for prog in sion-run sion-mcp sion-hooks sion-sandbox; do
    expect_exit 0 "$prog" __complete '' || continue
    commands=$(words)
    from_help=$("$prog" --help | sed -nE "s/^(usage:)? +$prog ([a-z-]+).*/\\2/p" | sort -u)
    [ "$commands" = "$from_help" ] && ok || fail "$prog __complete offers commands '$commands', its --help '$from_help'"
    for command in $commands; do
        expect_exit 0 "$prog" __complete "$command" -- || continue
        offered=$(words)
        listed=$("$prog" "$command" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+' | sort)
        [ "$offered" = "$listed" ] && ok || fail "$prog $command: __complete offers '$offered', --help lists '$listed'"
    done
done
# Asking every command made nothing: no command acted before its parse completed and exited.
[ ! -e "$SION_HOME" ] && ok || fail "__complete made \$SION_HOME: a command acted before parsing"
expect_exit 0 sion __complete '' && expect_out "$(printf 'words\nagent\nsandbox\nmcp\nsetup\ncompletion\nhelp')"
expect_exit 0 sion __complete agent mcp r &&
    expect_out "$(printf 'words\nreview\nremove\nresources')"
expect_exit 0 sion __complete completion '' && expect_out "$(printf 'words\nbash\nzsh\nfish')"
# What `sion help WORD` opens: each row by its last word.
expect_exit 0 sion __complete help s &&
    expect_out "$(printf 'words\nsessions\nshow\nskills\nsandbox\nsetup')"
expect_exit 0 sion __complete nosuch '' && expect_out "words"
expect_exit 0 sion-run __complete nosuch '' && expect_out "words"
# An option's values, fixed or a kind the shell finds, given apart or after '='.
expect_exit 0 sion-run __complete show --color=a && expect_out "$(printf 'words\n--color=auto\n--color=always')"
expect_exit 0 sion-run __complete run --autonomy L6 && expect_out "$(printf 'words\nL6')"
expect_exit 0 sion-run __complete run --workspace '' && expect_out "directories"
expect_exit 0 sion-run __complete run --picture=x && expect_out "$(printf 'files\t--picture=')"
expect_exit 0 sion-sandbox __complete exec -- '' && expect_out "commands"
expect_exit 0 sion-sandbox __complete exec ls -l '' && expect_out "files"
expect_exit 0 sion-run __complete create --model anth && expect_out "$(printf 'words\nanthropic:')"
expect_exit 0 sion-run __complete run --task '' && expect_out "words"

# -- what sion keeps; none of it made by asking
expect_exit 0 env SION_HOME="$scratch/none" sion __complete agent show '' && expect_out "words"
[ ! -e "$scratch/none" ] && ok || fail "completing made \$SION_HOME"
cat >"$scratch/turns.json" <<'EOF'
{"turns": [{"text": "Done."}]}
EOF
expect_exit 0 sion-run create coder --model "script:$scratch/turns.json"
agent=$(cat "$scratch/out")
expect_exit 0 sion-run run coder "${agent:0:8}" --task 'say done'
session=$(sqlite3 "$SION_HOME/sion.db" 'SELECT id FROM sessions')
sqlite3 "$SION_HOME/sion.db" "INSERT INTO mcp_servers (name, config, created) VALUES ('notes', '{}', 0)"
expect_exit 0 sion-hooks add --event run-end -- /bin/true
printf 'sk-1\n' | sion-run credential add MY_API_KEY >/dev/null 2>&1 && ok || fail "credential add"
expect_exit 0 sion-run create lead
lead=$(cat "$scratch/out")
expect_exit 0 sion __complete agent run '' && expect_out "$(printf 'words\ncoder\nlead')"
# The agents of the profile named before them; every agent where none is.
expect_exit 0 sion __complete agent run coder '' && expect_out "$(printf 'words\n%s\tprofile coder' "${agent:0:8}")"
expect_exit 0 sion __complete agent run lead '' && expect_out "$(printf 'words\n%s\tprofile lead' "${lead:0:8}")"
expect_exit 0 sion __complete agent sessions '' &&
    expect_out "$(printf 'words\n%s\tprofile coder\n%s\tprofile lead' "${agent:0:8}" "${lead:0:8}")"
expect_exit 0 sion __complete agent show "${session:0:4}" &&
    expect_out "$(printf 'words\n%s\tdone, agent %s' "$session" "${agent:0:8}")"
expect_exit 0 sion __complete agent run --mcp n && expect_out "$(printf 'words\nnotes')"
expect_exit 0 sion __complete agent mcp give coder '' && expect_out "$(printf 'words\nnotes')"
expect_exit 0 sion __complete agent credential remove '' && expect_out "$(printf 'words\nMY_API_KEY')"
expect_exit 0 sion __complete agent hooks remove '' && expect_out "$(printf 'words\n1\trun-end /bin/true')"

# -- typed on a terminal, each script loaded as the packages install it
mkdir -p "$scratch/bash/completions" "$scratch/zsh" "$scratch/fish" "$scratch/workdir"
for prog in sion sion-run sion-mcp sion-hooks sion-sandbox; do
    cp "$SION_BUILD_DIR/completions/sion.bash" "$scratch/bash/completions/$prog"
    cp "$SION_BUILD_DIR/completions/sion.fish" "$scratch/fish/$prog.fish"
done
cp "$SION_BUILD_DIR/completions/_sion" "$scratch/zsh/_sion"
cat >"$scratch/setup.bash" <<EOF
export BASH_COMPLETION_USER_DIR='$scratch/bash'
source /usr/share/bash-completion/bash_completion
EOF
cat >"$scratch/setup.zsh" <<EOF
fpath=('$scratch/zsh' \$fpath)
autoload -U compinit
compinit -u -d '$scratch/zcompdump'
EOF
cat >"$scratch/setup.fish" <<EOF
set -p fish_complete_path '$scratch/fish'
EOF
typed=(
    'sion ag'                                   'sion agent '
    'sion agent mcp li'                         'sion agent mcp list '
    'sion-run sh'                               'sion-run show '
    'sion agent run --no-proj'                  'sion agent run --no-project-instructions '
    'sion-run show --color=al'                  'sion-run show --color=always '
    'sion agent run --model anth'               'sion agent run --model anthropic:'
    "sion agent show ${session:0:6}"            "sion agent show $session "
    'sion-hooks remove '                        'sion-hooks remove 1 '
    "sion-run run --workspace $scratch/wor"     "sion-run run --workspace $scratch/workdir/"
    'sion sandbox exec trunc'                   'sion sandbox exec truncate '
)
texts=() wants=()
for ((i = 0; i < ${#typed[@]}; i += 2)); do
    texts+=("${typed[i]}")
    wants+=("${typed[i + 1]}")
done
for shell in bash zsh fish; do
    if ! python3 "$SION_SOURCE_DIR/tests/e2e/shell_complete.py" "$shell" "$scratch/setup.$shell" \
        "${texts[@]}" >"$scratch/lines" 2>"$scratch/err"; then
        fail "$shell did not complete: $(cat "$scratch/err")"
        continue
    fi
    mapfile -t got <"$scratch/lines"
    for ((i = 0; i < ${#texts[@]}; i++)); do
        if [ "${got[i]-}" = "${wants[i]}" ]; then
            ok
        else
            fail "$shell completed '${texts[i]}' as '${got[i]-}', want '${wants[i]}'"
        fi
    done
done

done_testing
