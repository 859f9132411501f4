// SPDX-License-Identifier: MIT
// Fuzzes what sion-documents reads from a folder (lib/documents): byte 0 chooses how the rest is
// read — 0, 1, 2: as the XML of a .docx, .odt or .pptx part; 3, 4, 5: as a whole .docx, .odt or
// .pptx (its zip container, within small bounds); 6: as Markdown. Whatever comes out must be
// well-formed UTF-8 within the bound on text, and nothing may crash, hang or grow past the bounds.
#include "lib/documents.hpp"
#include "lib/fd.hpp"
#include "lib/utf8.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void check(bool ok, const char* what) {
    if (ok)
        return;
    (void)std::fprintf(stderr, "fuzz_documents: %s\n", what);
    std::abort();
}

constexpr sion::documents::Kind k_office[] = {sion::documents::Kind::docx,
                                              sion::documents::Kind::odt,
                                              sion::documents::Kind::pptx};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    unsigned choice = data[0] % 7;
    sion::Result<std::string> text = std::string();
    sion::documents::Limits limits;
    limits.unpacked_max = size_t{1} << 20;
    limits.entries_max = 100;
    limits.text_max = size_t{1} << 20;
    if (choice < 3) {
        text = sion::documents::xml_part_text(rest, k_office[choice]);
    } else if (choice < 6) {
        auto fd = sion::memory_file(rest, "fuzz");
        if (!fd)
            return 0;
        text = sion::documents::office_text(fd->get(), k_office[choice - 3], limits);
    } else {
        text = sion::documents::plain_text(rest);
    }
    if (!text)
        return 0;
    check(sion::invalid_utf8_at(*text) == std::string::npos, "text is not UTF-8");
    check(choice == 6 || text->find('\0') == std::string::npos, "text holds a NUL");
    return 0;
}
