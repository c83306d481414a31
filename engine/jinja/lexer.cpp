// SPDX-License-Identifier: MIT
// Jinja's lexer with Hugging Face's settings.
#include "jinja/lexer.h"

#include <charconv>
#include <utility>

#include "jinja/unicode.h"

namespace ember::chat::jinja {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
    return is_name_start(c) || is_digit(c);
}

// Python's \s: ASCII whitespace or any Unicode whitespace code point. Returns the byte length matched (0: none).
size_t whitespace_at(std::string_view s, size_t i) {
    if (i >= s.size()) return 0;
    const unsigned char b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) return unicode::is_space(b) ? 1 : 0;
    size_t j = i;
    const char32_t c = unicode::next(s, j);
    return unicode::is_space(c) ? j - i : 0;
}

size_t skip_whitespace(std::string_view s, size_t i) {
    while (size_t n = whitespace_at(s, i)) i += n;
    return i;
}

std::string_view rstrip_whitespace(std::string_view text) {
    // Walk forward remembering where the last non-space code point ends (UTF-8 cannot be scanned backwards
    // reliably for multi-byte spaces without decoding).
    size_t end = 0;
    for (size_t i = 0; i < text.size();) {
        const size_t n = whitespace_at(text, i);
        if (n) {
            i += n;
        } else {
            unicode::next(text, i);
            end = i;
        }
    }
    return text.substr(0, end);
}

bool all_whitespace(std::string_view text) {
    if (text.empty()) return false;
    return skip_whitespace(text, 0) == text.size();
}

// (\d+_)*\d+ : digits with single underscores between them. Returns the end, or `i` when no digit.
size_t digit_run(std::string_view s, size_t i) {
    if (i >= s.size() || !is_digit(s[i])) return i;
    size_t j = i;
    while (true) {
        while (j < s.size() && is_digit(s[j])) ++j;
        if (j + 1 < s.size() && s[j] == '_' && is_digit(s[j + 1])) {
            ++j;
            continue;
        }
        return j;
    }
}

std::string without_underscores(std::string_view s) {
    std::string out;
    for (char c : s)
        if (c != '_') out += c;
    return out;
}

class Lexer {
public:
    explicit Lexer(std::string_view src) : s_(src) {}

    std::vector<Token> run() {
        size_t pos = 0;
        bool line_starting = true;
        while (pos < s_.size()) {
            const size_t k = find_tag(pos);
            if (k == std::string_view::npos) {
                emit_data(pos, s_.substr(pos));
                break;
            }
            std::string_view text = s_.substr(pos, k - pos);
            const char kind = s_[k + 1];
            size_t after = k + 2;
            char sign = 0;
            if (after < s_.size() && (s_[after] == '-' || s_[after] == '+')) sign = s_[after++];

            size_t raw_end = 0;
            const bool raw = kind == '%' && match_raw_begin(after, raw_end);
            text = strip_before_tag(text, sign, kind != '{', line_starting);
            emit_data(pos, text);

            if (raw) {
                pos = lex_raw(raw_end);
            } else if (kind == '#') {
                pos = lex_comment(k, after);
            } else {
                pos = lex_tag(k, after, kind == '%');
            }
            line_starting = pos > 0 && s_[pos - 1] == '\n';
        }
        tokens_.push_back(Token{Tok::eof, static_cast<uint32_t>(s_.size()), {}});
        return std::move(tokens_);
    }

private:
    [[noreturn]] void error(size_t pos, std::string message) const {
        throw SyntaxError{static_cast<uint32_t>(pos), std::move(message)};
    }

    size_t find_tag(size_t from) const {
        for (size_t i = s_.find('{', from); i != std::string_view::npos; i = s_.find('{', i + 1)) {
            if (i + 1 < s_.size() && (s_[i + 1] == '{' || s_[i + 1] == '%' || s_[i + 1] == '#')) return i;
        }
        return std::string_view::npos;
    }

    // '-' strips all whitespace before the tag; otherwise lstrip_blocks removes the indentation of a line that
    // holds nothing but the block or comment tag ('+' disables it).
    std::string_view strip_before_tag(std::string_view text, char sign, bool lstrip_applies, bool line_starting) {
        if (sign == '-') return rstrip_whitespace(text);
        if (sign == '+' || !lstrip_applies) return text;
        const size_t nl = text.rfind('\n');
        const size_t line_start = nl == std::string_view::npos ? 0 : nl + 1;
        if ((line_start > 0 || line_starting) && all_whitespace(text.substr(line_start)))
            return text.substr(0, line_start);
        return text;
    }

    void emit_data(size_t pos, std::string_view text) {
        if (text.empty()) return;
        tokens_.push_back(Token{Tok::data, static_cast<uint32_t>(pos), std::string(text)});
    }

    bool starts_with(size_t i, std::string_view what) const { return s_.substr(i, what.size()) == what; }

    // After "{%" and its sign: \s* raw \s* (-%}\s* | %}). On success `end` is where the raw text begins.
    bool match_raw_begin(size_t i, size_t& end) const {
        i = skip_whitespace(s_, i);
        if (!starts_with(i, "raw")) return false;
        i = skip_whitespace(s_, i + 3);
        if (starts_with(i, "-%}")) {
            end = skip_whitespace(s_, i + 3);
            return true;
        }
        if (starts_with(i, "%}")) {
            end = i + 2;
            return true;
        }
        return false;
    }

    size_t lex_raw(size_t start) {
        const bool line_starting = start > 0 && s_[start - 1] == '\n';
        for (size_t k = s_.find("{%", start); k != std::string_view::npos; k = s_.find("{%", k + 1)) {
            size_t i = k + 2;
            char sign = 0;
            if (i < s_.size() && (s_[i] == '-' || s_[i] == '+')) sign = s_[i++];
            i = skip_whitespace(s_, i);
            if (!starts_with(i, "endraw")) continue;
            i = skip_whitespace(s_, i + 6);
            size_t end;
            if (starts_with(i, "+%}")) {
                end = i + 3;
            } else if (starts_with(i, "-%}")) {
                end = skip_whitespace(s_, i + 3);
            } else if (starts_with(i, "%}")) {
                end = i + 2;
                if (end < s_.size() && s_[end] == '\n') ++end;
            } else {
                continue;
            }
            emit_data(start, strip_before_tag(s_.substr(start, k - start), sign, true, line_starting));
            return end;
        }
        error(start, "missing end of raw directive");
    }

    size_t lex_comment(size_t begin, size_t after) {
        const size_t j = s_.find("#}", after);
        if (j == std::string_view::npos) error(begin, "missing end of comment tag");
        const char sign = (j > after && (s_[j - 1] == '-' || s_[j - 1] == '+')) ? s_[j - 1] : 0;
        size_t end = j + 2;
        if (sign == '-') {
            end = skip_whitespace(s_, end);
        } else if (sign != '+' && end < s_.size() && s_[end] == '\n') {
            ++end;
        }
        return end;
    }

    // Tokens of a {{ }} or {% %} tag until its end marker, which counts only outside brackets.
    size_t lex_tag(size_t begin, size_t i, bool block) {
        tokens_.push_back(Token{block ? Tok::block_begin : Tok::var_begin, static_cast<uint32_t>(begin), {}});
        std::string brackets;  // expected closers
        while (true) {
            if (brackets.empty()) {
                if (block) {
                    if (starts_with(i, "-%}")) return end_tag(Tok::block_end, i, skip_whitespace(s_, i + 3));
                    if (starts_with(i, "+%}")) return end_tag(Tok::block_end, i, i + 3);
                    if (starts_with(i, "%}")) {
                        const size_t end = i + 2;
                        return end_tag(Tok::block_end, i, (end < s_.size() && s_[end] == '\n') ? end + 1 : end);
                    }
                } else {
                    if (starts_with(i, "-}}")) return end_tag(Tok::var_end, i, skip_whitespace(s_, i + 3));
                    if (starts_with(i, "}}")) return end_tag(Tok::var_end, i, i + 2);
                }
            }
            if (const size_t n = whitespace_at(s_, i)) {
                i += n;
                continue;
            }
            if (i >= s_.size())
                error(begin, block ? "unexpected end of template, expected end of statement block ('%}')"
                                   : "unexpected end of template, expected end of print statement ('}}')");
            i = lex_token(i, brackets);
        }
    }

    size_t end_tag(Tok type, size_t at, size_t end) {
        tokens_.push_back(Token{type, static_cast<uint32_t>(at), {}});
        return end;
    }

    size_t lex_token(size_t i, std::string& brackets) {
        const char c = s_[i];
        if (is_digit(c)) return lex_number(i);
        if (is_name_start(c)) {
            size_t j = i + 1;
            while (j < s_.size() && is_name_char(s_[j])) ++j;
            tokens_.push_back(Token{Tok::name, static_cast<uint32_t>(i), std::string(s_.substr(i, j - i))});
            return j;
        }
        if (c == '\'' || c == '"') return lex_string(i);
        static constexpr std::string_view two[] = {"//", "**", "==", "!=", ">=", "<="};
        for (std::string_view op : two) {
            if (starts_with(i, op)) {
                tokens_.push_back(Token{Tok::op, static_cast<uint32_t>(i), std::string(op)});
                return i + 2;
            }
        }
        static constexpr std::string_view one = "+-/*%~[](){}><=.:|,;";
        if (one.find(c) == std::string_view::npos) {
            size_t j = i;
            const char32_t cp = unicode::next(s_, j);
            std::string shown;
            unicode::append(shown, cp);
            error(i, "unexpected character '" + shown + "'");
        }
        if (c == '(' || c == '[' || c == '{') {
            brackets += c == '(' ? ')' : (c == '[' ? ']' : '}');
        } else if (c == ')' || c == ']' || c == '}') {
            if (brackets.empty()) error(i, std::string("unexpected '") + c + "'");
            if (brackets.back() != c)
                error(i, std::string("unexpected '") + c + "', expected '" + brackets.back() + "'");
            brackets.pop_back();
        }
        tokens_.push_back(Token{Tok::op, static_cast<uint32_t>(i), std::string(1, c)});
        return i + 1;
    }

    size_t lex_number(size_t i) {
        // A float cannot follow a '.', so that foo.0.1 is two subscripts.
        if (i == 0 || s_[i - 1] != '.') {
            const size_t int_end = digit_run(s_, i);
            size_t j = int_end;
            bool has_fraction = false;
            if (j + 1 < s_.size() && s_[j] == '.' && is_digit(s_[j + 1])) {
                j = digit_run(s_, j + 1);
                has_fraction = true;
            }
            size_t k = j;
            bool has_exponent = false;
            if (k < s_.size() && (s_[k] == 'e' || s_[k] == 'E')) {
                size_t e = k + 1;
                if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) ++e;
                const size_t e_end = digit_run(s_, e);
                if (e_end > e) {
                    k = e_end;
                    has_exponent = true;
                }
            }
            if (has_fraction || has_exponent) {
                const size_t end = has_exponent ? k : j;
                const std::string text = without_underscores(s_.substr(i, end - i));
                double value = 0.0;
                std::from_chars(text.data(), text.data() + text.size(), value);
                Token t{Tok::floating, static_cast<uint32_t>(i), text};
                t.floating = value;
                tokens_.push_back(std::move(t));
                return end;
            }
        }
        // Integers: 0b…, 0o…, 0x…, [1-9](_?\d)*, 0(_?0)*
        int base = 10;
        size_t j = i;
        std::string digits;
        auto take = [&](auto accept) {
            while (j < s_.size()) {
                if (s_[j] == '_' && j + 1 < s_.size() && accept(s_[j + 1])) {
                    ++j;
                    continue;
                }
                if (!accept(s_[j])) break;
                digits += s_[j++];
            }
        };
        const char p = (i + 1 < s_.size()) ? static_cast<char>(s_[i + 1] | 0x20) : 0;
        auto is_bin = [](char ch) { return ch == '0' || ch == '1'; };
        auto is_oct = [](char ch) { return ch >= '0' && ch <= '7'; };
        auto is_hex = [](char ch) { return is_digit(ch) || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f'); };
        if (s_[i] == '0' && (p == 'b' || p == 'o' || p == 'x')) {
            base = p == 'b' ? 2 : (p == 'o' ? 8 : 16);
            j = i + 2;
            if (base == 2) take(is_bin);
            if (base == 8) take(is_oct);
            if (base == 16) take(is_hex);
            if (digits.empty()) {  // "0x" alone is the integer 0 followed by a name
                base = 10;
                j = i + 1;
                digits = "0";
            }
        } else if (s_[i] == '0') {
            j = i;
            take([](char ch) { return ch == '0'; });
        } else {
            take([](char ch) { return is_digit(ch); });
        }
        int64_t value = 0;
        const auto res = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
        if (res.ec != std::errc()) error(i, "integer literal too large");
        Token t{Tok::integer, static_cast<uint32_t>(i), std::string(s_.substr(i, j - i))};
        t.integer = value;
        tokens_.push_back(std::move(t));
        return j;
    }

    // Python's unicode-escape decoding of a string literal's body.
    size_t lex_string(size_t i) {
        const char quote = s_[i];
        size_t j = i + 1;
        std::string out;
        auto hex_escape = [&](size_t at, int n) -> char32_t {
            if (at + static_cast<size_t>(n) > s_.size()) error(at, "truncated escape in string literal");
            uint32_t v = 0;
            for (int k = 0; k < n; ++k) {
                const char h = s_[at + static_cast<size_t>(k)];
                uint32_t d;
                if (is_digit(h))
                    d = static_cast<uint32_t>(h - '0');
                else if ((h | 0x20) >= 'a' && (h | 0x20) <= 'f')
                    d = static_cast<uint32_t>((h | 0x20) - 'a' + 10);
                else
                    error(at, "truncated escape in string literal");
                v = v * 16 + d;
            }
            if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) error(at, "invalid code point in string literal escape");
            return v;
        };
        while (true) {
            if (j >= s_.size()) error(i, "unterminated string literal");
            const char c = s_[j];
            if (c == quote) break;
            if (c != '\\') {
                out += c;
                ++j;
                continue;
            }
            if (j + 1 >= s_.size()) error(i, "unterminated string literal");
            const char e = s_[j + 1];
            j += 2;
            switch (e) {
                case '\n':
                    break;  // line continuation
                case '\\':
                    out += '\\';
                    break;
                case '\'':
                    out += '\'';
                    break;
                case '"':
                    out += '"';
                    break;
                case 'a':
                    out += '\a';
                    break;
                case 'b':
                    out += '\b';
                    break;
                case 'f':
                    out += '\f';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'v':
                    out += '\v';
                    break;
                case 'x':
                case 'u':
                case 'U': {
                    const int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    unicode::append(out, hex_escape(j, digits));
                    j += digits;
                    break;
                }
                case 'N':
                    error(j - 2, "named unicode escapes (\\N{...}) are not supported");
                default:
                    if (e >= '0' && e <= '7') {
                        uint32_t v = static_cast<uint32_t>(e - '0');
                        for (int k = 0; k < 2 && j < s_.size() && s_[j] >= '0' && s_[j] <= '7'; ++k)
                            v = v * 8 + static_cast<uint32_t>(s_[j++] - '0');
                        unicode::append(out, v);
                    } else if (static_cast<unsigned char>(e) >= 0x80) {
                        // Jinja escapes non-ASCII text as \xNN / \uNNNN before decoding, so a backslash in front
                        // of such a character is kept together with that escape's text.
                        size_t at = j - 1;
                        const char32_t cp = unicode::next(s_, at);
                        unicode::append_escape(out, cp);
                        j = at;
                    } else {
                        out += '\\';
                        out += e;
                    }
            }
        }
        tokens_.push_back(Token{Tok::string, static_cast<uint32_t>(i), std::move(out)});
        return j + 1;
    }

    std::string_view s_;
    std::vector<Token> tokens_;
};

}  // namespace

std::string normalize_source(std::string_view source) {
    std::string out;
    out.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            out += '\n';
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else {
            out += source[i];
        }
    }
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

std::vector<Token> tokenize(std::string_view source) {
    return Lexer(source).run();
}

std::string describe(const Token& t) {
    if (t.type == Tok::name) return "name '" + t.text + "'";
    if (t.type == Tok::op) return "'" + t.text + "'";
    // jinja2's words for the token types whose text does not matter.
    static constexpr std::pair<Tok, std::string_view> kTokenWords[] = {
        {Tok::data, "template data"},
        {Tok::var_begin, "begin of print statement"},
        {Tok::var_end, "end of print statement"},
        {Tok::block_begin, "begin of statement block"},
        {Tok::block_end, "end of statement block"},
        {Tok::string, "string"},
        {Tok::integer, "integer"},
        {Tok::floating, "float"},
        {Tok::eof, "end of template"},
    };
    for (const auto& [type, words] : kTokenWords)
        if (type == t.type) return std::string(words);
    return "token";
}

}  // namespace ember::chat::jinja
