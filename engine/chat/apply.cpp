// SPDX-License-Identifier: MIT
// A conversation to a prompt with Hugging Face's variable conventions, and the template a GGUF carries.
#include "ember/chat.h"
#include "ember/gguf.h"

namespace ember::chat {

void require_json_depth(const nlohmann::ordered_json& data, int max_depth, std::string_view where) {
    std::vector<std::pair<const nlohmann::ordered_json*, int>> pending{{&data, 0}};
    while (!pending.empty()) {
        const auto [node, depth] = pending.back();
        pending.pop_back();
        if (!node->is_structured()) continue;
        if (depth >= max_depth)
            throw Error(std::string(where) + ": nested deeper than the limit of " + std::to_string(max_depth) +
                        " levels");
        for (const auto& child : *node) pending.emplace_back(&child, depth + 1);
    }
}

std::string apply_template(const Template& tmpl, const RenderRequest& request, const Limits& limits) {
    // The variables wrap these one level deeper; the interpreter checks the exact depth as it reads them.
    require_json_depth(request.messages, limits.max_depth, tmpl.name() + ": the messages");
    require_json_depth(request.tools, limits.max_depth, tmpl.name() + ": the tools");
    require_json_depth(request.kwargs, limits.max_depth, tmpl.name() + ": the template kwargs");
    nlohmann::ordered_json variables = nlohmann::ordered_json::object();
    variables["messages"] = request.messages;
    variables["tools"] = request.tools;
    variables["documents"] = nullptr;
    variables["add_generation_prompt"] = request.add_generation_prompt;
    if (request.bos_token) variables["bos_token"] = *request.bos_token;
    if (request.eos_token) variables["eos_token"] = *request.eos_token;
    if (!request.kwargs.is_null()) {
        if (!request.kwargs.is_object()) throw Error(tmpl.name() + ": template kwargs must be a JSON object");
        for (const auto& [key, value] : request.kwargs.items()) {
            if (key == "messages" || key == "tools" || key == "documents" || key == "add_generation_prompt")
                throw Error(tmpl.name() + ": template kwargs may not set '" + key + "'");
            variables[key] = value;
        }
    }
    return tmpl.render(variables, limits, request.now);
}

void carry_reasoning_to_thinking(const Template& tmpl, RenderRequest& request) {
    if (tmpl.source().find("message.thinking") == std::string::npos || !request.messages.is_array()) return;
    for (auto& message : request.messages) {
        if (!message.is_object() || message.value("role", "") != "assistant" || message.contains("thinking")) continue;
        const auto reasoning = message.find("reasoning_content");
        if (reasoning != message.end() && reasoning->is_string()) message["thinking"] = *reasoning;
    }
}

std::optional<std::string> template_from_gguf(const gguf::File& file) {
    constexpr std::string_view key = "tokenizer.chat_template";
    if (!file.has(key)) return std::nullopt;
    return std::string(file.get_string(key));
}

}  // namespace ember::chat
