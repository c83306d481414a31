// SPDX-License-Identifier: MIT
// GenerationJob: hand-over of chunks and the result between the engine thread and an HTTP thread.
#include "generation_job.h"

namespace ember::server {

void GenerationJob::run(EngineSlot* slot, uint64_t started,
                        const std::function<void(const GenerationResult*)>& finishing) {
    std::optional<GenerationResult> result;
    std::optional<ApiError> error;
    const double queued = std::chrono::duration<double>(Clock::now() - created_).count();
    {
        std::lock_guard lock(mutex_);
        started_ = started;
        queued_seconds_ = queued;
    }
    if (!slot) {
        error.emplace(503, "no model is loaded", "", "model_not_loaded", "server_error");
    } else if (cancel_.load()) {
        error.emplace(499, "the client went away", "", "cancelled");
    } else {
        GenerationOptions options = options_;
        options.cancel = &cancel_;
        const StreamCallback on_chunk = [this](const StreamChunk& chunk) {
            {
                std::lock_guard lock(mutex_);
                chunks_.push_back(chunk);
            }
            changed_.notify_all();
            return !cancel_.load();
        };
        try {
            result = work_(*slot, options, on_chunk);
        } catch (const ApiError& e) {
            error = e;
        } catch (const Error& e) {
            const std::string what = e.what();
            error.emplace(400, what, "messages", what.starts_with("context full") ? "context_length_exceeded" : "");
        } catch (const std::exception& e) {
            error.emplace(500, std::string("the engine failed: ") + e.what(), "", "", "server_error");
        }
    }
    if (finishing) finishing(result ? &*result : nullptr);
    {
        std::lock_guard lock(mutex_);
        result_ = std::move(result);
        error_ = std::move(error);
        done_ = true;
    }
    changed_.notify_all();
}

bool GenerationJob::wait(std::chrono::milliseconds timeout, std::deque<StreamChunk>& out) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [this] { return done_ || !chunks_.empty(); });
    while (!chunks_.empty()) {
        out.push_back(std::move(chunks_.front()));
        chunks_.pop_front();
    }
    return done_;
}

}  // namespace ember::server
