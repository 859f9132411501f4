// SPDX-License-Identifier: MIT
// The project's checker and test runner, chosen by what is at the workspace root, and what each
// printed read back: problems with file and line, tests passed and failed by name. Pure text in and
// out: sion-run's diagnostics and run_tests run the commands in the session's sandbox.
//
// A call goes: probe_command() runs in the sandbox and read_root() reads what it printed; a
// choose_* function picks the Plan; the Plan's command runs in the sandbox with its env; the answer
// is made from what it printed (diagnostics_answer, run_tests_answer).
#pragma once

#include "lib/result.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sion::code {

// What a probe in the sandbox saw at the workspace root.
struct Root {
    std::vector<std::string> files;    // the names at the root, dot files too
    std::vector<std::string> programs; // of those the probe asks for, the ones the sandbox has:
                                       // "cargo", "python3", … and "node_modules/.bin/tsc"
    std::string package_json;          // its text; "" without one
    std::string makefile;              // GNUmakefile, makefile or Makefile, the one make reads

    [[nodiscard]] bool has(std::string_view name) const;
    [[nodiscard]] bool has_program(std::string_view name) const;
};

// A /bin/sh command, run in /workspace, whose output read_root() reads: the programs found on PATH,
// package.json and the makefile (32 KiB of each), then the names at the root (2,000 at most).
[[nodiscard]] std::string probe_command();
[[nodiscard]] Root read_root(std::string_view output);

// package.json's scripts.test, "" without one or with npm's placeholder ("no test specified").
[[nodiscard]] std::string npm_test_script(std::string_view package_json);
// Whether the makefile's text has a rule for the target `test`.
[[nodiscard]] bool makefile_has_test(std::string_view makefile);

enum class Kind {
    cargo_check,
    go_vet,
    tsc,
    ruff,
    compileall, // checkers
    cargo_test,
    npm_test,
    go_test,
    pytest,
    make_test, // runners
};

struct Plan {
    Kind kind;
    std::string name;    // as answers name it: "cargo check", "pytest"
    std::string command; // for /bin/sh -c in /workspace; what it prints is for split_output()
    std::vector<std::pair<std::string, std::string>> env; // added to the sandbox's
};

// The first of Cargo.toml (cargo check), go.mod (go vet), tsconfig.json (tsc), a Python project
// (ruff, else python3 -m compileall) at the root whose program the sandbox has. `network`: whether
// the sandbox has one (else cargo runs --offline and Go's proxy is off). Exit::unavailable when
// none fits, saying what was looked for, or which project was found without its program:
//   "no checker fits: Cargo.toml is at the workspace root but the sandbox has no cargo"
[[nodiscard]] Result<Plan> choose_checker(const Root& root, bool network);
// The same for tests: Cargo.toml (cargo test), package.json's scripts.test (npm test), go.mod (go
// test), a Python project (pytest), a makefile with a test target (make test).
[[nodiscard]] Result<Plan> choose_runner(const Root& root, bool network);

// A Plan's output: the lines the parsers read, and the end of it all. A long output (over 60 KiB,
// which the sandbox would cut) comes as the lines that matter to the parser, a marker line, and the
// last 40 KiB; a short one is both at once.
struct Output {
    std::string_view lines;
    std::string_view end;
    bool filtered = false;
};

[[nodiscard]] Output split_output(std::string_view printed);

struct Problem {
    std::string file;     // relative to the workspace root; "" when the tool named none
    int line = 0;         // from 1; 0 when unknown
    int column = 0;       // from 1; 0 when unknown
    std::string severity; // "error", "warning"
    std::string code;     // "E0308", "TS2322", "F401", "SyntaxError"; "" without one
    std::string message;
};

// Each checker's output, read: cargo's --message-format=short, tsc's "file(line,col): error TSxxxx:
// msg", ruff's concise output, compileall's error blocks, go vet's "file:line:col: msg". Lines that
// name no problem are skipped; the same problem twice is listed once.
[[nodiscard]] std::vector<Problem> parse_problems(Kind kind, std::string_view output);
// "src/main.rs:3:5: error[E0308]: mismatched types"; no ":line" or ":column" when unknown.
[[nodiscard]] std::string problem_line(const Problem& problem);

struct Tally {
    bool counted = false; // the output said how many passed and failed
    int passed = 0;
    int failed = 0;
    int skipped = 0;
    std::vector<std::string> failures; // by name, as the runner names them
};

// Each runner's output, read: cargo test's "test result:" lines (summed) and "test x ... FAILED";
// pytest's summary line and FAILED/ERROR lines (-rfE); go test -v's --- PASS/FAIL/SKIP lines (leaf
// tests: a test with subtests is counted by them) and "FAIL pkg [build failed]" lines. npm test and
// make test print what their scripts print: node --test's "# pass N"/"# fail N" (or "ℹ pass N")
// with its "not ok" lines, pytest's or cargo's lines, or the plain "N passed, N failed" line are
// read when there.
[[nodiscard]] Tally parse_tests(Kind kind, std::string_view output);

// How a Plan's command ended, as the sandbox said.
struct Ran {
    int exit = 0;
    std::optional<int> signal;
    bool timed_out = false;
    int64_t wall_ms = 0;
    std::string printed; // its stdout, which has its stderr too
};

// What the model is shown (documented in schemas/tools/diagnostics.json and run_tests.json):
//   "2 problems (cargo check):\nsrc/main.rs:3:5: error[E0308]: mismatched types\n…"
//   "no problems (go vet)"
//   "go vet failed (exit status 1) and named no problem\n--- the end of its output\n…"
[[nodiscard]] std::string diagnostics_answer(const Plan& plan, const Ran& ran,
                                             const std::vector<Problem>& problems);
//   "run_tests (pytest): 3 passed, 1 failed\nfailed: tests/test_x.py::test_two\n--- the end of its
//   output\n…"; "run_tests (make test): exit status 2, no counts in its output\n--- …"
[[nodiscard]] std::string run_tests_answer(const Plan& plan, const Ran& ran, const Tally& tally);

// The last 30 lines of `text`, 4,000 bytes at most (cut at a UTF-8 boundary).
[[nodiscard]] std::string_view output_end(std::string_view text);

} // namespace sion::code
