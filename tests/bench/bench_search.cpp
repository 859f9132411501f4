// SPDX-License-Identifier: MIT
// search_files' engine on its own, for tests/bench/search.py to time beside ripgrep: every matching
// line of every file below DIR, grep -n style, on stdout, with nothing capped and no context (what
// `rg -n` prints), then "searched N files, M matching lines" on stderr.
//
//   bench_search [--ignore-case] PATTERN DIR
//
// Exits 0 when it searched, 64 for a wrong command line, 65 for a bad pattern, 66 when DIR cannot
// be opened.
#include "session/code/search.hpp"
#include "lib/confined.hpp"
#include "lib/fd.hpp"

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
    using namespace sion;
    bool ignore_case = argc > 1 && std::strcmp(argv[1], "--ignore-case") == 0;
    int first = ignore_case ? 2 : 1;
    if (argc - first != 2) {
        std::fprintf(stderr, "usage: bench_search [--ignore-case] PATTERN DIR\n");
        return 64;
    }
    char* real = ::realpath(argv[first + 1], nullptr);
    if (real == nullptr) {
        std::fprintf(stderr, "bench_search: cannot open '%s': %s\n", argv[first + 1],
                     std::strerror(errno));
        return 66;
    }
    auto root = Confined::open(real);
    std::free(real); // NOLINT(cppcoreguidelines-no-malloc): realpath's buffer
    if (!root) {
        std::fprintf(stderr, "bench_search: %s\n", root.error().message().c_str());
        return 66;
    }
    code::SearchOptions options;
    options.ignore_case = ignore_case;
    options.context = 0;
    options.max_lines = SIZE_MAX;
    options.max_bytes = SIZE_MAX;
    auto searcher = code::Searcher::compile(argv[first], options);
    if (!searcher) {
        std::fprintf(stderr, "bench_search: %s\n", searcher.error().message().c_str());
        return 65;
    }
    code::SearchReport report;
    if (Status ok = searcher->search(*root, ".", nullptr, report); !ok) {
        std::fprintf(stderr, "bench_search: %s\n", ok.error().message().c_str());
        return 66;
    }
    if (Status ok = write_all(1, report.text); !ok) {
        std::fprintf(stderr, "bench_search: cannot write: %s\n", ok.error().message().c_str());
        return 74;
    }
    std::fprintf(stderr, "searched %zu files, %zu matching lines\n", report.searched,
                 report.matched_lines);
    return 0;
}
