// SPDX-License-Identifier: MIT
// The body of one <tool_call> block: Qwen's XML form (<function=name><parameter=key>value</parameter>...) or
// the JSON form ({"name": ..., "arguments": {...}}).
#include <string_view>

#include "ember/chat.h"

namespace ember::chat {

namespace {

std::string_view trim(std::string_view s) {
    const auto ws = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
    while (!s.empty() && ws(s.front())) s.remove_prefix(1);
    while (!s.empty() && ws(s.back())) s.remove_suffix(1);
    return s;
}

// The template writes "\n" + value + "\n" around each value; exactly those newlines are removed.
std::string_view unwrap_value(std::string_view v) {
    if (!v.empty() && v.front() == '\n') v.remove_prefix(1);
    if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
    return v;
}

// Strings are written raw and everything else as JSON, so a value that parses as JSON other than a bare
// string is taken as that JSON value; everything else is a string.
nlohmann::ordered_json parameter_value(std::string_view text) {
    const std::string_view t = trim(text);
    if (!t.empty()) {
        auto parsed = nlohmann::ordered_json::parse(t.begin(), t.end(), nullptr, false);
        if (!parsed.is_discarded() && !parsed.is_string()) return parsed;
    }
    return std::string(text);
}

std::optional<ToolCall> parse_xml(std::string_view body) {
    constexpr std::string_view fn_open = "<function=", fn_close = "</function>";
    constexpr std::string_view p_open = "<parameter=", p_close = "</parameter>";
    std::string_view s = trim(body);
    if (s.substr(0, fn_open.size()) != fn_open) return std::nullopt;
    s.remove_prefix(fn_open.size());
    const size_t name_end = s.find('>');
    if (name_end == std::string_view::npos) return std::nullopt;
    ToolCall call;
    call.name = std::string(trim(s.substr(0, name_end)));
    if (call.name.empty()) return std::nullopt;
    s.remove_prefix(name_end + 1);
    const size_t end = s.rfind(fn_close);
    if (end == std::string_view::npos || !trim(s.substr(end + fn_close.size())).empty()) return std::nullopt;
    s = s.substr(0, end);
    call.arguments = nlohmann::ordered_json::object();
    while (true) {
        s = trim(s);
        if (s.empty()) break;
        if (s.substr(0, p_open.size()) != p_open) return std::nullopt;
        s.remove_prefix(p_open.size());
        const size_t key_end = s.find('>');
        if (key_end == std::string_view::npos) return std::nullopt;
        const std::string key(trim(s.substr(0, key_end)));
        s.remove_prefix(key_end + 1);
        const size_t value_end = s.find(p_close);
        if (key.empty() || value_end == std::string_view::npos) return std::nullopt;
        call.arguments[key] = parameter_value(unwrap_value(s.substr(0, value_end)));
        s.remove_prefix(value_end + p_close.size());
    }
    return call;
}

std::optional<ToolCall> parse_json(std::string_view body) {
    const std::string_view s = trim(body);
    if (s.empty() || s.front() != '{') return std::nullopt;
    auto j = nlohmann::ordered_json::parse(s.begin(), s.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) return std::nullopt;
    const auto name = j.find("name");
    if (name == j.end() || !name->is_string()) return std::nullopt;
    ToolCall call;
    call.name = name->get<std::string>();
    auto args = j.find("arguments");
    if (args == j.end()) args = j.find("parameters");
    if (args == j.end()) {
        call.arguments = nlohmann::ordered_json::object();
    } else if (args->is_object()) {
        call.arguments = *args;
    } else if (args->is_string()) {
        const auto& text = args->get_ref<const std::string&>();
        auto parsed = nlohmann::ordered_json::parse(text, nullptr, false);
        if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
        call.arguments = std::move(parsed);
    } else {
        return std::nullopt;
    }
    return call;
}

}  // namespace

std::optional<ToolCall> parse_tool_call(std::string_view body) {
    std::optional<ToolCall> call = parse_xml(body);
    if (!call) call = parse_json(body);
    if (call) call->raw = std::string(body);
    return call;
}

}  // namespace ember::chat
