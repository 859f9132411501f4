// SPDX-License-Identifier: MIT
// Planning a patch against the files as they are: each hunk placed by its lines, every new text
// built in memory (session/code/patch.hpp). Parsing is patch_parse.cpp's.
#include "session/code/patch.hpp"

#include "session/code/lines.hpp"
#include "session/code/patch_reading.hpp"
#include "lib/text.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace sion::code {

namespace {

using View = std::string_view;

using reading::k_prefix;
constexpr int64_t k_near = 10; // lines from a stated line within which the nearest match is taken

Error failed(const std::string& why) {
    return Error(Exit::data, k_prefix + why);
}

// Where each line of a file is, as it is and without whitespace at its end: hunks are found from
// their rarest line, so that placing one costs its line's occurrences, not the file's length.
class LineIndex {
public:
    explicit LineIndex(const std::vector<View>& lines) {
        for (size_t i = 0; i < lines.size(); ++i) {
            m_exact[lines[i]].push_back(i);
            m_loose[trim_end(lines[i])].push_back(i);
        }
    }

    const std::vector<size_t>* where(View line, bool loose) const {
        const auto& map = loose ? m_loose : m_exact;
        auto found = map.find(loose ? trim_end(line) : line);
        return found == map.end() ? nullptr : &found->second;
    }

private:
    std::unordered_map<View, std::vector<size_t>> m_exact;
    std::unordered_map<View, std::vector<size_t>> m_loose;
};

struct Placement {
    size_t first = 0; // the file's line where the hunk's old lines start
    size_t count = 0; // how many old lines
    const Hunk* hunk = nullptr;
    size_t used = 0;   // how many of its lines count (trailing empty context may be dropped)
    size_t number = 0; // from 1
};

// Places the hunks of one file section in one text.
class Fitter {
public:
    Fitter(const Lines& file, std::string name, size_t total)
        : m_file(file), m_index(file.text), m_name(std::move(name)), m_total(total) {}

    Status place_all(const std::vector<Hunk>& hunks) {
        size_t region = 0;
        int64_t drift = 0;
        for (size_t i = 0; i < hunks.size(); ++i) {
            SION_TRY(Placement p, place(hunks[i], i + 1, region, drift));
            if (hunks[i].stated)
                drift = static_cast<int64_t>(p.first) - expected(hunks[i]);
            region = p.first + p.count;
            m_placed.push_back(p);
        }
        std::stable_sort(m_placed.begin(), m_placed.end(),
                         [](const Placement& a, const Placement& b) { return a.first < b.first; });
        for (size_t i = 1; i < m_placed.size(); ++i) {
            const Placement& a = m_placed[i - 1];
            const Placement& b = m_placed[i];
            if (b.first < a.first + a.count)
                return failed(format("%s: hunk %zu and hunk %zu change the same lines (%zu-%zu)",
                                     m_name.c_str(), a.number, b.number, b.first + 1,
                                     a.first + a.count));
        }
        return {};
    }

    // The file with every hunk applied.
    std::string build() const {
        std::string out;
        size_t n = m_file.text.size();
        auto keep = [&](size_t i) {
            out.append(m_file.text[i]);
            out += m_file.crlf[i] ? View("\r\n") : i + 1 == n ? m_file.eol : View("\n");
        };
        size_t at = 0;
        bool final_newline = n == 0 || m_file.final_newline;
        for (const Placement& p : m_placed) {
            for (; at < p.first; ++at)
                keep(at);
            for (size_t j = 0; j < p.used; ++j) {
                const HunkLine& l = p.hunk->lines[j];
                if (l.kind == ' ')
                    keep(at++);
                else if (l.kind == '-')
                    ++at;
                else
                    out.append(l.text).append(m_file.eol);
            }
            if (p.first + p.count == n && p.hunk->old_no_newline != p.hunk->new_no_newline)
                final_newline = !p.hunk->new_no_newline;
        }
        for (; at < n; ++at)
            keep(at);
        if (!final_newline && !out.empty()) {
            out.pop_back();
            if (!out.empty() && out.back() == '\r' && m_file.eol == "\r\n")
                out.pop_back();
        }
        return out;
    }

private:
    // The 0-based line a stated hunk says its old lines start at.
    static int64_t expected(const Hunk& h) {
        bool insertion = std::none_of(h.lines.begin(), h.lines.end(),
                                      [](const HunkLine& l) { return l.kind != '+'; });
        return std::max<int64_t>(0, insertion && h.old_count == 0 ? h.old_start : h.old_start - 1);
    }

    std::string where(const Hunk& h, size_t number) const {
        return format("%s, hunk %zu of %zu (patch line %zu)", m_name.c_str(), number, m_total,
                      h.patch_line);
    }

    // The starts, from `from` on, where `before` is in the file, exactly or else (loose) ignoring
    // whitespace at the ends of lines.
    std::vector<size_t> matches(const std::vector<View>& before, size_t from, bool at_end) const {
        size_t n = m_file.text.size();
        size_t k = before.size();
        for (bool loose : {false, true}) {
            const std::vector<size_t>* rarest = nullptr;
            size_t key = 0;
            for (size_t j = 0; j < k; ++j) {
                const std::vector<size_t>* w = m_index.where(before[j], loose);
                if (w == nullptr) {
                    rarest = nullptr;
                    key = k;
                    break;
                }
                if (rarest == nullptr || w->size() < rarest->size()) {
                    rarest = w;
                    key = j;
                }
            }
            if (rarest == nullptr)
                continue;
            std::vector<size_t> found;
            for (size_t p : *rarest) {
                if (p < key || p - key < from || p - key + k > n || (at_end && p - key + k != n))
                    continue;
                size_t s = p - key;
                bool same = true;
                for (size_t j = 0; j < k && same; ++j)
                    same = loose ? trim_end(m_file.text[s + j]) == trim_end(before[j])
                                 : m_file.text[s + j] == before[j];
                if (same)
                    found.push_back(s);
            }
            if (!found.empty())
                return found;
        }
        return {};
    }

    // The line an anchor names, from `from` on (as it is, else trimmed), or the first in the file.
    std::optional<size_t> anchor_line(View anchor, size_t from) const {
        const auto& lines = m_file.text;
        for (size_t start : {from, size_t{0}}) {
            for (size_t i = start; i < lines.size(); ++i)
                if (lines[i] == anchor)
                    return i;
            for (size_t i = start; i < lines.size(); ++i)
                if (trim(lines[i]) == trim(anchor))
                    return i;
        }
        return std::nullopt;
    }

    Result<Placement> place(const Hunk& h, size_t number, size_t region, int64_t drift) const {
        size_t n = m_file.text.size();
        size_t start = region;
        for (const std::string& anchor : h.anchors) {
            auto line = anchor_line(anchor, start);
            if (!line)
                return failed(where(h, number) + ": its @@ line '" + anchor
                              + "' is not in the file; "
                              + nearest_hint(m_file.text, {View(anchor)}, m_name, start));
            start = *line + 1;
        }
        Placement p;
        p.hunk = &h;
        p.number = number;
        p.used = h.lines.size();
        int64_t stated_at = expected(h) + drift;
        // Trailing empty kept lines are tried without, as a last resort: they are often a blank
        // line between hunks, or a file's final newline seen as a line.
        size_t trailing = 0;
        while (trailing < h.lines.size() && h.lines[h.lines.size() - 1 - trailing].kind == ' '
               && trim(h.lines[h.lines.size() - 1 - trailing].text).empty())
            ++trailing;
        std::vector<View> before;
        for (const HunkLine& l : h.lines)
            if (l.kind != '+')
                before.push_back(l.text);
        if (before.empty()) {
            p.first = h.stated                        ? static_cast<size_t>(std::clamp<int64_t>(
                          stated_at, static_cast<int64_t>(region), static_cast<int64_t>(n)))
                      : h.anchors.empty() || h.at_end ? n
                                                      : start;
            return p;
        }
        std::vector<size_t> found;
        for (size_t attempt = 0; attempt < 2 && found.empty(); ++attempt) {
            size_t drop = attempt == 0 ? 0 : trailing;
            if (attempt == 1 && (drop == 0 || drop >= before.size()))
                break;
            std::vector<View> want(before.begin(), before.end() - static_cast<ptrdiff_t>(drop));
            found = matches(want, start, h.at_end);
            if (found.empty() && h.anchors.empty() && start > 0)
                found = matches(want, 0, h.at_end);
            if (!found.empty()) {
                p.count = want.size();
                p.used = h.lines.size() - drop;
                break;
            }
        }
        if (found.empty())
            return failed(where(h, number) + ": the lines it keeps and removes are not in the file"
                          + (h.at_end ? " at its end" : "") + "; "
                          + nearest_hint(m_file.text, before, m_name,
                                         h.stated
                                             ? static_cast<size_t>(std::max<int64_t>(0, stated_at))
                                             : start));
        SION_TRY(p.first, choose(h, number, found, stated_at));
        return p;
    }

    Result<size_t> choose(const Hunk& h, size_t number, const std::vector<size_t>& found,
                          int64_t stated_at) const {
        if (!h.anchors.empty() || found.size() == 1)
            return found.front();
        if (h.stated) {
            size_t best = found.front();
            int64_t best_d = -1;
            bool tie = false;
            for (size_t s : found) {
                int64_t d = std::abs(static_cast<int64_t>(s) - stated_at);
                if (best_d < 0 || d < best_d) {
                    best = s;
                    best_d = d;
                    tie = false;
                } else if (d == best_d) {
                    tie = true;
                }
            }
            if (!tie && best_d <= k_near)
                return best;
        }
        std::vector<size_t> lines;
        for (size_t s : found)
            lines.push_back(s + 1);
        return failed(
            format("%s: the lines it keeps and removes are in the file %zu times "
                   "(at lines %s)%s: give more lines of context around the change%s, so "
                   "that they are there once",
                   where(h, number).c_str(), found.size(), list_numbers(lines).c_str(),
                   h.stated ? format(", none of them at or near line %lld",
                                     static_cast<long long>(stated_at + 1))
                                  .c_str()
                            : "",
                   h.stated ? "" : ", or an '@@ …' line naming the function or class it is in"));
    }

    const Lines& m_file;
    LineIndex m_index;
    std::string m_name;
    size_t m_total;
    std::vector<Placement> m_placed;
};

Result<std::string> apply_hunks(View text, const FilePatch& f, const std::string& name) {
    Lines file = split_lines(text);
    Fitter fitter(file, name, f.hunks.size());
    SION_CHECK(fitter.place_all(f.hunks));
    return fitter.build();
}

std::string hunks(const FilePatch& f) {
    return format(" (%zu hunk%s)", f.hunks.size(), f.hunks.size() == 1 ? "" : "s");
}

// The files as the patch sees them while it is planned: each read once, then as earlier sections
// left it.
class Files {
public:
    explicit Files(const ReadText& read) : m_read(read) {}

    Result<std::optional<std::string>*> get(const std::string& path) {
        auto found = m_files.find(path);
        if (found != m_files.end())
            return &found->second.now;
        auto text = m_read(path);
        if (!text)
            return Error(text.error().exit(), k_prefix + text.error().message());
        if (*text && (*text)->find('\0') != std::string::npos)
            return failed(path + " is a binary file: apply_patch changes text files only");
        m_order.push_back(path);
        State& s = m_files[path];
        s.original = *text;
        s.now = std::move(*text);
        return &s.now;
    }

    std::vector<FileChange> changes() const {
        std::vector<FileChange> out;
        for (const std::string& path : m_order) {
            const State& s = m_files.at(path);
            if (s.now != s.original)
                out.push_back({path, s.now});
        }
        return out;
    }

private:
    struct State {
        std::optional<std::string> original;
        std::optional<std::string> now;
    };

    const ReadText& m_read;
    std::map<std::string, State> m_files;
    std::vector<std::string> m_order;
};

Status plan_file(const FilePatch& f, Files& files, std::vector<std::string>& done) {
    SION_TRY(std::optional<std::string> * now, files.get(f.path));
    std::string name = f.path;
    if (!*now && !f.other_path.empty()) {
        SION_TRY(std::optional<std::string> * other, files.get(f.other_path));
        if (*other) {
            now = other;
            name = f.other_path;
        }
    }
    switch (f.action) {
    case FileAction::add: {
        if (*now)
            return failed("cannot add " + name + ": it is there already (update it instead)");
        SION_TRY(std::string text, apply_hunks("", f, name));
        *now = std::move(text);
        done.push_back("added " + name);
        return {};
    }
    case FileAction::remove: {
        if (!*now)
            return failed("cannot delete " + name + ": there is no such file");
        if (!f.hunks.empty()) {
            SION_TRY(std::string rest, apply_hunks(**now, f, name));
            if (!rest.empty())
                return failed(format("cannot delete %s: it has %zu lines the patch does not delete",
                                     name.c_str(), split_lines(rest).text.size()));
        }
        now->reset();
        done.push_back("deleted " + name);
        return {};
    }
    case FileAction::update:
        break;
    }
    if (!*now)
        return failed("cannot update " + name
                      + ": there is no such file (a new file is added, "
                        "not updated)");
    if (f.mode_only) {
        done.push_back("left " + name + " as it is (mode changes are not applied)");
        return {};
    }
    std::string text = **now;
    if (!f.hunks.empty()) {
        SION_TRY(text, apply_hunks(**now, f, name));
    }
    if (f.move_to.empty()) {
        *now = std::move(text);
        done.push_back("updated " + name + hunks(f));
        return {};
    }
    SION_TRY(std::optional<std::string> * target, files.get(f.move_to));
    if (*target)
        return failed("cannot move " + name + " to " + f.move_to + ": " + f.move_to
                      + " is there already");
    now->reset(); // still valid: the files' map does not move its elements
    *target = std::move(text);
    done.push_back("moved " + name + " to " + f.move_to + (f.hunks.empty() ? "" : hunks(f)));
    return {};
}

} // namespace

Result<PatchPlan> plan_patch(const Patch& patch, const ReadText& read) {
    Files files(read);
    PatchPlan plan;
    for (const FilePatch& f : patch.files)
        SION_CHECK(plan_file(f, files, plan.done));
    plan.changes = files.changes();
    return plan;
}

} // namespace sion::code
