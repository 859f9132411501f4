// SPDX-License-Identifier: MIT
// apply_patch's work in memory: a 1,000-hunk patch parsed and planned against a 10,000-line file,
// as a unified diff whose line numbers are right, one whose numbers are all 40 lines off, and in
// the "*** Begin Patch" form (no numbers: each hunk found after the one before); then the same
// file in a patch of one hunk that does not fit, which costs the search for the nearest lines.
// The texts are generated here, the same on every run. Google Benchmark's flags work as usual
// (--benchmark_filter=codex). The figure to read is the time per iteration: one whole patch.
#include "session/code/patch.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

namespace {

using namespace sion;

constexpr int k_lines = 10000;
constexpr int k_every = 10; // a hunk every 10 lines: 1,000 hunks

std::string line(int i) {
    return "    total_" + std::to_string(i) + " = compute(" + std::to_string(i % 97) + ", step)";
}

const std::string& file_text() {
    static const std::string text = [] {
        std::string t;
        for (int i = 0; i < k_lines; ++i)
            t += line(i) + "\n";
        return t;
    }();
    return text;
}

// A hunk changing line i, three lines of context either side.
std::string hunk_body(int i) {
    std::string h;
    for (int j = i - 3; j < i; ++j)
        h += " " + line(j) + "\n";
    h += "-" + line(i) + "\n+" + line(i) + " + 1\n";
    for (int j = i + 1; j <= i + 3; ++j)
        h += " " + line(j) + "\n";
    return h;
}

std::string unified(int offset) {
    std::string p = "--- a/big.py\n+++ b/big.py\n";
    for (int i = 5; i < k_lines - 4; i += k_every)
        p += "@@ -" + std::to_string(i - 2 + offset) + ",7 +" + std::to_string(i - 2 + offset)
             + ",7 @@\n" + hunk_body(i);
    return p;
}

std::string codex() {
    std::string p = "*** Begin Patch\n*** Update File: big.py\n";
    for (int i = 5; i < k_lines - 4; i += k_every)
        p += "@@\n" + hunk_body(i);
    return p + "*** End Patch\n";
}

code::ReadText reader() {
    return [](const std::string&) -> Result<std::optional<std::string>> {
        return std::optional<std::string>(file_text());
    };
}

void run(benchmark::State& state, const std::string& text, bool fits) {
    code::ReadText read = reader();
    size_t hunks = 0;
    for (auto _ : state) {
        auto patch = code::parse_patch(text);
        if (!patch) {
            state.SkipWithError(patch.error().message().c_str());
            return;
        }
        hunks = patch->files[0].hunks.size();
        auto plan = code::plan_patch(*patch, read);
        if (static_cast<bool>(plan) != fits) {
            state.SkipWithError(plan ? "the patch fitted" : plan.error().message().c_str());
            return;
        }
        benchmark::DoNotOptimize(plan);
    }
    state.counters["hunks"] = static_cast<double>(hunks);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations())
                            * static_cast<int64_t>(text.size() + file_text().size()));
}

void BM_unified_1000_hunks(benchmark::State& state) {
    static const std::string text = unified(0);
    run(state, text, true);
}

void BM_unified_1000_hunks_lines_40_off(benchmark::State& state) {
    static const std::string text = unified(40);
    run(state, text, true);
}

void BM_codex_1000_hunks(benchmark::State& state) {
    static const std::string text = codex();
    run(state, text, true);
}

void BM_parse_only_1000_hunks(benchmark::State& state) {
    static const std::string text = unified(0);
    for (auto _ : state) {
        auto patch = code::parse_patch(text);
        benchmark::DoNotOptimize(patch);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations())
                            * static_cast<int64_t>(text.size()));
}

void BM_misfit_nearest_lines(benchmark::State& state) {
    static const std::string text = "--- a/big.py\n+++ b/big.py\n@@ -5000,3 +5000,3 @@\n "
                                    + line(4999) + "\n-" + line(5000) + " changed\n+x\n "
                                    + line(5001) + "\n";
    run(state, text, false);
}

BENCHMARK(BM_unified_1000_hunks)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_unified_1000_hunks_lines_40_off)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_codex_1000_hunks)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_parse_only_1000_hunks)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_misfit_nearest_lines)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
