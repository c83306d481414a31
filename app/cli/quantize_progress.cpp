// SPDX-License-Identifier: MIT
#include "quantize_progress.h"

#include "byte_size_text.h"

#include <unistd.h>

namespace ember::cli::quantize {

namespace {

std::string clock_text(double seconds) {
    const auto s = static_cast<long long>(seconds + 0.5);
    char text[32];
    if (s >= 3600) std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
    else std::snprintf(text, sizeof text, "%lld:%02lld", s / 60, s % 60);
    return text;
}

double bits_per_weight(const TypeTotals& t) { return t.weights ? 8.0 * static_cast<double>(t.bytes) / t.weights : 0; }

}  // namespace

Progress::Progress(uint64_t total_weights, std::FILE* out)
    : total_(total_weights), out_(out), tty_(isatty(fileno(out)) != 0), start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void Progress::advance(uint64_t weights) {
    done_ += weights;
    draw(false);
}

void Progress::finish() { draw(true); }

void Progress::draw(bool final) {
    const auto now = std::chrono::steady_clock::now();
    const double fraction = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
    const int decile = static_cast<int>(fraction * 10);
    if (tty_) {
        if (!final && now - last_draw_ < std::chrono::milliseconds(100)) return;
    } else if (!final && (decile == last_decile_ || decile >= 10)) {
        return;
    }
    last_draw_ = now;
    last_decile_ = decile;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
    constexpr int width = 30;
    std::string bar(width, ' ');
    for (int i = 0; i < static_cast<int>(fraction * width + 0.5) && i < width; ++i) bar[static_cast<size_t>(i)] = '#';
    std::fprintf(out_, "%s[%s] %3d%%  %.1f/%.1f M weights  %s %s%s", tty_ ? "\r" : "", bar.c_str(),
                 static_cast<int>(fraction * 100 + 0.5), static_cast<double>(done_) / 1e6,
                 static_cast<double>(total_) / 1e6, final ? "done in" : "ETA",
                 clock_text(final ? elapsed : eta).c_str(), tty_ && !final ? "   " : "\n");
    std::fflush(out_);
}

void print_summary(std::FILE* out, const std::map<std::string, TypeTotals>& by_type, const TypeTotals& input,
                   double seconds) {
    std::fprintf(out, "%-20s %8s %14s %12s\n", "type", "tensors", "bytes", "bits/weight");
    TypeTotals all;
    for (const auto& [name, t] : by_type) {
        std::fprintf(out, "%-20s %8llu %14s %12.4f\n", name.c_str(), static_cast<unsigned long long>(t.tensors),
                     human_bytes(t.bytes).c_str(), bits_per_weight(t));
        all.tensors += t.tensors;
        all.bytes += t.bytes;
        all.weights += t.weights;
    }
    std::fprintf(out, "%-20s %8llu %14s %12.4f\n", "total", static_cast<unsigned long long>(all.tensors),
                 human_bytes(all.bytes).c_str(), bits_per_weight(all));
    std::fprintf(out, "input %s (%.3f bits/weight) -> output %s (%.3f bits/weight) in %.1f s\n",
                 human_bytes(input.bytes).c_str(), bits_per_weight(input), human_bytes(all.bytes).c_str(),
                 bits_per_weight(all), seconds);
}

}  // namespace ember::cli::quantize
