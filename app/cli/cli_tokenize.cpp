// SPDX-License-Identifier: MIT
// ember-cli tokenize -m FILE (--text T | --file F) [--no-special] [--no-parse-special] [--json]
// The tokens of a text under a model's tokenizer: one "id<TAB>'piece'" line each, or {"ids": [...]} with --json.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "cli_commands.h"
#include "ember/gguf.h"
#include "ember/tokenizer.h"

namespace ember::cli {

namespace {

constexpr const char* kUsage =
    "usage: ember-cli tokenize -m FILE (--text T | --file F) [--no-special] [--no-parse-special] [--json]\n"
    "  --no-special        add no BOS/EOS\n"
    "  --no-parse-special  treat special-token text such as <|im_start|> as plain text\n"
    "  --json              print {\"ids\": [...]}\n";

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
    std::ostringstream content;
    content << in.rdbuf();
    if (in.bad()) throw Error(path + ": read failed");
    return content.str();
}

// A piece as a quoted, printable string: escapes for quotes, backslashes, control characters and bytes that are
// not (yet) valid UTF-8, which a token may well be on its own.
std::string quoted(const std::string& piece) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out = "'";
    for (size_t i = 0; i < piece.size();) {
        const auto c = static_cast<unsigned char>(piece[i]);
        size_t n = c < 0x80                   ? 1
                   : (c >= 0xC2 && c <= 0xDF) ? 2
                   : (c >= 0xE0 && c <= 0xEF) ? 3
                   : (c >= 0xF0 && c <= 0xF4) ? 4
                                              : 0;
        for (size_t k = 1; k < n; ++k)
            if (i + k >= piece.size() || (static_cast<unsigned char>(piece[i + k]) & 0xC0) != 0x80) n = 0;
        if (n > 1) {
            out.append(piece, i, n);
            i += n;
            continue;
        }
        switch (c) {
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\'':
                out += "\\'";
                break;
            default:
                if (c >= 0x20 && c < 0x7F) {
                    out += static_cast<char>(c);
                } else {
                    out += "\\x";
                    out += kHex[c >> 4];
                    out += kHex[c & 15];
                }
        }
        ++i;
    }
    return out + "'";
}

}  // namespace

int run_tokenize(const Args& args) {
    std::optional<std::string> model, text, file;
    bool add_special = true, parse_special = true, json = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        const auto value = [&]() -> std::optional<std::string> {
            if (i + 1 >= args.size()) return std::nullopt;
            return args[++i];
        };
        std::optional<std::string>* target = a == "-m" || a == "--model" ? &model
                                             : a == "--text"             ? &text
                                             : a == "--file"             ? &file
                                                                         : nullptr;
        if (target) {
            *target = value();
            if (!*target) {
                std::cerr << "ember-cli tokenize: " << a << " needs a value\n" << kUsage;
                return 2;
            }
        } else if (a == "--no-special") {
            add_special = false;
        } else if (a == "--no-parse-special") {
            parse_special = false;
        } else if (a == "--json") {
            json = true;
        } else if (a == "-h" || a == "--help") {
            std::cout << kUsage;
            return 0;
        } else {
            std::cerr << "ember-cli tokenize: unknown argument '" << a << "'\n" << kUsage;
            return 2;
        }
    }
    if (!model || text.has_value() == file.has_value()) {
        std::cerr << kUsage;
        return 2;
    }

    const std::string input = text ? *text : read_file(*file);
    const gguf::File gguf_file = gguf::File::open(*model);
    const Tokenizer tokenizer = Tokenizer::from_gguf(gguf_file);
    const std::vector<int32_t> ids = tokenizer.encode(input, add_special, parse_special);
    if (json) {
        std::string out = "{\"ids\": [";
        for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
        std::cout << out << "]}\n";
    } else {
        for (const int32_t id : ids) std::cout << id << "\t" << quoted(tokenizer.token_to_piece(id, true)) << "\n";
    }
    return 0;
}

}  // namespace ember::cli
