// SPDX-License-Identifier: MIT
// Choosing the checker and the test runner from the workspace root, the commands that run them in
// the sandbox, and the answers made of what they printed. The parsers are in checks_parse.cpp.
#include "session/code/checks.hpp"

#include "lib/json.hpp"
#include "lib/text.hpp"

#include <algorithm>
#include <csignal>
#include <cstring>

namespace sion::code {

namespace {

constexpr std::string_view k_marker = "\n\036 the end\n"; // between the lines and the end
constexpr size_t k_whole = 61440;      // bytes printed whole; a longer output is filtered
constexpr size_t k_max_problems = 100; // listed in an answer
constexpr size_t k_max_failures = 50;  // named in an answer

// The programs the probe asks the sandbox for.
constexpr const char* k_programs[] = {"cargo",  "go",       "tsc", "ruff", "python3",
                                      "pytest", "pytest-3", "npm", "make"};

// The lines each parser reads (grep -E), kept when an output is too long to print whole.
constexpr const char* k_lines_cargo_check = ":[0-9]+:[0-9]+: ";
constexpr const char* k_lines_go_vet = ":[0-9]+(:[0-9]+)?: ";
constexpr const char* k_lines_tsc = R"(^[^ ].*\([0-9]+,[0-9]+\): |^(error|warning) TS[0-9]+: )";
constexpr const char* k_lines_ruff = ":[0-9]+:[0-9]+: ";
constexpr const char* k_lines_compileall =
    R"(^\*\*\* Error compiling |^  File "|^[A-Za-z]*Error: |^Sorry: )";
constexpr const char* k_lines_cargo_test = R"(^test result: |^test .* \.\.\. FAILED$)";
constexpr const char* k_lines_pytest =
    R"(^(FAILED|ERROR) | in [0-9.]+s( \([0-9:]+\))? *=*$|^=* *no tests ran)";
constexpr const char* k_lines_go_test = R"(^ *--- (PASS|FAIL|SKIP): |^(ok|FAIL|\?)[[:space:]])";
constexpr const char* k_lines_node =
    "^(#|ℹ) (tests|pass|fail|cancelled|skipped) [0-9]+|^not ok |^✖ ";
constexpr const char* k_lines_plain = "[0-9]+ passed, [0-9]+ failed";

std::string quoted(std::string_view text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

// `command`, its stderr with its stdout, into a file in $TMPDIR or /tmp (the sandbox's own); then
// that file whole when it is short, or else the lines the parser reads, the marker, and its end:
// the sandbox keeps the first 64 KiB of what a command prints, and a summary comes last.
std::string wrapped(const std::string& command, const std::string& lines) {
    return format("out=\"${TMPDIR:-/tmp}/sion-output\"; (%s) >\"$out\" 2>&1; status=$?; "
                  "if [ \"$(wc -c <\"$out\")\" -le %zu ]; then cat \"$out\"; "
                  "else grep -E %s \"$out\" | head -c 16384; printf '\\n\\036 the end\\n'; "
                  "tail -c 40960 \"$out\"; fi; rm -f \"$out\"; exit $status",
                  command.c_str(), k_whole, quoted(lines).c_str());
}

Plan plan(Kind kind, std::string name, const std::string& command, const std::string& lines,
          std::vector<std::pair<std::string, std::string>> env) {
    return {kind, std::move(name), wrapped(command, lines), std::move(env)};
}

using Env = std::vector<std::pair<std::string, std::string>>;

Env cargo_env() {
    return {{"CARGO_HOME", "/tmp/cargo"}, {"CARGO_TERM_COLOR", "never"}};
}

Env go_env(bool network) {
    Env env = {{"GOCACHE", "/tmp/go-cache"}, {"GOPATH", "/tmp/go"}, {"GOFLAGS", "-mod=mod"}};
    if (!network) {
        env.emplace_back("GOPROXY", "off");
        env.emplace_back("GOTOOLCHAIN", "local");
    }
    return env;
}

Env python_env() {
    return {{"PYTHONDONTWRITEBYTECODE", "1"}, {"PYTHONPYCACHEPREFIX", "/tmp/pycache"}};
}

Env npm_env(bool network) {
    Env env = {{"npm_config_cache", "/tmp/npm"},
               {"npm_config_update_notifier", "false"},
               {"npm_config_fund", "false"}};
    if (!network)
        env.emplace_back("npm_config_offline", "true");
    return env;
}

std::string offline(bool network) {
    return network ? "" : " --offline";
}

bool python_project(const Root& root, bool for_tests) {
    for (const char* name : {"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"})
        if (root.has(name))
            return true;
    if (for_tests)
        for (const char* name : {"pytest.ini", "tox.ini", "conftest.py"})
            if (root.has(name))
                return true;
    return std::any_of(root.files.begin(), root.files.end(), [](const std::string& f) {
        return f.size() > 3 && f.compare(f.size() - 3, 3, ".py") == 0;
    });
}

std::string basename_of(std::string_view path) {
    size_t slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// "no checker fits: " and what was missing, or what was looked for.
Error none_fits(const char* what, const std::vector<std::string>& missing, const char* looked) {
    std::string why;
    for (const auto& m : missing)
        why += (why.empty() ? "" : "; ") + m;
    return make_error(Exit::unavailable, "no %s fits: %s", what,
                      why.empty() ? looked : why.c_str());
}

std::string missing(const char* found, const char* program) {
    return format("%s is at the workspace root but the sandbox has no %s", found, program);
}

} // namespace

bool Root::has(std::string_view name) const {
    return std::find(files.begin(), files.end(), name) != files.end();
}

bool Root::has_program(std::string_view name) const {
    return std::find(programs.begin(), programs.end(), name) != programs.end();
}

std::string probe_command() {
    std::string programs;
    for (const char* p : k_programs)
        programs += std::string(programs.empty() ? "" : " ") + p;
    return "printf '\\036programs\\n'; for p in " + programs
           + "; do command -v \"$p\"; done; "
             "[ -x node_modules/.bin/tsc ] && echo node_modules/.bin/tsc; "
             "for f in package.json GNUmakefile makefile Makefile; do if [ -f \"$f\" ]; then "
             "printf '\\036file %s\\n' \"$f\"; head -c 32768 \"$f\"; printf '\\n'; fi; done; "
             "printf '\\036files\\n'; ls -A1 | head -n 2000; exit 0";
}

Root read_root(std::string_view output) {
    Root root;

    enum { none, programs, file, files } section = none;

    std::string* text = nullptr;
    while (!output.empty()) {
        size_t nl = output.find('\n');
        std::string_view line = output.substr(0, nl);
        output.remove_prefix(nl == std::string_view::npos ? output.size() : nl + 1);
        if (!line.empty() && line.front() == '\036') {
            line.remove_prefix(1);
            text = nullptr;
            if (line == "programs") {
                section = programs;
            } else if (line == "files") {
                section = files;
            } else if (line.rfind("file ", 0) == 0) {
                section = file;
                std::string_view name = line.substr(5);
                if (name == "package.json")
                    text = &root.package_json;
                else if (root.makefile.empty())
                    text = &root.makefile; // the first make reads
            }
            continue;
        }
        switch (section) {
        case programs:
            if (!line.empty())
                root.programs.push_back(line.front() == '/' ? basename_of(line)
                                                            : std::string(line));
            break;
        case files:
            if (!line.empty())
                root.files.emplace_back(line);
            break;
        case file:
            if (text != nullptr)
                (*text).append(line).push_back('\n');
            break;
        case none:
            break;
        }
    }
    return root;
}

std::string npm_test_script(std::string_view package_json) {
    auto doc = Json::parse(package_json);
    if (!doc)
        return {};
    JsonView test = doc->view().get("scripts").get("test");
    auto script = test.as_string();
    if (!script || script->find("no test specified") != std::string_view::npos)
        return {};
    return std::string(trim(*script));
}

bool makefile_has_test(std::string_view makefile) {
    while (!makefile.empty()) {
        size_t nl = makefile.find('\n');
        std::string_view line = makefile.substr(0, nl);
        makefile.remove_prefix(nl == std::string_view::npos ? makefile.size() : nl + 1);
        if (line.empty() || line.front() == '\t' || line.front() == '#')
            continue;
        size_t colon = line.find(':');
        std::string_view after = line.substr(colon == std::string_view::npos ? line.size() : colon);
        if (colon == std::string_view::npos || after.rfind(":=", 0) == 0
            || after.rfind("::=", 0) == 0 || line.find('=') < colon)
            continue; // not a rule: a variable (test := x, test = x)
        std::string_view targets = line.substr(0, colon);
        while (!targets.empty()) {
            targets = trim(targets);
            size_t space = targets.find_first_of(" \t");
            if (targets.substr(0, space) == "test")
                return true;
            targets.remove_prefix(space == std::string_view::npos ? targets.size() : space);
        }
    }
    return false;
}

Result<Plan> choose_checker(const Root& root, bool network) {
    std::vector<std::string> lacking;
    if (root.has("Cargo.toml")) {
        if (root.has_program("cargo"))
            return plan(Kind::cargo_check, "cargo check",
                        "cargo check --all-targets --message-format=short" + offline(network),
                        k_lines_cargo_check, cargo_env());
        lacking.push_back(missing("Cargo.toml", "cargo"));
    }
    if (root.has("go.mod")) {
        if (root.has_program("go"))
            return plan(Kind::go_vet, "go vet", "go vet ./...", k_lines_go_vet, go_env(network));
        lacking.push_back(missing("go.mod", "go"));
    }
    if (root.has("tsconfig.json")) {
        for (const char* tsc : {"node_modules/.bin/tsc", "tsc"})
            if (root.has_program(tsc))
                return plan(Kind::tsc, "tsc", std::string(tsc) + " --noEmit --pretty false",
                            k_lines_tsc, {});
        lacking.push_back(missing("tsconfig.json", "tsc (nor node_modules/.bin/tsc)"));
    }
    if (python_project(root, false)) {
        if (root.has_program("ruff"))
            return plan(Kind::ruff, "ruff", "ruff check --output-format=concise --no-cache .",
                        k_lines_ruff, python_env());
        if (root.has_program("python3"))
            return plan(Kind::compileall, "compileall",
                        "python3 -m compileall -q -x "
                            + quoted("(^|/)(\\.[^/]+|node_modules|venv|target|__pycache__)/")
                            + " .",
                        k_lines_compileall, python_env());
        lacking.push_back(missing("a Python project", "ruff nor python3"));
    }
    return none_fits("checker", lacking,
                     "looked at the workspace root for Cargo.toml (cargo check), go.mod (go vet), "
                     "tsconfig.json (tsc), and pyproject.toml, setup.py, setup.cfg, "
                     "requirements.txt or a .py file (ruff, or python3 -m compileall)");
}

Result<Plan> choose_runner(const Root& root, bool network) {
    std::vector<std::string> lacking;
    if (root.has("Cargo.toml")) {
        if (root.has_program("cargo"))
            return plan(Kind::cargo_test, "cargo test",
                        "cargo test --no-fail-fast" + offline(network), k_lines_cargo_test,
                        cargo_env());
        lacking.push_back(missing("Cargo.toml", "cargo"));
    }
    if (root.has("package.json") && !npm_test_script(root.package_json).empty()) {
        if (root.has_program("npm")) {
            std::string all = std::string(k_lines_node) + "|" + k_lines_cargo_test + "|"
                              + k_lines_pytest + "|" + k_lines_go_test + "|" + k_lines_plain;
            return plan(Kind::npm_test, "npm test", "npm test", all, npm_env(network));
        }
        lacking.emplace_back("package.json has scripts.test but the sandbox has no npm");
    }
    if (root.has("go.mod")) {
        // vet's checks are diagnostics': a vet problem does not keep the tests from running.
        if (root.has_program("go"))
            return plan(Kind::go_test, "go test", "go test -vet=off -v ./...", k_lines_go_test,
                        go_env(network));
        lacking.push_back(missing("go.mod", "go"));
    }
    if (python_project(root, true)) {
        // python3 -m puts the root on sys.path, so tests import the project as it is laid out.
        if (root.has_program("python3")
            && (root.has_program("pytest") || root.has_program("pytest-3")))
            return plan(Kind::pytest, "pytest", "python3 -m pytest -rfE -p no:cacheprovider",
                        k_lines_pytest, python_env());
        lacking.push_back(missing("a Python project", "pytest"));
    }
    if (!root.makefile.empty() && makefile_has_test(root.makefile)) {
        if (root.has_program("make")) {
            std::string all = std::string(k_lines_node) + "|" + k_lines_cargo_test + "|"
                              + k_lines_pytest + "|" + k_lines_go_test + "|" + k_lines_plain;
            return plan(Kind::make_test, "make test", "make test", all, {});
        }
        lacking.emplace_back("the makefile has a test target but the sandbox has no make");
    }
    return none_fits("test runner", lacking,
                     "looked at the workspace root for Cargo.toml (cargo test), package.json with "
                     "scripts.test (npm test), go.mod (go test), pyproject.toml, setup.py, "
                     "setup.cfg, pytest.ini, tox.ini, conftest.py, requirements.txt or a .py file "
                     "(pytest), and a makefile with a test target (make test)");
}

Output split_output(std::string_view printed) {
    size_t at = printed.find(k_marker);
    if (at == std::string_view::npos)
        return {printed, printed, false};
    return {printed.substr(0, at), printed.substr(at + k_marker.size()), true};
}

std::string_view output_end(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
        text.remove_suffix(1);
    size_t from = text.size();
    for (int lines = 0; lines < 30 && from > 0; ++lines) {
        size_t nl = text.rfind('\n', from - 1);
        from = nl == std::string_view::npos ? 0 : nl;
        if (nl == std::string_view::npos)
            break;
    }
    if (from > 0)
        from += 1; // after the newline
    std::string_view end = text.substr(from);
    constexpr size_t k_max = 4000;
    if (end.size() > k_max) {
        std::string_view kept = end.substr(end.size() - k_max);
        size_t nl = kept.find('\n');
        if (nl != std::string_view::npos && nl + 1 < kept.size())
            kept.remove_prefix(nl + 1); // whole lines where there are
        while (!kept.empty() && (static_cast<unsigned char>(kept.front()) & 0xC0) == 0x80)
            kept.remove_prefix(1);
        end = kept;
    }
    return end;
}

namespace {

void add_end(std::string& text, std::string_view printed) {
    std::string_view end = output_end(split_output(printed).end);
    if (end.empty())
        return;
    text += "\n--- the end of its output\n";
    text.append(end);
}

// "timed out after 120 s", "was killed by signal 9 (SIGKILL)"; "" when it ended by itself.
std::string how_stopped(const Ran& ran) {
    if (ran.timed_out)
        return format("timed out after %.3g s: it was killed",
                      static_cast<double>(ran.wall_ms) / 1000.0);
    if (ran.signal)
        return format("was killed by signal %d (SIG%s)", *ran.signal,
                      sigabbrev_np(*ran.signal) != nullptr ? sigabbrev_np(*ran.signal) : "?");
    return {};
}

} // namespace

std::string diagnostics_answer(const Plan& plan, const Ran& ran,
                               const std::vector<Problem>& problems) {
    std::string text;
    std::string stopped = how_stopped(ran);
    if (!stopped.empty() && problems.empty()) {
        text = plan.name + " " + stopped;
    } else if (problems.empty()) {
        if (ran.exit == 0)
            return "no problems (" + plan.name + ")";
        text =
            format("%s failed (exit status %d) and named no problem", plan.name.c_str(), ran.exit);
    } else {
        text = format("%zu problem%s (%s):", problems.size(), problems.size() == 1 ? "" : "s",
                      plan.name.c_str());
        for (size_t i = 0; i < problems.size() && i < k_max_problems; ++i)
            text += "\n" + problem_line(problems[i]);
        if (problems.size() > k_max_problems)
            text += format("\n… and %zu more", problems.size() - k_max_problems);
        if (!stopped.empty())
            text += "\n(" + plan.name + " " + stopped + ")";
        return text;
    }
    add_end(text, ran.printed);
    return text;
}

std::string run_tests_answer(const Plan& plan, const Ran& ran, const Tally& tally) {
    std::string text = "run_tests (" + plan.name + "): ";
    std::string stopped = how_stopped(ran);
    if (!stopped.empty()) {
        text += stopped;
    } else if (tally.counted) {
        text += format("%d passed, %d failed", tally.passed, tally.failed);
        if (tally.skipped > 0)
            text += format(", %d skipped", tally.skipped);
        if (ran.exit != 0 && tally.failed == 0)
            text += format(", but exit status %d", ran.exit);
        for (size_t i = 0; i < tally.failures.size() && i < k_max_failures; ++i)
            text += "\nfailed: " + tally.failures[i];
        if (tally.failures.size() > k_max_failures)
            text += format("\n… and %zu more failed", tally.failures.size() - k_max_failures);
    } else {
        text += format("exit status %d, no counts in its output", ran.exit);
    }
    add_end(text, ran.printed);
    return text;
}

} // namespace sion::code
