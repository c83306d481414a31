// SPDX-License-Identifier: MIT
// Reads the JSON bodies of /v1/chat/completions and /v1/completions into the engine's request types, checking
// every field the server knows (type and range); each problem is an ApiError 400 naming the field. Unknown fields
// are ignored, as OpenAI-compatible servers commonly do.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

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
    // Messages with images have content parts ({"type": "image"} for each, {"type": "text", ...}); the others keep
    // their text parts joined into one string, as every chat template reads it.
    chat::RenderRequest conversation;
    // The decoded images in the order of their parts in the conversation (shared: jobs are copied).
    std::shared_ptr<const std::vector<vision::Image>> images;
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

// Throws ApiError 400 for a malformed request. Images come as base64 data: URLs (remote URLs are refused) and are
// decoded here; they are refused unless the model has a vision projector, and a corrupt one is a 400 naming its
// part (messages[i].content[j].image_url.url: problem).
ChatRequest parse_chat_request(const nlohmann::json& body, const ServedModel& model);
CompletionRequest parse_completion_request(const nlohmann::json& body);

}  // namespace ember::server
