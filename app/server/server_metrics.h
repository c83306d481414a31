// SPDX-License-Identifier: MIT
// The server's counters, read by GET /metrics as Prometheus text. Updated from HTTP and engine threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "ember/runtime.h"

namespace ember::server {

class ServerMetrics {
public:
    void request_admitted() {
        ++requests_;
        ++queued_;
    }
    void request_started() {
        --queued_;
        ++running_;
    }
    void request_finished(const GenerationStats* stats);  // stats null when the request failed before the engine
    void request_dropped() { --queued_; }                 // left the queue without running
    void request_refused() { ++errors_; }
    int64_t queue_length() const { return queued_.load(); }

    // Prometheus text exposition format.
    std::string render(const std::string& model_id) const;

private:
    std::atomic<int64_t> requests_{0}, errors_{0}, queued_{0}, running_{0};
    mutable std::mutex mutex_;  // the totals below
    int64_t prompt_tokens_ = 0, cached_tokens_ = 0, generated_tokens_ = 0;
    int64_t drafted_tokens_ = 0, accepted_tokens_ = 0;
    double prompt_seconds_ = 0, decode_seconds_ = 0, last_tokens_per_second_ = 0;
};

}  // namespace ember::server
