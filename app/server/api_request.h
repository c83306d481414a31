// SPDX-License-Identifier: MIT
// Reads the JSON bodies of /v1/chat/completions and /v1/completions into the engine's request types, checking
// every field the server knows (type and range); each problem is an ApiError 400 naming the field. Unknown fields
// are ignored, as OpenAI-compatible servers commonly do.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api_error.h"
#include "ember/runtime.h"
#include "engine_host.h"

namespace ember::server {

struct StreamRequest {
    bool stream = false;
    bool include_usage = false;  // stream_options.include_usage
};

struct ChatRequest {
    chat::RenderRequest conversation;
    GenerationOptions options;
    StreamRequest streaming;
    // response_format json_object / json_schema: the schema the reply must validate against.
    std::optional<nlohmann::json> response_schema;
};

struct CompletionRequest {
    std::string prompt;
    GenerationOptions options;
    StreamRequest streaming;
};

// Throws ApiError 400 for a malformed request; images are refused unless the model has a vision projector
// (none is supported yet), remote image URLs always.
ChatRequest parse_chat_request(const nlohmann::json& body, const ServedModel& model);
CompletionRequest parse_completion_request(const nlohmann::json& body);

}  // namespace ember::server
