// SPDX-License-Identifier: MIT
// The JSON the server answers with: chat completion objects and their streamed chunks, text completions, usage
// (with cached prompt tokens) and llama-server style timings, as OpenAI clients read them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/runtime.h"

namespace ember::server {

struct ResponseIds {
    std::string id;  // "chatcmpl-..." / "cmpl-..."
    std::string model;
    int64_t created = 0;
};

std::string finish_reason(StopReason reason, bool has_tool_calls);
nlohmann::json usage_of(const GenerationStats& stats);
nlohmann::json timings_of(const GenerationStats& stats, double queued_seconds);
// OpenAI tool_calls entries (arguments as a JSON string); ids "call_<response id>_<n>".
nlohmann::json tool_calls_json(const std::vector<chat::ToolCall>& calls, const std::string& response_id, size_t first);

nlohmann::json chat_completion(const ResponseIds& ids, const GenerationResult& result, double queued_seconds);
// One chat.completion.chunk with `delta` for choice 0 (finish: null or the reason).
nlohmann::json chat_chunk(const ResponseIds& ids, nlohmann::json delta, const nlohmann::json& finish);
nlohmann::json text_completion(const ResponseIds& ids, const GenerationResult& result, double queued_seconds);
nlohmann::json text_chunk(const ResponseIds& ids, const std::string& text, const nlohmann::json& finish);

}  // namespace ember::server
