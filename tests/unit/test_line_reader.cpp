// SPDX-License-Identifier: MIT
// rpc::LineReader: lines split the same whatever the chunks, CRLF, the cap (a line of exactly the
// cap passes, one byte more is over-long), reading on after an over-long line, mid_line at end of
// input, and memory that stays near the cap while a far longer line streams through.
#include "lib/rpc/line_reader.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

// Every allocation of this test program goes through here, so a test can see how many bytes are
// live at most while it runs.
namespace {

std::atomic<size_t> g_live{0};
std::atomic<size_t> g_peak{0};
constexpr size_t k_header = alignof(std::max_align_t);

} // namespace

void* operator new(size_t size) {
    void* p = std::malloc(size + k_header);
    if (p == nullptr)
        throw std::bad_alloc();
    *static_cast<size_t*>(p) = size;
    size_t live = g_live.fetch_add(size) + size;
    size_t peak = g_peak.load();
    while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
    }
    return static_cast<char*>(p) + k_header;
}

void operator delete(void* p) noexcept {
    if (p == nullptr)
        return;
    void* block = static_cast<char*>(p) - k_header;
    g_live.fetch_sub(*static_cast<size_t*>(block));
    std::free(block);
}

void operator delete(void* p, size_t) noexcept {
    operator delete(p);
}

namespace sion::rpc {
namespace {

struct Got {
    std::string text;
    bool overlong;
    size_t length;
    bool operator==(const Got&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Got& g) {
    return os << (g.overlong ? "overlong(" : "line(") << g.length << ", \"" << g.text << "\")";
}

Got line(std::string text) {
    return {text, false, text.size()};
}

Got overlong(size_t length) {
    return {{}, true, length};
}

std::vector<Got> drain(LineReader& r) {
    std::vector<Got> out;
    while (auto l = r.next()) {
        EXPECT_EQ(l->overlong || l->text.size() == l->length, true);
        out.push_back({std::string(l->text), l->overlong, l->length});
    }
    return out;
}

// Feeds `stream` in pieces cut at `cuts` (offsets), draining after each feed.
std::vector<Got> split(std::string_view stream, const std::vector<size_t>& cuts, size_t max,
                       bool* mid_line = nullptr) {
    LineReader r(max);
    std::vector<Got> out;
    size_t from = 0;
    for (size_t cut : cuts) {
        r.feed(stream.substr(from, cut - from));
        for (Got& g : drain(r))
            out.push_back(std::move(g));
        from = cut;
    }
    r.feed(stream.substr(from));
    for (Got& g : drain(r))
        out.push_back(std::move(g));
    if (mid_line != nullptr)
        *mid_line = r.mid_line();
    return out;
}

TEST(LineReader, DefaultCapIsOneMebibyte) {
    EXPECT_EQ(k_default_max_line, size_t{1} << 20);
    EXPECT_EQ(LineReader().max_line(), size_t{1} << 20);
    EXPECT_EQ(LineReader(100).max_line(), 100u);
}

TEST(LineReader, SplitsLines) {
    LineReader r;
    EXPECT_FALSE(r.next());
    r.feed("one\ntwo\n\nthree");
    EXPECT_EQ(drain(r), (std::vector<Got>{line("one"), line("two"), line("")}));
    EXPECT_TRUE(r.mid_line());
    r.feed("\n");
    EXPECT_EQ(drain(r), (std::vector<Got>{line("three")}));
    EXPECT_FALSE(r.mid_line());
    r.feed("");
    EXPECT_FALSE(r.next());
    EXPECT_FALSE(r.mid_line());
}

TEST(LineReader, SameLinesWhateverTheChunks) {
    const std::string stream = "alpha\r\n\nbe\rta\n" + std::string(12, 'x') + "\nlast\n"
                               + std::string(10, 'y') + "\r\ntail";
    const size_t max = 10;
    const std::vector<Got> want = {line("alpha"), line(""),     line("be\rta"),
                                   overlong(12),  line("last"), line(std::string(10, 'y'))};
    bool mid = false;
    EXPECT_EQ(split(stream, {}, max, &mid), want);
    EXPECT_TRUE(mid);
    for (size_t a = 0; a <= stream.size(); ++a) {
        EXPECT_EQ(split(stream, {a}, max, &mid), want) << "cut at " << a;
        EXPECT_TRUE(mid);
        for (size_t b = a; b <= stream.size(); b += 3)
            EXPECT_EQ(split(stream, {a, b}, max), want) << "cuts at " << a << ", " << b;
    }
}

TEST(LineReader, ByteAtATime) {
    const std::string stream =
        "{\"a\":1}\r\n" + std::string(40, 'z') + "\nok\n\n" + std::string(16, 'q') + "\r\n";
    LineReader r(16);
    std::vector<Got> got;
    for (char c : stream) {
        r.feed(std::string_view(&c, 1));
        for (Got& g : drain(r))
            got.push_back(std::move(g));
    }
    EXPECT_EQ(got, (std::vector<Got>{line("{\"a\":1}"), overlong(40), line("ok"), line(""),
                                     line(std::string(16, 'q'))}));
    EXPECT_FALSE(r.mid_line());
}

TEST(LineReader, FeedsWithoutDrainingKeepEveryLine) {
    LineReader r(8);
    r.feed("a\nbb");
    r.feed("b\n0123456789");
    r.feed("\ncc");
    r.feed("\n");
    EXPECT_EQ(drain(r), (std::vector<Got>{line("a"), line("bbb"), overlong(10), line("cc")}));
    // Half drained, then fed: the rest is still there, in order.
    r.feed("d\ne\n");
    ASSERT_TRUE(r.next());
    r.feed("f\n");
    EXPECT_EQ(drain(r), (std::vector<Got>{line("e"), line("f")}));
}

TEST(LineReader, CrLf) {
    LineReader r;
    r.feed("a\r\n\r\nb\r\r\n\rc\n");
    EXPECT_EQ(drain(r), (std::vector<Got>{line("a"), line(""), line("b\r"), line("\rc")}));
    r.feed("d\r");
    EXPECT_FALSE(r.next());
    EXPECT_TRUE(r.mid_line());
    r.feed("\n");
    EXPECT_EQ(drain(r), (std::vector<Got>{line("d")}));
}

TEST(LineReader, ExactlyTheCapPassesOneMoreIsOverlong) {
    for (size_t max : {size_t{1}, size_t{5}, size_t{64}, size_t{1000}}) {
        const std::string at_cap(max, 'm');
        const std::string over(max + 1, 'o');
        for (bool bytewise : {false, true}) {
            LineReader r(max);
            std::string stream = at_cap + "\n" + over + "\n" + at_cap + "\r\n" + over + "\r\n"
                                 + at_cap + "\r\r\n" + at_cap + "\rx\n" + "\n";
            if (bytewise)
                for (char c : stream)
                    r.feed(std::string_view(&c, 1));
            else
                r.feed(stream);
            EXPECT_EQ(drain(r), (std::vector<Got>{
                                    line(at_cap), overlong(max + 1),
                                    line(at_cap), // the "\r\n" is the end of the line, not of it
                                    overlong(max + 2), // an over-long line's "\r" is counted
                                    overlong(max + 2), // "\r\r\n": one "\r" is the line's
                                    overlong(max + 2), // a "\r" that did not end it
                                    line("")}))
                << "max " << max << (bytewise ? ", byte at a time" : "");
            EXPECT_FALSE(r.mid_line());
        }
    }
    LineReader zero(0);
    zero.feed("\nx\n\r\n");
    EXPECT_EQ(drain(zero), (std::vector<Got>{line(""), overlong(1), line("")}));
}

TEST(LineReader, ReadingGoesOnAfterAnOverlongLine) {
    LineReader r(4);
    r.feed("123456789");
    EXPECT_FALSE(r.next()); // reported when it ends, once
    EXPECT_TRUE(r.mid_line());
    r.feed("0123");
    EXPECT_FALSE(r.next());
    r.feed("\nok\n12345\nfine\n");
    EXPECT_EQ(drain(r), (std::vector<Got>{overlong(13), line("ok"), overlong(5), line("fine")}));
    EXPECT_FALSE(r.mid_line());
}

TEST(LineReader, MidLineAtEndOfInput) {
    LineReader r(8);
    EXPECT_FALSE(r.mid_line());
    r.feed("x");
    EXPECT_TRUE(r.mid_line());
    r.feed("\n");
    EXPECT_TRUE(r.next());
    EXPECT_FALSE(r.mid_line());
    r.feed("\r");
    EXPECT_TRUE(r.mid_line());
    r.feed("\n0123456789");
    EXPECT_TRUE(r.mid_line()); // dropping an over-long line
    EXPECT_EQ(drain(r), (std::vector<Got>{line("")}));
    r.feed("\n");
    EXPECT_EQ(drain(r), (std::vector<Got>{overlong(10)}));
    EXPECT_FALSE(r.mid_line());
}

TEST(LineReader, MemoryStaysNearTheCapWhileAHugeLineStreams) {
    const size_t max = size_t{1} << 20;
    const size_t total = size_t{50} << 20;
    const std::string chunk(65536, 'h');
    LineReader r(max);
    r.feed("before\n");
    EXPECT_EQ(drain(r), (std::vector<Got>{line("before")}));
    const size_t base = g_live.load();
    g_peak.store(base);
    for (size_t fed = 0; fed < total; fed += chunk.size()) {
        r.feed(chunk);
        ASSERT_FALSE(r.next());
    }
    r.feed("\nafter\n");
    auto l = r.next();
    ASSERT_TRUE(l);
    EXPECT_TRUE(l->overlong);
    EXPECT_EQ(l->length, total);
    l = r.next();
    ASSERT_TRUE(l);
    EXPECT_EQ(l->text, "after");
    const size_t grew = g_peak.load() - base;
    EXPECT_LE(grew, 2 * max + chunk.size()) << "the reader held " << grew << " bytes";
    EXPECT_GT(g_peak.load(), base) << "the allocation counter is not counting";
}

TEST(LineReader, ManyLinesInOneFeed) {
    std::string stream;
    for (int i = 0; i < 10000; ++i)
        stream += std::to_string(i) + "\n";
    LineReader r(8);
    r.feed(stream);
    int i = 0;
    while (auto l = r.next()) {
        ASSERT_EQ(l->text, std::to_string(i));
        ++i;
    }
    EXPECT_EQ(i, 10000);
}

} // namespace
} // namespace sion::rpc
