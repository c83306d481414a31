// SPDX-License-Identifier: MIT
// What one render may spend: evaluation steps, wall time, output bytes, call depth and native stack. Every
// limit ends the render with a one-line Failure; nothing is left half-done in shared state.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "ember/chat.h"

namespace ember::chat::jinja {

// Every error inside the interpreter. The renderer adds the template name and the position of the node that
// was being evaluated (except for raise_exception, which is reported as "<name>: <message>").
class Failure : public std::runtime_error {
public:
    enum class Kind { error, raised, limit };
    Failure(Kind kind, std::string message) : std::runtime_error(std::move(message)), kind_(kind) {}
    Kind kind() const { return kind_; }

private:
    Kind kind_;
};

[[noreturn]] void fail(std::string message);

class Budget {
public:
    explicit Budget(const Limits& limits);

    const Limits& limits() const { return limits_; }
    // One unit of work; loops, copies and string building charge in proportion to their size.
    void step(uint64_t n = 1) {
        steps_ = n > UINT64_MAX - steps_ ? UINT64_MAX : steps_ + n;  // a count near 2^64 must not wrap around
        if (steps_ > limits_.max_steps || steps_ >= next_clock_check_) slow_check();
    }
    // Work proportional to the bytes a string operation produces; also refuses strings above the output limit.
    void charge_bytes(size_t n) {
        if (n > limits_.max_output_bytes) string_too_long(n);
        step(1 + n / 16);  // also bounds the bytes all the strings of a render may take together
    }
    // The size a string operation will produce, computed before it is built: `count` pieces of `piece` bytes
    // on top of `base` bytes, refused (like charge_bytes) when it passes the output limit or overflows.
    void charge_pieces(size_t base, uint64_t count, size_t piece) {
        const uint64_t limit = limits_.max_output_bytes;
        if (piece != 0 && count > (limit - std::min<uint64_t>(base, limit)) / piece)
            string_too_long(count > UINT64_MAX / piece || base > UINT64_MAX - count * piece ? UINT64_MAX
                                                                                            : base + count * piece);
        charge_bytes(base + static_cast<size_t>(count * piece));
    }
    // A buffer being built (repr, tojson, join): refused beyond the output limit, without charging steps.
    void check_size(size_t total_bytes) const {
        if (total_bytes > limits_.max_output_bytes) string_too_long(total_bytes);
    }
    void check_output(size_t total_bytes) const {
        if (total_bytes > limits_.max_output_bytes) output_too_long();
    }
    // Macro and caller recursion.
    void enter_call();
    void leave_call() { --depth_; }
    // A value `depth` levels deep (`what` names it in the message) is refused beyond the call depth limit.
    void check_value_depth(int depth, std::string_view what = "value") const {
        if (depth > limits_.max_depth) value_too_deep(what);
    }
    // Guards the native stack against deeply nested templates and values.
    void check_stack() const;

private:
    void slow_check();
    [[noreturn]] void string_too_long(uint64_t n) const;
    [[noreturn]] void output_too_long() const;
    [[noreturn]] void value_too_deep(std::string_view what) const;

    Limits limits_;
    uint64_t steps_ = 0;
    uint64_t next_clock_check_ = 0;
    int depth_ = 0;
    std::chrono::steady_clock::time_point deadline_;
    const char* stack_base_;
};

class CallDepth {
public:
    explicit CallDepth(Budget& budget) : budget_(budget) { budget_.enter_call(); }
    ~CallDepth() { budget_.leave_call(); }
    CallDepth(const CallDepth&) = delete;
    CallDepth& operator=(const CallDepth&) = delete;

private:
    Budget& budget_;
};

}  // namespace ember::chat::jinja
