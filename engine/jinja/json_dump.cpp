// SPDX-License-Identifier: MIT
// tojson as Hugging Face defines it: Python's json.dumps(value, ensure_ascii=False, indent=None,
// separators=None, sort_keys=False), keyword arguments allowed.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "jinja/budget.h"
#include "jinja/unicode.h"
#include "jinja/jinja_value.h"

namespace ember::chat::jinja {

namespace {

void append_u_escape(std::string& out, unsigned unit) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04x", unit & 0xFFFFu);
    out += buf;
}

void append_json_string(std::string& out, std::string_view s, bool ensure_ascii) {
    out += '"';
    for (size_t i = 0; i < s.size();) {
        const unsigned char b = static_cast<unsigned char>(s[i]);
        if (b < 0x80) {
            ++i;
            switch (b) {
                case '"':
                    out += "\\\"";
                    break;
                case '\\':
                    out += "\\\\";
                    break;
                case '\n':
                    out += "\\n";
                    break;
                case '\r':
                    out += "\\r";
                    break;
                case '\t':
                    out += "\\t";
                    break;
                case '\b':
                    out += "\\b";
                    break;
                case '\f':
                    out += "\\f";
                    break;
                default:
                    if (b < 0x20)
                        append_u_escape(out, b);
                    else
                        out += static_cast<char>(b);
            }
            continue;
        }
        const size_t start = i;
        const char32_t c = unicode::next(s, i);
        if (!ensure_ascii) {
            out.append(s.substr(start, i - start));
        } else if (c < 0x10000) {
            append_u_escape(out, static_cast<unsigned>(c));
        } else {
            const char32_t v = c - 0x10000;
            append_u_escape(out, 0xD800 + static_cast<unsigned>(v >> 10));
            append_u_escape(out, 0xDC00 + static_cast<unsigned>(v & 0x3FF));
        }
    }
    out += '"';
}

std::string json_float(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
    return float_repr(d);
}

// Python's json converts non-string keys: True -> "true", None -> "null", 1 -> "1", 1.5 -> "1.5".
std::string json_key(const Value& k) {
    switch (k.kind()) {
        case Value::Kind::string:
            return k.str();
        case Value::Kind::boolean:
            return k.as_bool() ? "true" : "false";
        case Value::Kind::none:
            return "null";
        case Value::Kind::integer:
            return std::to_string(k.as_int());
        case Value::Kind::floating:
            return json_float(k.as_float());
        default:
            fail("keys must be str, int, float, bool or None, not " + type_name(k));
    }
}

void newline_indent(std::string& out, const JsonStyle& style, int level, Budget& budget) {
    out += '\n';
    for (int i = 0; i < level; ++i) out += style.indent;
    budget.check_size(out.size());
}

// brackets[0], the n items (item(i) writes item i) separated and indented as the style says, then brackets[1].
template <typename Item>
void append_json_items(std::string& out, const JsonStyle& style, Budget& budget, int depth, const char* brackets,
                       size_t n, Item item) {
    out += brackets[0];
    for (size_t i = 0; i < n; ++i) {
        if (i) out += style.item_separator;
        if (style.has_indent) newline_indent(out, style, depth + 1, budget);
        item(i);
    }
    if (n > 0 && style.has_indent) newline_indent(out, style, depth, budget);
    out += brackets[1];
}

}  // namespace

void append_json(std::string& out, const Value& v, const JsonStyle& style, Budget& budget, int depth) {
    budget.check_value_depth(depth);
    budget.step();
    switch (v.kind()) {
        case Value::Kind::none:
            out += "null";
            return;
        case Value::Kind::boolean:
            out += v.as_bool() ? "true" : "false";
            return;
        case Value::Kind::integer:
            out += std::to_string(v.as_int());
            return;
        case Value::Kind::floating:
            out += json_float(v.as_float());
            return;
        case Value::Kind::string:
            append_json_string(out, v.str(), style.ensure_ascii);
            budget.check_size(out.size());
            return;
        case Value::Kind::list: {
            const auto& items = v.list().items;
            append_json_items(out, style, budget, depth, "[]", items.size(),
                              [&](size_t i) { append_json(out, items[i], style, budget, depth + 1); });
            return;
        }
        case Value::Kind::dict: {
            const auto& entries = v.dict().entries;
            if (entries.empty()) {
                out += "{}";
                return;
            }
            std::vector<const std::pair<Value, Value>*> order;
            order.reserve(entries.size());
            for (const auto& e : entries) order.push_back(&e);
            if (style.sort_keys) {
                budget.step(entries.size());
                std::stable_sort(order.begin(), order.end(), [&](const auto* a, const auto* b) {
                    return compare(a->first, b->first, "<", budget) != 0;
                });
            }
            append_json_items(out, style, budget, depth, "{}", order.size(), [&](size_t i) {
                append_json_string(out, json_key(order[i]->first), style.ensure_ascii);
                out += style.key_separator;
                append_json(out, order[i]->second, style, budget, depth + 1);
            });
            return;
        }
        default:
            fail("Object of type " + type_name(v) + " is not JSON serializable");
    }
}

namespace {

nlohmann::ordered_json to_json_at(const Value& v, Budget& budget, int depth) {
    budget.check_value_depth(depth);
    budget.step();
    switch (v.kind()) {
        case Value::Kind::none:
            return nullptr;
        case Value::Kind::boolean:
            return v.as_bool();
        case Value::Kind::integer:
            return v.as_int();
        case Value::Kind::floating:
            return v.as_float();
        case Value::Kind::string:
            return v.str();
        case Value::Kind::list: {
            auto out = nlohmann::ordered_json::array();
            for (const Value& item : v.list().items) out.push_back(to_json_at(item, budget, depth + 1));
            return out;
        }
        case Value::Kind::dict: {
            auto out = nlohmann::ordered_json::object();
            for (const auto& [k, item] : v.dict().entries) out[json_key(k)] = to_json_at(item, budget, depth + 1);
            return out;
        }
        default:
            fail("Object of type " + type_name(v) + " is not JSON serializable");
    }
}

}  // namespace

nlohmann::ordered_json to_json(const Value& v, Budget& budget) {
    return to_json_at(v, budget, 0);
}

}  // namespace ember::chat::jinja
