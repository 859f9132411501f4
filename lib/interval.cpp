// SPDX-License-Identifier: MIT
// Wilson's score interval for a rate, and Newcombe's hybrid score interval for a difference.
#include "lib/interval.hpp"

#include <algorithm>
#include <cmath>

namespace sion {

std::optional<Rate> wilson(int64_t passes, int64_t runs, double z) {
    if (runs <= 0 || passes < 0 || passes > runs)
        return std::nullopt;
    double n = static_cast<double>(runs);
    double p = static_cast<double>(passes) / n;
    double z2 = z * z;
    double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
    double half = z / (1 + z2 / n) * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
    // At 0 and at every pass, one end is the rate itself; rounding must not put it past.
    return Rate{p,
                {std::clamp(std::min(centre - half, p), 0.0, 1.0),
                 std::clamp(std::max(centre + half, p), 0.0, 1.0)}};
}

std::optional<Difference> newcombe(int64_t passes1, int64_t runs1, int64_t passes2, int64_t runs2,
                                   double z) {
    auto first = wilson(passes1, runs1, z);
    auto second = wilson(passes2, runs2, z);
    if (!first || !second)
        return std::nullopt;
    double p1 = first->rate;
    double p2 = second->rate;
    double d = p1 - p2;
    double below = std::hypot(p1 - first->interval.low, second->interval.high - p2);
    double above = std::hypot(first->interval.high - p1, p2 - second->interval.low);
    return Difference{d, {std::max(d - below, -1.0), std::min(d + above, 1.0)}};
}

} // namespace sion
