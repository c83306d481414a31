// SPDX-License-Identifier: MIT
// Python's two string formatting languages as far as templates use them: printf-style ("%s: %5.2f" % (a, b),
// the format filter) and str.format ("{} {name!r:>10}").
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "jinja/budget.h"
#include "jinja/builtins.h"
#include "jinja/unicode.h"

namespace ember::chat::jinja {

namespace {

constexpr int max_precision = 200;

struct Spec {
    char fill = ' ';
    char align = 0;   // '<', '>', '^', '=' or 0 for the type's default
    char sign = '-';  // '-', '+', ' '
    bool alternate = false;
    bool zero = false;
    size_t width = 0;
    int precision = -1;
    char grouping = 0;  // ',' or '_'
    char type = 0;
};

std::string pad(std::string s, const Spec& spec, char default_align, Budget& budget) {
    const size_t len = unicode::length(s);
    if (spec.width <= len) return s;
    budget.charge_bytes(spec.width);
    const size_t missing = spec.width - len;
    const char align = spec.align ? spec.align : default_align;
    std::string fill(1, spec.fill);
    auto repeat = [&](size_t n) {
        std::string r;
        for (size_t i = 0; i < n; ++i) r += fill;
        return r;
    };
    if (align == '<') return s + repeat(missing);
    if (align == '^') return repeat(missing / 2) + s + repeat(missing - missing / 2);
    if (align == '=') {  // padding after the sign
        size_t sign_len = (!s.empty() && (s[0] == '-' || s[0] == '+' || s[0] == ' ')) ? 1 : 0;
        if (s.size() >= sign_len + 2 && s[sign_len] == '0' && (s[sign_len + 1] | 0x20) >= 'b' &&
            std::string_view("box").find(static_cast<char>(s[sign_len + 1] | 0x20)) != std::string_view::npos)
            sign_len += 2;
        return s.substr(0, sign_len) + repeat(missing) + s.substr(sign_len);
    }
    return repeat(missing) + s;
}

// printf-style %s, %r and %a: padded with spaces whatever the fill, and '=' (after the sign) reads as '>'.
std::string pad_as_text(std::string s, const Spec& spec, Budget& budget) {
    Spec plain = spec;
    plain.fill = ' ';
    if (plain.align == '=') plain.align = '>';
    return pad(std::move(s), plain, '>', budget);
}

std::string group_digits(const std::string& digits, char sep, size_t every) {
    std::string out;
    const size_t n = digits.size();
    for (size_t i = 0; i < n; ++i) {
        if (i && (n - i) % every == 0) out += sep;
        out += digits[i];
    }
    return out;
}

std::string sign_prefix(bool negative, char sign) {
    if (negative) return "-";
    if (sign == '+') return "+";
    if (sign == ' ') return " ";
    return "";
}

std::string format_int(int64_t value, const Spec& spec) {
    const bool negative = value < 0;
    const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
    const char t = spec.type;
    const int base = t == 'b' ? 2 : t == 'o' ? 8 : (t == 'x' || t == 'X') ? 16 : 10;
    const std::string prefix = base == 10 ? "" : std::string("0") + t;  // 0b, 0o, 0x, 0X
    std::string digits;
    uint64_t m = magnitude;
    do {
        const int d = static_cast<int>(m % static_cast<uint64_t>(base));
        digits.insert(digits.begin(), static_cast<char>(d < 10 ? '0' + d : (spec.type == 'X' ? 'A' : 'a') + d - 10));
        m /= static_cast<uint64_t>(base);
    } while (m);
    if (spec.grouping) digits = group_digits(digits, spec.grouping, base == 10 ? 3 : 4);
    return sign_prefix(negative, spec.sign) + (spec.alternate ? prefix : "") + digits;
}

// printf's e, g or f conversion (any other conv prints as f); E, G and F print the same with the letters (the
// exponent's e, inf, nan) in upper case, as printf does.
std::string printf_float(double v, int precision, char conv, bool alternate) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(conv)));
    char buf[512];
    if (lower == 'e')
        std::snprintf(buf, sizeof buf, alternate ? "%#.*e" : "%.*e", precision, v);
    else if (lower == 'g')
        std::snprintf(buf, sizeof buf, alternate ? "%#.*g" : "%.*g", precision, v);
    else
        std::snprintf(buf, sizeof buf, alternate ? "%#.*f" : "%.*f", precision, v);
    std::string text = buf;
    if (conv == 'E' || conv == 'G' || conv == 'F')
        for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return text;
}

std::string format_float(double value, const Spec& spec, char type) {
    const int precision = std::min(spec.precision < 0 ? 6 : spec.precision, max_precision);
    if (std::isnan(value) || std::isinf(value)) {
        std::string s = std::isnan(value) ? "nan" : "inf";
        if (type == 'F' || type == 'E' || type == 'G') s = std::isnan(value) ? "NAN" : "INF";
        return sign_prefix(std::signbit(value) && !std::isnan(value), spec.sign) + s;
    }
    const bool negative = std::signbit(value);
    const double magnitude = std::fabs(value);
    std::string body;
    if (type == 0 && spec.precision < 0) {
        body = float_repr(magnitude);
    } else {
        char conv = type == 0 ? 'g' : type;
        double shown = magnitude;
        if (conv == '%') {
            shown *= 100.0;
            conv = 'f';
        }
        body = printf_float(shown, precision, conv, spec.alternate);
        if (type == '%') body += '%';
        // Python's general format without a type keeps one digit after the point ("1.0", not "1").
        if (type == 0 && body.find_first_of(".en") == std::string::npos) body += ".0";
    }
    if (spec.grouping) {
        const size_t end = body.find_first_not_of("0123456789");
        body = group_digits(body.substr(0, end), spec.grouping, 3) + (end == std::string::npos ? "" : body.substr(end));
    }
    return sign_prefix(negative, spec.sign) + body;
}

// One value under a parsed spec, with Python's type rules.
std::string format_value(const Value& v, Spec spec, Budget& budget) {
    if (spec.zero && !spec.align) {
        spec.fill = '0';
        spec.align = '=';
    }
    const char t = spec.type;
    if (v.is_string() || ((v.is_none() || v.is_list() || v.is_dict() || v.is_undefined() || v.is_object()) && t == 0)) {
        if (t && t != 's')
            fail(std::string("Unknown format code '") + t + "' for object of type '" + type_name(v) + "'");
        std::string s = to_str(v, budget);
        if (spec.precision >= 0) {
            const auto b = unicode::boundaries(s);
            if (static_cast<size_t>(spec.precision) + 1 < b.size())
                s = s.substr(0, b[static_cast<size_t>(spec.precision)]);
        }
        return pad(std::move(s), spec, '<', budget);
    }
    if (v.is_bool() && t == 0) return pad(v.as_bool() ? "True" : "False", spec, '<', budget);
    if ((v.is_int() || v.is_bool()) && (t == 0 || t == 'd' || t == 'n' || t == 'b' || t == 'o' || t == 'x' || t == 'X'))
        return pad(format_int(v.to_int(), spec), spec, '>', budget);
    if ((v.is_int() || v.is_bool()) && t == 'c') {
        std::string s;
        unicode::append(s, static_cast<char32_t>(v.to_int()));
        return pad(std::move(s), spec, '<', budget);
    }
    if (v.is_number() && (t == 0 || t == 'e' || t == 'E' || t == 'f' || t == 'F' || t == 'g' || t == 'G' || t == '%'))
        return pad(format_float(v.to_double(), spec, t), spec, '>', budget);
    fail(std::string("Unknown format code '") + (t ? std::string(1, t) : std::string()) + "' for object of type '" +
         type_name(v) + "'");
}

// [[fill]align][sign][#][0][width][grouping][.precision][type]
Spec parse_spec(std::string_view s) {
    Spec spec;
    size_t i = 0;
    auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
    if (s.size() >= 2 && is_align(s[1])) {
        spec.fill = s[0];
        spec.align = s[1];
        i = 2;
    } else if (!s.empty() && is_align(s[0])) {
        spec.align = s[0];
        i = 1;
    }
    if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) spec.sign = s[i++];
    if (i < s.size() && s[i] == '#') spec.alternate = true, ++i;
    if (i < s.size() && s[i] == '0') spec.zero = true, ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        spec.width = spec.width * 10 + static_cast<size_t>(s[i++] - '0');
        if (spec.width > (1u << 24)) fail("format width too large");
    }
    if (i < s.size() && (s[i] == ',' || s[i] == '_')) spec.grouping = s[i++];
    if (i < s.size() && s[i] == '.') {
        ++i;
        if (i >= s.size() || s[i] < '0' || s[i] > '9') fail("Format specifier missing precision");
        spec.precision = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
            spec.precision = spec.precision * 10 + (s[i++] - '0');
            if (spec.precision > 100000) fail("precision too large");
        }
    }
    if (i < s.size()) spec.type = s[i++];
    if (i < s.size()) fail("Invalid format specifier '" + std::string(s) + "'");
    return spec;
}

}  // namespace

std::string percent_format(const std::string& format, const Value& args, Budget& budget) {
    std::vector<Value> positional;
    const Value* mapping = nullptr;
    if (args.is_tuple()) {
        positional = args.list().items;
    } else {
        positional.push_back(args);
        if (args.is_dict()) mapping = &args;
    }
    size_t next = 0;
    bool used_mapping = false;
    auto take = [&]() -> Value {
        if (next >= positional.size()) fail("not enough arguments for format string");
        return positional[next++];
    };
    std::string out;
    for (size_t i = 0; i < format.size();) {
        const char c = format[i];
        if (c != '%') {
            out += c;
            ++i;
            continue;
        }
        const size_t start = i++;
        if (i >= format.size()) fail("incomplete format");
        Value value;
        bool have_value = false;
        if (format[i] == '(') {
            const size_t close = format.find(')', i);
            if (close == std::string::npos) fail("incomplete format key");
            if (!mapping) fail("format requires a mapping");
            const Value* v = mapping->dict().find(std::string_view(format).substr(i + 1, close - i - 1));
            if (!v) fail("KeyError: '" + format.substr(i + 1, close - i - 1) + "'");
            value = *v;
            have_value = true;
            used_mapping = true;
            i = close + 1;
        }
        Spec spec;
        spec.align = '>';
        for (; i < format.size(); ++i) {
            const char f = format[i];
            if (f == '-')
                spec.align = '<';
            else if (f == '0')
                spec.zero = true;
            else if (f == '+')
                spec.sign = '+';
            else if (f == ' ') {
                if (spec.sign != '+') spec.sign = ' ';
            } else if (f == '#')
                spec.alternate = true;
            else
                break;
        }
        if (i < format.size() && format[i] == '*') {
            spec.width = static_cast<size_t>(std::max<int64_t>(0, require_int(take(), "* wants int")));
            ++i;
        } else {
            while (i < format.size() && format[i] >= '0' && format[i] <= '9') {
                spec.width = spec.width * 10 + static_cast<size_t>(format[i++] - '0');
                if (spec.width > (1u << 24)) fail("format width too large");
            }
        }
        if (i < format.size() && format[i] == '.') {
            ++i;
            spec.precision = 0;
            if (i < format.size() && format[i] == '*') {
                spec.precision = static_cast<int>(std::clamp<int64_t>(require_int(take(), "* wants int"), 0, 100000));
                ++i;
            } else {
                while (i < format.size() && format[i] >= '0' && format[i] <= '9') {
                    spec.precision = spec.precision * 10 + (format[i++] - '0');
                    if (spec.precision > 100000) fail("precision too large");
                }
            }
        }
        while (i < format.size() && (format[i] == 'h' || format[i] == 'l' || format[i] == 'L')) ++i;
        if (i >= format.size()) fail("incomplete format");
        const char conv = format[i++];
        if (conv == '%') {
            out += '%';
            continue;
        }
        if (!have_value) value = take();
        if (spec.zero && spec.align == '>') {
            spec.fill = '0';
            spec.align = '=';
        }
        std::string piece;
        switch (conv) {
            case 's': {
                std::string s = to_str(value, budget);
                if (spec.precision >= 0) {
                    const auto b = unicode::boundaries(s);
                    if (static_cast<size_t>(spec.precision) + 1 < b.size())
                        s = s.substr(0, b[static_cast<size_t>(spec.precision)]);
                }
                piece = pad_as_text(std::move(s), spec, budget);
                break;
            }
            case 'r':
            case 'a': {
                std::string s;
                append_repr(s, value, budget);
                piece = pad_as_text(std::move(s), spec, budget);
                break;
            }
            case 'd':
            case 'i':
            case 'u':
            case 'x':
            case 'X':
            case 'o': {
                if (!value.is_number())
                    fail(std::string("%") + conv +
                         " format: " + (conv == 'd' || conv == 'i' || conv == 'u' ? "a real number" : "an integer") +
                         " is required, not " + type_name(value));
                int64_t n;
                if (value.is_float()) {
                    const double d = value.as_float();
                    if (conv != 'd' && conv != 'i' && conv != 'u')
                        fail(std::string("%") + conv + " format: an integer is required, not float");
                    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) fail("cannot convert float to integer");
                    n = static_cast<int64_t>(d);
                } else {
                    n = value.to_int();
                }
                Spec s = spec;
                s.type = (conv == 'x' || conv == 'X' || conv == 'o') ? conv : 'd';
                piece = format_int(n, s);
                if (spec.precision > 0) {  // minimum digits
                    const size_t sign =
                        (!piece.empty() && (piece[0] == '-' || piece[0] == '+' || piece[0] == ' ')) ? 1 : 0;
                    const size_t prefix = sign + (spec.alternate && s.type != 'd' ? 2 : 0);
                    const size_t digits = piece.size() - prefix;
                    if (digits < static_cast<size_t>(spec.precision))
                        piece.insert(prefix, static_cast<size_t>(spec.precision) - digits, '0');
                }
                piece = pad(std::move(piece), spec, '>', budget);
                break;
            }
            case 'e':
            case 'E':
            case 'f':
            case 'F':
            case 'g':
            case 'G': {
                if (!value.is_number()) fail("must be real number, not " + type_name(value));
                Spec s = spec;
                if (s.precision < 0) s.precision = 6;
                piece = pad(format_float(value.to_double(), s, conv), spec, '>', budget);
                break;
            }
            case 'c': {
                std::string s;
                if (value.is_string() && unicode::length(value.str()) == 1)
                    s = value.str();
                else if (value.is_int())
                    unicode::append(s, static_cast<char32_t>(value.as_int()));
                else
                    fail("%c requires int or char");
                piece = pad(std::move(s), spec, '>', budget);
                break;
            }
            default: {
                char msg[96];
                std::snprintf(msg, sizeof msg, "unsupported format character '%c' (0x%x) at index %zu", conv,
                              static_cast<unsigned>(static_cast<unsigned char>(conv)), i - 1);
                (void)start;
                fail(msg);
            }
        }
        out += piece;
        budget.check_size(out.size());
    }
    if (!used_mapping && next < positional.size() && !(mapping && next == 0))
        fail("not all arguments converted during string formatting");
    return out;
}

std::string brace_format(const std::string& format, const CallArgs& args, Budget& budget) {
    std::string out;
    size_t auto_index = 0;
    enum { unknown, automatic, manual } numbering = unknown;
    for (size_t i = 0; i < format.size();) {
        const char c = format[i];
        if (c == '}') {
            if (i + 1 < format.size() && format[i + 1] == '}') {
                out += '}';
                i += 2;
                continue;
            }
            fail("Single '}' encountered in format string");
        }
        if (c != '{') {
            out += c;
            ++i;
            continue;
        }
        if (i + 1 < format.size() && format[i + 1] == '{') {
            out += '{';
            i += 2;
            continue;
        }
        const size_t close = format.find('}', i);
        if (close == std::string::npos) fail("Single '{' encountered in format string");
        std::string field = format.substr(i + 1, close - i - 1);
        i = close + 1;
        std::string spec_text;
        char conversion = 0;
        if (const size_t colon = field.find(':'); colon != std::string::npos) {
            spec_text = field.substr(colon + 1);
            field.resize(colon);
        }
        if (const size_t bang = field.find('!'); bang != std::string::npos) {
            if (bang + 2 != field.size()) fail("expected ':' after conversion specifier");
            conversion = field[bang + 1];
            field.resize(bang);
        }
        // field name: index or identifier, then .attr / [key] parts
        const size_t part = field.find_first_of(".[");
        const std::string head = field.substr(0, part);
        Value value;
        if (head.empty() || (head.find_first_not_of("0123456789") == std::string::npos)) {
            size_t index;
            if (head.empty()) {
                if (numbering == manual)
                    fail("cannot switch from manual field specification to automatic field numbering");
                numbering = automatic;
                index = auto_index++;
            } else {
                if (numbering == automatic)
                    fail("cannot switch from automatic field numbering to manual field specification");
                numbering = manual;
                index = head.size() > 9 ? SIZE_MAX : static_cast<size_t>(std::stoul(head));
            }
            if (index >= args.positional.size())
                fail("Replacement index " + std::to_string(index) + " out of range for positional args tuple");
            value = args.positional[index];
        } else {
            bool found = false;
            for (const auto& [k, v] : args.keywords) {
                if (k == head) {
                    value = v;
                    found = true;
                }
            }
            if (!found) fail("KeyError: '" + head + "'");
        }
        for (size_t p = part; p != std::string::npos && p < field.size();) {
            if (field[p] == '.') {
                const size_t end = field.find_first_of(".[", p + 1);
                const std::string name =
                    field.substr(p + 1, end == std::string::npos ? std::string::npos : end - p - 1);
                if (!value.is_dict()) fail("'" + type_name(value) + "' object has no attribute '" + name + "'");
                const Value* v = value.dict().find(std::string_view(name));
                if (!v) fail("'dict' object has no attribute '" + name + "'");
                value = *v;
                p = end;
            } else {
                const size_t end = field.find(']', p);
                if (end == std::string::npos) fail("Missing ']' in format string");
                const std::string key = field.substr(p + 1, end - p - 1);
                const bool numeric = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
                if (value.is_list() && numeric) {
                    const size_t k = key.size() > 9 ? SIZE_MAX : static_cast<size_t>(std::stoul(key));
                    if (k >= value.list().items.size()) fail("list index out of range");
                    value = value.list().items[k];
                } else if (value.is_dict()) {
                    const Value* v = value.dict().find(std::string_view(key));
                    if (!v) fail("KeyError: '" + key + "'");
                    value = *v;
                } else {
                    fail("'" + type_name(value) + "' object is not subscriptable");
                }
                p = end + 1;
            }
        }
        if (conversion == 'r' || conversion == 'a') {
            std::string s;
            append_repr(s, value, budget);
            value = Value::text(std::move(s));
        } else if (conversion == 's') {
            value = Value::text(to_str(value, budget));
        } else if (conversion) {
            fail(std::string("Unknown conversion specifier ") + conversion);
        }
        out += format_value(value, parse_spec(spec_text), budget);
        budget.check_size(out.size());
    }
    return out;
}

}  // namespace ember::chat::jinja
