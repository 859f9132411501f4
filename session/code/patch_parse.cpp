// SPDX-License-Identifier: MIT
// Reading a patch into session/code/patch.hpp's structure: what both forms share, unified diffs, and
// telling the forms apart (the "*** Begin Patch" form is patch_codex.cpp's).
#include "session/code/lines.hpp"
#include "session/code/patch_reading.hpp"
#include "lib/text.hpp"

#include <cstdarg>
#include <optional>

namespace sion::code {

namespace reading {

std::string quoted(View line) {
    std::string s(line.substr(0, 80));
    if (line.size() > 80)
        s += "…";
    return "'" + s + "'";
}

Error bad(size_t line, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::string why = vformat(fmt, ap);
    va_end(ap);
    return Error(Exit::data, format("%sline %zu of the patch: %s", k_prefix, line, why.c_str()));
}

Source split(View text) {
    Source src;
    size_t at = 0;
    while (at < text.size()) {
        size_t nl = text.find('\n', at);
        View line = text.substr(at, nl == View::npos ? View::npos : nl - at);
        if (!line.empty() && line.back() == '\r')
            line.remove_suffix(1);
        src.lines.push_back(line);
        if (nl == View::npos)
            break;
        at = nl + 1;
    }
    src.end = src.lines.size();
    while (src.begin < src.end && trim(src.lines[src.begin]).empty())
        ++src.begin;
    while (src.end > src.begin && trim(src.lines[src.end - 1]).empty())
        --src.end;
    if (src.begin < src.end && is_prefix(trim(src.lines[src.begin]), "```")) {
        ++src.begin;
        if (src.end > src.begin && trim(src.lines[src.end - 1]) == "```")
            --src.end;
    }
    return src;
}

} // namespace reading

namespace {

using namespace reading;

// --- unified diffs -------------------------------------------------------------------------------

// A path as a header gives it: C-quoted ("\"a/x y\""), or up to a tab (a timestamp may follow).
std::string header_path(View s) {
    if (!s.empty() && s[0] == '"') {
        std::string out;
        for (size_t i = 1; i < s.size() && s[i] != '"'; ++i) {
            if (s[i] != '\\' || i + 1 >= s.size()) {
                out += s[i];
                continue;
            }
            char c = s[++i];
            if (c >= '0' && c <= '7' && i + 2 < s.size()) {
                out += static_cast<char>(((c - '0') << 6) | ((s[i + 1] - '0') << 3)
                                         | (s[i + 2] - '0'));
                i += 2;
            } else {
                out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
            }
        }
        return out;
    }
    size_t tab = s.find('\t');
    return std::string(trim_end(s.substr(0, tab)));
}

bool dev_null(View p) {
    return p == "/dev/null";
}

// git's "a/" and "b/", taken off when both sides have them (or are /dev/null).
void strip_prefixes(std::string& old_path, std::string& new_path) {
    bool a = dev_null(old_path) || is_prefix(old_path, "a/");
    bool b = dev_null(new_path) || is_prefix(new_path, "b/");
    if (!a || !b || (dev_null(old_path) && dev_null(new_path)))
        return;
    if (!dev_null(old_path))
        old_path.erase(0, 2);
    if (!dev_null(new_path))
        new_path.erase(0, 2);
}

bool parse_range(View& s, char sign, int64_t& start, int64_t& count) {
    if (s.empty() || s[0] != sign)
        return false;
    s.remove_prefix(1);
    auto number = [&](int64_t& out) {
        if (s.empty() || s[0] < '0' || s[0] > '9')
            return false;
        out = 0;
        while (!s.empty() && s[0] >= '0' && s[0] <= '9') {
            if (out > 100'000'000)
                return false;
            out = out * 10 + (s[0] - '0');
            s.remove_prefix(1);
        }
        return true;
    };
    if (!number(start))
        return false;
    count = 1;
    if (!s.empty() && s[0] == ',') {
        s.remove_prefix(1);
        if (!number(count))
            return false;
    }
    return true;
}

// A file section of a unified diff while it is read.
struct Section {
    FilePatch file;
    bool git = false;
    bool headers = false; // "--- " and "+++ " seen
    std::string old_path, new_path;
    View git_names;
    std::string rename_from, rename_to;
    bool new_file = false, deleted_file = false;
    size_t line = 0;
};

class UnifiedParser {
public:
    explicit UnifiedParser(const Source& src) : m_l(src.lines), m_i(src.begin), m_end(src.end) {}

    Result<Patch> run() {
        while (m_i < m_end) {
            View s = m_l[m_i];
            if (is_prefix(s, "diff --git ")) {
                SION_CHECK(finish());
                start(true);
                m_cur->git_names = s.substr(11);
                ++m_i;
            } else if (m_cur && m_cur->git && !m_cur->headers && extended(s)) {
                SION_CHECK(git_header(s));
                ++m_i;
            } else if (is_prefix(s, "GIT binary patch")
                       || (is_prefix(s, "Binary files ") && s.ends_with(" differ"))) {
                return bad(m_i + 1, "a binary patch: apply_patch changes text files only");
            } else if (is_prefix(s, "--- ") && m_i + 1 < m_end && is_prefix(m_l[m_i + 1], "+++ ")) {
                if (!(m_cur && m_cur->git && !m_cur->headers)) {
                    SION_CHECK(finish());
                    start(false);
                }
                m_cur->headers = true;
                m_cur->old_path = header_path(s.substr(4));
                m_cur->new_path = header_path(m_l[m_i + 1].substr(4));
                strip_prefixes(m_cur->old_path, m_cur->new_path);
                m_cur->file.patch_line = m_i + 1;
                m_i += 2;
            } else if (is_prefix(s, "@@")) {
                if (!m_cur || !m_cur->headers)
                    return bad(m_i + 1, "a hunk before the '--- a/path' and '+++ b/path' lines "
                                        "that name its file");
                SION_TRY(Hunk h, hunk());
                m_cur->file.hunks.push_back(std::move(h));
            } else if (m_cur && is_prefix(s, "--- ") && s != "-- ") {
                return bad(m_i + 1, "%s is not followed by a '+++ b/path' line", quoted(s).c_str());
            } else if (m_cur && is_prefix(s, "+++ ")) {
                return bad(m_i + 1, "%s has no '--- a/path' line before it", quoted(s).c_str());
            } else if (m_cur && m_cur->headers && !s.empty() && s != "-- " && s != "--"
                       && (s[0] == ' ' || s[0] == '-' || s[0] == '+' || s[0] == '\\')) {
                return bad(m_i + 1,
                           "%s is outside any hunk: every line of a hunk starts with "
                           "' ', '-' or '+', and hunks start with '@@'",
                           quoted(s).c_str());
            } else {
                ++m_i; // text around the diff: a commit message, "Index:" lines, a signature
            }
        }
        SION_CHECK(finish());
        if (m_patch.files.empty())
            return Error(Exit::data,
                         std::string(k_prefix)
                             + "this is neither a unified diff ('--- a/path', "
                               "'+++ b/path', '@@' hunks) nor a '*** Begin Patch' patch");
        return std::move(m_patch);
    }

private:
    void start(bool git) {
        m_cur.emplace();
        m_cur->git = git;
        m_cur->line = m_i + 1;
        m_cur->file.patch_line = m_i + 1;
    }

    static bool extended(View s) {
        for (View h : {"old mode ", "new mode ", "deleted file mode ", "new file mode ",
                       "rename from ", "rename to ", "rename old ", "rename new ", "copy from ",
                       "copy to ", "similarity index ", "dissimilarity index ", "index "})
            if (is_prefix(s, h))
                return true;
        return false;
    }

    Status git_header(View s) {
        if (is_prefix(s, "copy from ") || is_prefix(s, "copy to "))
            return bad(m_i + 1, "copies are not supported: add the new file instead");
        if (is_prefix(s, "rename from "))
            m_cur->rename_from = header_path(s.substr(12));
        else if (is_prefix(s, "rename old "))
            m_cur->rename_from = header_path(s.substr(11));
        else if (is_prefix(s, "rename to "))
            m_cur->rename_to = header_path(s.substr(10));
        else if (is_prefix(s, "rename new "))
            m_cur->rename_to = header_path(s.substr(11));
        else if (is_prefix(s, "new file mode "))
            m_cur->new_file = true;
        else if (is_prefix(s, "deleted file mode "))
            m_cur->deleted_file = true;
        return {};
    }

    // "a/x b/x" of a "diff --git" line, for a section without "---"/"+++": the split where both
    // sides name the same file, else at the last " b/".
    static std::pair<std::string, std::string> git_pair(View names) {
        if (!names.empty() && names[0] == '"') {
            size_t close = names.find('"', 1);
            while (close != View::npos && names[close - 1] == '\\')
                close = names.find('"', close + 1);
            if (close == View::npos)
                return {};
            return {header_path(names.substr(0, close + 1)),
                    header_path(trim(names.substr(close + 1)))};
        }
        size_t best = View::npos;
        for (size_t at = names.find(" b/"); at != View::npos; at = names.find(" b/", at + 1)) {
            best = at;
            if (names.substr(0, at).substr(std::min<size_t>(2, at)) == names.substr(at + 3))
                break;
        }
        if (best == View::npos)
            return {};
        return {std::string(names.substr(0, best)), std::string(names.substr(best + 1))};
    }

    Status finish() {
        if (!m_cur)
            return {};
        Section c = std::move(*m_cur);
        m_cur.reset();
        FilePatch f = std::move(c.file);
        bool renamed = !c.rename_from.empty() || !c.rename_to.empty();
        if (renamed && (c.rename_from.empty() || c.rename_to.empty()))
            return bad(c.line, "a rename needs both 'rename from' and 'rename to'");
        if (!c.headers) {
            auto [old_path, new_path] = git_pair(c.git_names);
            strip_prefixes(old_path, new_path);
            c.old_path = c.new_file ? "/dev/null" : renamed ? c.rename_from : old_path;
            c.new_path = c.deleted_file ? "/dev/null" : renamed ? c.rename_to : new_path;
        } else if (f.hunks.empty()) {
            return bad(f.patch_line, "'--- %s' and '+++ %s' are followed by no hunk",
                       c.old_path.c_str(), c.new_path.c_str());
        }
        if (dev_null(c.old_path) && dev_null(c.new_path))
            return bad(f.patch_line, "both sides of the diff are /dev/null");
        if (dev_null(c.old_path)) {
            f.action = FileAction::add;
            f.path = c.new_path;
        } else if (dev_null(c.new_path)) {
            f.action = FileAction::remove;
            f.path = c.old_path;
        } else {
            f.action = FileAction::update;
            f.path = renamed ? c.rename_from : c.old_path;
            std::string to = renamed ? c.rename_to : c.new_path;
            if (to != f.path && c.git)
                f.move_to = to;
            else if (to != f.path)
                f.other_path = to;
            f.mode_only = !c.headers && f.move_to.empty();
        }
        if (f.path.empty())
            return bad(c.line, "the diff names no file");
        m_patch.files.push_back(std::move(f));
        return {};
    }

    bool boundary(size_t j) const {
        if (j >= m_end)
            return true;
        View s = m_l[j];
        return is_prefix(s, "@@") || is_prefix(s, "diff --git ") || s == "-- " || s == "--"
               || (is_prefix(s, "--- ") && j + 1 < m_end && is_prefix(m_l[j + 1], "+++ "));
    }

    static bool hunk_like(View s) {
        return s.empty() || s[0] == ' ' || s[0] == '-' || s[0] == '+' || s[0] == '\\';
    }

    // One line of a hunk's body into `h`; false for a "\" marker with no line before it.
    static bool take(Hunk& h, View s) {
        if (!s.empty() && s[0] == '\\') {
            if (h.lines.empty())
                return false;
            char k = h.lines.back().kind;
            h.old_no_newline = h.old_no_newline || k != '+';
            h.new_no_newline = h.new_no_newline || k != '-';
            return true;
        }
        if (s.empty())
            h.lines.push_back({' ', ""});
        else
            h.lines.push_back({s[0], std::string(s.substr(1))});
        return true;
    }

    // The body by the header's counts: where it ends, when the counts fit the lines exactly and
    // what follows is not more of the hunk.
    std::optional<size_t> by_counts(const Hunk& h, int64_t new_count) const {
        int64_t old_seen = 0;
        int64_t new_seen = 0;
        size_t j = m_i;
        while (old_seen < h.old_count || new_seen < new_count) {
            if (j >= m_end)
                return std::nullopt;
            View s = m_l[j++];
            char k = s.empty() ? ' ' : s[0];
            if (k == ' ')
                ++old_seen, ++new_seen;
            else if (k == '-')
                ++old_seen;
            else if (k == '+')
                ++new_seen;
            else if (k != '\\')
                return std::nullopt;
            if (old_seen > h.old_count || new_seen > new_count)
                return std::nullopt;
        }
        while (j < m_end && is_prefix(m_l[j], "\\"))
            ++j;
        if (boundary(j) || m_l[j].empty() || !hunk_like(m_l[j]) || is_prefix(m_l[j], "--- ")
            || is_prefix(m_l[j], "+++ "))
            return j;
        return std::nullopt;
    }

    Result<Hunk> hunk() {
        Hunk h;
        h.patch_line = m_i + 1;
        View header = m_l[m_i];
        View rest = trim(header.substr(2));
        int64_t new_start = 0;
        int64_t new_count = 0;
        if (is_prefix(rest, "-")) {
            View r = rest;
            bool ok = parse_range(r, '-', h.old_start, h.old_count);
            r = trim(r);
            ok = ok && parse_range(r, '+', new_start, new_count);
            r = trim(r);
            if (!ok || !is_prefix(r, "@@"))
                return bad(m_i + 1,
                           "%s is not a hunk's line: write '@@ -12,5 +12,6 @@' (or '@@' "
                           "alone)",
                           quoted(header).c_str());
            h.stated = true;
        } else {
            if (rest.ends_with("@@"))
                rest = trim(rest.substr(0, rest.size() - 2));
            if (!rest.empty())
                h.anchors.emplace_back(rest);
        }
        ++m_i;
        std::optional<size_t> end = h.stated ? by_counts(h, new_count) : std::nullopt;
        if (end) {
            for (; m_i < *end; ++m_i)
                (void)take(h, m_l[m_i]);
        } else {
            size_t blanks = 0;
            for (; m_i < m_end && !boundary(m_i) && hunk_like(m_l[m_i]); ++m_i) {
                if (!take(h, m_l[m_i]))
                    return bad(m_i + 1, "'\\ No newline at end of file' follows no line");
                blanks = m_l[m_i].empty() ? blanks + 1 : 0;
            }
            bool at_eof = m_i >= m_end;
            // Empty lines before what follows the hunk separate it; they are not its lines.
            h.lines.resize(h.lines.size() - blanks);
            if (h.stated && at_eof) {
                int64_t old_seen = 0;
                int64_t new_seen = 0;
                for (const HunkLine& l : h.lines) {
                    old_seen += l.kind != '+' ? 1 : 0;
                    new_seen += l.kind != '-' ? 1 : 0;
                }
                if (old_seen < h.old_count || new_seen < new_count)
                    return bad(h.patch_line,
                               "the patch ends inside the hunk %s, which says it has %lld old and "
                               "%lld new lines, not %lld and %lld: it may be cut short (give the "
                               "rest, or correct the counts)",
                               quoted(header).c_str(), static_cast<long long>(h.old_count),
                               static_cast<long long>(new_count), static_cast<long long>(old_seen),
                               static_cast<long long>(new_seen));
            }
        }
        if (h.lines.empty())
            return bad(h.patch_line, "the hunk %s has no lines", quoted(header).c_str());
        h.at_end = h.old_no_newline;
        return h;
    }

    const std::vector<View>& m_l;
    size_t m_i;
    size_t m_end;
    std::optional<Section> m_cur;
    Patch m_patch;
};

} // namespace

Result<Patch> parse_patch(std::string_view text) {
    if (text.size() > k_max_patch)
        return make_error(Exit::data,
                          "%sthe patch is %zu bytes, more than %zu MiB: split it into several",
                          k_prefix, text.size(), k_max_patch >> 20);
    if (text.find('\0') != std::string_view::npos)
        return make_error(Exit::data,
                          "%sthe patch holds a NUL byte: apply_patch changes text "
                          "files only",
                          k_prefix);
    Source src = split(text);
    if (src.begin >= src.end)
        return make_error(Exit::data, "%sthe patch is empty", k_prefix);
    for (size_t i = src.begin; i < src.end; ++i)
        if (trim(src.lines[i]) == "*** Begin Patch")
            return parse_codex(src, i);
    return UnifiedParser(src).run();
}

} // namespace sion::code
