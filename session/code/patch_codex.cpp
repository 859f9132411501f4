// SPDX-License-Identifier: MIT
// Reading a patch in the "*** Begin Patch" form (Codex's) into session/code/patch.hpp's structure.
#include "session/code/lines.hpp"
#include "session/code/patch_reading.hpp"

#include <optional>

namespace sion::code::reading {

namespace {

class CodexParser {
public:
    CodexParser(const Source& src, size_t first) : m_l(src.lines), m_i(first + 1), m_end(src.end) {}

    Result<Patch> run() {
        Patch patch;
        patch.format = PatchFormat::codex;
        bool ended = false;
        while (m_i < m_end && !ended) {
            View s = trim_end(m_l[m_i]);
            size_t at = m_i + 1;
            if (s == "*** End Patch") {
                ended = true;
            } else if (auto added = after(s, "*** Add File:")) {
                SION_TRY(FilePatch f, add(*added, at));
                patch.files.push_back(std::move(f));
                continue;
            } else if (auto deleted = after(s, "*** Delete File:")) {
                FilePatch f;
                f.action = FileAction::remove;
                SION_TRY(f.path, name(*deleted, at, "*** Delete File:"));
                f.patch_line = at;
                patch.files.push_back(std::move(f));
            } else if (auto updated = after(s, "*** Update File:")) {
                SION_TRY(FilePatch f, update(*updated, at));
                patch.files.push_back(std::move(f));
                continue;
            } else if (!trim(s).empty()) {
                return bad(at,
                           "%s is not '*** Add File: path', '*** Update File: path', "
                           "'*** Delete File: path' or '*** End Patch'",
                           quoted(s).c_str());
            }
            ++m_i;
        }
        if (!ended)
            return bad(m_end, "the patch ends without '*** End Patch': it may be cut short");
        if (patch.files.empty())
            return bad(m_i, "the patch changes no file");
        return patch;
    }

private:
    static std::optional<View> after(View s, View marker) {
        if (!is_prefix(s, marker))
            return std::nullopt;
        return trim(s.substr(marker.size()));
    }

    static Result<std::string> name(View p, size_t line, const char* marker) {
        if (p.empty())
            return bad(line, "'%s' names no file", marker);
        return std::string(p);
    }

    // A marker line that ends a hunk or a file's lines: "*** " and a word of this form.
    bool at_marker() const {
        View s = trim_end(m_l[m_i]);
        return is_prefix(s, "*** Add File:") || is_prefix(s, "*** Update File:")
               || is_prefix(s, "*** Delete File:") || s == "*** End Patch"
               || is_prefix(s, "*** Move to:");
    }

    Result<FilePatch> add(View p, size_t line) {
        FilePatch f;
        f.action = FileAction::add;
        f.patch_line = line;
        SION_TRY(f.path, name(p, line, "*** Add File:"));
        Hunk h;
        h.patch_line = line;
        size_t blanks = 0; // raw empty lines at the end: they separate, they are not the file's
        for (++m_i; m_i < m_end && !at_marker(); ++m_i) {
            View s = m_l[m_i];
            if (!s.empty() && s[0] != '+')
                return bad(m_i + 1, "%s: every line of an added file starts with '+'",
                           quoted(s).c_str());
            h.lines.push_back({'+', s.empty() ? std::string() : std::string(s.substr(1))});
            blanks = s.empty() ? blanks + 1 : 0;
        }
        h.lines.resize(h.lines.size() - blanks);
        if (!h.lines.empty())
            f.hunks.push_back(std::move(h));
        return f;
    }

    Result<FilePatch> update(View p, size_t line) {
        FilePatch f;
        f.action = FileAction::update;
        f.patch_line = line;
        SION_TRY(f.path, name(p, line, "*** Update File:"));
        ++m_i;
        if (m_i < m_end) {
            if (auto to = after(trim_end(m_l[m_i]), "*** Move to:")) {
                SION_TRY(f.move_to, name(*to, m_i + 1, "*** Move to:"));
                if (f.move_to == f.path)
                    f.move_to.clear();
                ++m_i;
            }
        }
        while (m_i < m_end && !at_marker()) {
            SION_TRY(Hunk h, hunk());
            f.hunks.push_back(std::move(h));
        }
        if (f.hunks.empty() && f.move_to.empty())
            return bad(line, "'*** Update File: %s' has no hunk", f.path.c_str());
        return f;
    }

    Result<Hunk> hunk() {
        Hunk h;
        h.patch_line = m_i + 1;
        while (m_i < m_end && is_prefix(m_l[m_i], "@@")) {
            View anchor = trim(m_l[m_i].substr(2));
            if (anchor.ends_with("@@")) // "@@ text @@", as some write it
                anchor = trim(anchor.substr(0, anchor.size() - 2));
            if (!anchor.empty())
                h.anchors.emplace_back(anchor);
            ++m_i;
        }
        size_t blanks = 0; // raw empty lines at the end so far: separators if a marker follows
        for (; m_i < m_end; ++m_i) {
            View s = m_l[m_i];
            if (trim_end(s) == "*** End of File") {
                h.at_end = true;
                ++m_i;
                break;
            }
            if (is_prefix(s, "@@") || at_marker())
                break;
            if (s.empty()) {
                h.lines.push_back({' ', ""});
                ++blanks;
                continue;
            }
            if (s[0] != ' ' && s[0] != '-' && s[0] != '+')
                return bad(m_i + 1,
                           "%s is not a line of a hunk: each starts with ' ' (kept), '-' "
                           "(removed) or '+' (added)",
                           quoted(s).c_str());
            h.lines.push_back({s[0], std::string(s.substr(1))});
            blanks = 0;
        }
        if (!h.at_end && (m_i >= m_end || at_marker()))
            h.lines.resize(h.lines.size() - blanks);
        if (h.lines.empty())
            return bad(h.patch_line, "the hunk has no lines");
        return h;
    }

    const std::vector<View>& m_l;
    size_t m_i;
    size_t m_end;
};

} // namespace

Result<Patch> parse_codex(const Source& src, size_t first) {
    return CodexParser(src, first).run();
}

} // namespace sion::code::reading
