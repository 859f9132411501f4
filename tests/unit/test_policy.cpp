// SPDX-License-Identifier: MIT
// Tests for lib/policy: the whole autonomy table, every effect at every level with and without
// taint, the names both ways, and the one-line explanations.
#include "lib/policy.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sion {
namespace {

constexpr Effect k_effects[] = {Effect::read, Effect::write, Effect::external, Effect::spend};

// A row of the table: what each level L0..L6 decides, r(un), a(sk) or x (refuse). Written out by
// hand from the header's table rather than computed, so the test does not repeat the arithmetic.
struct Row {
    Effect effect;
    bool tainted;
    const char* levels;
};

constexpr Row k_table[] = {
    {Effect::read, false, "arrrrrr"},
    {Effect::write, false, "xxarrrr"},
    {Effect::external, false, "xxxxarr"},
    {Effect::spend, false, "xxxxxar"},
    // Taint raises external and spend by one level; a tainted spend always asks.
    {Effect::read, true, "arrrrrr"},
    {Effect::write, true, "xxarrrr"},
    {Effect::external, true, "xxxxxar"},
    {Effect::spend, true, "xxxxxxa"},
};

char letter(Decision d) {
    switch (d) {
    case Decision::run:
        return 'r';
    case Decision::ask:
        return 'a';
    case Decision::refuse:
        return 'x';
    }
    return '?';
}

TEST(Policy, TheWholeAutonomyTable) {
    for (const Row& row : k_table) {
        std::string got;
        for (int level = 0; level <= k_max_autonomy; ++level)
            got += letter(decide(row.effect, level, row.tainted));
        EXPECT_EQ(got, row.levels) << effect_name(row.effect) << (row.tainted ? " tainted" : "");
    }
}

TEST(Policy, RunsFromMatchesTheTable) {
    EXPECT_EQ(runs_from(Effect::read, false), 1);
    EXPECT_EQ(runs_from(Effect::write, false), 3);
    EXPECT_EQ(runs_from(Effect::external, false), 5);
    EXPECT_EQ(runs_from(Effect::spend, false), 6);
    EXPECT_EQ(runs_from(Effect::read, true), 1);
    EXPECT_EQ(runs_from(Effect::write, true), 3);
    EXPECT_EQ(runs_from(Effect::external, true), 6);
    EXPECT_EQ(runs_from(Effect::spend, true), 7); // never reached: L6 is the top
    for (const Row& row : k_table) {
        int from = runs_from(row.effect, row.tainted);
        for (int level = 0; level <= k_max_autonomy; ++level) {
            Decision want = level >= from       ? Decision::run
                            : level == from - 1 ? Decision::ask
                                                : Decision::refuse;
            EXPECT_EQ(decide(row.effect, level, row.tainted), want)
                << effect_name(row.effect) << " L" << level;
        }
    }
}

TEST(Policy, EffectNamesBothWays) {
    const char* names[] = {"read", "write", "external", "spend"};
    for (int i = 0; i < 4; ++i) {
        EXPECT_STREQ(effect_name(k_effects[i]), names[i]);
        auto parsed = parse_effect(names[i]);
        ASSERT_TRUE(parsed) << parsed.error().message();
        EXPECT_EQ(*parsed, k_effects[i]);
    }
    for (const char* bad : {"x", "", "Read", "reads", "write "}) {
        auto parsed = parse_effect(bad);
        ASSERT_FALSE(parsed) << bad;
        EXPECT_EQ(parsed.error().exit(), Exit::usage);
        EXPECT_EQ(parsed.error().message(),
                  "unknown effect '" + std::string(bad) + "': give read, write, external or spend");
    }
}

TEST(Policy, AutonomyLevelsBothWays) {
    for (int level = 0; level <= k_max_autonomy; ++level) {
        std::string name = autonomy_name(level);
        EXPECT_EQ(name, "L" + std::to_string(level));
        auto parsed = parse_autonomy(name);
        ASSERT_TRUE(parsed) << parsed.error().message();
        EXPECT_EQ(*parsed, level);
    }
    for (const char* bad : {"L9", "L7", "L", "", "3", "L10", "L-1", "LL", "L3 ", " L3", "M3"}) {
        auto parsed = parse_autonomy(bad);
        ASSERT_FALSE(parsed) << bad;
        EXPECT_EQ(parsed.error().exit(), Exit::usage);
        EXPECT_EQ(parsed.error().message(),
                  "unknown autonomy level '" + std::string(bad) + "': give L0 to L6");
    }
}

TEST(Policy, DecisionNames) {
    EXPECT_STREQ(decision_name(Decision::run), "run");
    EXPECT_STREQ(decision_name(Decision::ask), "ask");
    EXPECT_STREQ(decision_name(Decision::refuse), "refuse");
}

TEST(Policy, ExplainAsTheHeaderShowsIt) {
    EXPECT_EQ(explain("shell", Effect::write, 3, false),
              "shell is a write, which runs on its own from L3");
    EXPECT_EQ(explain("shell", Effect::write, 2, false),
              "shell is a write, which asks a person at L2");
    EXPECT_EQ(explain("shell", Effect::write, 1, false),
              "shell is a write, refused at L1: it runs on its own from L3 and asks at L2");
}

TEST(Policy, ExplainAboveTheLevelAGivesTheLevelItRunsFrom) {
    EXPECT_EQ(explain("shell", Effect::write, 6, false),
              "shell is a write, which runs on its own from L3");
    EXPECT_EQ(explain("shell", Effect::write, 0, false),
              "shell is a write, refused at L0: it runs on its own from L3 and asks at L2");
}

TEST(Policy, ExplainReads) {
    EXPECT_EQ(explain("read_file", Effect::read, 0, false),
              "read_file only reads, which asks a person at L0");
    EXPECT_EQ(explain("read_file", Effect::read, 1, false),
              "read_file only reads, which runs on its own from L1");
    // Taint does not raise reads, so it is not mentioned.
    EXPECT_EQ(explain("read_file", Effect::read, 4, true),
              "read_file only reads, which runs on its own from L1");
}

TEST(Policy, ExplainExternalAndSpend) {
    EXPECT_EQ(explain("fetch", Effect::external, 5, false),
              "fetch is external, which runs on its own from L5");
    EXPECT_EQ(explain("fetch", Effect::external, 4, false),
              "fetch is external, which asks a person at L4");
    EXPECT_EQ(explain("fetch", Effect::external, 3, false),
              "fetch is external, refused at L3: it runs on its own from L5 and asks at L4");
    EXPECT_EQ(explain("buy", Effect::spend, 6, false),
              "buy is a spend, which runs on its own from L6");
    EXPECT_EQ(explain("buy", Effect::spend, 5, false), "buy is a spend, which asks a person at L5");
    EXPECT_EQ(explain("buy", Effect::spend, 2, false),
              "buy is a spend, refused at L2: it runs on its own from L6 and asks at L5");
}

TEST(Policy, ExplainNamesTaintWhenItRaisedTheLevels) {
    EXPECT_EQ(explain("fetch", Effect::external, 6, true),
              "fetch is external, which runs on its own from L6, since the session is tainted");
    EXPECT_EQ(explain("fetch", Effect::external, 5, true),
              "fetch is external, which asks a person at L5, since the session is tainted");
    EXPECT_EQ(
        explain("fetch", Effect::external, 4, true),
        "fetch is external, refused at L4: it runs on its own from L6 and asks at L5, since "
        "the session is tainted");
    EXPECT_EQ(explain("buy", Effect::spend, 6, true),
              "buy is a spend, which asks a person at L6, since the session is tainted");
    EXPECT_EQ(explain("buy", Effect::spend, 5, true),
              "buy is a spend, refused at L5: it never runs on its own and asks at L6, since the "
              "session is tainted");
    // Writes are not raised by taint, so it is not mentioned.
    EXPECT_EQ(explain("shell", Effect::write, 3, true),
              "shell is a write, which runs on its own from L3");
    EXPECT_EQ(explain("shell", Effect::write, 1, true),
              "shell is a write, refused at L1: it runs on its own from L3 and asks at L2");
}

TEST(Policy, ExplainAgreesWithDecideEverywhere) {
    for (const Row& row : k_table) {
        for (int level = 0; level <= k_max_autonomy; ++level) {
            std::string why = explain("t", row.effect, level, row.tainted);
            Decision d = decide(row.effect, level, row.tainted);
            const char* marker = d == Decision::run   ? ", which runs on its own from L"
                                 : d == Decision::ask ? ", which asks a person at L"
                                                      : ", refused at L";
            EXPECT_NE(why.find(marker), std::string::npos) << why;
            bool mentions_taint = why.find(", since the session is tainted") != std::string::npos;
            bool raised =
                row.tainted && (row.effect == Effect::external || row.effect == Effect::spend);
            EXPECT_EQ(mentions_taint, raised) << why;
            EXPECT_EQ(why.find("L7"), std::string::npos) << why;
            EXPECT_EQ(why.find("L-1"), std::string::npos) << why;
        }
    }
}

} // namespace
} // namespace sion
