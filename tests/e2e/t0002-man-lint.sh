#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages: every page in man/ passes `mandoc -Tlint -Wwarning` without a word, every program the
# build makes has a page in section 1, and each built program's --help and its page's OPTIONS list the
# same long options. For a program with subcommands, its --help side is the union of its own --help and
# of `PROGRAM SUB --help` for each SUB its usage lines name (hidden subcommands are named nowhere).
. "$(dirname "$0")/lib.sh"

command -v mandoc >/dev/null || skip "mandoc is not installed (Debian package mandoc)"

man_dir="$SION_SOURCE_DIR/man"
shopt -s nullglob
pages=("$man_dir"/*.[1-9])
[ ${#pages[@]} -gt 0 ] && ok || fail "no man pages in $man_dir"

# Lint: nothing printed, exit 0.
for page in "${pages[@]}"; do
    name=${page#"$SION_SOURCE_DIR"/}
    if mandoc -Tlint -Wwarning "$page" >"$scratch/lint" 2>&1 && [ ! -s "$scratch/lint" ]; then
        ok
    else
        fail "mandoc -Tlint -Wwarning $name"
        sed 's/^/  | /' "$scratch/lint" >&2
    fi
done

# Every program of the build has its page.
if [ -f "${SION_BUILD_DIR:-}/sion-programs.txt" ]; then
    while read -r prog; do
        [ -n "$prog" ] || continue
        [ -f "$man_dir/$prog.1" ] && ok || fail "$prog has no man page: man/$prog.1 is missing"
    done <"$SION_BUILD_DIR/sion-programs.txt"
fi

# help_options BIN [SUB]: the long options the Options: block of `BIN [SUB] --help` lists, one a line,
# sorted. Fails when that --help does.
help_options() {
    local text
    text=$("$@" --help) || return 1
    printf '%s\n' "$text" | awk '
        /^Options:/ { on = 1; next }
        on && /^$/ { on = 0 }
        on && match($0, /^ +(-[^-], +)?--[A-Za-z0-9][-A-Za-z0-9]*/) {
            s = substr($0, RSTART, RLENGTH); sub(/.*--/, "", s); print s
        }' | sort -u
}

# usage_subcommands BIN: the subcommands the usage lines of `BIN --help` name, one a line, sorted: the
# word after the program's name where it is a plain lowercase word ("sion-sandbox exec [options]"), not
# an option or a placeholder ("sion <command>"). `help` is left out: `PROGRAM help WORD` opens a manual
# and takes no options of its own.
usage_subcommands() {
    local text
    text=$("$1" --help) || return 1
    printf '%s\n' "$text" | awk -v prog="$(basename "$1")" '
        NR == 1 && !/^usage: / { exit }
        /^$/ { exit }
        {
            line = $0; sub(/^usage: /, "", line)
            if (split(line, w, " ") >= 2 && w[1] == prog && w[2] ~ /^[a-z][a-z0-9-]*$/ && w[2] != "help")
                print w[2]
        }' | sort -u
}

# page_options PAGE: the long options (.Fl -name) in the page's OPTIONS section, one a line, sorted.
page_options() {
    awk '
        /^\.Sh / { on = ($0 ~ /^\.Sh +OPTIONS *$/); next }
        on && /^\./ {
            line = $0
            while (match(line, /Fl +-[A-Za-z0-9][-A-Za-z0-9]*/)) {
                s = substr(line, RSTART, RLENGTH); sub(/^Fl +-/, "", s); print s
                line = substr(line, RSTART + RLENGTH)
            }
        }' "$1" | sort -u
}

# compare_options BIN PAGE: one line per option only one side lists; silent when they agree. An option
# the page lacks is named with the first --help that lists it: the program's own, then its subcommands'
# in order.
compare_options() {
    local prog page sub opt src
    local -a subs=() named=()
    prog=$(basename "$1")
    page=$(basename "$2")
    if ! usage_subcommands "$1" >"$scratch/subs" || ! help_options "$1" >"$scratch/opts"; then
        echo "$prog --help failed"
        return
    fi
    [ -s "$scratch/opts" ] || echo "$prog --help lists no options"
    sed 's/$/\t--help/' "$scratch/opts" >"$scratch/help-src"
    mapfile -t subs <"$scratch/subs"
    for sub in "${subs[@]}"; do
        if ! help_options "$1" "$sub" >"$scratch/opts"; then
            echo "$prog: '$sub --help' failed"
            continue
        fi
        sed "s/\$/\t'$sub --help'/" "$scratch/opts" >>"$scratch/help-src"
        named+=("'$sub --help'")
    done
    # The other places an option was looked for: ", nor 'a --help', 'b --help' or 'c --help'".
    local nor='' i
    for i in "${!named[@]}"; do
        if [ "$i" -eq 0 ]; then
            nor=${named[i]}
        elif [ "$i" -eq $((${#named[@]} - 1)) ]; then
            nor="$nor or ${named[i]}"
        else
            nor="$nor, ${named[i]}"
        fi
    done
    [ -z "$nor" ] || nor=", nor $nor"
    cut -f1 "$scratch/help-src" | sort -u >"$scratch/help-opts"
    page_options "$2" >"$scratch/page-opts"
    comm -23 "$scratch/help-opts" "$scratch/page-opts" | while read -r opt; do
        src=$(awk -F '\t' -v o="$opt" '$1 == o { print $2; exit }' "$scratch/help-src")
        echo "$prog: $src lists --$opt but the OPTIONS of $page do not"
    done
    comm -13 "$scratch/help-opts" "$scratch/page-opts" |
        sed "s|^|$prog: the OPTIONS of $page list --|; s|\$| but --help does not$nor|"
}

# The check itself finds a difference, both ways.
mkdir -p "$scratch/fake"
cat >"$scratch/fake/sion-fake" <<'EOF'
#!/bin/sh
printf 'usage: sion-fake [--only-help]\n\nA stand-in.\n\nOptions:\n      --only-help           x\n  -h, --help                print this help and exit\n'
EOF
chmod +x "$scratch/fake/sion-fake"
printf '.Sh OPTIONS\n.Bl -tag -width Ds\n.It Fl h , Fl -help\n.It Fl -only-page Ar x\n.El\n.Sh SEE ALSO\n.Fl -elsewhere\n' >"$scratch/fake/sion-fake.1"
compare_options "$scratch/fake/sion-fake" "$scratch/fake/sion-fake.1" >"$scratch/diff"
expect_text "$scratch/diff" "a mismatch" "sion-fake: --help lists --only-help but the OPTIONS of sion-fake.1 do not
sion-fake: the OPTIONS of sion-fake.1 list --only-page but --help does not"

# ... and for a program with subcommands, the union of its --help and of each named subcommand's: `stop`
# lists an option the page lacks, the page one nobody lists; `help` and the hidden `secret`, named in no
# usage line as a subcommand, are not asked (their --help would list options the page lacks).
cat >"$scratch/fake/sion-fakesub" <<'EOF'
#!/bin/sh
opts() { printf '\nOptions:\n'; for o; do printf '      --%-22s x\n' "$o"; done; printf '  -h, --help                print this help and exit\n'; }
case $1 in
--help) printf 'usage: sion-fakesub run [options] [--] COMMAND [ARGS...]\n       sion-fakesub stop [options]\n       sion-fakesub <command> [<args>...]\n       sion-fakesub help COMMAND\n\nA stand-in.\n'; opts top ;;
run) printf 'usage: sion-fakesub run [options]\n'; opts top shared run-only ;;
stop) printf 'usage: sion-fakesub stop [options]\n'; opts shared stop-only ;;
help) printf 'usage: sion-fakesub help COMMAND\n'; opts help-only ;;
secret) printf 'usage: sion-fakesub secret\n'; opts secret-only ;;
*) exit 64 ;;
esac
EOF
chmod +x "$scratch/fake/sion-fakesub"
fakesub_page() {
    printf '.Sh OPTIONS\n.Bl -tag -width Ds\n.It Fl -top\n.It Fl -shared Ar x\n.It Fl -run-only\n'
    printf '%s\n' "$@"
    printf '.It Fl h , Fl -help\n.El\n'
}
fakesub_page '.It Fl -only-page' >"$scratch/fake/sion-fakesub.1"
compare_options "$scratch/fake/sion-fakesub" "$scratch/fake/sion-fakesub.1" >"$scratch/diff"
expect_text "$scratch/diff" "a mismatch with subcommands" "sion-fakesub: 'stop --help' lists --stop-only but the OPTIONS of sion-fakesub.1 do not
sion-fakesub: the OPTIONS of sion-fakesub.1 list --only-page but --help does not, nor 'run --help' or 'stop --help'"
fakesub_page '.It Fl -stop-only' >"$scratch/fake/sion-fakesub.1"
compare_options "$scratch/fake/sion-fakesub" "$scratch/fake/sion-fakesub.1" >"$scratch/diff"
expect_text "$scratch/diff" "an agreement with subcommands" ""

# Each built program with a page in section 1: the same long options on both sides.
compared=0
for page in "$man_dir"/*.1; do
    prog=$(basename "$page" .1)
    [ -x "$SION_BIN/$prog" ] || continue
    compared=$((compared + 1))
    compare_options "$SION_BIN/$prog" "$page" >"$scratch/diff"
    if [ -s "$scratch/diff" ]; then
        while read -r line; do fail "$line"; done <"$scratch/diff"
    else
        ok
    fi
done
[ "$compared" -gt 0 ] && ok || fail "no built program in $SION_BIN has a page in man/"

done_testing
