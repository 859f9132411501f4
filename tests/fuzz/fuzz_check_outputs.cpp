// SPDX-License-Identifier: MIT
// Fuzzes session/code/checks' readers of what tools print: the probe's output (read_root, and
// package.json and the makefile it carries), every checker's and runner's parser, and the answers
// made of them. Nothing may crash, and what they find must be printable: every problem line is one
// line, and counts are never negative.
//
// Input layout, so that seeds stay readable text: byte 0 picks the reader (its value modulo the
// number of kinds, plus the probe); the rest is the output. Seeds are the captures in
// tests/fixtures/checks/, each behind the byte of its kind ('0' cargo check … '9' make test, ':'
// the probe).
#include "session/code/checks.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace sion::code;

void check(bool ok, const char* what) {
    if (ok)
        return;
    std::fprintf(stderr, "fuzz_check_outputs: %s\n", what);
    std::abort();
}

constexpr Kind k_kinds[] = {Kind::cargo_check, Kind::go_vet,     Kind::tsc,      Kind::ruff,
                            Kind::compileall,  Kind::cargo_test, Kind::npm_test, Kind::go_test,
                            Kind::pytest,      Kind::make_test};
constexpr size_t k_count = sizeof k_kinds / sizeof k_kinds[0];

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    size_t pick = (data[0] - '0') % (k_count + 1);
    std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (pick == k_count) {
        Root root = read_root(text);
        (void)npm_test_script(root.package_json);
        (void)makefile_has_test(root.makefile);
        (void)choose_checker(root, false);
        (void)choose_runner(root, true);
        return 0;
    }
    Kind kind = k_kinds[pick];
    Plan plan{kind, "tool", "", {}};
    Ran ran{1, std::nullopt, false, 1, std::string(text)};
    Output out = split_output(text);
    if (pick < 5) {
        auto problems = parse_problems(kind, out.lines);
        for (const auto& p : problems) {
            check(p.line >= 0 && p.column >= 0, "a negative line or column");
            check(problem_line(p).find('\n') == std::string::npos,
                  "a problem line of more than one line");
        }
        (void)diagnostics_answer(plan, ran, problems);
    } else {
        Tally tally = parse_tests(kind, out.lines);
        (void)run_tests_answer(plan, ran, tally);
    }
    std::string_view end = output_end(text);
    check(end.size() <= 4000, "the end of an output over 4,000 bytes");
    return 0;
}
