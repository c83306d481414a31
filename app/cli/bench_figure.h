// SPDX-License-Identifier: MIT
// One benchmark figure over repeated runs (tokens per second): its runs, mean and sample standard deviation.
#pragma once

#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

namespace ember::cli {

struct Figure {
    std::vector<double> runs;
    double mean() const {
        double s = 0;
        for (double r : runs) s += r;
        return runs.empty() ? 0 : s / static_cast<double>(runs.size());
    }
    double stddev() const {
        if (runs.size() < 2) return 0;
        const double m = mean();
        double s = 0;
        for (double r : runs) s += (r - m) * (r - m);
        return std::sqrt(s / static_cast<double>(runs.size() - 1));
    }
    nlohmann::ordered_json json() const { return {{"mean", mean()}, {"stddev", stddev()}, {"runs", runs}}; }
};

}  // namespace ember::cli
