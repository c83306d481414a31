// SPDX-License-Identifier: MIT
// EMBER_GPU_PROFILE: event timing of every launch of the HIP/CUDA backend, summed per label.
#include "backend/gpu/gpu_profiler.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backend/gpu/step_recorder.h"

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
        ProfileEntry& e = entries_[labels_[i]];
        ++e.calls;
        e.ms += ms;
        total_ms_ += ms;
    }
    labels_.clear();
}

std::string GpuProfiler::report() const {
    uint64_t launches = 0;
    for (const auto& [label, e] : entries_) launches += e.calls;
    char line[160];
    std::snprintf(line, sizeof line, "%s profile: %.3f ms of GPU time in %llu steps, %llu launches\n",
                  gpu::kRuntimeName, total_ms_, static_cast<unsigned long long>(steps_),
                  static_cast<unsigned long long>(launches));
    return line + profile_table(entries_, total_ms_, "launch");
}

}  // namespace ember::gpu_backend
