// SPDX-License-Identifier: MIT
// Chat formatting: a sandboxed Jinja interpreter that renders a model's chat template exactly as Hugging Face's
// apply_chat_template does (jinja2 with trim_blocks and lstrip_blocks, raise_exception, strftime_now, HF's
// tojson), the request that turns a conversation into a prompt, and the streaming parser that splits the
// model's output back into reasoning, content and tool calls.
//
// A template can only read the data it is given and call the built-in filters, tests, methods and globals: it
// cannot load other templates, touch files or reach anything but data. Every render is bounded in output size,
// evaluation steps, recursion depth and wall time, and every failure — bad syntax, a runtime error, a limit,
// raise_exception() — is one ember::Error line naming the template and position. Nothing here may crash, hang
// or allocate without bound on any template or input.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "ember/error.h"

namespace ember::gguf {
class File;
}

namespace ember::chat {

// What one render may spend. Each limit ends the render with a one-line ember::Error.
struct Limits {
    size_t max_output_bytes = 16 << 20;  // the rendered text, and any single string built on the way
    uint64_t max_steps = 10'000'000;     // evaluation steps; loops, copies and string building count by size
    int max_depth = 256;                 // macro / recursive-loop call depth, and nesting of values
    std::chrono::milliseconds max_time{5000};
};

namespace jinja {
struct Program;
}

class Template {
public:
    // Throws ember::Error "<name>:<line>:<col>: <problem>".
    static Template parse(std::string source, std::string name);

    // Renders with the given variables (a JSON object); Limits enforced. strftime_now() formats `now` (a local
    // date and time) when given, the system's local time otherwise. Runtime errors throw ember::Error
    // "<name>:<line>:<col>: <problem>"; raise_exception(msg) throws "<name>: <msg>".
    std::string render(const nlohmann::ordered_json& variables, const Limits& limits = {},
                       std::optional<std::chrono::local_seconds> now = std::nullopt) const;

    const std::string& name() const;
    const std::string& source() const;  // the template text (line endings normalized)

private:
    explicit Template(std::shared_ptr<const jinja::Program> program) : program_(std::move(program)) {}
    std::shared_ptr<const jinja::Program> program_;
};

struct RenderRequest {
    nlohmann::ordered_json messages =
        nlohmann::ordered_json::array();  // OpenAI/HF shape, incl. content parts,
                                          // reasoning_content, tool_calls, tool results (role "tool")
    nlohmann::ordered_json tools;         // null or array
    nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();  // enable_thinking, preserve_thinking, ...
    bool add_generation_prompt = true;
    std::optional<std::string> bos_token, eos_token;  // undefined in the template when absent
    std::optional<std::chrono::local_seconds> now;    // strftime_now's clock; the local time when absent
};

// Renders a conversation with Hugging Face's variable conventions (as render_golden.py does): messages, tools
// (none when null), documents=none, add_generation_prompt, bos_token/eos_token when set, then every kwarg
// (which may override bos_token/eos_token but not the four names before).
std::string apply_template(const Template& tmpl, const RenderRequest& request, const Limits& limits = {});

// Templates that read an assistant message's reasoning from `thinking` (gpt-oss: it re-sends the reasoning that
// led to a tool call) get it there from `reasoning_content`, where OpenAI-style clients and Ember keep it.
void carry_reasoning_to_thinking(const Template& tmpl, RenderRequest& request);

// Throws ember::Error "<where>: nested deeper than the limit of N levels" when JSON data (a messages file, a
// request body) nests deeper than max_depth. It walks without recursion, so it is safe on any input, and must
// run before the data is copied: nlohmann's copy recurses and a document 100k levels deep overflows the stack.
void require_json_depth(const nlohmann::ordered_json& data, int max_depth, std::string_view where);

// The template a model file carries (tokenizer.chat_template), or nullopt.
std::optional<std::string> template_from_gguf(const gguf::File& file);

// Splits model output into reasoning, content and tool calls, chunk by chunk.
struct ToolCall {
    std::string name;
    nlohmann::ordered_json arguments;  // an object
    std::string raw;                   // the text between <tool_call> and </tool_call> (harmony: the message body)
};

struct ParsedDelta {
    std::string reasoning;
    std::string content;
    std::vector<ToolCall> tool_calls;

    bool empty() const { return reasoning.empty() && content.empty() && tool_calls.empty(); }
};

// How the model writes its output: reasoning in <think> and tool calls in <tool_call> tags (Qwen, DeepSeek and most
// others), or OpenAI's harmony messages (gpt-oss: <|channel|>analysis / final / commentary to=functions.NAME).
enum class OutputFormat { tagged, harmony };

struct ParserOptions {
    OutputFormat format = OutputFormat::tagged;  // the fields below are the tagged format's
    bool starts_in_reasoning = false;            // the prompt already opened <think>
    std::string think_open = "<think>", think_close = "</think>";
    bool parse_tool_calls = true;  // Qwen XML (<tool_call><function=...><parameter=...>) and JSON
                                   // (<tool_call>{"name":...,"arguments":...}</tool_call>) forms
    std::string tool_open = "<tool_call>", tool_close = "</tool_call>";
};

// Tagged format: an unterminated tool call becomes content, unterminated reasoning stays reasoning.
// Harmony format: analysis is reasoning; final, and commentary to no function (a preamble), are content;
// commentary (or analysis) to=functions.NAME is a tool call whose body must be a JSON object (an empty body is {}):
// a body that is not one becomes content, as an unparsable <tool_call> does. Other recipients (built-in tools
// such as browser.search) are read as their channel's text. An unterminated message (generation stops on
// <|return|> and <|call|> before the parser sees them) is flushed as what its channel made it; an unfinished
// header is dropped; output that opens with no harmony header at all is content.
class OutputParser {
public:
    explicit OutputParser(ParserOptions options = {});
    OutputParser(OutputParser&&) noexcept;
    OutputParser& operator=(OutputParser&&) noexcept;
    ~OutputParser();
    // Holds back only what could be the start of a tag (or a special token) and an incomplete UTF-8 character.
    ParsedDelta push(std::string_view chunk);
    // Flushes what is held back and ends the output.
    ParsedDelta finish();

    class Format;  // one format's streaming state (engine/chat/output_format.h)

private:
    std::unique_ptr<Format> format_;
};

// The parser options for a conversation rendered with `tmpl` into `prompt`: the harmony format when the template
// writes harmony headers (<|channel|>), the tagged format otherwise (starting in reasoning when the prompt ends
// inside <think>). session.cpp and session_images.cpp both choose their parser here.
ParserOptions parser_options_for(const Template& tmpl, std::string_view prompt);

// Whether the rendered prompt ends inside an open <think> block (for ParserOptions::starts_in_reasoning).
bool prompt_opens_reasoning(std::string_view prompt, const ParserOptions& options = {});

// A tool call body (between the tool-call tags) in Qwen's XML form or the JSON form; nullopt when it is neither.
std::optional<ToolCall> parse_tool_call(std::string_view body);

}  // namespace ember::chat
