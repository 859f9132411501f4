// SPDX-License-Identifier: MIT
// session/code/checks: which checker and runner a workspace root gets, and each tool's output read
// back. The outputs in tests/fixtures/checks/ were captured from the real tools (Debian 12's cargo
// 0.66, go 1.19, tsc 4.8, pytest 7.2, python 3.11, node 20) on small projects like t0520's; ruff is
// not in Debian 12, so its lines are those of ruff's documentation.
#include "session/code/checks.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sion::code {
namespace {

std::string fixture(const std::string& name) {
    const char* dir = std::getenv("SION_TEST_SOURCE_DIR"); // NOLINT(concurrency-mt-unsafe)
    std::string path = std::string(dir != nullptr ? dir : ".") + "/tests/fixtures/checks/" + name;
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.good()) << "cannot read " << path;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

Root root_of(std::vector<std::string> files, std::vector<std::string> programs) {
    Root root;
    root.files = std::move(files);
    root.programs = std::move(programs);
    return root;
}

std::vector<std::string> lines_of(const std::vector<Problem>& problems) {
    std::vector<std::string> out;
    for (const auto& p : problems)
        out.push_back(problem_line(p));
    return out;
}

const std::vector<std::string> k_all = {"cargo",   "go",     "tsc", "ruff",
                                        "python3", "pytest", "npm", "make"};

// --- detection
// ------------------------------------------------------------------------------------

TEST(Probe, ReadsProgramsFilesAndTheirTexts) {
    std::string out = "\036programs\n/usr/bin/cargo\n/usr/bin/python3\nnode_modules/.bin/tsc\n"
                      "\036file package.json\n{\"scripts\": {\"test\": \"node --test\"}}\n\n"
                      "\036file Makefile\ntest:\n\tfalse\n\n"
                      "\036files\n.git\nCargo.toml\nsrc\n";
    Root root = read_root(out);
    EXPECT_EQ(root.programs,
              (std::vector<std::string>{"cargo", "python3", "node_modules/.bin/tsc"}));
    EXPECT_EQ(root.files, (std::vector<std::string>{".git", "Cargo.toml", "src"}));
    EXPECT_EQ(npm_test_script(root.package_json), "node --test");
    EXPECT_TRUE(makefile_has_test(root.makefile));
    EXPECT_NE(probe_command().find("command -v"), std::string::npos);
}

TEST(Probe, TheFirstMakefileIsTheOneMakeReads) {
    Root root = read_root("\036file GNUmakefile\nall:\n\036file Makefile\ntest:\n");
    EXPECT_EQ(root.makefile, "all:\n");
}

TEST(Detect, NpmPlaceholderAndBadJsonAreNoTestScript) {
    EXPECT_EQ(
        npm_test_script(R"({"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}})"),
        "");
    EXPECT_EQ(npm_test_script("{not json"), "");
    EXPECT_EQ(npm_test_script(R"({"scripts":{"build":"tsc"}})"), "");
    EXPECT_EQ(npm_test_script(R"({"scripts":{"test":" jest "}})"), "jest");
}

TEST(Detect, MakefileTestTargets) {
    struct Row {
        const char* text;
        bool has;
    };

    const Row rows[] = {
        {"test:\n\t./run\n", true},
        {"all: build\ncheck test: all\n\t./run\n", true},
        {"test::\n", true},
        {".PHONY: test\nall:\n", false},
        {"test := unit\n", false},
        {"test ::= unit\n", false},
        {"TESTS = a:b test\n", false},
        {"\ttest: x\n", false},
        {"# test:\n", false},
        {"tests:\n", false},
    };
    for (const auto& r : rows)
        EXPECT_EQ(makefile_has_test(r.text), r.has) << r.text;
}

TEST(Detect, CheckerTable) {
    struct Row {
        std::vector<std::string> files;
        std::vector<std::string> programs;
        Kind kind;
        const char* name;
        const char* command; // a part of it
    };

    const Row rows[] = {
        {{"Cargo.toml", "go.mod"},
         k_all,
         Kind::cargo_check,
         "cargo check",
         "cargo check --all-targets --message-format=short --offline"},
        {{"Cargo.toml", "go.mod"}, {"go"}, Kind::go_vet, "go vet", "go vet ./..."},
        {{"tsconfig.json", "package.json"},
         k_all,
         Kind::tsc,
         "tsc",
         "(tsc --noEmit --pretty false)"},
        {{"tsconfig.json"},
         {"tsc", "node_modules/.bin/tsc"},
         Kind::tsc,
         "tsc",
         "node_modules/.bin/tsc --noEmit"},
        {{"pyproject.toml"},
         k_all,
         Kind::ruff,
         "ruff",
         "ruff check --output-format=concise --no-cache ."},
        {{"pyproject.toml"},
         {"python3"},
         Kind::compileall,
         "compileall",
         "python3 -m compileall -q"},
        {{"main.py"}, {"python3"}, Kind::compileall, "compileall", "compileall"},
        {{"setup.cfg"}, {"python3"}, Kind::compileall, "compileall", "compileall"},
    };
    for (const auto& r : rows) {
        auto plan = choose_checker(root_of(r.files, r.programs), false);
        ASSERT_TRUE(plan) << r.name << ": " << plan.error().message();
        EXPECT_EQ(plan->kind, r.kind);
        EXPECT_EQ(plan->name, r.name);
        EXPECT_NE(plan->command.find(r.command), std::string::npos) << plan->command;
    }
}

TEST(Detect, RunnerTable) {
    Root npm = root_of({"package.json", "go.mod"}, k_all);
    npm.package_json = R"({"scripts":{"test":"node --test"}})";
    Root placeholder = npm;
    placeholder.package_json =
        R"({"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}})";
    Root make = root_of({"Makefile", "README"}, k_all);
    make.makefile = "test:\n\t./t.sh\n";

    struct Row {
        Root root;
        Kind kind;
        const char* name;
        const char* command;
    };

    const Row rows[] = {
        {root_of({"Cargo.toml", "package.json"}, k_all), Kind::cargo_test, "cargo test",
         "(cargo test --no-fail-fast --offline)"},
        {npm, Kind::npm_test, "npm test", "(npm test)"},
        {placeholder, Kind::go_test, "go test", "(go test -vet=off -v ./...)"},
        {root_of({"go.mod"}, k_all), Kind::go_test, "go test", "go test"},
        {root_of({"conftest.py", "tests"}, k_all), Kind::pytest, "pytest",
         "(python3 -m pytest -rfE -p no:cacheprovider)"},
        {root_of({"setup.py"}, {"python3", "pytest-3"}), Kind::pytest, "pytest", "pytest"},
        {make, Kind::make_test, "make test", "(make test)"},
    };
    for (const auto& r : rows) {
        auto plan = choose_runner(r.root, false);
        ASSERT_TRUE(plan) << r.name << ": " << plan.error().message();
        EXPECT_EQ(plan->kind, r.kind);
        EXPECT_EQ(plan->name, r.name);
        EXPECT_NE(plan->command.find(r.command), std::string::npos) << plan->command;
    }
}

TEST(Detect, TheNetworkDecidesOfflineAndTheGoProxy) {
    auto online = choose_checker(root_of({"Cargo.toml"}, {"cargo"}), true);
    ASSERT_TRUE(online);
    EXPECT_EQ(online->command.find("--offline"), std::string::npos);
    EXPECT_EQ(online->env, (std::vector<std::pair<std::string, std::string>>{
                               {"CARGO_HOME", "/tmp/cargo"}, {"CARGO_TERM_COLOR", "never"}}));
    auto offline = choose_runner(root_of({"go.mod"}, {"go"}), false);
    ASSERT_TRUE(offline);
    EXPECT_EQ(offline->env,
              (std::vector<std::pair<std::string, std::string>>{{"GOCACHE", "/tmp/go-cache"},
                                                                {"GOPATH", "/tmp/go"},
                                                                {"GOFLAGS", "-mod=mod"},
                                                                {"GOPROXY", "off"},
                                                                {"GOTOOLCHAIN", "local"}}));
    auto go_online = choose_runner(root_of({"go.mod"}, {"go"}), true);
    ASSERT_TRUE(go_online);
    EXPECT_EQ(go_online->env.size(), 3U);
    auto pytest = choose_runner(root_of({"x.py"}, {"python3", "pytest"}), false);
    ASSERT_TRUE(pytest);
    EXPECT_EQ(pytest->env[0],
              (std::pair<std::string, std::string>{"PYTHONDONTWRITEBYTECODE", "1"}));
}

TEST(Detect, NothingFitsSaysWhatWasLookedFor) {
    auto none = choose_checker(root_of({"README.md", "docs"}, k_all), false);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().exit(), Exit::unavailable);
    EXPECT_EQ(none.error().message(), "no checker fits: looked at the workspace root for "
                                      "Cargo.toml (cargo check), go.mod (go vet), "
                                      "tsconfig.json (tsc), and pyproject.toml, setup.py, "
                                      "setup.cfg, requirements.txt or a .py file "
                                      "(ruff, or python3 -m compileall)");
    auto runner = choose_runner(root_of({"README.md"}, k_all), false);
    ASSERT_FALSE(runner);
    EXPECT_EQ(
        runner.error().message(),
        "no test runner fits: looked at the workspace root for Cargo.toml (cargo test), "
        "package.json "
        "with scripts.test (npm test), go.mod (go test), pyproject.toml, setup.py, setup.cfg, "
        "pytest.ini, tox.ini, conftest.py, requirements.txt or a .py file (pytest), and a makefile "
        "with a test target (make test)");
}

TEST(Detect, AProjectWithoutItsProgramSaysWhich) {
    auto none = choose_checker(root_of({"Cargo.toml", "tsconfig.json"}, {"make"}), false);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().message(),
              "no checker fits: Cargo.toml is at the workspace root but the sandbox has no cargo; "
              "tsconfig.json is at the workspace root but the sandbox has no tsc (nor "
              "node_modules/.bin/tsc)");
    // A project whose program is missing gives way to the next that fits.
    Root both = root_of({"Cargo.toml", "Makefile"}, {"make"});
    both.makefile = "test:\n";
    auto make = choose_runner(both, false);
    ASSERT_TRUE(make);
    EXPECT_EQ(make->kind, Kind::make_test);
    auto python = choose_runner(root_of({"pyproject.toml"}, {"python3"}), false);
    ASSERT_FALSE(python);
    EXPECT_EQ(python.error().message(), "no test runner fits: a Python project is at the workspace "
                                        "root but the sandbox has no pytest");
}

// --- output -------------------------------------------------------------------------------------

TEST(Output, ShortOutputIsBothLinesAndEnd) {
    Output out = split_output("a\nb\n");
    EXPECT_FALSE(out.filtered);
    EXPECT_EQ(out.lines, "a\nb\n");
    EXPECT_EQ(out.end, "a\nb\n");
    Output cut = split_output("test result: ok. 1 passed; 0 failed;\n\n\036 the end\nlast lines\n");
    EXPECT_TRUE(cut.filtered);
    EXPECT_EQ(cut.lines, "test result: ok. 1 passed; 0 failed;\n");
    EXPECT_EQ(cut.end, "last lines\n");
}

TEST(Output, TheEndIsThirtyLinesAndFourThousandBytes) {
    std::string text;
    for (int i = 1; i <= 100; ++i)
        text += "line " + std::to_string(i) + "\n";
    std::string_view end = output_end(text);
    EXPECT_EQ(end.substr(0, 8), "line 71\n");
    EXPECT_EQ(end.substr(end.size() - 8), "line 100");
    std::string wide(3000, 'x');
    std::string both = "a\n" + wide + "\n" + wide + "\n";
    std::string_view two = output_end(both);
    EXPECT_EQ(two, wide);                           // whole lines, within 4,000 bytes
    std::string one = "é" + std::string(4500, 'y'); // one long line, cut at a UTF-8 boundary
    std::string_view kept = output_end(one);
    EXPECT_EQ(kept.size(), 4000U);
    EXPECT_EQ(output_end("\n\n"), "");
}

// --- checkers -----------------------------------------------------------------------------------

TEST(Parse, CargoShort) {
    EXPECT_EQ(lines_of(parse_problems(Kind::cargo_check, fixture("cargo_check.txt"))),
              (std::vector<std::string>{"src/lib.rs:7:5: error[E0308]: mismatched types"}));
    EXPECT_EQ(lines_of(parse_problems(Kind::cargo_check, fixture("cargo_check_warn.txt"))),
              (std::vector<std::string>{"src/lib.rs:6:9: warning: unused variable: `unused`"}));
    // lib and lib test report the same warning: listed once.
    EXPECT_EQ(
        parse_problems(Kind::cargo_check, "src/a.rs:1:2: warning: x\nsrc/a.rs:1:2: warning: x\n")
            .size(),
        1U);
}

TEST(Parse, Tsc) {
    auto problems = parse_problems(Kind::tsc, fixture("tsc.txt"));
    EXPECT_EQ(
        lines_of(problems),
        (std::vector<std::string>{
            "src/index.ts:4:7: error[TS2322]: Type 'string' is not assignable to type 'number'.",
            "src/index.ts:5:28: error[TS2322]: Type 'number' is not assignable to type "
            "'string'."}));
    EXPECT_EQ(lines_of(parse_problems(Kind::tsc, fixture("tsc_opt.txt"))),
              (std::vector<std::string>{"error[TS5023]: Unknown compiler option '--badopt'."}));
    auto continued = parse_problems(Kind::tsc, "a.ts(1,1): error TS2741: Property 'b' is missing.\n"
                                               "  'b' is declared here.\n");
    ASSERT_EQ(continued.size(), 1U);
    EXPECT_EQ(continued[0].message, "Property 'b' is missing. 'b' is declared here.");
}

TEST(Parse, Ruff) {
    const char* out = "script.py:1:1: I001 [*] Import block is un-sorted or un-formatted\n"
                      "script.py:1:21: F401 [*] `itertools` imported but unused\n"
                      "input.py:3:1: SyntaxError: Cannot use `match` statement on Python 3.9\n"
                      "input.py:3:1: invalid-syntax: Cannot use `match` statement on Python 3.9\n"
                      "Found 4 errors.\n"
                      "[*] 2 fixable with the `--fix` option.\n";
    EXPECT_EQ(
        lines_of(parse_problems(Kind::ruff, out)),
        (std::vector<std::string>{
            "script.py:1:1: error[I001]: Import block is un-sorted or un-formatted",
            "script.py:1:21: error[F401]: `itertools` imported but unused",
            "input.py:3:1: error[SyntaxError]: Cannot use `match` statement on Python 3.9",
            "input.py:3:1: error[invalid-syntax]: Cannot use `match` statement on Python 3.9"}));
}

TEST(Parse, Compileall) {
    EXPECT_EQ(lines_of(parse_problems(Kind::compileall, fixture("compileall.txt"))),
              (std::vector<std::string>{"pkg/bad.py:2: error[SyntaxError]: '(' was never closed",
                                        "pkg/bad2.py:4: error[IndentationError]: unindent does not "
                                        "match any outer indentation level"}));
}

TEST(Parse, GoVet) {
    EXPECT_EQ(lines_of(parse_problems(Kind::go_vet, fixture("govet.txt"))),
              (std::vector<std::string>{
                  "main.go:9:2: error: fmt.Printf format %d has arg s of wrong type string"}));
    EXPECT_EQ(lines_of(parse_problems(Kind::go_vet, fixture("govet_type.txt"))),
              (std::vector<std::string>{
                  "bad/bad.go:3:23: error: cannot use \"s\" (untyped string constant) as int value "
                  "in return statement",
                  "main.go:9:2: error: fmt.Printf format %d has arg s of wrong type string"}));
}

TEST(Parse, ProblemLineLeavesOutWhatIsUnknown) {
    EXPECT_EQ(problem_line({"a.py", 3, 0, "error", "", "bad"}), "a.py:3: error: bad");
    EXPECT_EQ(problem_line({"a.py", 0, 0, "error", "X1", "bad"}), "a.py: error[X1]: bad");
    EXPECT_EQ(problem_line({"/workspace/x", 1, 2, "warning", "", "w"}),
              "/workspace/x:1:2: warning: w");
    EXPECT_EQ(parse_problems(Kind::go_vet, "/workspace/a.go:1:2: m\n")[0].file, "a.go");
    // Found by fuzz_check_outputs: a sign is no line number.
    for (const auto& p : parse_problems(Kind::go_vet, "a.go:-1:2: m\na.go:1:-2: n\n"))
        EXPECT_TRUE(p.line > 0 && p.column >= 0) << problem_line(p);
    EXPECT_TRUE(parse_tests(Kind::cargo_test, "test result: ok. -1 passed; 0 failed;\n").passed
                == 0);
}

// --- runners ------------------------------------------------------------------------------------

TEST(Parse, CargoTestSumsItsBinaries) {
    Tally t = parse_tests(Kind::cargo_test, fixture("cargo_test.txt"));
    EXPECT_TRUE(t.counted);
    EXPECT_EQ(t.passed, 2);
    EXPECT_EQ(t.failed, 1);
    EXPECT_EQ(t.skipped, 0);
    EXPECT_EQ(t.failures, (std::vector<std::string>{"tests::adds_wrong"}));
}

TEST(Parse, Pytest) {
    Tally t = parse_tests(Kind::pytest, fixture("pytest.txt"));
    EXPECT_TRUE(t.counted);
    EXPECT_EQ(t.passed, 3);
    EXPECT_EQ(t.failed, 1);
    EXPECT_EQ(t.failures, (std::vector<std::string>{"tests/test_add.py::test_two"}));
    Tally e = parse_tests(Kind::pytest, fixture("pytest_error.txt"));
    EXPECT_TRUE(e.counted);
    EXPECT_EQ(e.passed, 0);
    EXPECT_EQ(e.failed, 1);
    EXPECT_EQ(e.failures, (std::vector<std::string>{"tests/test_broken.py"}));
    Tally q =
        parse_tests(Kind::pytest, "1 failed, 3 passed, 2 skipped, 1 warning in 65.43s (0:01:05)\n");
    EXPECT_TRUE(q.counted);
    EXPECT_EQ(q.passed, 3);
    EXPECT_EQ(q.skipped, 2);
    Tally none = parse_tests(
        Kind::pytest,
        "============================ no tests ran in 0.01s =============================\n");
    EXPECT_TRUE(none.counted);
    EXPECT_EQ(none.passed + none.failed, 0);
    EXPECT_FALSE(parse_tests(Kind::pytest, "assert x in 3s\n").counted);
}

TEST(Parse, GoTestCountsLeafTests) {
    Tally t = parse_tests(Kind::go_test, fixture("gotest.txt"));
    EXPECT_TRUE(t.counted);
    EXPECT_EQ(t.passed, 3); // TestAdd, TestSub/zero, TestTwo
    EXPECT_EQ(t.failed, 2);
    EXPECT_EQ(t.failures, (std::vector<std::string>{"TestAddWrong", "TestSub/bad"}));
    Tally b = parse_tests(Kind::go_test, fixture("gotest_build.txt"));
    EXPECT_EQ(b.passed, 3);
    EXPECT_EQ(b.failed, 2);
    Tally build = parse_tests(Kind::go_test,
                              "# m/bad\nbad/x.go:1:1: oops\nFAIL\tm/bad [build failed]\nFAIL\n");
    EXPECT_TRUE(build.counted);
    EXPECT_EQ(build.failed, 1);
    EXPECT_EQ(build.failures, (std::vector<std::string>{"m/bad [build failed]"}));
}

TEST(Parse, NpmTestReadsNodeTest) {
    for (const char* name : {"npm_test.txt", "node_spec.txt"}) {
        Tally t = parse_tests(Kind::npm_test, fixture(name));
        EXPECT_TRUE(t.counted) << name;
        EXPECT_EQ(t.passed, 2) << name;
        EXPECT_EQ(t.failed, 1) << name;
        EXPECT_EQ(t.failures, (std::vector<std::string>{"adds wrong"})) << name;
    }
}

TEST(Parse, MakeTestReadsWhatItsScriptRuns) {
    Tally plain = parse_tests(Kind::make_test, "./t.sh\nok a\nnot quite\ntests: 4 passed, 1 "
                                               "failed\nmake: *** [Makefile:2: test] Error 1\n");
    EXPECT_TRUE(plain.counted);
    EXPECT_EQ(plain.passed, 4);
    EXPECT_EQ(plain.failed, 1);
    Tally skipped = parse_tests(Kind::make_test, "2 passed, 0 failed, 3 skipped\n");
    EXPECT_EQ(skipped.skipped, 3);
    Tally pytest = parse_tests(Kind::make_test, fixture("pytest.txt"));
    EXPECT_EQ(pytest.passed, 3);
    EXPECT_EQ(pytest.failures, (std::vector<std::string>{"tests/test_add.py::test_two"}));
    Tally cargo = parse_tests(Kind::make_test, fixture("cargo_test.txt"));
    EXPECT_EQ(cargo.passed, 2);
    Tally go = parse_tests(Kind::make_test, fixture("gotest.txt"));
    EXPECT_EQ(go.failed, 2);
    EXPECT_FALSE(parse_tests(Kind::make_test, "all good\n4 passed, 1 failed and more\n").counted);
}

// --- the command, through a real /bin/sh and grep
// ---------------------------------------------------

// A directory with a stand-in for `program` that prints 70 KiB of noise, `text`, and 70 KiB more,
// and exits 3; removed at the end.
class FakeTool {
public:
    FakeTool(const std::string& program, const std::string& text) {
        char dir[] = "/tmp/test_code_checks.XXXXXX";
        EXPECT_NE(::mkdtemp(dir), nullptr);
        m_dir = dir;
        std::string noise;
        for (int i = 0; noise.size() < 70 * 1024; ++i)
            noise += "noise line " + std::to_string(i)
                     + ": the quick brown fox jumps over the lazy dog\n";
        std::ofstream(m_dir + "/printed") << noise << text << noise;
        std::ofstream(m_dir + "/" + program)
            << "#!/bin/sh\ncat \"" << m_dir << "/printed\"\nexit 3\n";
        EXPECT_EQ(::chmod((m_dir + "/" + program).c_str(), 0755), 0);
    }

    FakeTool(const FakeTool&) = delete;
    FakeTool& operator=(const FakeTool&) = delete;

    ~FakeTool() {
        std::error_code ignored;
        std::filesystem::remove_all(m_dir, ignored);
    }

    // Runs the plan's command in the directory; what it printed, and its exit status.
    std::pair<std::string, int> run(const Plan& plan) const {
        std::string sh = "cd '" + m_dir + "' && PATH='" + m_dir + ":/usr/bin:/bin' TMPDIR='" + m_dir
                         + "' sh -c '" + escaped(plan.command) + "'";
        FILE* pipe = ::popen(sh.c_str(), "r");
        std::string out;
        char buf[4096];
        size_t n;
        while (pipe != nullptr && (n = std::fread(buf, 1, sizeof buf, pipe)) > 0)
            out.append(buf, n);
        int status = pipe != nullptr ? ::pclose(pipe) : -1;
        return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
    }

private:
    static std::string escaped(const std::string& s) {
        std::string out;
        for (char c : s)
            out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        return out;
    }

    std::string m_dir;
};

TEST(Command, ALongOutputKeepsWhatTheRunnersRead) {
    struct Row {
        const char* file;    // at the root
        const char* program; // the stand-in
        const char* fixture;
    };

    const Row rows[] = {
        {"Cargo.toml", "cargo", "cargo_test.txt"},   {"setup.py", "python3", "pytest.txt"},
        {"setup.py", "python3", "pytest_error.txt"}, {"go.mod", "go", "gotest.txt"},
        {"package.json", "npm", "npm_test.txt"},     {"package.json", "npm", "node_spec.txt"},
    };
    for (const auto& r : rows) {
        Root root = root_of({r.file}, {"cargo", "go", "python3", "pytest", "npm", "make"});
        root.package_json = R"({"scripts":{"test":"node --test"}})";
        auto plan = choose_runner(root, false);
        ASSERT_TRUE(plan) << r.fixture;
        std::string text = fixture(r.fixture);
        FakeTool tool(r.program, text);
        auto [printed, status] = tool.run(*plan);
        EXPECT_EQ(status, 3) << r.fixture;
        EXPECT_LT(printed.size(), size_t{64} << 10) << r.fixture;
        Output out = split_output(printed);
        EXPECT_TRUE(out.filtered) << r.fixture;
        EXPECT_EQ(out.end.substr(out.end.size() - 24), "jumps over the lazy dog\n") << r.fixture;
        Tally want = parse_tests(plan->kind, text);
        Tally got = parse_tests(plan->kind, out.lines);
        EXPECT_TRUE(got.counted) << r.fixture;
        EXPECT_EQ(got.passed, want.passed) << r.fixture;
        EXPECT_EQ(got.failed, want.failed) << r.fixture;
        EXPECT_EQ(got.failures, want.failures) << r.fixture;
    }
}

TEST(Command, ALongOutputKeepsWhatTheCheckersRead) {
    struct Row {
        const char* file;
        const char* program;
        const char* fixture;
    };

    const Row rows[] = {
        {"Cargo.toml", "cargo", "cargo_check.txt"},
        {"go.mod", "go", "govet_type.txt"},
        {"tsconfig.json", "tsc", "tsc.txt"},
        {"a.py", "python3", "compileall.txt"},
    };
    for (const auto& r : rows) {
        auto plan = choose_checker(root_of({r.file}, {"cargo", "go", "tsc", "python3"}), false);
        ASSERT_TRUE(plan) << r.fixture;
        std::string text = fixture(r.fixture);
        FakeTool tool(r.program, text);
        auto [printed, status] = tool.run(*plan);
        EXPECT_EQ(status, 3);
        Output out = split_output(printed);
        EXPECT_TRUE(out.filtered) << r.fixture;
        EXPECT_EQ(lines_of(parse_problems(plan->kind, out.lines)),
                  lines_of(parse_problems(plan->kind, text)))
            << r.fixture;
    }
}

TEST(Command, AShortOutputIsPrintedWhole) {
    auto plan = choose_runner(root_of({"Makefile"}, {"make"}), false);
    ASSERT_FALSE(plan); // no makefile text: no test target
    Root root = root_of({"Makefile"}, {"make"});
    root.makefile = "test:\n";
    plan = choose_runner(root, false);
    ASSERT_TRUE(plan);
    std::string sh = "d=$(mktemp -d) && cd \"$d\" && printf 'test:\\n\\t@echo \"it'\"'\"'s 2 "
                     "passed, 0 failed\"\\n' >Makefile && TMPDIR=\"$d\" sh -c '";
    for (char c : plan->command)
        sh += c == '\'' ? std::string("'\\''") : std::string(1, c);
    sh += "'; s=$?; ls -A \"$d\"; rm -rf \"$d\"; exit $s";
    FILE* pipe = ::popen(sh.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    char buf[4096];
    std::string out(buf, std::fread(buf, 1, sizeof buf, pipe));
    EXPECT_EQ(WEXITSTATUS(::pclose(pipe)), 0);
    EXPECT_EQ(out, "it's 2 passed, 0 failed\nMakefile\n"); // and the output's file is gone
}

// --- answers ------------------------------------------------------------------------------------

Plan plan_of(Kind kind, const char* name) {
    return {kind, name, "", {}};
}

TEST(Answer, Diagnostics) {
    Plan cargo = plan_of(Kind::cargo_check, "cargo check");
    std::string printed = fixture("cargo_check.txt");
    EXPECT_EQ(diagnostics_answer(cargo, {101, {}, false, 200, printed},
                                 parse_problems(cargo.kind, printed)),
              "1 problem (cargo check):\nsrc/lib.rs:7:5: error[E0308]: mismatched types");
    std::vector<Problem> two = parse_problems(Kind::tsc, fixture("tsc.txt"));
    EXPECT_EQ(
        diagnostics_answer(plan_of(Kind::tsc, "tsc"), {2, {}, false, 9, ""}, two).substr(0, 18),
        "2 problems (tsc):\n");
    Plan vet = plan_of(Kind::go_vet, "go vet");
    EXPECT_EQ(diagnostics_answer(vet, {0, {}, false, 9, ""}, {}), "no problems (go vet)");
    EXPECT_EQ(diagnostics_answer(vet, {1, {}, false, 9, "go: cannot find main module\n"}, {}),
              "go vet failed (exit status 1) and named no problem\n--- the end of its output\n"
              "go: cannot find main module");
    EXPECT_EQ(diagnostics_answer(vet, {137, 9, true, 120000, ""}, {}),
              "go vet timed out after 120 s: it was killed");
    std::vector<Problem> many(130, Problem{"a.go", 1, 1, "error", "", "m"});
    std::string listed = diagnostics_answer(vet, {1, {}, false, 9, ""}, many);
    EXPECT_EQ(listed.substr(0, 23), "130 problems (go vet):\n");
    EXPECT_EQ(listed.substr(listed.rfind('\n')), "\n… and 30 more");
}

TEST(Answer, RunTests) {
    Plan pytest = plan_of(Kind::pytest, "pytest");
    std::string printed = fixture("pytest.txt");
    std::string answer =
        run_tests_answer(pytest, {1, {}, false, 500, printed}, parse_tests(Kind::pytest, printed));
    EXPECT_EQ(answer.substr(0, answer.find("\n--- the end")),
              "run_tests (pytest): 3 passed, 1 failed\nfailed: tests/test_add.py::test_two");
    EXPECT_EQ(answer.substr(answer.rfind('\n') + 1).substr(0, 47),
              "========================= 1 failed, 3 passed in");
    Plan make = plan_of(Kind::make_test, "make test");
    EXPECT_EQ(
        run_tests_answer(make, {2, {}, false, 5, "make: *** No rule\n"}, {}),
        "run_tests (make test): exit status 2, no counts in its output\n--- the end of its output\n"
        "make: *** No rule");
    Tally odd;
    odd.counted = true;
    odd.passed = 2;
    odd.skipped = 1;
    EXPECT_EQ(run_tests_answer(make, {2, {}, false, 5, ""}, odd),
              "run_tests (make test): 2 passed, 0 failed, 1 skipped, but exit status 2");
    EXPECT_EQ(run_tests_answer(make, {137, 9, false, 5, ""}, {}),
              "run_tests (make test): was killed by signal 9 (SIGKILL)");
    // The end of a filtered output is its tail, not the lines kept for the parser.
    EXPECT_EQ(run_tests_answer(make,
                               {0, {}, false, 5, "1 passed, 0 failed\n\n\036 the end\ntail\n"},
                               parse_tests(Kind::make_test, "1 passed, 0 failed\n")),
              "run_tests (make test): 1 passed, 0 failed\n--- the end of its output\ntail");
}

} // namespace
} // namespace sion::code
