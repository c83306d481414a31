// SPDX-License-Identifier: MIT
// Jinja's lexer with Hugging Face's settings (trim_blocks, lstrip_blocks, no trailing newline kept): template
// text and the tokens inside {{ }}, {% %}; comments and raw blocks resolved here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ember::chat::jinja {

// A syntax problem at a byte offset of the (newline-normalised) source.
struct SyntaxError {
    uint32_t pos;
    std::string message;
};

enum class Tok : uint8_t { data, var_begin, var_end, block_begin, block_end, name, string, integer, floating, op, eof };

struct Token {
    Tok type;
    uint32_t pos;
    std::string text;  // data, name, decoded string, operator symbol
    int64_t integer = 0;
    double floating = 0.0;
};

// Jinja reads templates with universal newlines and drops one trailing newline; positions refer to this form.
std::string normalize_source(std::string_view source);

// Throws SyntaxError.
std::vector<Token> tokenize(std::string_view source);

std::string describe(const Token& t);  // "end of print statement", "name 'foo'", ...

}  // namespace ember::chat::jinja
