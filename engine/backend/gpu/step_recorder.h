// SPDX-License-Identifier: MIT
// Deferred launches with graph replay. The backend's operations do not launch at once: each records a launch
// function and a key (its pointers, shapes and parameters), and copies its small host arguments (positions, token
// ids, the cache length) into a staging area. At a flush point (read, synchronize) the staging area goes to the
// device in one copy, and the step runs: from a cached graph when the same sequence of launches ran before, else
// captured into a graph when it is the second time this sequence is seen, else launched one by one. Decode steps
// repeat the same launches with new arguments, so after the first two tokens each step is one graph launch.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "hip/kernels.h"

namespace ember::gpu_backend {

[[noreturn]] void fail(const std::string& what, gpu::Error e);
inline void check(gpu::Error e, const char* what) {
    if (e != gpu::kSuccess) fail(what, e);
}
// Releases a handle in a destructor, which must not throw: the handle is gone whatever the runtime answers, and a
// runtime that fails here already failed a step, which was reported where it ran. So the result is dropped.
inline void release(gpu::Error e) { static_cast<void>(e); }
// After a failed call that has been dealt with (thrown as an ember::Error naming it, or answered with a fallback),
// resets the runtime's last-error state so that the next check does not report the same failure again. The value
// returned is that failure, already handled.
inline void clear_last_error() { static_cast<void>(gpu::get_last_error()); }

// Launches read their staged arguments at `args` + the offsets stage() returned.
using LaunchFn = std::function<void(const gpu_kernels::Launch&, const std::byte* args)>;

struct StepStats {
    uint64_t steps = 0;           // flushes that ran something
    uint64_t eager_steps = 0;     // launched one by one
    uint64_t captured_steps = 0;  // captured into a new graph (and launched)
    uint64_t replayed_steps = 0;  // a cached graph launched
};

class StepRecorder {
public:
    StepRecorder(const gpu_kernels::Launch& launch, bool graphs);
    ~StepRecorder();
    StepRecorder(const StepRecorder&) = delete;
    StepRecorder& operator=(const StepRecorder&) = delete;

    // Copies n bytes of host arguments; returns their offset in the device argument area (16-byte aligned).
    size_t stage(const void* data, size_t n);
    // Appends a launch; `key` must hold every value the launch depends on besides its staged arguments. `label`
    // names it in a profile (EMBER_GPU_PROFILE); empty: the operation's name, key[0].
    void record(std::vector<uint64_t> key, LaunchFn fn, std::string label = {});
    bool profiling() const { return profiler_ != nullptr; }
    void flush();
    bool empty() const { return pending_.empty(); }
    const StepStats& stats() const { return stats_; }

private:
    struct CachedGraph {
        std::vector<uint64_t> signature;
        gpu::GraphExec exec = nullptr;
    };

    void grow(size_t need);
    void run_eager(const std::byte* args);
    bool capture(const std::byte* args, gpu::GraphExec* exec);
    static uint64_t hash(const std::vector<uint64_t>& v);

    gpu_kernels::Launch launch_;
    bool graphs_;
    std::unique_ptr<class GpuProfiler> profiler_;  // only with EMBER_GPU_PROFILE; steps then run eagerly
    std::vector<std::string> labels_;              // of the pending launches, when profiling
    std::vector<LaunchFn> pending_;
    std::vector<uint64_t> signature_;
    std::byte* staging_ = nullptr;       // pinned host memory
    std::byte* device_args_ = nullptr;   // device copy
    size_t capacity_ = 0;
    size_t used_ = 0;
    gpu::Event copied_ = nullptr;        // the last staging -> device copy is done with the staging area
    bool copy_pending_ = false;
    std::list<CachedGraph> graphs_lru_;  // most recently used first
    std::unordered_map<uint64_t, int> seen_;  // signature hash -> times run without a graph
    StepStats stats_;
};

}  // namespace ember::gpu_backend
