// SPDX-License-Identifier: MIT
// ember-cli template: renders a conversation through a chat template and prints the prompt exactly.
//   ember-cli template [-m FILE] --messages CONV.json [--template FILE] [--bos-token S] [--eos-token S]
//                      [--no-generation-prompt] [--now YYYY-MM-DDTHH:MM:SS]
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "cli_commands.h"
#include "ember/chat.h"
#include "ember/gguf.h"

namespace ember::cli {

namespace {

constexpr const char* kUsage =
    "usage: ember-cli template [-m FILE] --messages CONV.json [--template FILE] [--bos-token S] [--eos-token S]\n"
    "                          [--no-generation-prompt] [--now YYYY-MM-DDTHH:MM:SS]\n"
    "CONV.json is a JSON array of messages or {\"messages\": [...], \"tools\": [...], \"kwargs\": {...}}.\n";

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open file");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw Error(path + ": read error");
    return text.str();
}

std::optional<std::string> token_text(const gguf::File& file, std::string_view id_key) {
    if (!file.has(id_key) || !file.has("tokenizer.ggml.tokens")) return std::nullopt;
    const uint32_t id = file.get_u32(id_key);
    const gguf::Value& tokens = file.at("tokenizer.ggml.tokens");
    if (id >= tokens.size())
        throw Error(file.name() + ": " + std::string(id_key) + " = " + std::to_string(id) + " is outside the " +
                    std::to_string(tokens.size()) + " tokens of tokenizer.ggml.tokens");
    return std::string(tokens.string_at(id));
}

std::chrono::local_seconds parse_now(const std::string& text) {
    int y, mo, d, h = 0, mi = 0, s = 0;
    char tail = 0;
    const int n = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &tail);
    if ((n != 3 && n != 6) || tail != 0)
        throw Error("--now: expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS, got '" + text + "'");
    using namespace std::chrono;
    const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
    if (!ymd.ok() || h > 23 || mi > 59 || s > 59) throw Error("--now: not a valid date and time: '" + text + "'");
    return local_days{ymd} + hours{h} + minutes{mi} + seconds{s};
}

}  // namespace

int run_template(const Args& args) {
    std::optional<std::string> model, messages_path, template_path, bos, eos, now;
    bool generation_prompt = true;
    // The options that take a value, and where it goes.
    const std::pair<std::string_view, std::optional<std::string>*> value_options[] = {
        {"-m", &model}, {"--model", &model}, {"--messages", &messages_path}, {"--template", &template_path},
        {"--bos-token", &bos}, {"--eos-token", &eos}, {"--now", &now}};
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        const auto option = std::find_if(std::begin(value_options), std::end(value_options),
                                         [&](const auto& o) { return o.first == a; });
        if (option != std::end(value_options)) {
            if (i + 1 >= args.size()) throw Error("template: " + a + " needs a value");
            *option->second = args[++i];
        } else if (a == "--no-generation-prompt")
            generation_prompt = false;
        else if (a == "-h" || a == "--help") {
            std::cout << kUsage;
            return 0;
        } else {
            std::cerr << "template: unknown argument '" << a << "'\n" << kUsage;
            return 2;
        }
    }
    if (!messages_path) {
        std::cerr << "template: --messages is required\n" << kUsage;
        return 2;
    }
    if (!model && !template_path) {
        std::cerr << "template: give --template FILE or -m MODEL (a GGUF with tokenizer.chat_template)\n" << kUsage;
        return 2;
    }

    chat::RenderRequest request;
    const std::string conversation_text = read_file(*messages_path);
    const auto conversation = nlohmann::ordered_json::parse(conversation_text, nullptr, false);
    if (conversation.is_discarded()) throw Error(*messages_path + ": not valid JSON");
    chat::require_json_depth(conversation, chat::Limits{}.max_depth + 1, *messages_path);  // before any copy
    if (conversation.is_array()) {
        request.messages = conversation;
    } else if (conversation.is_object()) {
        if (!conversation.contains("messages") || !conversation["messages"].is_array())
            throw Error(*messages_path + ": expected a \"messages\" array");
        request.messages = conversation["messages"];
        if (conversation.contains("tools")) request.tools = conversation["tools"];
        if (conversation.contains("kwargs")) {
            if (!conversation["kwargs"].is_object()) throw Error(*messages_path + ": \"kwargs\" must be an object");
            request.kwargs = conversation["kwargs"];
        }
    } else {
        throw Error(*messages_path + ": expected a JSON array of messages or an object with \"messages\"");
    }
    request.add_generation_prompt = generation_prompt;
    if (now) request.now = parse_now(*now);

    std::string source, name;
    if (model) {
        const gguf::File file = gguf::File::open(*model);
        request.bos_token = token_text(file, "tokenizer.ggml.bos_token_id");
        request.eos_token = token_text(file, "tokenizer.ggml.eos_token_id");
        if (!template_path) {
            const auto embedded = chat::template_from_gguf(file);
            if (!embedded) throw Error(file.name() + ": no tokenizer.chat_template; give --template FILE");
            source = *embedded;
            name = file.name() + ":tokenizer.chat_template";
        }
    }
    if (template_path) {
        source = read_file(*template_path);
        name = *template_path;
    }
    if (bos) request.bos_token = *bos;
    if (eos) request.eos_token = *eos;

    const chat::Template tmpl = chat::Template::parse(std::move(source), std::move(name));
    const std::string prompt = chat::apply_template(tmpl, request);
    std::cout.write(prompt.data(), static_cast<std::streamsize>(prompt.size()));
    std::cout.flush();
    return 0;
}

}  // namespace ember::cli
