// SPDX-License-Identifier: MIT
// Fuzzes apply_patch's parser and planner: arbitrary bytes through code::parse_patch(), and every
// patch it accepts planned against files that all hold the same text, twice, with the same answer.
//
// Input layout, so that seeds stay readable text: the patch, then optionally a NUL byte and the
// text every file it names holds. Without the NUL, no file exists (adds fit, updates do not).
// Checked: no crash, no hang; every refusal is Exit::data (or the reader's) and starts "cannot
// apply the patch, so no file was changed: "; a plan's changes name only files of the patch, and it
// says one line per file section.
#include "session/code/patch.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

namespace {

using namespace sion;

constexpr std::string_view k_prefix = "cannot apply the patch, so no file was changed: ";

void check(bool ok, const char* what, std::string_view detail = {}) {
    if (ok)
        return;
    (void)std::fprintf(stderr, "fuzz_patch_parser: %s: '%.*s'\n", what,
                       static_cast<int>(detail.size()), detail.data());
    std::abort();
}

std::string plan_text(const Result<code::PatchPlan>& plan) {
    if (!plan)
        return "error: " + plan.error().message();
    std::string out;
    for (const code::FileChange& c : plan->changes)
        out += c.path + (c.text ? "=" + *c.text : std::string(" removed")) + "\n";
    for (const std::string& line : plan->done)
        out += line + "\n";
    return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    size_t nul = input.find('\0');
    std::string_view patch_text = input.substr(0, nul);
    bool exists = nul != std::string_view::npos;
    std::string file(exists ? input.substr(nul + 1) : std::string_view());

    auto patch = code::parse_patch(patch_text);
    if (!patch) {
        check(patch.error().exit() == Exit::data, "a refusal is not Exit::data",
              patch.error().message());
        check(patch.error().message().rfind(k_prefix, 0) == 0, "a refusal without the prefix",
              patch.error().message());
        return 0;
    }
    check(!patch->files.empty(), "a patch of no file was accepted");
    std::set<std::string> named;
    for (const code::FilePatch& f : patch->files) {
        check(!f.path.empty(), "a file section without a path");
        named.insert(f.path);
        for (const std::string* other : {&f.move_to, &f.other_path})
            if (!other->empty())
                named.insert(*other);
        for (const code::Hunk& h : f.hunks) {
            check(!h.lines.empty(), "an empty hunk was accepted");
            for (const code::HunkLine& l : h.lines)
                check(l.kind == ' ' || l.kind == '-' || l.kind == '+', "a hunk line of no kind");
        }
    }
    auto read = [&](const std::string&) -> Result<std::optional<std::string>> {
        if (!exists)
            return std::optional<std::string>();
        return std::optional<std::string>(file);
    };
    auto first = code::plan_patch(*patch, read);
    auto second = code::plan_patch(*patch, read);
    check(plan_text(first) == plan_text(second), "planning twice gave two answers",
          plan_text(first));
    if (!first) {
        check(first.error().message().rfind(k_prefix, 0) == 0,
              "a plan's refusal without the prefix", first.error().message());
        return 0;
    }
    check(first->done.size() == patch->files.size(), "not one line per file section");
    for (const code::FileChange& c : first->changes)
        check(named.count(c.path) == 1, "a change to a file the patch does not name", c.path);
    return 0;
}
