// SPDX-License-Identifier: MIT
// libFuzzer target: any byte string, parsed as a chat template and rendered over a conversation with tools,
// either renders or throws ember::Error (one line) within tight limits; nothing else. An input that is JSON is
// also rendered as the messages (the depth check before any copy). The same bytes are streamed through the
// output parser, cut at a point derived from the input. jinja_fuzzer.dict lists the constructs that blow up
// sizes (replace, padding, repeat, join, range near 2^63, deep nesting) so that mutations reach those checks.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ember/chat.h"

namespace {

const nlohmann::ordered_json& variables() {
    static const nlohmann::ordered_json v = nlohmann::ordered_json::parse(R"({
      "messages": [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Describe é 😀"}]},
        {"role": "assistant", "reasoning_content": "Think.", "content": "<think>\nx\n</think>\n\nOk",
         "tool_calls": [{"id": "call_123456789", "type": "function",
                         "function": {"name": "f", "arguments": {"a": 1, "b": [true, null], "c": "s"}}}]},
        {"role": "tool", "tool_call_id": "call_123456789", "content": "{\"r\": 2}"},
        {"role": "user", "content": ""}
      ],
      "tools": [{"type": "function", "function": {"name": "f", "description": "d",
                 "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}],
      "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>", "enable_thinking": false,
      "n": 3, "xs": [3, 1, 2], "s": "Hello"
    })");
    return v;
}

void check_one_line(const ember::Error& e) {
    if (std::string_view(e.what()).find('\n') != std::string_view::npos) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    ember::chat::Limits limits;
    limits.max_output_bytes = 256 << 10;
    limits.max_steps = 200'000;
    limits.max_depth = 64;
    limits.max_time = std::chrono::milliseconds(2000);
    try {
        const auto tmpl = ember::chat::Template::parse(input, "fuzz");
        volatile size_t sink = tmpl.render(variables(), limits, std::chrono::local_seconds{}).size();
        (void)sink;
    } catch (const ember::Error& e) {
        check_one_line(e);
    }

    const auto json = nlohmann::ordered_json::parse(input, nullptr, false);
    if (!json.is_discarded()) {
        static const auto echo = ember::chat::Template::parse(
            "{% for m in messages %}{{ m|tojson }}{{ m.content|string|replace('a', 'aa') }}{% endfor %}", "echo");
        try {
            ember::chat::require_json_depth(json, 64, "fuzz");
            ember::chat::RenderRequest request;
            request.messages = json.is_array() ? json : nlohmann::ordered_json::array({json});
            volatile size_t sink = ember::chat::apply_template(echo, request, limits).size();
            (void)sink;
        } catch (const ember::Error& e) {
            check_one_line(e);
        }
    }

    ember::chat::ParserOptions options;
    options.starts_in_reasoning = size > 0 && (data[0] & 1);
    ember::chat::OutputParser parser(options);
    const size_t cut = size ? data[size - 1] % (size + 1) : 0;
    std::string joined;
    for (const auto& d : {parser.push(std::string_view(input).substr(0, cut)),
                          parser.push(std::string_view(input).substr(cut)), parser.finish()}) {
        joined += d.reasoning;
        joined += d.content;
    }
    volatile size_t sink2 = joined.size();
    (void)sink2;
    return 0;
}
