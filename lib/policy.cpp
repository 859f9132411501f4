// SPDX-License-Identifier: MIT
// The autonomy table as arithmetic: each effect runs from one level and asks at the one below.
#include "lib/policy.hpp"

#include "lib/text.hpp"

namespace sion {

namespace {

constexpr const char* k_names[] = {"read", "write", "external", "spend"};
constexpr int k_runs_from[] = {1, 3, 5, 6};

bool raised_by_taint(Effect effect) {
    return effect == Effect::external || effect == Effect::spend;
}

} // namespace

const char* effect_name(Effect effect) {
    return k_names[static_cast<int>(effect)];
}

Result<Effect> parse_effect(std::string_view text) {
    for (int i = 0; i < 4; ++i)
        if (text == k_names[i])
            return static_cast<Effect>(i);
    return make_error(Exit::usage, "unknown effect '%.*s': give read, write, external or spend",
                      static_cast<int>(text.size()), text.data());
}

Result<int> parse_autonomy(std::string_view text) {
    if (text.size() == 2 && text[0] == 'L' && text[1] >= '0' && text[1] <= '6')
        return text[1] - '0';
    return make_error(Exit::usage, "unknown autonomy level '%.*s': give L0 to L6",
                      static_cast<int>(text.size()), text.data());
}

std::string autonomy_name(int level) {
    return "L" + std::to_string(level);
}

const char* decision_name(Decision decision) {
    switch (decision) {
    case Decision::run:
        return "run";
    case Decision::ask:
        return "ask";
    case Decision::refuse:
        return "refuse";
    }
    return "refuse";
}

int runs_from(Effect effect, bool tainted) {
    return k_runs_from[static_cast<int>(effect)] + (tainted && raised_by_taint(effect) ? 1 : 0);
}

Decision decide(Effect effect, int autonomy, bool tainted) {
    int from = runs_from(effect, tainted);
    if (autonomy >= from)
        return Decision::run;
    if (autonomy == from - 1)
        return Decision::ask;
    return Decision::refuse;
}

std::string explain(std::string_view tool, Effect effect, int autonomy, bool tainted) {
    int from = runs_from(effect, tainted);
    // As the seed says it: "a command is a write", "it is external".
    const char* article = effect == Effect::external ? "" : "a ";
    std::string what = format("%.*s is %s%s", static_cast<int>(tool.size()), tool.data(), article,
                              effect_name(effect));
    if (effect == Effect::read)
        what = format("%.*s only reads", static_cast<int>(tool.size()), tool.data());
    const char* because =
        tainted && raised_by_taint(effect) ? ", since the session is tainted" : "";
    std::string runs = from > k_max_autonomy ? std::string("never runs on its own")
                                             : "runs on its own from " + autonomy_name(from);
    switch (decide(effect, autonomy, tainted)) {
    case Decision::run:
        return format("%s, which %s%s", what.c_str(), runs.c_str(), because);
    case Decision::ask:
        return format("%s, which asks a person at %s%s", what.c_str(),
                      autonomy_name(autonomy).c_str(), because);
    case Decision::refuse:
        break;
    }
    return format("%s, refused at %s: it %s and asks at %s%s", what.c_str(),
                  autonomy_name(autonomy).c_str(), runs.c_str(), autonomy_name(from - 1).c_str(),
                  because);
}

} // namespace sion
