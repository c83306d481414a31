// SPDX-License-Identifier: MIT
// EMBER_GPU_PROFILE: event timing of every launch of the HIP/CUDA backend, summed per label.
#include "backend/hip/gpu_profiler.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backend/hip/step_recorder.h"

namespace ember::gpu_backend {

bool GpuProfiler::wanted() {
    const char* env = std::getenv("EMBER_GPU_PROFILE");
    return env && *env && std::strcmp(env, "0") != 0;
}

GpuProfiler::GpuProfiler(gpu::Stream stream) : stream_(stream) {}

GpuProfiler::~GpuProfiler() {
    for (gpu::Event e : events_) release(gpu::event_destroy(e));
}

void GpuProfiler::begin_step() {
    labels_.clear();
    if (events_.empty()) {
        events_.push_back(nullptr);
        check(gpu::event_create_timed(&events_[0]), "creating a profiling event");
    }
    check(gpu::event_record(events_[0], stream_), "recording a profiling event");
}

void GpuProfiler::after_launch(const std::string& label) {
    labels_.push_back(label);
    if (events_.size() <= labels_.size()) {
        events_.push_back(nullptr);
        check(gpu::event_create_timed(&events_.back()), "creating a profiling event");
    }
    check(gpu::event_record(events_[labels_.size()], stream_), "recording a profiling event");
}

void GpuProfiler::end_step() {
    if (labels_.empty()) return;
    check(gpu::event_synchronize(events_[labels_.size()]), "waiting for a profiled step");
    ++steps_;
    for (size_t i = 0; i < labels_.size(); ++i) {
        float ms = 0;
        check(gpu::event_elapsed_ms(&ms, events_[i], events_[i + 1]), "reading a profiling event");
        Entry& e = entries_[labels_[i]];
        ++e.calls;
        e.ms += ms;
        total_ms_ += ms;
    }
    labels_.clear();
}

std::string GpuProfiler::report() const {
    std::vector<std::pair<std::string, Entry>> rows(entries_.begin(), entries_.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
    uint64_t launches = 0;
    for (const auto& r : rows) launches += r.second.calls;
    char line[320];
    std::string out;
    std::snprintf(line, sizeof line, "%s profile: %.3f ms of GPU time in %llu steps, %llu launches\n",
                  gpu::kRuntimeName, total_ms_, static_cast<unsigned long long>(steps_),
                  static_cast<unsigned long long>(launches));
    out += line;
    out += "  share     total ms     calls   mean us  launch\n";
    for (const auto& [name, e] : rows) {
        std::snprintf(line, sizeof line, "  %5.1f%% %12.3f %9llu %9.2f  %s\n",
                      total_ms_ > 0 ? 100.0 * e.ms / total_ms_ : 0.0, e.ms, static_cast<unsigned long long>(e.calls),
                      e.calls ? 1e3 * e.ms / static_cast<double>(e.calls) : 0.0, name.c_str());
        out += line;
    }
    return out;
}

}  // namespace ember::gpu_backend
