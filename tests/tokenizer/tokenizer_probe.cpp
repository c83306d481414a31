// SPDX-License-Identifier: MIT
// Test helper: runs Ember's tokenizer over many texts in one process, for the pytest suites.
//
//   tokenizer_probe MODEL.gguf < requests.jsonl > results.jsonl
//     request {"text": "...", "add_special": false, "parse_special": false, "special": false}
//          or {"ids": [...], "special": false}  (decode only)
//     result  {"ids": [...], "decoded": "...", "streamed": "..."}
//     (decoded: decode(ids, special); streamed: what a StreamDecoder gives for the ids one by one)
//   tokenizer_probe --pre NAME < requests.jsonl > results.jsonl
//     result  {"pieces": [[offset, length], ...]}  the pre-tokenizer's pieces of the text's UTF-8 bytes
//
// Strings that are not valid UTF-8 are written with U+FFFD in place of the invalid bytes.
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "ember/gguf.h"
#include "ember/tokenizer.h"
#include "tokenizer/pre_tokenizer.h"

namespace {

using nlohmann::json;

std::string dump(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

int run_pre_tokenizer(const std::string& name) {
    const ember::tokenizer::PreTokenizerSpec* spec = ember::tokenizer::find_pre_tokenizer(name);
    if (!spec) {
        std::cerr << "unknown pre-tokenizer " << name << "\n";
        return 2;
    }
    const ember::tokenizer::PreTokenizer pre(*spec);
    std::string line;
    while (std::getline(std::cin, line)) {
        const json request = json::parse(line);
        const std::string text = request.at("text").get<std::string>();
        json pieces = json::array();
        for (const auto& piece : pre.split(text)) pieces.push_back({piece.offset, piece.length});
        std::cout << dump(json{{"pieces", pieces}}) << "\n";
    }
    return 0;
}

int run_tokenizer(const std::string& path) {
    const ember::gguf::File file = ember::gguf::File::open(path);
    const ember::Tokenizer tokenizer = ember::Tokenizer::from_gguf(file);
    std::string line;
    while (std::getline(std::cin, line)) {
        const json request = json::parse(line);
        const bool special = request.value("special", false);
        const std::vector<int32_t> ids =
            request.contains("ids")
                ? request.at("ids").get<std::vector<int32_t>>()
                : tokenizer.encode(request.at("text").get<std::string>(), request.value("add_special", false),
                                   request.value("parse_special", false));
        ember::StreamDecoder stream(tokenizer, special);
        std::string streamed;
        for (const int32_t id : ids) streamed += stream.push(id);
        streamed += stream.flush();
        std::cout << dump(json{{"ids", ids}, {"decoded", tokenizer.decode(ids, special)}, {"streamed", streamed}})
                  << "\n";
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc == 3 && std::string(argv[1]) == "--pre") return run_pre_tokenizer(argv[2]);
        if (argc == 2) return run_tokenizer(argv[1]);
        std::cerr << "usage: tokenizer_probe MODEL.gguf | --pre NAME  (JSON lines on stdin)\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
}
