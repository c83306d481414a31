// SPDX-License-Identifier: MIT
// EngineThread: the CLI server's engine loop.
#include "engine_thread.h"

#include <chrono>

namespace ember::server {

EngineThread::EngineThread(std::shared_ptr<LoadedModel> model, const SessionOptions& session_options,
                           std::string model_id)
    : model_(std::move(model)), session_(std::make_unique<Session>(model_, session_options)) {
    served_.id = std::move(model_id);
    served_.n_ctx = session_->n_ctx();
    served_.has_vision = model_->projector() != nullptr;
    served_.created =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    thread_ = std::thread([this] { loop(); });
}

EngineThread::~EngineThread() {
    std::deque<EngineJob> left;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        left.swap(jobs_);
    }
    wake_.notify_all();
    thread_.join();
    for (EngineJob& job : left) job(nullptr);
}

void EngineThread::post(EngineJob job) {
    {
        std::lock_guard lock(mutex_);
        if (!stopping_) {
            jobs_.push_back(std::move(job));
            job = nullptr;
        }
    }
    if (job) job(nullptr);
    wake_.notify_one();
}

void EngineThread::loop() {
    for (;;) {
        EngineJob job;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
            if (stopping_) return;
            job = std::move(jobs_.front());
            jobs_.pop_front();
        }
        EngineSlot slot{*model_, *session_};
        job(&slot);
    }
}

}  // namespace ember::server
