// SPDX-License-Identifier: MIT
// Reading what checkers and test runners print: each tool's own line shapes, as captured from the
// real tools (tests/unit/test_code_checks.cpp holds the captures). A line that fits no shape is
// skipped, never an error: the answer shows the end of the output besides.
#include "session/code/checks.hpp"
#include "lib/text.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>

namespace sion::code {

namespace {

using Line = std::string_view;

void each_line(std::string_view text, const std::function<void(Line)>& fn) {
    while (!text.empty()) {
        size_t nl = text.find('\n');
        Line line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        fn(line);
    }
}

bool starts(std::string_view s, std::string_view prefix) {
    return s.rfind(prefix, 0) == 0;
}

// ASCII only, whatever the locale.
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

bool is_upper(char c) {
    return c >= 'A' && c <= 'Z';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// The leading digits of `s` as a number, and `s` past them; nullopt without any, or too many.
std::optional<int> number(std::string_view& s) {
    if (s.empty() || !is_digit(s[0]))
        return std::nullopt; // from_chars would take a sign
    int n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || end == s.data())
        return std::nullopt;
    s.remove_prefix(static_cast<size_t>(end - s.data()));
    return n;
}

// As the workspace root sees it: "./src/a.rs" and "/workspace/src/a.rs" are "src/a.rs".
std::string relative(std::string_view path) {
    while (starts(path, "./"))
        path.remove_prefix(2);
    if (starts(path, "/workspace/"))
        path.remove_prefix(11);
    return std::string(path);
}

// "FILE:LINE:COL: REST" or "FILE:LINE: REST": the file, line and column into `p`, `rest` after.
bool located(Line line, Problem& p, std::string_view& rest) {
    for (size_t at = line.find(':'); at != std::string_view::npos; at = line.find(':', at + 1)) {
        std::string_view file = line.substr(0, at);
        if (file.empty() || file.find(": ") != std::string_view::npos || file.front() == ' ')
            return false;
        std::string_view s = line.substr(at + 1);
        auto l = number(s);
        if (!l)
            continue;
        std::optional<int> c;
        if (starts(s, ":") && s.size() > 1 && is_digit(s[1])) {
            s.remove_prefix(1);
            c = number(s);
        }
        if (!starts(s, ": "))
            continue;
        p.file = relative(file);
        p.line = *l;
        p.column = c.value_or(0);
        rest = s.substr(2);
        return true;
    }
    return false;
}

void add(std::vector<Problem>& problems, Problem p) {
    bool seen = std::any_of(problems.begin(), problems.end(), [&](const Problem& q) {
        return q.file == p.file && q.line == p.line && q.column == p.column && q.code == p.code
               && q.message == p.message;
    });
    if (!seen)
        problems.push_back(std::move(p));
}

// "error[E0308]: mismatched types", "warning: unused variable: `x`"
void parse_cargo(std::string_view output, std::vector<Problem>& problems) {
    each_line(output, [&](Line line) {
        Problem p;
        std::string_view rest;
        if (!located(line, p, rest))
            return;
        size_t colon = rest.find(": ");
        if (colon == std::string_view::npos)
            return;
        std::string_view head = rest.substr(0, colon);
        size_t bracket = head.find('[');
        p.severity = std::string(head.substr(0, bracket));
        if (p.severity != "error" && p.severity != "warning")
            return;
        if (bracket != std::string_view::npos && head.back() == ']')
            p.code = std::string(head.substr(bracket + 1, head.size() - bracket - 2));
        p.message = std::string(rest.substr(colon + 2));
        add(problems, std::move(p));
    });
}

// "src/a.ts(4,7): error TS2322: Type …", continued on indented lines; "error TS5023: …" alone.
void parse_tsc(std::string_view output, std::vector<Problem>& problems) {
    Problem* last = nullptr;
    each_line(output, [&](Line line) {
        if (starts(line, " ") && last != nullptr) {
            last->message += " " + std::string(trim(line));
            return;
        }
        last = nullptr;
        Problem p;
        std::string_view rest = line;
        size_t paren = line.find('(');
        if (paren != std::string_view::npos && paren > 0
            && line.find("): ") != std::string_view::npos) {
            std::string_view s = line.substr(paren + 1);
            auto l = number(s);
            if (!l || !starts(s, ","))
                return;
            s.remove_prefix(1);
            auto c = number(s);
            if (!c || !starts(s, "): "))
                return;
            p.file = relative(line.substr(0, paren));
            p.line = *l;
            p.column = *c;
            rest = s.substr(3);
        }
        size_t space = rest.find(' ');
        size_t colon = rest.find(": ");
        if (space == std::string_view::npos || colon == std::string_view::npos || colon < space)
            return;
        p.severity = std::string(rest.substr(0, space));
        if (p.severity != "error" && p.severity != "warning" && p.severity != "message")
            return;
        p.code = std::string(rest.substr(space + 1, colon - space - 1));
        if (!starts(p.code, "TS"))
            return;
        p.message = std::string(rest.substr(colon + 2));
        problems.push_back(std::move(p));
        last = &problems.back();
    });
}

// "a.py:1:8: F401 [*] `os` imported but unused", "a.py:3:1: SyntaxError: …" (ruff before 0.12),
// "a.py:3:1: invalid-syntax: …".
void parse_ruff(std::string_view output, std::vector<Problem>& problems) {
    each_line(output, [&](Line line) {
        Problem p;
        std::string_view rest;
        if (!located(line, p, rest))
            return;
        p.severity = "error";
        size_t space = rest.find(' ');
        std::string_view word = rest.substr(0, space);
        bool rule = word.size() >= 2 && is_upper(word[0]) && is_digit(word.back());
        if (rule && space != std::string_view::npos) {
            p.code = std::string(word);
            rest.remove_prefix(space + 1);
        } else if (!word.empty() && word.back() == ':' && space != std::string_view::npos) {
            p.code = std::string(word.substr(0, word.size() - 1));
            rest.remove_prefix(space + 1);
        }
        if (starts(rest, "[*] "))
            rest.remove_prefix(4);
        p.message = std::string(rest);
        add(problems, std::move(p));
    });
}

// *** Error compiling './pkg/bad.py'...
//   File "./pkg/bad.py", line 2
//     …
// SyntaxError: '(' was never closed
// or: Sorry: IndentationError: unindent does not match any outer indentation level (bad2.py, line
// 4)
void parse_compileall(std::string_view output, std::vector<Problem>& problems) {
    std::optional<Problem> open;
    each_line(output, [&](Line line) {
        if (starts(line, "*** Error compiling '")) {
            std::string_view file = line.substr(21);
            size_t quote = file.rfind('\'');
            open = Problem{relative(file.substr(0, quote)), 0, 0, "error", "", ""};
            return;
        }
        if (!open)
            return;
        if (starts(line, "  File \"")) {
            size_t at = line.rfind(", line ");
            if (at != std::string_view::npos) {
                std::string_view s = line.substr(at + 7);
                open->line = number(s).value_or(0);
            }
            return;
        }
        bool sorry = starts(line, "Sorry: ");
        std::string_view s = sorry ? line.substr(7) : line;
        size_t colon = s.find(": ");
        std::string_view kind = s.substr(0, colon == std::string_view::npos ? 0 : colon);
        if (kind.size() < 6 || kind.substr(kind.size() - 5) != "Error"
            || kind.find(' ') != std::string_view::npos)
            return;
        open->code = std::string(kind);
        std::string_view message = s.substr(colon + 2);
        size_t where = message.rfind(", line ");
        if (sorry && where != std::string_view::npos && message.back() == ')') {
            std::string_view n = message.substr(where + 7);
            open->line = number(n).value_or(open->line);
            message = trim(message.substr(0, message.rfind(" (", where)));
        }
        open->message = std::string(message);
        add(problems, std::move(*open));
        open.reset();
    });
}

// "./main.go:9:2: fmt.Printf format %d has arg s of wrong type string", "vet: bad/bad.go:3:23: …"
void parse_go_vet(std::string_view output, std::vector<Problem>& problems) {
    each_line(output, [&](Line line) {
        if (starts(line, "vet: "))
            line.remove_prefix(5);
        Problem p;
        std::string_view rest;
        if (starts(line, "#") || !located(line, p, rest))
            return;
        p.severity = "error";
        p.message = std::string(rest);
        add(problems, std::move(p));
    });
}

// "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; …", summed over
// the test binaries; "test tests::adds_wrong ... FAILED".
bool parse_cargo_test(std::string_view output, Tally& tally) {
    each_line(output, [&](Line line) {
        if (starts(line, "test result: ")) {
            size_t dot = line.find(". ");
            if (dot == std::string_view::npos)
                return;
            std::string_view s = line.substr(dot + 2);
            while (!s.empty()) {
                auto n = number(s);
                size_t semi = s.find(';');
                std::string_view word = trim(s.substr(0, semi));
                s.remove_prefix(semi == std::string_view::npos ? s.size() : semi + 1);
                s = trim(s);
                if (!n)
                    break;
                if (word == "passed")
                    tally.passed += *n;
                else if (word == "failed")
                    tally.failed += *n;
                else if (word == "ignored")
                    tally.skipped += *n;
            }
            tally.counted = true;
        } else if (starts(line, "test ") && line.size() > 16
                   && line.substr(line.size() - 11) == " ... FAILED") {
            tally.failures.emplace_back(line.substr(5, line.size() - 16));
        }
    });
    return tally.counted;
}

// pytest's summary: "==== 1 failed, 3 passed in 0.02s ====", or -q's "1 failed, 3 passed in 0.01s".
bool pytest_summary(Line line, Tally& tally) {
    std::string_view s = line;
    while (!s.empty() && (s.front() == '=' || s.front() == ' '))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == '=' || s.back() == ' '))
        s.remove_suffix(1);
    size_t in = s.rfind(" in ");
    if (in == std::string_view::npos)
        return false;
    std::string_view time = s.substr(in + 4);
    if (time.empty() || !is_digit(time[0]) || time.find('s') == std::string_view::npos)
        return false;
    s = s.substr(0, in);
    if (s == "no tests ran") {
        tally.counted = true;
        return true;
    }
    Tally found;
    while (!s.empty()) {
        auto n = number(s);
        size_t comma = s.find(", ");
        std::string_view word = trim(s.substr(0, comma));
        s.remove_prefix(comma == std::string_view::npos ? s.size() : comma + 2);
        if (!n)
            return false;
        if (word == "passed")
            found.passed += *n;
        else if (word == "failed" || word == "error" || word == "errors")
            found.failed += *n;
        else if (word == "skipped")
            found.skipped += *n;
        else if (word != "xfailed" && word != "xpassed" && word != "deselected" && word != "warning"
                 && word != "warnings")
            return false;
    }
    tally.passed = found.passed;
    tally.failed = found.failed;
    tally.skipped = found.skipped;
    tally.counted = true;
    return true;
}

// "FAILED tests/test_add.py::test_two - assert 4 == 5", "ERROR tests/test_x.py - …" (-rfE).
bool parse_pytest(std::string_view output, Tally& tally) {
    each_line(output, [&](Line line) {
        bool failed = starts(line, "FAILED ");
        if (failed || starts(line, "ERROR ")) {
            std::string_view name = line.substr(failed ? 7 : 6);
            name = name.substr(0, name.find(" - "));
            if (!name.empty())
                tally.failures.emplace_back(name);
        } else if (line.find(" in ") != std::string_view::npos) {
            (void)pytest_summary(line, tally);
        }
    });
    return tally.counted;
}

// go test -v: "--- PASS: TestAdd (0.00s)", indented for subtests; a package's block ends at its
// "ok  \tpkg", "FAIL\tpkg" or "?   \tpkg" line. A test with subtests is counted by its subtests.
bool parse_go_test(std::string_view output, Tally& tally) {
    std::vector<std::pair<std::string, char>> block; // name, 'P', 'F' or 'S'
    auto close = [&] {
        for (const auto& [name, status] : block) {
            bool parent =
                std::any_of(block.begin(), block.end(), [&, n = &name](const auto& other) {
                    return other.first.size() > n->size() && starts(other.first, *n + "/");
                });
            if (parent)
                continue;
            if (status == 'P')
                tally.passed += 1;
            else if (status == 'S')
                tally.skipped += 1;
            else {
                tally.failed += 1;
                tally.failures.push_back(name);
            }
        }
        block.clear();
    };
    each_line(output, [&](Line line) {
        std::string_view s = trim(line);
        for (const char* word : {"--- PASS: ", "--- FAIL: ", "--- SKIP: "}) {
            if (starts(s, word)) {
                std::string_view name = s.substr(10);
                name = name.substr(0, name.find(" ("));
                block.emplace_back(std::string(name), word[4]);
                tally.counted = true;
                return;
            }
        }
        bool ok = starts(line, "ok  \t") || starts(line, "ok \t");
        bool fail = starts(line, "FAIL\t");
        if (!ok && !fail && !starts(line, "?   \t"))
            return;
        close();
        tally.counted = true;
        if (fail && line.find(" [") != std::string_view::npos) {
            std::string_view what = line.substr(5);
            tally.failed += 1;
            tally.failures.emplace_back(trim(what));
        }
    });
    close();
    return tally.counted;
}

// node --test: TAP's "# pass 2", "# fail 1" and unindented "not ok 2 - adds wrong", or the spec
// reporter's "ℹ pass 2" and "✖ adds wrong (1.5ms)".
bool parse_node_test(std::string_view output, Tally& tally) {
    bool pass = false;
    bool fail = false;
    each_line(output, [&](Line line) {
        for (std::string_view lead : {"# ", "ℹ "}) {
            if (!starts(line, lead))
                continue;
            std::string_view s = line.substr(lead.size());
            size_t space = s.find(' ');
            if (space == std::string_view::npos)
                return;
            std::string_view word = s.substr(0, space);
            std::string_view rest = s.substr(space + 1);
            auto n = number(rest);
            if (!n || !rest.empty())
                return;
            if (word == "pass") {
                tally.passed = *n;
                pass = true;
            } else if (word == "fail") {
                tally.failed += *n;
                fail = true;
            } else if (word == "cancelled") {
                tally.failed += *n;
            } else if (word == "skipped") {
                tally.skipped = *n;
            }
            return;
        }
        std::string name;
        if (starts(line, "not ok ")) {
            size_t dash = line.find(" - ");
            if (dash == std::string_view::npos)
                return;
            std::string_view n = line.substr(dash + 3);
            name = std::string(n.substr(0, n.find(" # ")));
        } else if (starts(line, "✖ ")) {
            std::string_view n = line.substr(strlen("✖ "));
            size_t paren = n.rfind(" (");
            if (n == "failing tests:" || paren == std::string_view::npos)
                return;
            name = std::string(n.substr(0, paren));
        } else {
            return;
        }
        if (std::find(tally.failures.begin(), tally.failures.end(), name) == tally.failures.end())
            tally.failures.push_back(std::move(name));
    });
    tally.counted = pass && fail;
    return tally.counted;
}

// The plain closing line: "N passed, N failed" alone, ", N skipped" after it, one "word:" before.
bool parse_plain(std::string_view output, Tally& tally) {
    each_line(output, [&](Line line) {
        std::string_view s = trim(line);
        size_t colon = s.find(": ");
        if (colon != std::string_view::npos
            && s.substr(0, colon).find(' ') == std::string_view::npos)
            s.remove_prefix(colon + 2);
        Tally found;
        auto p = number(s);
        if (!p || !starts(s, " passed, "))
            return;
        s.remove_prefix(9);
        auto f = number(s);
        if (!f || !starts(s, " failed"))
            return;
        s.remove_prefix(7);
        if (starts(s, ", ")) {
            s.remove_prefix(2);
            auto k = number(s);
            if (!k || s != " skipped")
                return;
            found.skipped = *k;
        } else if (!s.empty()) {
            return;
        }
        tally.passed = *p;
        tally.failed = *f;
        tally.skipped = found.skipped;
        tally.counted = true;
    });
    return tally.counted;
}

} // namespace

std::vector<Problem> parse_problems(Kind kind, std::string_view output) {
    std::vector<Problem> problems;
    switch (kind) {
    case Kind::cargo_check:
        parse_cargo(output, problems);
        break;
    case Kind::tsc:
        parse_tsc(output, problems);
        break;
    case Kind::ruff:
        parse_ruff(output, problems);
        break;
    case Kind::compileall:
        parse_compileall(output, problems);
        break;
    case Kind::go_vet:
        parse_go_vet(output, problems);
        break;
    default:
        break;
    }
    return problems;
}

std::string problem_line(const Problem& p) {
    std::string text;
    if (!p.file.empty()) {
        text = p.file;
        if (p.line > 0)
            text += format(":%d", p.line);
        if (p.line > 0 && p.column > 0)
            text += format(":%d", p.column);
        text += ": ";
    }
    text += p.severity;
    if (!p.code.empty())
        text += "[" + p.code + "]";
    return text + ": " + p.message;
}

Tally parse_tests(Kind kind, std::string_view output) {
    Tally tally;
    switch (kind) {
    case Kind::cargo_test:
        (void)parse_cargo_test(output, tally);
        break;
    case Kind::pytest:
        (void)parse_pytest(output, tally);
        break;
    case Kind::go_test:
        (void)parse_go_test(output, tally);
        break;
    case Kind::npm_test:
    case Kind::make_test:
        // Whatever the script runs: the first reading that finds counts.
        for (auto* reading :
             {parse_node_test, parse_cargo_test, parse_pytest, parse_go_test, parse_plain}) {
            tally = Tally{};
            if (reading(output, tally))
                break;
        }
        break;
    default:
        break;
    }
    return tally;
}

} // namespace sion::code
