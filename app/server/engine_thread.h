// SPDX-License-Identifier: MIT
// An EngineHost with a thread of its own (ember-cli serve): one model, one session, a FIFO of jobs.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "engine_host.h"

namespace ember::server {

class EngineThread : public EngineHost {
public:
    EngineThread(std::shared_ptr<LoadedModel> model, const SessionOptions& session_options, std::string model_id);
    ~EngineThread() override;  // finishes the running job, drops the queued ones (they see a null slot)

    std::optional<ServedModel> served_model() const override { return served_; }
    void post(EngineJob job) override;

private:
    void loop();

    std::shared_ptr<LoadedModel> model_;
    std::unique_ptr<Session> session_;
    ServedModel served_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<EngineJob> jobs_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace ember::server
