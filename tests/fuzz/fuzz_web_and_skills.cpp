// SPDX-License-Identifier: MIT
// Fuzzes what sion reads from strangers as text: a web page made text (lib/web html_to_text) and a
// skill's SKILL.md (lib/skills parse_skill_md). Byte 0 chooses: even, the rest is an HTML page,
// whose text and title must come out as well-formed UTF-8; odd, the rest is a SKILL.md, which when
// accepted must have a valid name, a description within its bound, and read the same again once
// put back together from its front matter and instructions.
#include "lib/skills.hpp"
#include "lib/utf8.hpp"
#include "lib/web.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

void check(bool ok, const char* what) {
    if (ok)
        return;
    (void)std::fprintf(stderr, "fuzz_web_and_skills: %s\n", what);
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0)
        return 0;
    std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
    if ((data[0] & 1) == 0) {
        auto page = sion::web::html_to_text(rest, (data[0] & 2) != 0 ? "iso-8859-1" : "",
                                            "https://example.org/a/b");
        check(sion::invalid_utf8_at(page.text) == std::string::npos, "text is not UTF-8");
        check(sion::invalid_utf8_at(page.title) == std::string::npos, "title is not UTF-8");
        return 0;
    }
    auto skill = sion::skills::parse_skill_md(rest);
    if (!skill)
        return 0;
    check(sion::skills::skill_name_ok(skill->name), "an invalid name accepted");
    check(!skill->description.empty() && skill->description.size() <= 1024,
          "a description out of bounds accepted");
    auto again = sion::skills::parse_skill_md(skill->front + skill->instructions);
    check(again && again->name == skill->name && again->description == skill->description
              && again->hosts == skill->hosts && again->secrets == skill->secrets
              && again->instructions == skill->instructions,
          "read differently once put back together");
    return 0;
}
