// SPDX-License-Identifier: MIT
// The policy every tool call passes through (DESIGN.md, "A tool call, end to end"): what a call may
// do (its effect), and what the session's autonomy level and taint make of it — run on its own, ask
// a person, or refuse.
//
//   effect    runs on its own from   asks a person at   refused below
//   read      L1                     L0                 —
//   write     L3                     L2                 L2
//   external  L5                     L4                 L4
//   spend     L6                     L5                 L5
//
// Once a session is tainted (it has read something from outside), external and spend calls need one
// level more: text from outside cannot, on its own, send the session's data back out.
#pragma once

#include "lib/result.hpp"

#include <string>
#include <string_view>

namespace sion {

enum class Effect { read, write, external, spend };

inline constexpr int k_max_autonomy = 6;

// "read", "write", "external", "spend".
[[nodiscard]] const char* effect_name(Effect effect);
// The inverse of effect_name. Exit::usage: "unknown effect 'x': give read, write, external or
// spend".
[[nodiscard]] Result<Effect> parse_effect(std::string_view text);

// "L0" … "L6" as 0 … 6. Exit::usage: "unknown autonomy level 'L9': give L0 to L6".
[[nodiscard]] Result<int> parse_autonomy(std::string_view text);
[[nodiscard]] std::string autonomy_name(int level);

enum class Decision { run, ask, refuse };

[[nodiscard]] const char* decision_name(Decision decision);

// The level from which a call of `effect` runs on its own, and the one at which it asks (one
// below); each one higher for external and spend calls once the session is tainted. A level above
// L6 is never reached: a tainted session asks before every spend, even at L6.
[[nodiscard]] int runs_from(Effect effect, bool tainted);

[[nodiscard]] Decision decide(Effect effect, int autonomy, bool tainted);

// Why `tool`'s call was decided so, in one line for the person and the model:
//   run     "shell is a write, which runs on its own from L3"
//   ask     "shell is a write, which asks a person at L2"
//   refuse  "shell is a write, refused at L1: it runs on its own from L3 and asks at L2"
// with ", since the session is tainted" after the levels when taint raised them.
[[nodiscard]] std::string explain(std::string_view tool, Effect effect, int autonomy, bool tainted);

} // namespace sion
