// SPDX-License-Identifier: MIT
// Recording launches, capturing them into graphs once per step shape, and replaying them.
#include "backend/gpu/step_recorder.h"

#include <cstdio>
#include <cstring>

#include "backend/gpu/gpu_profiler.h"
#include "ember/error.h"

namespace ember::gpu_backend {

namespace {

constexpr size_t kInitialArgs = 64 * 1024;
constexpr size_t kMaxGraphs = 16;

size_t align16(size_t n) { return (n + 15) & ~size_t{15}; }

}  // namespace

void fail(const std::string& what, gpu::Error e) {
    // A runtime call that fails mid-step leaves the device's context unusable (errors are sticky).
    throw DeviceError(std::string(gpu::kRuntimeName) + " backend: " + what + ": " + gpu::error_string(e));
}

StepRecorder::StepRecorder(const gpu_kernels::Launch& launch, bool graphs) : launch_(launch), graphs_(graphs) {
    check(gpu::event_create(&copied_), "creating an event");
    if (GpuProfiler::wanted()) {
        profiler_ = std::make_unique<GpuProfiler>(launch.stream);
        graphs_ = false;  // a graph's launches cannot be timed one by one
    }
    grow(kInitialArgs);
}

StepRecorder::~StepRecorder() {
    if (profiler_) std::fputs(profiler_->report().c_str(), stderr);
    for (CachedGraph& g : graphs_lru_) release(gpu::graph_exec_destroy(g.exec));
    if (copied_) release(gpu::event_destroy(copied_));
    if (staging_) release(gpu::free_pinned(staging_));
    if (device_args_) release(gpu::free_device(device_args_));
}

void StepRecorder::grow(size_t need) {
    size_t capacity = capacity_ ? capacity_ : kInitialArgs;
    while (capacity < need) capacity *= 2;
    if (capacity == capacity_) return;
    check(gpu::stream_synchronize(launch_.stream), "waiting for the stream");
    if (staging_) check(gpu::free_pinned(staging_), "freeing pinned argument memory");
    if (device_args_) check(gpu::free_device(device_args_), "freeing device argument memory");
    staging_ = nullptr;
    device_args_ = nullptr;
    void* p = nullptr;
    check(gpu::malloc_pinned(&p, capacity), "allocating pinned argument memory");
    staging_ = static_cast<std::byte*>(p);
    check(gpu::malloc_device(&p, capacity), "allocating device argument memory");
    device_args_ = static_cast<std::byte*>(p);
    capacity_ = capacity;
    // Graphs read their arguments from the old device area.
    for (CachedGraph& g : graphs_lru_) check(gpu::graph_exec_destroy(g.exec), "destroying a graph");
    graphs_lru_.clear();
    seen_.clear();
}

size_t StepRecorder::stage(const void* data, size_t n) {
    if (copy_pending_) {  // the previous step's copy may still read the staging area
        check(gpu::event_synchronize(copied_), "waiting for an argument copy");
        copy_pending_ = false;
    }
    const size_t offset = used_;
    if (offset + align16(n) > capacity_) {
        if (!pending_.empty()) {
            // Launches already recorded point into the current area: run them before it moves.
            flush();
            return stage(data, n);
        }
        grow(align16(n));
        return stage(data, n);
    }
    if (n) std::memcpy(staging_ + offset, data, n);
    used_ = offset + align16(n);
    return offset;
}

void StepRecorder::record(std::vector<uint64_t> key, LaunchFn fn, std::string label) {
    if (profiler_)
        labels_.push_back(label.empty() ? std::string(reinterpret_cast<const char*>(key[0])) : std::move(label));
    signature_.push_back(key.size());
    signature_.insert(signature_.end(), key.begin(), key.end());
    pending_.push_back(std::move(fn));
}

uint64_t StepRecorder::hash(const std::vector<uint64_t>& v) {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t x : v) {
        h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 1099511628211ull;
    }
    return h;
}

void StepRecorder::run_eager(const std::byte* args) {
    if (profiler_) {
        profiler_->begin_step();
        for (size_t i = 0; i < pending_.size(); ++i) {
            pending_[i](launch_, args);
            profiler_->after_launch(labels_[i]);
        }
        check(gpu::get_last_error(), "launching a kernel");
        profiler_->end_step();
        return;
    }
    for (const LaunchFn& fn : pending_) fn(launch_, args);
    check(gpu::get_last_error(), "launching a kernel");
}

bool StepRecorder::capture(const std::byte* args, gpu::GraphExec* exec) {
    if (gpu::begin_capture(launch_.stream) != gpu::kSuccess) {
        clear_last_error();  // this step runs eagerly instead
        return false;
    }
    for (const LaunchFn& fn : pending_) fn(launch_, args);
    gpu::Graph graph = nullptr;
    const gpu::Error ended = gpu::end_capture(launch_.stream, &graph);
    bool ok = ended == gpu::kSuccess && graph && gpu::get_last_error() == gpu::kSuccess &&
              gpu::graph_instantiate(exec, graph) == gpu::kSuccess;
    if (graph) check(gpu::graph_destroy(graph), "destroying a captured graph");
    if (!ok) clear_last_error();  // the step runs eagerly instead
    return ok;
}

void StepRecorder::flush() {
    if (pending_.empty()) return;
    ++stats_.steps;
    if (used_) {
        check(gpu::memcpy_async(device_args_, staging_, used_, gpu::kHostToDevice, launch_.stream),
              "copying launch arguments");
        check(gpu::event_record(copied_, launch_.stream), "recording an event");
        copy_pending_ = true;
    }
    signature_.push_back(reinterpret_cast<uintptr_t>(device_args_));
    bool done = false;
    if (graphs_) {
        for (auto it = graphs_lru_.begin(); it != graphs_lru_.end(); ++it) {
            if (it->signature != signature_) continue;
            check(gpu::graph_launch(it->exec, launch_.stream), "launching a graph");
            graphs_lru_.splice(graphs_lru_.begin(), graphs_lru_, it);
            ++stats_.replayed_steps;
            done = true;
            break;
        }
        if (!done) {
            int& times = seen_[hash(signature_)];
            gpu::GraphExec exec = nullptr;
            if (times >= 1 && capture(device_args_, &exec)) {
                graphs_lru_.push_front({signature_, exec});
                if (graphs_lru_.size() > kMaxGraphs) {
                    check(gpu::graph_exec_destroy(graphs_lru_.back().exec), "destroying a graph");
                    graphs_lru_.pop_back();
                }
                check(gpu::graph_launch(exec, launch_.stream), "launching a graph");
                ++stats_.captured_steps;
                done = true;
            }
            ++times;
        }
    }
    if (!done) {
        run_eager(device_args_);
        ++stats_.eager_steps;
    }
    pending_.clear();
    signature_.clear();
    labels_.clear();
    used_ = 0;
}

}  // namespace ember::gpu_backend
