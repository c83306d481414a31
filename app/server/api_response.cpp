// SPDX-License-Identifier: MIT
// Response and chunk objects of the OpenAI API.
#include "api_response.h"

namespace ember::server {

using nlohmann::json;

std::string finish_reason(StopReason reason, bool has_tool_calls) {
    if (has_tool_calls) return "tool_calls";
    switch (reason) {
        case StopReason::max_tokens:
        case StopReason::context_full:
            return "length";
        default:
            return "stop";
    }
}

json usage_of(const GenerationStats& s) {
    return {{"prompt_tokens", s.prompt_tokens},
            {"completion_tokens", s.generated_tokens},
            {"total_tokens", s.prompt_tokens + s.generated_tokens},
            {"prompt_tokens_details", {{"cached_tokens", s.reused_tokens}}}};
}

json timings_of(const GenerationStats& s, double queued_seconds) {
    json t = {{"queued_ms", queued_seconds * 1e3},
              {"cache_n", s.reused_tokens},
              {"prompt_n", s.prefilled_tokens},
              {"prompt_ms", s.prefill_seconds * 1e3},
              {"prompt_per_second", s.prefill_tokens_per_second()},
              {"predicted_n", s.generated_tokens},
              {"predicted_ms", s.decode_seconds * 1e3},
              {"predicted_per_second", s.decode_tokens_per_second()}};
    if (s.image_tokens > 0) {  // already counted in prompt_n / cache_n
        t["image_n"] = s.image_tokens;
        t["image_ms"] = s.image_seconds * 1e3;
    }
    if (s.drafted_tokens > 0) {
        t["draft_n"] = s.drafted_tokens;
        t["draft_n_accepted"] = s.accepted_tokens;
    }
    return t;
}

json tool_calls_json(const std::vector<chat::ToolCall>& calls, const std::string& response_id, size_t first) {
    json out = json::array();
    for (size_t i = 0; i < calls.size(); ++i)
        out.push_back(
            {{"index", first + i},
             {"id", "call_" + response_id.substr(response_id.find('-') + 1) + "_" + std::to_string(first + i)},
             {"type", "function"},
             {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments.dump()}}}});
    return out;
}

json chat_completion(const ResponseIds& ids, const GenerationResult& r, double queued_seconds) {
    json message = {{"role", "assistant"}, {"content", r.content}};
    if (!r.reasoning.empty()) message["reasoning_content"] = r.reasoning;
    if (!r.tool_calls.empty()) {
        message["tool_calls"] = tool_calls_json(r.tool_calls, ids.id, 0);
        for (json& call : message["tool_calls"]) call.erase("index");
        if (r.content.empty()) message["content"] = nullptr;
    }
    return {{"id", ids.id},
            {"object", "chat.completion"},
            {"created", ids.created},
            {"model", ids.model},
            {"system_fingerprint", "ember"},
            {"choices", json::array({{{"index", 0},
                                      {"message", message},
                                      {"logprobs", nullptr},
                                      {"finish_reason", finish_reason(r.stop_reason, !r.tool_calls.empty())}}})},
            {"usage", usage_of(r.stats)},
            {"timings", timings_of(r.stats, queued_seconds)}};
}

json chat_chunk(const ResponseIds& ids, json delta, const json& finish) {
    return {
        {"id", ids.id},
        {"object", "chat.completion.chunk"},
        {"created", ids.created},
        {"model", ids.model},
        {"system_fingerprint", "ember"},
        {"choices",
         json::array({{{"index", 0}, {"delta", std::move(delta)}, {"logprobs", nullptr}, {"finish_reason", finish}}})}};
}

json text_completion(const ResponseIds& ids, const GenerationResult& r, double queued_seconds) {
    return {{"id", ids.id},
            {"object", "text_completion"},
            {"created", ids.created},
            {"model", ids.model},
            {"choices", json::array({{{"index", 0},
                                      {"text", r.content},
                                      {"logprobs", nullptr},
                                      {"finish_reason", finish_reason(r.stop_reason, false)}}})},
            {"usage", usage_of(r.stats)},
            {"timings", timings_of(r.stats, queued_seconds)}};
}

json text_chunk(const ResponseIds& ids, const std::string& text, const json& finish) {
    return {
        {"id", ids.id},
        {"object", "text_completion"},
        {"created", ids.created},
        {"model", ids.model},
        {"choices", json::array({{{"index", 0}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", finish}}})}};
}

}  // namespace ember::server
