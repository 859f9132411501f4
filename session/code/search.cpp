// SPDX-License-Identifier: MIT
// search_files' engine. Each file is searched whole, not line by line: RE2 finds the next match
// anywhere after the last matching line (never_nl keeps every match within one line, (?m) makes ^
// and $ a line's ends), so a file without a match costs one pass of RE2's DFA, and lines are only
// found and counted around matches. Plain text is found without RE2, and a regular expression
// whose every match holds some literal has RE2 look only at the lines holding it (needle.hpp).
#include "session/code/search.hpp"

#include "lib/text.hpp"
#include "lib/utf8.hpp"

#include <fcntl.h>
#include <re2/re2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sion::code {

namespace {

// The offset of the start of the line holding `at`, no earlier than `floor` (a line's start).
size_t line_start(std::string_view text, size_t floor, size_t at) {
    const void* nl = ::memrchr(text.data() + floor, '\n', at - floor);
    return nl == nullptr ? floor
                         : static_cast<size_t>(static_cast<const char*>(nl) - text.data()) + 1;
}

size_t count_newlines(std::string_view text) {
    size_t n = 0;
    size_t i = 0;
#if defined(__SSE2__)
    // Sixteen byte counters (a newline's compare is -1: subtracting it adds one), summed before
    // any could pass 255.
    const __m128i nl = _mm_set1_epi8('\n');
    while (i + 16 <= text.size()) {
        __m128i counts = _mm_setzero_si128();
        for (size_t k = 0; k < 255 && i + 16 <= text.size(); ++k, i += 16) {
            __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
            counts = _mm_sub_epi8(counts, _mm_cmpeq_epi8(chunk, nl));
        }
        __m128i sums = _mm_sad_epu8(counts, _mm_setzero_si128());
        n += static_cast<size_t>(_mm_cvtsi128_si32(sums))
             + static_cast<size_t>(_mm_cvtsi128_si32(_mm_srli_si128(sums, 8)));
    }
#endif
    for (; i < text.size(); ++i)
        n += text[i] == '\n' ? 1 : 0;
    return n;
}

size_t line_end(std::string_view text, size_t at) {
    const void* nl = std::memchr(text.data() + at, '\n', text.size() - at);
    return nl == nullptr ? text.size()
                         : static_cast<size_t>(static_cast<const char*>(nl) - text.data());
}

// Moves `at` back to the start of the UTF-8 character it is in.
size_t char_start(std::string_view text, size_t at) {
    while (at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80)
        --at;
    return at;
}

} // namespace

void append_utf8(std::string& out, std::string_view bytes) {
    while (!bytes.empty()) {
        size_t bad = invalid_utf8_at(bytes);
        if (bad == std::string_view::npos) {
            out.append(bytes);
            return;
        }
        out.append(bytes.substr(0, bad));
        out += "\xEF\xBF\xBD"; // U+FFFD
        bytes.remove_prefix(bad + 1);
    }
}

// One file's lines, shown into a report: context before and after each match, "--" between groups.
struct Searcher::Emitter {
    const Searcher& searcher;
    std::string_view path;
    std::string_view text;
    SearchReport& report;
    std::string shown_path;  // `path` as UTF-8
    bool shown_here = false; // a line of this file was shown
    size_t printed = 0;      // the last line of this file shown
    size_t after_off = 0;    // the next line after the last match shown, its offset, number and
    size_t after_no = 0;     // how many of the lines from it are still to be shown as context
    size_t after_left = 0;

    // Appends "path<sep>no<sep>line"; false (and the report full) when it would pass max_bytes.
    bool emit(char sep, size_t no, size_t start, size_t end, size_t match_at) {
        const SearchOptions& o = searcher.m_options;
        if (end > start && text[end - 1] == '\r')
            --end;
        std::string_view line = text.substr(start, end - start);
        // Written straight into the report, and taken back if it went past max_bytes.
        std::string& out = report.text;
        size_t was = out.size();
        if (o.context > 0 && (shown_here ? no > printed + 1 : !report.last_path.empty()))
            out += "--\n";
        out += shown_path;
        out += sep;
        char digits[24];
        auto [digits_end, ec] = std::to_chars(digits, digits + sizeof digits, no);
        (void)ec; // 24 digits hold any size_t
        out.append(digits, digits_end);
        out += sep;
        if (line.size() <= o.max_line) {
            append_utf8(out, line);
        } else {
            size_t from = 0;
            if (match_at != std::string_view::npos && match_at > o.max_line / 5)
                from = char_start(line, match_at - o.max_line / 5);
            size_t to = char_start(line, std::min(line.size(), from + o.max_line));
            if (from > 0)
                out += format("[… %zu characters cut] ", from);
            append_utf8(out, line.substr(from, to - from));
            if (to < line.size())
                out += format(" [… %zu more characters cut]", line.size() - to);
        }
        out += '\n';
        if (out.size() > o.max_bytes) {
            out.resize(was);
            report.full = true;
            return false;
        }
        if (report.last_path != path)
            report.last_path.assign(path);
        report.last_line = no;
        shown_here = true;
        printed = no;
        return true;
    }

    // The context after the last match shown, up to (not including) line `before`.
    void flush_after(size_t before) {
        while (after_left > 0 && after_no < before && after_off < text.size()) {
            size_t end = line_end(text, after_off);
            if (!emit('-', after_no, after_off, end, std::string_view::npos))
                return;
            after_off = end + 1;
            ++after_no;
            --after_left;
        }
        after_left = 0;
    }

    // Shows the match on line `no`, [start, end), its first match `match_at` bytes in.
    void show(size_t no, size_t start, size_t end, size_t match_at) {
        const SearchOptions& o = searcher.m_options;
        flush_after(no);
        if (report.full)
            return;
        if (report.shown_lines >= o.max_lines) {
            report.full = true;
            return;
        }
        // The lines before it not shown yet, found backwards from it.
        size_t first = no > o.context ? no - o.context : 1;
        if (shown_here)
            first = std::max(first, printed + 1);
        std::vector<size_t> starts; // of lines first .. no-1, last first
        size_t off = start;
        for (size_t n = no; n > first; --n) {
            off = line_start(text, 0, off - 1);
            starts.push_back(off);
        }
        size_t n = first;
        for (auto it = starts.rbegin(); it != starts.rend(); ++it, ++n)
            if (!emit('-', n, *it, line_end(text, *it), std::string_view::npos))
                return;
        if (!emit(':', no, start, end, match_at))
            return;
        ++report.shown_lines;
        after_off = end + 1;
        after_no = no + 1;
        after_left = o.context;
    }
};

namespace {

// A shorter literal is too common in text for looking at its lines alone to beat one pass of RE2.
constexpr size_t k_least_filter = 3;

// What a report's text is given room for at its first match.
constexpr size_t k_first_reserve = 4096;

// A merged report's text grows eightfold below this size, and twofold above it.
constexpr size_t k_fast_growth_below = size_t{64} << 20;

} // namespace

size_t Searcher::regex_find(std::string_view text, size_t from, size_t to) const {
    re2::StringPiece m;
    if (!m_re->Match(re2::StringPiece(text.data(), text.size()), from, to, RE2::UNANCHORED, &m, 1))
        return std::string_view::npos;
    return static_cast<size_t>(m.data() - text.data());
}

size_t Searcher::find(std::string_view text, size_t from) const {
    if (m_mode == Mode::needle)
        return m_needle.find(text, from);
    if (m_mode == Mode::regex)
        return regex_find(text, from, text.size());
    // Only a line holding the needle can match, and RE2 is asked of it alone, with its newline
    // (for "$" and "\b" to see what follows). A match never crosses a line, so the first line
    // that matches holds the leftmost match after `from`.
    size_t hit = m_needle.find(text, from);
    if (hit == std::string_view::npos)
        return hit;
    size_t start = line_start(text, from, hit);
    size_t end = line_end(text, hit);
    size_t stop = end < text.size() ? end + 1 : end;
    if (end - start > m_options.max_line) {
        if (size_t at = regex_find(text, start, stop); at != std::string_view::npos)
            return at;
    } else if (m_re->Match(re2::StringPiece(text.data(), text.size()), start, stop, RE2::UNANCHORED,
                           nullptr, 0)) {
        return start; // where on a short line is not needed
    }
    // A line that holds the needle but does not match: RE2 goes on alone, in one pass over the
    // rest, so that a needle common on lines that do not match costs a call of RE2 more than RE2
    // alone would, not one for each of those lines.
    return regex_find(text, stop, text.size());
}

Result<Searcher> Searcher::compile(std::string_view pattern, const SearchOptions& options) {
    std::string p(pattern);
    if (p.empty())
        return make_error(Exit::data, "the pattern is empty");
    RE2::Options o;
    o.set_log_errors(false);
    o.set_case_sensitive(!options.ignore_case);
    o.set_never_nl(true);
    o.set_max_mem(int64_t{64} << 20);
    // Read alone first, so that an error quotes the pattern as given, not with "(?m)" before it.
    {
        RE2 plain(p, o);
        if (!plain.ok())
            return make_error(Exit::data, "invalid regular expression '%s': %s", p.c_str(),
                              plain.error().c_str());
    }
    auto re = std::make_shared<RE2>("(?m)" + p, o);
    if (!re->ok())
        return make_error(Exit::data, "invalid regular expression '%s': %s", p.c_str(),
                          re->error().c_str());
    Searcher s;
    s.m_re = std::move(re);
    s.m_options = options;
    // Plain text is found faster by a Needle than by RE2's DFA, and so is the literal a regular
    // expression's matches hold; either matches where RE2 would (a newline in plain text matches
    // nowhere, so it is left to RE2), with case when ignore_case is off, and folded when it is on
    // and ASCII folding is all RE2 would do.
    bool plain = p.find_first_of("\\.+*?()|[]{}^$\n") == std::string::npos;
    std::string needle = plain ? p : required_literal(p);
    if (options.ignore_case && !ascii_fold_exact(needle))
        needle.clear();
    if (plain && !needle.empty())
        s.m_mode = Mode::needle;
    else if (needle.size() >= k_least_filter)
        s.m_mode = Mode::filtered;
    if (s.m_mode != Mode::regex)
        s.m_needle = Needle(needle, options.ignore_case);
    s.m_pattern = std::move(p);
    return s;
}

void Searcher::search_text(std::string_view path, std::string_view text,
                           SearchReport& report) const {
    ++report.searched;
    Emitter out{*this, path, text, report, {}};
    bool prepared = false; // shown_path, made at the first match
    size_t pos = 0;        // a line's start: where the next match is looked for
    size_t no = 1;         // its number
    bool matched = false;
    bool shown = false;
    while (pos < text.size()) {
        size_t at = find(text, pos);
        if (at == std::string_view::npos)
            break;
        size_t start = line_start(text, pos, at);
        // An empty match after the last newline is on no line.
        if (start == text.size())
            break;
        size_t end = line_end(text, at);
        no += count_newlines(text.substr(pos, start - pos));
        ++report.matched_lines;
        matched = true;
        if (!report.full) {
            if (!prepared) {
                append_utf8(out.shown_path, path);
                prepared = true;
                // One allocation for a file's lines, rather than one for each doubling.
                if (report.text.empty())
                    report.text.reserve(std::min(m_options.max_bytes, k_first_reserve));
            }
            size_t before = report.shown_lines;
            out.show(no, start, end, at - start);
            if (report.shown_lines > before && !shown) {
                shown = true;
                ++report.shown_files;
            }
        }
        pos = end + 1;
        ++no;
    }
    if (!report.full)
        out.flush_after(static_cast<size_t>(-1));
    if (matched)
        ++report.matched_files;
}

namespace {

// The most a thread keeps of the buffer it reads files into, from one to the next.
constexpr size_t k_kept_buffer = size_t{1} << 20;

} // namespace

void Searcher::search_file(const Confined& root, const std::string& rel,
                           SearchReport& report) const {
    thread_local std::string buffer;
    auto size = root.read_into(rel, m_options.max_file, buffer);
    if (!size) // gone or swapped since the walk saw it
        ++report.unreadable;
    else if (!*size)
        ++report.too_large;
    else if (std::string_view text(buffer.data(), **size);
             std::memchr(text.data(), '\0', text.size()) != nullptr)
        ++report.binary;
    else
        search_text(rel, text, report);
    // A large file's buffer is not kept by a thread that lives on (the session's).
    if (buffer.size() > k_kept_buffer)
        std::string().swap(buffer);
}

namespace {

void add_counts(const SearchReport& part, SearchReport& all) {
    all.searched += part.searched;
    all.matched_files += part.matched_files;
    all.matched_lines += part.matched_lines;
    all.binary += part.binary;
    all.too_large += part.too_large;
    all.unreadable += part.unreadable;
}

} // namespace

// `part`, one file's report made on its own, added to `all` as if that file had been searched into
// `all` directly: whole when it fits, counted only once `all` is full, and otherwise (the file
// that reaches a cap) searched again into `all`, which cuts it where one thread would have.
void Searcher::merge(const Confined& root, const std::string& rel, SearchReport& part,
                     SearchReport& all) const {
    const SearchOptions& o = m_options;
    bool fits = !part.full && all.shown_lines + part.shown_lines <= o.max_lines
                && all.text.size() + part.text.size() + 3 <= o.max_bytes;
    if (!all.full && !fits) {
        search_file(root, rel, all);
        return;
    }
    if (!all.full && !part.text.empty()) {
        // Grown eightfold, not twofold, up to max_bytes: a large text's pages are each touched
        // (and cleared by the kernel) once in every buffer it is copied to, and room that is not
        // written to costs nothing.
        if (size_t need = all.text.size() + part.text.size() + 3; need > all.text.capacity()) {
            size_t cap = all.text.capacity();
            size_t grown = cap < k_fast_growth_below ? cap * 8 : cap * 2;
            all.text.reserve(std::max(need, std::min(grown, o.max_bytes)));
        }
        if (o.context > 0 && !all.last_path.empty())
            all.text += "--\n";
        all.text += part.text;
        all.last_path = std::move(part.last_path);
        all.last_line = part.last_line;
        all.shown_lines += part.shown_lines;
        all.shown_files += part.shown_files;
    }
    add_counts(part, all);
}

// The files a walk finds, read and searched by threads of their own while the walk goes on, k_chunk
// at a time, each file into its own report, at most k_window chunks ahead of the one merged next.
// The walking thread merges them in the walk's order, between the entries it visits and at the
// end. Once what is shown is full, the threads only count.
class Searcher::Pool {
public:
    Pool(const Searcher& searcher, const Confined& root, SearchReport& all)
        : m_searcher(searcher), m_root(root), m_all(all), m_counting(all.full) {
        size_t threads = std::min<size_t>(std::max(1U, std::thread::hardware_concurrency()), 4);
        if (threads < 2)
            return; // one core: the walking thread does it all
        m_threads.reserve(threads);
        for (size_t t = 0; t < threads; ++t)
            m_threads.emplace_back([this] { work(); });
    }

    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    ~Pool() { finish(); }

    // A file the walk found.
    void add(std::string rel) {
        m_pending.push_back(std::move(rel));
        if (m_pending.size() == k_chunk)
            submit();
        merge_ready(false);
    }

    // The walk is over: every file is searched and merged when this returns.
    void finish() {
        if (m_finished)
            return;
        m_finished = true;
        if (!m_pending.empty())
            submit();
        {
            std::lock_guard<std::mutex> held(m_lock);
            m_no_more = true;
        }
        m_work_cv.notify_all();
        merge_ready(true);
        for (std::thread& t : m_threads)
            t.join();
    }

private:
    static constexpr size_t k_chunk = 32;
    static constexpr size_t k_window = 16;

    struct Chunk {
        std::vector<std::string> files;
        std::vector<SearchReport> parts;
        bool ready = false;
    };

    void submit() {
        Chunk chunk;
        chunk.files = std::move(m_pending);
        m_pending.clear();
        if (m_threads.empty()) { // no threads: searched here, at once
            search(chunk);
            merge(chunk);
            return;
        }
        {
            std::lock_guard<std::mutex> held(m_lock);
            m_chunks.push_back(std::move(chunk));
        }
        m_work_cv.notify_one();
    }

    void search(Chunk& chunk) const {
        chunk.parts.resize(chunk.files.size());
        for (size_t i = 0; i < chunk.files.size(); ++i) {
            chunk.parts[i].full = m_counting.load();
            m_searcher.search_file(m_root, chunk.files[i], chunk.parts[i]);
        }
    }

    void merge(Chunk& chunk) {
        for (size_t i = 0; i < chunk.files.size(); ++i)
            m_searcher.merge(m_root, chunk.files[i], chunk.parts[i], m_all);
        if (m_all.full)
            m_counting = true;
    }

    // Merges the chunks that are ready, in order; with `all`, waits for each until none is left.
    void merge_ready(bool all) {
        for (;;) {
            Chunk chunk;
            {
                std::unique_lock<std::mutex> held(m_lock);
                if (all)
                    m_ready_cv.wait(held,
                                    [&] { return m_chunks.empty() || m_chunks.front().ready; });
                if (m_chunks.empty() || !m_chunks.front().ready)
                    return;
                chunk = std::move(m_chunks.front());
                m_chunks.pop_front(); // a thread still searching holds a later chunk, unmoved
                ++m_merged;
            }
            m_work_cv.notify_all(); // room in the window
            merge(chunk);
        }
    }

    void work() {
        for (;;) {
            Chunk* chunk = nullptr;
            {
                std::unique_lock<std::mutex> held(m_lock);
                m_work_cv.wait(held, [&] {
                    bool waiting = m_claimed < m_merged + m_chunks.size();
                    return (waiting && m_claimed < m_merged + k_window) || (m_no_more && !waiting);
                });
                if (m_claimed == m_merged + m_chunks.size())
                    return; // no more, and none waiting
                chunk = &m_chunks[m_claimed - m_merged];
                ++m_claimed;
            }
            search(*chunk);
            {
                std::lock_guard<std::mutex> held(m_lock);
                chunk->ready = true;
            }
            m_ready_cv.notify_one();
        }
    }

    const Searcher& m_searcher;
    const Confined& m_root;
    SearchReport& m_all;
    std::atomic<bool> m_counting;
    std::vector<std::string> m_pending; // the walking thread's, not yet a chunk
    bool m_finished = false;

    std::mutex m_lock; // guards what follows
    std::condition_variable m_work_cv, m_ready_cv;
    std::deque<Chunk> m_chunks; // submitted, not merged: m_merged is the first's number
    size_t m_merged = 0;
    size_t m_claimed = 0; // chunks taken by threads, counted from the first ever
    bool m_no_more = false;
    std::vector<std::thread> m_threads;
};

Status Searcher::search(const Confined& root, std::string_view path, const Glob* only,
                        SearchReport& report) const {
    SION_TRY(Fd top, root.open_at(path, O_PATH));

    struct stat st {};

    if (::fstat(top.get(), &st) != 0)
        return sys_error(Exit::io, errno, "cannot search '%s'", std::string(path).c_str());
    SION_TRY(std::string base, root.relative(path));
    if (S_ISREG(st.st_mode)) {
        search_file(root, base, report);
        return {};
    }
    if (!S_ISDIR(st.st_mode))
        return make_error(Exit::data, "cannot search '%s': it is not a regular file",
                          std::string(path).c_str());
    size_t cut = base == "." ? 0 : base.size() + 1;
    Pool pool(*this, root, report);
    Status walked = root.walk(
        path,
        [&](const Confined::Entry& e) {
            std::string_view below = std::string_view(e.rel).substr(cut);
            if (e.is_dir)
                return only != nullptr && !only->may_match_below(below) ? Confined::Visit::skip_dir
                                                                        : Confined::Visit::go_on;
            if (e.is_file && (only == nullptr || only->matches(below)))
                pool.add(e.rel);
            return Confined::Visit::go_on;
        },
        m_options.max_entries);
    pool.finish();
    if (!walked && walked.error().exit() != Exit::data)
        return walked;
    report.walk_cut = !walked;
    return {};
}

std::string Searcher::render(const SearchReport& r) const {
    std::string out = r.text;
    if (r.matched_lines == 0)
        out = format("no line matches '%s'%s\n", m_pattern.c_str(),
                     r.searched == 0 ? ": no file was searched" : "");
    if (r.shown_lines < r.matched_lines)
        out += format("[%zu of %zu matching lines shown, from %zu of %zu files: narrow the "
                      "pattern, the path or the glob]\n",
                      r.shown_lines, r.matched_lines, r.shown_files, r.matched_files);
    std::vector<std::string> over;
    auto files = [](size_t n) { return format("%zu file%s", n, n == 1 ? "" : "s"); };
    if (r.binary > 0)
        over.push_back(format("%zu binary file%s", r.binary, r.binary == 1 ? "" : "s"));
    if (r.too_large > 0)
        over.push_back(files(r.too_large) + format(" larger than %zu bytes", m_options.max_file));
    if (r.unreadable > 0)
        over.push_back(files(r.unreadable) + " that could not be read");
    if (!over.empty()) {
        out += "[passed over: ";
        for (size_t i = 0; i < over.size(); ++i)
            out += (i > 0 ? ", " : "") + over[i];
        out += "]\n";
    }
    if (r.walk_cut)
        out += format("[the search stopped after %zu entries: search a smaller directory]\n",
                      m_options.max_entries);
    if (!out.empty() && out.back() == '\n')
        out.pop_back();
    return out;
}

} // namespace sion::code
