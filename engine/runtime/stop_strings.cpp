// SPDX-License-Identifier: MIT
// Holding back streamed text that may still become a stop string.
#include "runtime/stop_strings.h"

#include <algorithm>
#include <utility>

namespace ember::runtime {

StopStringFilter::StopStringFilter(std::vector<std::string> stops) : stops_(std::move(stops)) {
    std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string StopStringFilter::push(std::string_view text) {
    if (stopped_) return {};
    pending_ += text;
    size_t first_stop = std::string::npos;
    for (const std::string& s : stops_) first_stop = std::min(first_stop, pending_.find(s));
    if (first_stop != std::string::npos) {
        stopped_ = true;
        std::string out = pending_.substr(0, first_stop);
        pending_.clear();
        return out;
    }
    // Hold back the longest tail that is a prefix of some stop string.
    size_t hold = 0;
    for (const std::string& s : stops_)
        for (size_t n = std::min(s.size() - 1, pending_.size()); n > hold; --n)
            if (pending_.compare(pending_.size() - n, n, s, 0, n) == 0) {
                hold = n;
                break;
            }
    std::string out = pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return out;
}

std::string StopStringFilter::flush() {
    if (stopped_) return {};
    return std::exchange(pending_, {});
}

}  // namespace ember::runtime
