// SPDX-License-Identifier: MIT
// lib/interval: Wilson's and Newcombe's intervals against published values (Newcombe, Statistics in
// Medicine 17, 1998: Wilson for 81/263 in his table I, method 10 for the differences in table II),
// and at their edges: no passes, every pass, a single run, no runs, impossible counts.
#include "lib/interval.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace sion {
namespace {

// Rounded to four places, as the tables give them.
double four(double x) {
    return std::round(x * 10'000) / 10'000;
}

TEST(Wilson, MatchesThePublishedInterval) {
    auto r = wilson(81, 263);
    ASSERT_TRUE(r);
    EXPECT_DOUBLE_EQ(four(r->rate), 0.3080);
    EXPECT_DOUBLE_EQ(four(r->interval.low), 0.2553);
    EXPECT_DOUBLE_EQ(four(r->interval.high), 0.3662);
    // Newcombe's table I, examples (a) to (c): 15/148, 0/20 and 1/29.
    auto a = wilson(15, 148);
    EXPECT_DOUBLE_EQ(four(a->interval.low), 0.0624);
    EXPECT_DOUBLE_EQ(four(a->interval.high), 0.1605);
    auto b = wilson(0, 20);
    EXPECT_DOUBLE_EQ(b->interval.low, 0.0);
    EXPECT_DOUBLE_EQ(four(b->interval.high), 0.1611);
    auto c = wilson(1, 29);
    EXPECT_DOUBLE_EQ(four(c->interval.low), 0.0061);
    EXPECT_DOUBLE_EQ(four(c->interval.high), 0.1718);
}

TEST(Wilson, StaysWithinZeroAndOneAtItsEdges) {
    auto none = wilson(0, 10);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->interval.low, 0.0);
    EXPECT_GT(none->interval.high, 0.0);
    auto all = wilson(10, 10);
    ASSERT_TRUE(all);
    EXPECT_EQ(all->interval.high, 1.0);
    EXPECT_LT(all->interval.low, 1.0);
    EXPECT_DOUBLE_EQ(four(all->interval.low), 0.7225);
    auto one = wilson(1, 1);
    ASSERT_TRUE(one);
    EXPECT_DOUBLE_EQ(four(one->interval.low), 0.2065);
    for (int64_t n = 1; n <= 60; ++n)
        for (int64_t x = 0; x <= n; ++x) {
            auto r = wilson(x, n);
            ASSERT_TRUE(r);
            EXPECT_LE(0.0, r->interval.low);
            EXPECT_LE(r->interval.low, r->rate);
            EXPECT_LE(r->rate, r->interval.high);
            EXPECT_LE(r->interval.high, 1.0);
        }
}

TEST(Wilson, NoRunsOrImpossibleCountsHaveNone) {
    EXPECT_FALSE(wilson(0, 0));
    EXPECT_FALSE(wilson(3, 2));
    EXPECT_FALSE(wilson(-1, 5));
    EXPECT_FALSE(wilson(1, -5));
}

TEST(Newcombe, MatchesThePublishedMethodTen) {
    auto d = newcombe(56, 70, 48, 80);
    ASSERT_TRUE(d);
    EXPECT_DOUBLE_EQ(four(d->difference), 0.2000);
    EXPECT_DOUBLE_EQ(four(d->interval.low), 0.0524);
    EXPECT_DOUBLE_EQ(four(d->interval.high), 0.3339);
    auto e = newcombe(5, 56, 0, 29);
    ASSERT_TRUE(e);
    EXPECT_DOUBLE_EQ(four(e->difference), 0.0893);
    EXPECT_DOUBLE_EQ(four(e->interval.low), -0.0381);
    EXPECT_DOUBLE_EQ(four(e->interval.high), 0.1926);
    // Table II's examples 9/10 - 3/10, 0/10 - 0/20 and 10/10 - 0/20.
    auto f = newcombe(9, 10, 3, 10);
    EXPECT_DOUBLE_EQ(four(f->interval.low), 0.1705);
    EXPECT_DOUBLE_EQ(four(f->interval.high), 0.8090);
    auto h = newcombe(0, 10, 0, 20);
    EXPECT_DOUBLE_EQ(four(h->interval.low), -0.1611);
    EXPECT_DOUBLE_EQ(four(h->interval.high), 0.2775);
    auto i = newcombe(10, 10, 0, 20);
    EXPECT_DOUBLE_EQ(four(i->interval.low), 0.6791);
    EXPECT_DOUBLE_EQ(four(i->interval.high), 1.0000);
}

TEST(Newcombe, ADifferenceAboveZeroIsOneWhoseLowEndIs) {
    // 27/30 against 15/30 is better; 16/30 against 15/30 is not told apart.
    EXPECT_GT(newcombe(27, 30, 15, 30)->interval.low, 0.0);
    EXPECT_LT(newcombe(16, 30, 15, 30)->interval.low, 0.0);
    EXPECT_FALSE(newcombe(1, 0, 1, 2));
    EXPECT_FALSE(newcombe(1, 2, 0, 0));
}

} // namespace
} // namespace sion
