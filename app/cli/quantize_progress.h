// SPDX-License-Identifier: MIT
// ember-quantize's progress bar with ETA (on a terminal: one line redrawn in place; otherwise a line every 10%),
// and the summary table of the output: tensors, bytes and bits per weight by type.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "ember/gguf.h"

namespace ember::cli::quantize {

class Progress {
public:
    Progress(uint64_t total_weights, std::FILE* out);
    void advance(uint64_t weights);
    void finish();

private:
    void draw(bool final);

    uint64_t total_;
    uint64_t done_ = 0;
    std::FILE* out_;
    bool tty_;
    int last_decile_ = -1;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
};

struct TypeTotals {
    uint64_t tensors = 0;
    uint64_t bytes = 0;
    uint64_t weights = 0;
};

// Prints the table for the output file, then the input -> output comparison line.
void print_summary(std::FILE* out, const std::map<std::string, TypeTotals>& by_type, const TypeTotals& input,
                   double seconds);

}  // namespace ember::cli::quantize
