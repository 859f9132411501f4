// SPDX-License-Identifier: MIT
// Confidence intervals for pass rates, as an evaluation of models reports them (seed 001, "A model
// for each task"): a rate's 95% Wilson score interval, and the difference of two rates with
// Newcombe's hybrid score interval (his method 10: Newcombe, "Interval estimation for the
// difference between independent proportions", Statistics in Medicine 17, 1998), built from the
// two Wilson intervals, without continuity correction. Both stay within [0, 1] and [-1, 1], and
// are defined for 0 and for every pass.
#pragma once

#include <cstdint>
#include <optional>

namespace sion {

// The normal quantile for a two-sided 95% interval.
inline constexpr double k_z95 = 1.959963984540054;

struct Interval {
    double low = 0;
    double high = 0;
};

// A pass rate, `passes` of `runs`, and its Wilson score interval; nullopt when there were no runs
// or the counts are impossible (negative, or more passes than runs).
struct Rate {
    double rate = 0;
    Interval interval;
};

[[nodiscard]] std::optional<Rate> wilson(int64_t passes, int64_t runs, double z = k_z95);

// The difference of two pass rates, first minus second, and Newcombe's hybrid score interval for
// it; nullopt when either rate has none.
struct Difference {
    double difference = 0;
    Interval interval;
};

[[nodiscard]] std::optional<Difference> newcombe(int64_t passes1, int64_t runs1, int64_t passes2,
                                                 int64_t runs2, double z = k_z95);

} // namespace sion
