// SPDX-License-Identifier: MIT
// The render budget: steps, time, output bytes, depth and stack, and its errors.
#include "jinja/budget.h"

namespace ember::chat::jinja {

namespace {

constexpr uint64_t clock_check_interval = 4096;
// Native stack a render may use below its entry point; well inside the 8 MiB a Linux thread gets by default,
// even with sanitizers inflating frames.
constexpr std::ptrdiff_t stack_budget_bytes = 3 << 20;

[[gnu::noinline]] const char* stack_position() {
    return static_cast<const char*>(__builtin_frame_address(0));
}

}  // namespace

void fail(std::string message) {
    throw Failure(Failure::Kind::error, std::move(message));
}

Budget::Budget(const Limits& limits)
    : limits_(limits), deadline_(std::chrono::steady_clock::now() + limits.max_time), stack_base_(stack_position()) {}

void Budget::slow_check() {
    if (steps_ > limits_.max_steps)
        throw Failure(Failure::Kind::limit, "evaluation exceeded the limit of " + std::to_string(limits_.max_steps) +
                                                " steps (a loop that is too long?)");
    next_clock_check_ = steps_ + clock_check_interval;
    if (std::chrono::steady_clock::now() > deadline_)
        throw Failure(Failure::Kind::limit,
                      "rendering took longer than the limit of " + std::to_string(limits_.max_time.count()) + " ms");
}

void Budget::string_too_long(uint64_t n) const {
    const std::string size = n == UINT64_MAX ? "more than 2^64 bytes" : std::to_string(n) + " bytes";
    throw Failure(Failure::Kind::limit, "a string of " + size + " exceeds the output limit of " +
                                            std::to_string(limits_.max_output_bytes) + " bytes");
}

void Budget::output_too_long() const {
    throw Failure(Failure::Kind::limit,
                  "output exceeded the limit of " + std::to_string(limits_.max_output_bytes) + " bytes");
}

void Budget::value_too_deep(std::string_view what) const {
    throw Failure(Failure::Kind::limit, std::string(what) + " nested deeper than the limit of " +
                                            std::to_string(limits_.max_depth) + " levels");
}

void Budget::enter_call() {
    if (++depth_ > limits_.max_depth) {
        --depth_;
        throw Failure(Failure::Kind::limit,
                      "recursion deeper than the limit of " + std::to_string(limits_.max_depth) + " calls");
    }
    check_stack();
}

void Budget::check_stack() const {
    const std::ptrdiff_t used = stack_base_ - stack_position();
    if (used > stack_budget_bytes || used < -stack_budget_bytes)
        throw Failure(Failure::Kind::limit, "template or value nested too deeply (native stack budget exhausted)");
}

}  // namespace ember::chat::jinja
