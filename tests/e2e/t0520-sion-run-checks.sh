#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# diagnostics and run_tests in the bubblewrap sandbox, driven by a scripted model, on small real
# projects made here: a Rust crate (a type error, then one failing test of three), a Python package
# (a syntax error; pytest, 3 pass and 1 fails), a Go module (a vet problem; a failing test and a
# failing subtest), a TypeScript project (two type errors; node --test through npm test), and a
# Makefile whose test target prints the plain closing line. Each answer's head is checked exactly,
# and its detail's counts; the checkers leave no cache in the workspace but cargo's target/. With
# no fitting file the call fails saying what was looked for; without --shell neither tool exists.
. "$(dirname "$0")/lib.sh"
need_bwrap
# The sandbox sees /usr and /bin: the tools must be there, not in ~/.cargo or /usr/local/go.
for tool in cargo go tsc make npm node; do
    [ -x "/usr/bin/$tool" ] || skip "/usr/bin/$tool is missing (scripts/install-deps --test installs it)"
done
/usr/bin/python3 -c 'import pytest' 2>/dev/null || skip "pytest is not installed (Debian package python3-pytest)"

cd "$scratch" || exit 1
expect_exit 0 sion-run create coder && agent=$(cat "$scratch/out")
short=${agent:0:8}

# session NAME: runs the agent on workspace NAME with scripts/NAME.json, --json events in
# events/NAME.jsonl; prints each result as "tool | state | its text up to the end of the output".
mkdir -p scripts events
session() {
    expect_exit 0 timeout 300 sion-run run coder "$short" --task "Check $1" --workspace "$1" --shell \
        --model "script:scripts/$1.json" --autonomy L3 --json </dev/null || return 1
    cp "$scratch/out" "events/$1.jsonl"
    python3 - "events/$1.jsonl" >"$scratch/results" <<'PY' || fail "$1: the events are not as they should be"
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "result":
        head, sep, end = e["text"].partition("\n--- the end of its output\n")
        d = e.get("detail", {})
        counts = " ".join(f"{k}={d[k]}" for k in ("passed", "failed", "skipped") if k in d)
        problems = f"problems={len(d['problems'])}" if "problems" in d else ""
        print(e["tool"], e["state"], counts or problems or "-", sep=" | ")
        print(head)
        if sep:
            assert end.strip(), "an empty end of output"
            print("[the end of its output]")
    if e["event"] == "end":
        assert e["state"] == "done" and e["tainted"] is False, e
PY
}
# expect_results NAME: the results of session NAME are exactly stdin.
expect_results() {
    cat >"$scratch/want"
    if cmp -s "$scratch/want" "$scratch/results"; then ok; else
        fail "$1: the answers differ"
        diff "$scratch/want" "$scratch/results" >&2
    fi
}

# --- Rust: a type error, fixed; then three tests, one failing --------------------------------------
mkdir -p rust/src rust/tests
printf '[package]\nname = "tiny"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n' >rust/Cargo.toml
cat >rust/src/lib.rs <<'RS'
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

pub fn broken() -> i32 {
    "four"
}
RS
printf '#[test]\nfn integration_ok() {\n    assert_eq!(tiny::add(1, 1), 2);\n}\n' >rust/tests/it.rs
cat >scripts/rust.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "diagnostics", "input": {}}]},
  {"calls": [{"tool": "write_file", "input": {"path": "src/lib.rs", "content": "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n\n    #[test]\n    fn adds_wrong() {\n        assert_eq!(add(2, 2), 5);\n    }\n}\n"}}]},
  {"calls": [{"tool": "diagnostics", "input": {}}]},
  {"calls": [{"tool": "run_tests", "input": {}}]},
  {"text": "done"}
]}
JSON
session rust
expect_results rust <<'TXT'
diagnostics | ok | problems=1
1 problem (cargo check):
src/lib.rs:6:5: error[E0308]: mismatched types
write_file | ok | -
wrote 238 bytes to src/lib.rs
diagnostics | ok | problems=0
no problems (cargo check)
run_tests | ok | passed=2 failed=1 skipped=0
run_tests (cargo test): 2 passed, 1 failed
failed: tests::adds_wrong
[the end of its output]
TXT
[ -d rust/target ] && ok || fail "cargo's build cache is not in the workspace's target/"
[ ! -e rust/.cargo ] && ok || fail "cargo left its home in the workspace"

# --- Python: a syntax error; pytest, 3 pass and 1 fails ---------------------------------------------
mkdir -p python/pkg python/tests
printf '[project]\nname = "pkg"\nversion = "0.1"\n' >python/pyproject.toml
printf 'def add(a, b):\n    return a + b\n' >python/pkg/__init__.py
printf 'def f(x):\n    return (x +\n' >python/pkg/bad.py
cat >python/tests/test_add.py <<'PY'
from pkg import add


def test_one():
    assert add(1, 1) == 2


def test_two():
    assert add(2, 2) == 5


def test_three():
    assert add(0, 0) == 0


def test_four():
    assert add(-1, 1) == 0
PY
cat >scripts/python.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "diagnostics", "input": {}}]},
  {"calls": [{"tool": "run_tests", "input": {"timeout": 60}}]},
  {"text": "done"}
]}
JSON
session python
expect_results python <<'TXT'
diagnostics | ok | problems=1
1 problem (compileall):
pkg/bad.py:2: error[SyntaxError]: '(' was never closed
run_tests | ok | passed=3 failed=1 skipped=0
run_tests (pytest): 3 passed, 1 failed
failed: tests/test_add.py::test_two
[the end of its output]
TXT
leftovers=$(find python -name __pycache__ -o -name .pytest_cache -o -name '*.pyc')
[ -z "$leftovers" ] && ok || fail "the Python tools wrote into the workspace: $leftovers"

# --- Go: a vet problem; a failing test and a failing subtest, a package that passes -----------------
mkdir -p go/sub
printf 'module example.com/tiny\n\ngo 1.19\n' >go/go.mod
cat >go/main.go <<'GO'
package main

import "fmt"

func Add(a, b int) int { return a + b }

func main() {
	s := "x"
	fmt.Printf("%d\n", s)
}
GO
cat >go/main_test.go <<'GO'
package main

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("1+2")
	}
}

func TestAddWrong(t *testing.T) {
	if Add(2, 2) != 5 {
		t.Errorf("2+2 is %d, not 5", Add(2, 2))
	}
}

func TestSub(t *testing.T) {
	t.Run("zero", func(t *testing.T) {})
	t.Run("bad", func(t *testing.T) { t.Fail() })
}
GO
printf 'package sub\n\nfunc Two() int { return 2 }\n' >go/sub/sub.go
printf 'package sub\n\nimport "testing"\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal("two")\n\t}\n}\n' >go/sub/sub_test.go
cat >scripts/go.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "diagnostics", "input": {}}]},
  {"calls": [{"tool": "run_tests", "input": {}}]},
  {"text": "done"}
]}
JSON
session go
expect_results go <<'TXT'
diagnostics | ok | problems=1
1 problem (go vet):
main.go:9:2: error: fmt.Printf format %d has arg s of wrong type string
run_tests | ok | passed=3 failed=2 skipped=0
run_tests (go test): 3 passed, 2 failed
failed: TestAddWrong
failed: TestSub/bad
[the end of its output]
TXT

# --- TypeScript: two type errors; node --test through npm test ------------------------------------
mkdir -p ts/src ts/test
printf '{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}, "include": ["src"]}\n' >ts/tsconfig.json
cat >ts/src/index.ts <<'TS'
export function add(a: number, b: number): number {
  return a + b;
}
const n: number = "three";
const o: { a: string } = { a: 1 };
console.log(add(n, 1), o);
TS
printf '{"name": "tiny", "version": "1.0.0", "scripts": {"test": "node --test test/"}}\n' >ts/package.json
cat >ts/test/add.test.js <<'JS'
const test = require('node:test');
const assert = require('node:assert');
test('adds', () => { assert.strictEqual(1 + 1, 2); });
test('adds wrong', () => { assert.strictEqual(2 + 2, 5); });
test('zero', () => { assert.strictEqual(0 + 0, 0); });
JS
cat >scripts/ts.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "diagnostics", "input": {}}]},
  {"calls": [{"tool": "run_tests", "input": {}}]},
  {"text": "done"}
]}
JSON
session ts
expect_results ts <<'TXT'
diagnostics | ok | problems=2
2 problems (tsc):
src/index.ts:4:7: error[TS2322]: Type 'string' is not assignable to type 'number'.
src/index.ts:5:28: error[TS2322]: Type 'number' is not assignable to type 'string'.
run_tests | ok | passed=2 failed=1 skipped=0
run_tests (npm test): 2 passed, 1 failed
failed: adds wrong
[the end of its output]
TXT
[ ! -e ts/.npm ] && [ ! -e ts/dist ] && [ ! -e ts/src/index.js ] && ok ||
    fail "tsc or npm wrote into the workspace: $(ls -A ts)"

# --- make test: the plain closing line; no checker fits ---------------------------------------------
mkdir -p make
printf 'test:\n\t@sh ./t.sh\n' >make/Makefile
printf 'echo "check a: ok"\necho "check b: FAILED"\necho "tests: 4 passed, 1 failed"\nexit 1\n' >make/t.sh
cat >scripts/make.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "run_tests", "input": {}}]},
  {"calls": [{"tool": "diagnostics", "input": {}}]},
  {"calls": [{"tool": "write_file", "input": {"path": "Makefile", "content": "all:\n\ttrue\n"}}]},
  {"calls": [{"tool": "run_tests", "input": {}}]},
  {"calls": [{"tool": "run_tests", "input": {"timeout": 0}}]},
  {"text": "done"}
]}
JSON
session make
expect_results make <<'TXT'
run_tests | ok | passed=4 failed=1 skipped=0
run_tests (make test): 4 passed, 1 failed
[the end of its output]
diagnostics | error | -
no checker fits: looked at the workspace root for Cargo.toml (cargo check), go.mod (go vet), tsconfig.json (tsc), and pyproject.toml, setup.py, setup.cfg, requirements.txt or a .py file (ruff, or python3 -m compileall)
write_file | ok | -
wrote 11 bytes to Makefile
run_tests | error | -
no test runner fits: looked at the workspace root for Cargo.toml (cargo test), package.json with scripts.test (npm test), go.mod (go test), pyproject.toml, setup.py, setup.cfg, pytest.ini, tox.ini, conftest.py, requirements.txt or a .py file (pytest), and a makefile with a test target (make test)
run_tests | error | -
run_tests's 'timeout' is a number of seconds, more than 0
TXT
# The end of its output is what the script printed, last.
python3 - events/make.jsonl <<'PY' && ok || fail "make test's answer does not end with its output"
import json, sys
texts = [json.loads(l)["text"] for l in open(sys.argv[1]) if json.loads(l)["event"] == "result"]
assert texts[0].endswith("--- the end of its output\ncheck a: ok\ncheck b: FAILED\ntests: 4 passed, 1 failed\nmake: *** [Makefile:2: test] Error 1"), texts[0]
PY

# --- a long output (more than the sandbox keeps): its failures, its summary, its end ----------------
mkdir -p long
printf 'test:\n\t@sh ./t.sh\n' >long/Makefile
cat >long/t.sh <<'SH'
echo "test early ... FAILED"
i=0
while [ $i -lt 3000 ]; do echo "noise line $i: the quick brown fox jumps over the lazy dog"; i=$((i + 1)); done
echo "test result: FAILED. 7 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"
echo "the last line"
exit 1
SH
cat >scripts/long.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "run_tests", "input": {}}]},
  {"text": "done"}
]}
JSON
session long
expect_results long <<'TXT'
run_tests | ok | passed=7 failed=1 skipped=0
run_tests (make test): 7 passed, 1 failed
failed: early
[the end of its output]
TXT
python3 - events/long.jsonl <<'PY' && ok || fail "the long output's answer does not end with its last lines"
import json, sys
text = [json.loads(l)["text"] for l in open(sys.argv[1]) if json.loads(l)["event"] == "result"][0]
end = text.split("\n--- the end of its output\n")[1].split("\n")
assert len(end) == 30 and end[0] == "noise line 2973: the quick brown fox jumps over the lazy dog", end[:2]
assert end[-2:] == ["the last line", "make: *** [Makefile:2: test] Error 1"], end[-2:]
PY

# --- without --shell, neither tool is there -----------------------------------------------------------
mkdir -p plain
cat >scripts/plain.json <<'JSON'
{"turns": [
  {"calls": [{"tool": "diagnostics", "input": {}}, {"tool": "run_tests", "input": {}}]},
  {"text": "done"}
]}
JSON
expect_exit 0 timeout 60 sion-run run coder "$short" --task 'Check plain' --workspace plain \
    --model script:scripts/plain.json --autonomy L3 </dev/null
expect_grep '^✗ there is no tool named diagnostics$' "$scratch/out"
expect_grep '^✗ there is no tool named run_tests$' "$scratch/out"

done_testing
