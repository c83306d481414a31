// SPDX-License-Identifier: MIT
// Watches streamed text for stop strings. Text that might still turn into a stop string is held back, so the
// caller never shows a half stop string; text after a stop string is dropped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ember::runtime {

class StopStringFilter {
public:
    explicit StopStringFilter(std::vector<std::string> stops);

    // Returns the text that is safe to emit now. After a stop string was seen, stopped() is true and nothing more
    // is returned.
    std::string push(std::string_view text);
    // The held-back tail, at the end of generation.
    std::string flush();
    bool stopped() const { return stopped_; }

private:
    std::vector<std::string> stops_;
    std::string pending_;
    bool stopped_ = false;
};

}  // namespace ember::runtime
