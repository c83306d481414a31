// SPDX-License-Identifier: MIT
// Where the server's generations run. The server never touches a model or a session itself: it posts jobs to an
// EngineHost, which runs them one at a time, in the order they were posted, on the thread that owns the engine.
// ember-cli serve uses EngineThread (a thread of its own); the desktop app runs them on its engine worker, in the
// same queue as the chat window's turns.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ember/runtime.h"

namespace ember::server {

// What the server may say about the model without waiting for the engine.
struct ServedModel {
    std::string id;           // the name clients pass as "model"
    int64_t n_ctx = 0;        // positions of the server's session
    int64_t created = 0;      // Unix seconds the model was loaded
    bool has_vision = false;  // a vision projector is loaded: chat requests may carry images
};

// The model and the server's own session, valid only during the job that receives them.
struct EngineSlot {
    const LoadedModel& model;
    Session& session;
};

// Runs on the engine thread. `slot` is null when no model is loaded.
using EngineJob = std::function<void(EngineSlot* slot)>;

class EngineHost {
public:
    virtual ~EngineHost() = default;
    // Thread-safe; nullopt while no model is loaded.
    virtual std::optional<ServedModel> served_model() const = 0;
    // Thread-safe, returns at once: `job` runs after every job and turn posted before it.
    virtual void post(EngineJob job) = 0;
};

}  // namespace ember::server
