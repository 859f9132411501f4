#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The official MCP conformance suite (tests/conformance, installed by scripts/install-peers) against
# mcpd's client, through tests/conformance/driver.cpp: every client scenario of the release
# (`--suite all`) and the client scenarios the 2026-07-28 revision requires (the alpha's
# `--requirements 2026-07-28`, at that revision's wire). A scenario with any failed or warned check
# fails the suite; no failure is expected. The suite's totals are printed; of the scenarios the
# revision does not score (extensions), those of what mcpd implements (DPoP, workload identity)
# must pass too, and the others are run and shown, and do not count.
# (Kept in tests/conformance, outside ctest, while scenarios fail: see its README.)
. "${SION_SOURCE_DIR:?run the suites through ctest}/tests/e2e/lib.sh"

command -v node >/dev/null || skip "node is not installed (Debian package nodejs)"
command -v npm >/dev/null || skip "npm is not installed (Debian package npm)"
command -v python3 >/dev/null || skip "python3 is not installed (Debian package python3)"
if ! "$SION_SOURCE_DIR/scripts/install-peers" 2>"$scratch/err"; then
    fail "scripts/install-peers failed: $(cat "$scratch/err")"
    done_testing
    exit 1
fi
suite="$SION_SOURCE_DIR/tests/conformance/node_modules"
driver="$SION_BIN/conformance-driver"
[ -x "$driver" ] || { fail "no driver at $driver"; done_testing; exit 1; }
cd "$scratch" || exit 1

# The failed and warned checks of a run's results (one checks.json per scenario), for the log.
show_bad_checks() {
    python3 - "$1" <<'EOF' >&2
import json, pathlib, sys
for path in sorted(pathlib.Path(sys.argv[1]).glob("**/checks.json")):
    for c in json.loads(path.read_text()):
        if c.get("status") in ("FAILURE", "WARNING"):
            why = c.get("errorMessage") or c.get("description", "")
            print(f"  {path.parent.relative_to(sys.argv[1])}: {c['status']} {c['id']}: {why}"[:400])
EOF
}

# run_suite NAME SCORED ARGS...: runs the suite (node ARGS) with Node 22 first on PATH, for the suite
# only, then checks its summary: every scenario named in the file SCORED (every one, when SCORED is
# empty) passed with no warning.
run_suite() {
    local name=$1 scored=$2 status
    shift 2
    PATH="$suite/.bin:$PATH" timeout 600 node "$@" --command "$driver" -o "$scratch/$name" \
        >"$scratch/$name.log" 2>"$scratch/$name.err"
    status=$?
    # The summary: one line a scenario between "=== SUITE SUMMARY ===" and "Total:".
    sed -n '/=== SUITE SUMMARY ===/,/^Total:/p' "$scratch/$name.log" >"$scratch/$name.summary"
    local total
    total=$(grep '^Total:' "$scratch/$name.summary")
    if [ -z "$total" ]; then
        fail "$name: the suite printed no totals (exit $status)"
        tail -n 20 "$scratch/$name.log" "$scratch/$name.err" >&2
        return
    fi
    printf '%s: %s (%s scenarios)\n' "$name" "${total#Total: }" \
        "$(grep -cE '^(✓|✗|-) ' "$scratch/$name.summary")"
    local line scenario bad=0
    while IFS= read -r line; do
        scenario=${line#* }
        scenario=${scenario%%:*}
        if [ -n "$scored" ] && ! grep -qxF -- "$scenario" "$scored"; then
            printf '  not scored: %s\n' "$line"
            continue
        fi
        case $line in
        '✓ '*) ok ;;
        *) fail "$name: $line"; bad=1 ;;
        esac
    done < <(grep -E '^(✓|✗|-) ' "$scratch/$name.summary")
    [ "$bad" -eq 0 ] || show_bad_checks "$scratch/$name"
}

# The release: all 26 client scenarios, every one scored.
run_suite conformance-0.1.16 "" "$suite/conformance/dist/index.js" client --suite all
[ "$(grep -cE '^(✓|✗) ' "$scratch/conformance-0.1.16.summary")" -eq 26 ] && ok ||
    fail "conformance-0.1.16: not 26 scenarios run"

# The 2026-07-28 revision's client requirements, as its frozen file lists them.
requirements="$suite/conformance-next/requirements/2026-07-28.yaml"
sed -n '/^client:/,/^[a-z_]*:$/{/^  - /s/^  - //p}' "$requirements" >"$scratch/required"
[ "$(wc -l <"$scratch/required")" -ge 29 ] && ok ||
    fail "2026-07-28: $(wc -l <"$scratch/required") required client scenarios read"
# The extensions mcpd implements: tokens bound to a key (RFC 9449) and workload identity (SEP-1933).
printf '%s\n' auth/dpop auth/dpop-nonce auth/wif-jwt-bearer >>"$scratch/required"
run_suite conformance-2026-07-28 "$scratch/required" "$suite/conformance-next/dist/index.js" client \
    --requirements 2026-07-28

done_testing
