#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages: every page in man/ passes `mandoc -Tlint -Wwarning` without a word, every program the
# build makes has a page in section 1, and each built program's --help and its page's OPTIONS list the
# same long options.
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

# help_options BIN: the long options the Options: block of `BIN --help` lists, one a line, sorted.
help_options() {
    "$1" --help | awk '
        /^Options:/ { on = 1; next }
        on && /^$/ { on = 0 }
        on && match($0, /^ +(-[^-], +)?--[A-Za-z0-9][-A-Za-z0-9]*/) {
            s = substr($0, RSTART, RLENGTH); sub(/.*--/, "", s); print s
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

# compare_options BIN PAGE: one line per option only one side lists; silent when they agree.
compare_options() {
    local prog
    prog=$(basename "$1")
    help_options "$1" >"$scratch/help-opts" || { echo "$prog --help failed"; return; }
    page_options "$2" >"$scratch/page-opts"
    [ -s "$scratch/help-opts" ] || echo "$prog --help lists no options"
    comm -23 "$scratch/help-opts" "$scratch/page-opts" |
        sed "s|^|$prog: --help lists --|; s|\$| but the OPTIONS of $(basename "$2") do not|"
    comm -13 "$scratch/help-opts" "$scratch/page-opts" |
        sed "s|^|$prog: the OPTIONS of $(basename "$2") list --| ; s|\$| but --help does not|"
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
