// SPDX-License-Identifier: MIT
// fetch_url's HTML reader on its own (lib/web html_to_text), for tests/bench/web.py to time beside
// `w3m -dump`: each FILE read as a page, its text written to stdout, then on stderr a line
// "FILE BYTES-IN BYTES-OUT" for each.
//
//   bench_web FILE...
//
// Exits 0, 64 for no file, 66 when a file cannot be read.
#include "lib/fd.hpp"
#include "lib/web.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_web FILE...\n");
        return 64;
    }
    for (int i = 1; i < argc; ++i) {
        sion::Fd fd(::open(argv[i], O_RDONLY | O_CLOEXEC));
        auto html = fd ? sion::read_all(fd.get(), size_t{64} << 20)
                       : sion::Result<std::string>(sion::sys_error(sion::Exit::no_input, errno,
                                                                   "cannot read '%s'", argv[i]));
        if (!html) {
            std::fprintf(stderr, "bench_web: %s\n", html.error().message().c_str());
            return 66;
        }
        auto page = sion::web::html_to_text(*html, "", "file:///");
        std::fwrite(page.text.data(), 1, page.text.size(), stdout);
        std::fprintf(stderr, "%s %zu %zu\n", argv[i], html->size(), page.text.size());
    }
    return 0;
}
