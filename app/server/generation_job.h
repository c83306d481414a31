// SPDX-License-Identifier: MIT
// One request's generation as both threads see it: the engine thread runs it and pushes chunks, the HTTP thread
// waits for them and may cancel (the client went away). Held by shared_ptr on both sides, so either may finish
// first.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>

#include "api_error.h"
#include "engine_host.h"

namespace ember::server {

class GenerationJob {
public:
    using Clock = std::chrono::steady_clock;
    // What the job does with the engine: the chat turn or completion, streaming through `on_chunk`, stopping when
    // `cancel` is set.
    using Work = std::function<GenerationResult(EngineSlot& slot, const GenerationOptions& options,
                                                const StreamCallback& on_chunk)>;

    GenerationJob(Work work, GenerationOptions options, uint64_t admitted)
        : work_(std::move(work)), options_(std::move(options)), admitted_(admitted) {}

    // Engine thread. `started` numbers the jobs in the order the engine took them. `finishing` (if set) sees the
    // result (null on an error) before any waiter learns that the job is done, so that what it records (the server's
    // metrics) is there when the client has its reply.
    void run(EngineSlot* slot, uint64_t started,
             const std::function<void(const GenerationResult*)>& finishing = nullptr);

    // HTTP thread: waits up to `timeout` for chunks or the end; moves the chunks into `out`; true once done.
    bool wait(std::chrono::milliseconds timeout, std::deque<StreamChunk>& out);
    void cancel() { cancel_.store(true); }
    bool cancelled() const { return cancel_.load(); }

    // Valid once wait() returned true.
    const std::optional<GenerationResult>& result() const { return result_; }
    const std::optional<ApiError>& error() const { return error_; }
    uint64_t admitted() const { return admitted_; }
    // Valid once the first chunk or the end arrived.
    uint64_t started() const {
        std::lock_guard lock(mutex_);
        return started_;
    }
    double queued_seconds() const {
        std::lock_guard lock(mutex_);
        return queued_seconds_;
    }

private:
    Work work_;
    GenerationOptions options_;
    std::atomic<bool> cancel_{false};
    const uint64_t admitted_;
    const Clock::time_point created_ = Clock::now();
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<StreamChunk> chunks_;
    bool done_ = false;
    std::optional<GenerationResult> result_;
    std::optional<ApiError> error_;
    uint64_t started_ = 0;
    double queued_seconds_ = 0;
};

}  // namespace ember::server
