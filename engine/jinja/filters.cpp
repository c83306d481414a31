// SPDX-License-Identifier: MIT
// Jinja's filters with jinja2 3.1's behaviour, plus Hugging Face's tojson.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>

#include "jinja/budget.h"
#include "jinja/interpreter.h"
#include "jinja/builtins.h"
#include "jinja/pystr.h"
#include "jinja/unicode.h"

namespace ember::chat::jinja {

namespace {

using Filter = Value (*)(Interpreter&, const Value&, CallArgs&);

std::string soft_str(Interpreter& in, const Value& v) {
    return to_str(v, in.budget());
}

// attribute paths like "user.name" or "items.0": each part looked up as an item first, then an attribute.
std::vector<Value> attribute_parts(const Value& attribute) {
    std::vector<Value> parts;
    if (attribute.is_none() || attribute.is_undefined()) return parts;
    if (!attribute.is_string()) return {attribute};
    for (const std::string& p : pystr::split(attribute.str(), std::string("."), -1)) {
        const bool digits = !p.empty() && std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (digits && p.size() < 18)
            parts.push_back(Value::integer(std::stoll(p)));
        else
            parts.push_back(Value::text(p));
    }
    return parts;
}

Value lookup_path(Interpreter& in, Value item, const std::vector<Value>& parts, const Value* fallback) {
    for (const Value& part : parts) {
        item = in.get_item(item, part);
        if (fallback && item.is_undefined()) item = *fallback;
    }
    return item;
}

Value ignore_case(const Value& v) {
    return v.is_string() ? Value::text(unicode::lower(v.str())) : v;
}

// items as a list stably sorted by keys[i] (one key per item).
Value sorted_by_keys(Interpreter& in, const std::vector<Value>& items, const std::vector<Value>& keys, bool reverse) {
    std::vector<size_t> order(items.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    Budget& budget = in.budget();
    budget.step(order.size() * 4);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (reverse) return compare(keys[b], keys[a], "<", budget) != 0;
        return compare(keys[a], keys[b], "<", budget) != 0;
    });
    std::vector<Value> out;
    for (size_t i : order) out.push_back(items[i]);
    return Value::make_list(std::move(out));
}

// --- strings ---------------------------------------------------------------------------------------------------

Value f_trim(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "trim()", {"chars"});
    std::optional<std::string> chars;
    if (a.has(0) && !a.get(0)->is_none()) chars = require_string(*a.get(0), "trim() chars");
    return Value::text(pystr::strip(soft_str(in, v), chars, true, true));
}

Value f_lower(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "lower()", {});
    return Value::text(unicode::lower(soft_str(in, v)));
}

Value f_upper(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "upper()", {});
    return Value::text(unicode::upper(soft_str(in, v)));
}

Value f_capitalize(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "capitalize()", {});
    return Value::text(pystr::capitalize(soft_str(in, v)));
}

// Jinja's title: words begin after '-', whitespace, '(', '{', '[' or '<'.
Value f_title(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "title()", {});
    const std::string s = soft_str(in, v);
    std::string out;
    bool word_start = true;
    for (size_t i = 0; i < s.size();) {
        const char32_t c = unicode::next(s, i);
        const bool boundary = c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || unicode::is_space(c);
        if (boundary) {
            unicode::append(out, c);
            word_start = true;
        } else {
            unicode::append(out, word_start ? unicode::to_upper(c) : unicode::to_lower(c));
            word_start = false;
        }
    }
    return Value::text(std::move(out));
}

Value f_replace(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "replace()", {"old", "new", "count"});
    if (!a.has(0) || !a.has(1)) fail("replace() missing required arguments 'old' and 'new'");
    int64_t count = -1;
    if (a.has(2) && !a.get(2)->is_none()) count = require_int(*a.get(2), "replace() count");
    const std::string s = soft_str(in, v);
    const std::string old = soft_str(in, *a.get(0)), repl = soft_str(in, *a.get(1));
    return Value::text(checked_replace(s, old, repl, count, in.budget()));
}

Value f_string(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "string()", {});
    if (v.is_string()) return v;
    return Value::text(soft_str(in, v));
}

Value f_safe(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "safe()", {});
    return Value::text(soft_str(in, v), true);
}

Value f_escape(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "escape()", {});
    if (v.is_markup()) return v;
    return Value::text(html_escape(soft_str(in, v)), true);
}

Value f_forceescape(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "forceescape()", {});
    return Value::text(html_escape(soft_str(in, v)), true);
}

Value f_indent(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "indent()", {"width", "first", "blank"});
    const Value width = a.get_or(0, Value::integer(4));
    std::string indention;
    if (width.is_string()) {
        indention = width.str();
    } else {
        const int64_t n = require_int(width, "indent() width");
        if (n > 0) {
            in.budget().charge_bytes(static_cast<size_t>(n));
            indention.assign(static_cast<size_t>(n), ' ');
        }
    }
    const bool first = truthy(a.get_or(1, Value::boolean(false)));
    const bool blank = truthy(a.get_or(2, Value::boolean(false)));
    const std::string s = soft_str(in, v) + "\n";
    const std::vector<std::string> lines = pystr::splitlines(s, false);
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (i) {
            out += '\n';
            if (blank || !lines[i].empty()) out += indention;
        }
        out += lines[i];
        in.budget().check_size(out.size());
    }
    if (first) out = indention + out;
    return Value::text(std::move(out), v.is_markup());
}

Value f_center(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "center()", {"width"});
    const int64_t width = require_int(a.get_or(0, Value::integer(80)), "center() width");
    const std::string s = soft_str(in, v);
    const int64_t len = static_cast<int64_t>(unicode::length(s));
    if (width <= len) return Value::text(s);
    in.budget().charge_bytes(static_cast<size_t>(width));
    const int64_t margin = width - len;
    const int64_t left = margin / 2 + (margin & width & 1);
    return Value::text(std::string(static_cast<size_t>(left), ' ') + s +
                       std::string(static_cast<size_t>(margin - left), ' '));
}

Value f_truncate(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "truncate()", {"length", "killwords", "end", "leeway"});
    const int64_t length = require_int(a.get_or(0, Value::integer(255)), "truncate() length");
    const bool killwords = truthy(a.get_or(1, Value::boolean(false)));
    const std::string end = soft_str(in, a.get_or(2, Value::text("...")));
    const int64_t leeway = a.has(3) && !a.get(3)->is_none() ? require_int(*a.get(3), "truncate() leeway") : 5;
    const int64_t end_len = static_cast<int64_t>(unicode::length(end));
    if (length < end_len) fail("expected length >= " + std::to_string(end_len) + ", got " + std::to_string(length));
    if (leeway < 0) fail("expected leeway >= 0, got " + std::to_string(leeway));
    const std::string s = soft_str(in, v);
    if (static_cast<int64_t>(unicode::length(s)) <= length + leeway) return Value::text(s);
    std::string head = pystr::slice(s, 0, length - end_len);
    if (!killwords) head = pystr::rsplit(head, std::string(" "), 1).front();
    return Value::text(head + end);
}

Value f_wordcount(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "wordcount()", {});
    const std::string s = soft_str(in, v);
    int64_t words = 0;
    bool inside = false;
    for (size_t i = 0; i < s.size();) {
        const char32_t c = unicode::next(s, i);
        const bool word = c == '_' || unicode::is_alpha(c) || unicode::is_digit(c);
        if (word && !inside) ++words;
        inside = word;
    }
    return Value::integer(words);
}

Value f_format(Interpreter& in, const Value& v, CallArgs& args) {
    if (!args.positional.empty() && !args.keywords.empty())
        fail("format() can't handle positional and keyword arguments at the same time");
    Value params;
    if (!args.keywords.empty()) {
        auto d = std::make_shared<Dict>();
        for (auto& [k, val] : args.keywords) d->set(k, val);
        params = Value::make_dict(std::move(d));
    } else {
        params = Value::make_list(args.positional, true);
    }
    return Value::text(percent_format(soft_str(in, v), params, in.budget()));
}

Value f_tojson(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "tojson()", {"ensure_ascii", "indent", "separators", "sort_keys"});
    JsonStyle style;
    style.ensure_ascii = truthy(a.get_or(0, Value::boolean(false)));
    const Value indent = a.get_or(1, Value::none());
    if (!indent.is_none()) {
        style.has_indent = true;
        if (indent.is_string()) {
            style.indent = indent.str();
        } else {
            const int64_t n = require_int(indent, "tojson() indent");
            if (n > 0) style.indent.assign(static_cast<size_t>(std::min<int64_t>(n, 1024)), ' ');
        }
        style.item_separator = ",";
    }
    const Value separators = a.get_or(2, Value::none());
    if (!separators.is_none()) {
        if (!separators.is_list() || separators.list().items.size() != 2 || !separators.list().items[0].is_string() ||
            !separators.list().items[1].is_string())
            fail("tojson() separators must be a pair of strings");
        style.item_separator = separators.list().items[0].str();
        style.key_separator = separators.list().items[1].str();
    }
    style.sort_keys = truthy(a.get_or(3, Value::boolean(false)));
    std::string out;
    append_json(out, v, style, in.budget());
    return Value::text(std::move(out));
}

// --- numbers ---------------------------------------------------------------------------------------------------

// Python's int(str, base): optional sign, digits with single underscores, an optional matching prefix.
std::optional<int64_t> parse_python_int(std::string_view text, int64_t base) {
    std::string s = pystr::strip(text, std::nullopt, true, true);
    bool negative = false;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
        negative = s[0] == '-';
        s.erase(0, 1);
    }
    if (s.size() > 2 && s[0] == '0') {
        const char p = static_cast<char>(s[1] | 0x20);
        const int64_t prefix_base = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
        if (prefix_base && (base == prefix_base || base == 0)) {
            base = prefix_base;
            s.erase(0, 2);
            if (!s.empty() && s[0] == '_') s.erase(0, 1);
        }
    }
    if (base == 0) base = 10;
    if (s.empty() || s.front() == '_' || s.back() == '_' || s.find("__") != std::string::npos) return std::nullopt;
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
    if (base < 2 || base > 36) return std::nullopt;
    uint64_t magnitude = 0;
    const auto res = std::from_chars(s.data(), s.data() + s.size(), magnitude, static_cast<int>(base));
    if (res.ec != std::errc() || res.ptr != s.data() + s.size()) return std::nullopt;
    if (magnitude > static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0)) return std::nullopt;
    return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
}

// Python's float(str): whitespace, sign, digits with underscores, exponent, inf/infinity/nan.
std::optional<double> parse_python_float(std::string_view text) {
    std::string s = pystr::strip(text, std::nullopt, true, true);
    std::string lowered = unicode::lower(s);
    std::string body = lowered;
    bool negative = false;
    if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
        negative = body[0] == '-';
        body.erase(0, 1);
    }
    if (body == "inf" || body == "infinity") return negative ? -HUGE_VAL : HUGE_VAL;
    if (body == "nan") return std::nan("");
    if (body.empty() || body.front() == '_' || body.back() == '_' || body.find("__") != std::string::npos)
        return std::nullopt;
    for (size_t i = 0; i < body.size(); ++i)
        if (body[i] == '_' && !(i > 0 && std::isdigit(static_cast<unsigned char>(body[i - 1])) && i + 1 < body.size() &&
                                std::isdigit(static_cast<unsigned char>(body[i + 1]))))
            return std::nullopt;
    body.erase(std::remove(body.begin(), body.end(), '_'), body.end());
    if (body.find_first_not_of("0123456789.e+-") != std::string::npos) return std::nullopt;
    double d = 0.0;
    const auto res = std::from_chars(body.data(), body.data() + body.size(), d);
    if (res.ec == std::errc::result_out_of_range)
        d = HUGE_VAL;
    else if (res.ec != std::errc() || res.ptr != body.data() + body.size())
        return std::nullopt;
    return negative ? -d : d;
}

Value f_int(Interpreter& in, const Value& v, CallArgs& args) {
    (void)in;
    ArgReader a(args, "int()", {"default", "base"});
    const Value fallback = a.get_or(0, Value::integer(0));
    const int64_t base = require_int(a.get_or(1, Value::integer(10)), "int() base");
    if (v.is_undefined()) fail(v.undefined_message());
    if (v.is_int() || v.is_bool()) return Value::integer(v.to_int());
    if (v.is_float()) {
        const double d = std::trunc(v.as_float());
        if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
        return Value::integer(static_cast<int64_t>(d));
    }
    if (v.is_string()) {
        if (auto i = parse_python_int(v.str(), base)) return Value::integer(*i);
        if (auto d = parse_python_float(v.str())) {
            if (std::isfinite(*d) && std::fabs(*d) < 9.2e18)
                return Value::integer(static_cast<int64_t>(std::trunc(*d)));
        }
    }
    return fallback;
}

Value f_float(Interpreter& in, const Value& v, CallArgs& args) {
    (void)in;
    ArgReader a(args, "float()", {"default"});
    const Value fallback = a.get_or(0, Value::number(0.0));
    if (v.is_undefined()) fail(v.undefined_message());
    if (v.is_number()) return Value::number(v.to_double());
    if (v.is_string())
        if (auto d = parse_python_float(v.str())) return Value::number(*d);
    return fallback;
}

Value f_abs(Interpreter&, const Value& v, CallArgs& args) {
    ArgReader a(args, "abs()", {});
    if (v.is_float()) return Value::number(std::fabs(v.as_float()));
    if (v.is_int() || v.is_bool()) {
        const int64_t i = v.to_int();
        if (i == INT64_MIN) fail("integer overflow (Ember's integers are 64-bit)");
        return Value::integer(i < 0 ? -i : i);
    }
    fail("bad operand type for abs(): '" + type_name(v) + "'");
}

double round_half_even(double x, int64_t digits) {
    if (!std::isfinite(x)) return x;
    if (digits >= 0) {
        // printf rounds the exact binary value to nearest, ties to even: Python's round() does the same.
        if (digits > 300) return x;
        char buf[1024];
        std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(digits), x);
        double out = 0.0;
        std::from_chars(buf, buf + std::strlen(buf), out);
        return out;
    }
    if (digits < -308) return std::copysign(0.0, x);
    const double p = std::pow(10.0, static_cast<double>(-digits));
    return std::nearbyint(x / p) * p;
}

Value f_round(Interpreter&, const Value& v, CallArgs& args) {
    ArgReader a(args, "round()", {"precision", "method"});
    const int64_t precision = require_int(a.get_or(0, Value::integer(0)), "round() precision");
    const std::string method = a.has(1) ? require_string(*a.get(1), "round() method") : "common";
    if (method != "common" && method != "ceil" && method != "floor") fail("method must be common, ceil or floor");
    if (!v.is_number()) fail("type " + type_name(v) + " doesn't define __round__ method");
    if (method == "common") {
        if (!v.is_float()) {
            int64_t i = v.to_int();
            if (precision >= 0) return Value::integer(i);
            if (precision < -18) return Value::integer(0);
            int64_t p = 1;
            for (int64_t k = 0; k < -precision; ++k) p *= 10;
            int64_t q = i / p, r = i % p;
            if (r < 0) r += p, q -= 1;
            if (2 * r > p || (2 * r == p && (q & 1))) q += 1;
            return Value::integer(checked_mul(q, p));
        }
        return Value::number(round_half_even(v.as_float(), precision));
    }
    const double p = std::pow(10.0, static_cast<double>(precision));
    const double scaled = v.to_double() * p;
    return Value::number((method == "ceil" ? std::ceil(scaled) : std::floor(scaled)) / p);
}

// --- sequences -------------------------------------------------------------------------------------------------

Value f_length(Interpreter&, const Value& v, CallArgs& args) {
    ArgReader a(args, "length()", {});
    switch (v.kind()) {
        case Value::Kind::undefined:
            return Value::integer(0);
        case Value::Kind::string:
            return Value::integer(static_cast<int64_t>(unicode::length(v.str())));
        case Value::Kind::list:
            return Value::integer(static_cast<int64_t>(v.list().items.size()));
        case Value::Kind::dict:
            return Value::integer(static_cast<int64_t>(v.dict().entries.size()));
        default:
            fail("object of type '" + type_name(v) + "' has no len()");
    }
}

Value f_first(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "first()", {});
    if (v.is_list())
        return v.list().items.empty() ? Value::undefined("No first item, sequence was empty.") : v.list().items.front();
    std::vector<Value> items = in.iterate(v);
    return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value f_last(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "last()", {});
    if (v.is_undefined()) fail("'Undefined' object is not reversible");
    std::vector<Value> items = in.iterate(v);
    return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value f_list(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "list()", {});
    return Value::make_list(in.iterate(v));
}

Value f_reverse(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "reverse()", {});
    if (v.is_string()) {
        std::vector<Value> chars = in.iterate(v);
        std::string out;
        for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += it->str();
        return Value::text(std::move(out));
    }
    std::vector<Value> items = in.iterate(v);
    std::reverse(items.begin(), items.end());
    return Value::make_list(std::move(items));
}

Value f_join(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "join()", {"d", "attribute"});
    const std::string sep = soft_str(in, a.get_or(0, Value::text("")));
    const std::vector<Value> parts = attribute_parts(a.get_or(1, Value::none()));
    std::string out;
    bool first = true;
    for (const Value& item : in.iterate(v)) {
        if (!first) {
            in.budget().check_size(out.size() + sep.size());  // before the separator is appended
            out += sep;
        }
        first = false;
        const Value& part = parts.empty() ? item : lookup_path(in, item, parts, nullptr);
        if (part.is_string()) in.budget().check_size(out.size() + part.str().size());
        append_str(out, part, in.budget());
        in.budget().check_size(out.size());
    }
    return Value::text(std::move(out));
}

Value f_items(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "items()", {});
    if (v.is_undefined()) return Value::make_list(std::vector<Value>{});
    if (!v.is_dict()) fail("Can only get item pairs from a mapping.");
    std::vector<Value> pairs;
    for (const auto& [k, item] : v.dict().entries) pairs.push_back(Value::make_list({k, item}, true));
    in.budget().step(pairs.size());
    return Value::make_list(std::move(pairs));
}

Value f_dictsort(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "dictsort()", {"case_sensitive", "by", "reverse"});
    const bool case_sensitive = truthy(a.get_or(0, Value::boolean(false)));
    const std::string by = a.has(1) ? soft_str(in, *a.get(1)) : "key";
    const bool reverse = truthy(a.get_or(2, Value::boolean(false)));
    if (by != "key" && by != "value") fail("You can only sort by either \"key\" or \"value\"");
    if (v.is_undefined()) fail(v.undefined_message());
    if (!v.is_dict()) fail("'" + type_name(v) + "' object has no attribute 'items'");
    std::vector<Value> pairs, keys;
    for (const auto& [k, item] : v.dict().entries) {
        pairs.push_back(Value::make_list({k, item}, true));
        const Value& key = by == "key" ? k : item;
        keys.push_back(case_sensitive ? key : ignore_case(key));
    }
    return sorted_by_keys(in, pairs, keys, reverse);
}

// Keys for sort/unique/min/max: one attribute path, or several separated by commas (sort only).
Value sort_key(Interpreter& in, const Value& item, const std::vector<std::vector<Value>>& paths, bool case_sensitive) {
    if (paths.empty()) return case_sensitive ? item : ignore_case(item);
    if (paths.size() == 1) {
        const Value k = lookup_path(in, item, paths[0], nullptr);
        return case_sensitive ? k : ignore_case(k);
    }
    std::vector<Value> parts;
    for (const auto& p : paths) {
        const Value k = lookup_path(in, item, p, nullptr);
        parts.push_back(case_sensitive ? k : ignore_case(k));
    }
    return Value::make_list(std::move(parts));
}

std::vector<std::vector<Value>> attribute_paths(const Value& attribute, bool allow_several) {
    std::vector<std::vector<Value>> paths;
    if (attribute.is_none() || attribute.is_undefined()) return paths;
    if (allow_several && attribute.is_string()) {
        for (const std::string& part : pystr::split(attribute.str(), std::string(","), -1))
            paths.push_back(attribute_parts(Value::text(part)));
    } else {
        paths.push_back(attribute_parts(attribute));
    }
    return paths;
}

Value f_sort(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "sort()", {"reverse", "case_sensitive", "attribute"});
    const bool reverse = truthy(a.get_or(0, Value::boolean(false)));
    const bool case_sensitive = truthy(a.get_or(1, Value::boolean(false)));
    const auto paths = attribute_paths(a.get_or(2, Value::none()), true);
    std::vector<Value> items = in.iterate(v);
    std::vector<Value> keys;
    for (const Value& item : items) keys.push_back(sort_key(in, item, paths, case_sensitive));
    return sorted_by_keys(in, items, keys, reverse);
}

Value f_unique(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "unique()", {"case_sensitive", "attribute"});
    const bool case_sensitive = truthy(a.get_or(0, Value::boolean(false)));
    const auto paths = attribute_paths(a.get_or(1, Value::none()), false);
    std::vector<Value> out, seen;
    for (const Value& item : in.iterate(v)) {
        const Value key = sort_key(in, item, paths, case_sensitive);
        if (!is_hashable(key)) fail("unhashable type: '" + type_name(key) + "'");
        bool found = false;
        for (const Value& s : seen) {
            in.budget().step();
            if (equal(s, key, in.budget())) {
                found = true;
                break;
            }
        }
        if (!found) {
            seen.push_back(key);
            out.push_back(item);
        }
    }
    return Value::make_list(std::move(out));
}

Value min_or_max(Interpreter& in, const Value& v, CallArgs& args, bool want_max) {
    ArgReader a(args, want_max ? "max()" : "min()", {"case_sensitive", "attribute"});
    const bool case_sensitive = truthy(a.get_or(0, Value::boolean(false)));
    const auto paths = attribute_paths(a.get_or(1, Value::none()), false);
    std::vector<Value> items = in.iterate(v);
    if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
    size_t best = 0;
    Value best_key = sort_key(in, items[0], paths, case_sensitive);
    for (size_t i = 1; i < items.size(); ++i) {
        Value key = sort_key(in, items[i], paths, case_sensitive);
        const bool better =
            want_max ? compare(key, best_key, ">", in.budget()) != 0 : compare(key, best_key, "<", in.budget()) != 0;
        if (better) {
            best = i;
            best_key = std::move(key);
        }
    }
    return items[best];
}

Value f_min(Interpreter& in, const Value& v, CallArgs& args) {
    return min_or_max(in, v, args, false);
}
Value f_max(Interpreter& in, const Value& v, CallArgs& args) {
    return min_or_max(in, v, args, true);
}

Value f_sum(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "sum()", {"attribute", "start"});
    const std::vector<Value> parts = attribute_parts(a.get_or(0, Value::none()));
    Value total = a.get_or(1, Value::integer(0));
    if (total.is_string()) fail("sum() can't sum strings [use ''.join(seq) instead]");
    for (const Value& item : in.iterate(v))
        total =
            binary_op(BinaryOp::add, total, parts.empty() ? item : lookup_path(in, item, parts, nullptr), in.budget());
    return total;
}

Value f_map(Interpreter& in, const Value& v, CallArgs& args) {
    std::vector<Value> out;
    const bool by_attribute =
        args.positional.empty() &&
        std::any_of(args.keywords.begin(), args.keywords.end(), [](const auto& kw) { return kw.first == "attribute"; });
    if (by_attribute) {
        Value attribute, fallback;
        bool has_default = false;
        for (const auto& [k, val] : args.keywords) {
            if (k == "attribute")
                attribute = val;
            else if (k == "default")
                fallback = val, has_default = true;
            else
                fail("Unexpected keyword argument '" + k + "'");
        }
        const std::vector<Value> parts = attribute_parts(attribute);
        const bool use_default = has_default && !fallback.is_none();
        for (const Value& item : in.iterate(v))
            out.push_back(lookup_path(in, item, parts, use_default ? &fallback : nullptr));
        return Value::make_list(std::move(out));
    }
    if (args.positional.empty()) fail("map requires a filter argument");
    const std::string name = soft_str(in, args.positional[0]);
    if (!has_filter(name)) fail("no filter named '" + name + "'");
    for (const Value& item : in.iterate(v)) {
        CallArgs rest;
        rest.positional.assign(args.positional.begin() + 1, args.positional.end());
        rest.keywords = args.keywords;
        out.push_back(apply_filter(in, name, item, rest));
    }
    return Value::make_list(std::move(out));
}

Value select_or_reject(Interpreter& in, const Value& v, CallArgs& args, bool select, bool by_attribute) {
    std::vector<Value> out;
    if (!truthy(v)) return Value::make_list(std::vector<Value>{});
    size_t next = 0;
    std::vector<Value> parts;
    if (by_attribute) {
        if (args.positional.empty()) fail("Missing parameter for attribute name");
        parts = attribute_parts(args.positional[0]);
        next = 1;
    }
    std::string test;
    if (args.positional.size() > next) {
        test = soft_str(in, args.positional[next]);
        if (!has_test(test)) fail("no test named '" + test + "'");
    }
    for (const Value& item : in.iterate(v)) {
        const Value subject = by_attribute ? lookup_path(in, item, parts, nullptr) : item;
        bool ok;
        if (test.empty()) {
            ok = truthy(subject);
        } else {
            CallArgs rest;
            rest.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(next) + 1,
                                   args.positional.end());
            rest.keywords = args.keywords;
            ok = apply_test(in, test, subject, rest);
        }
        if (ok == select) out.push_back(item);
    }
    return Value::make_list(std::move(out));
}

Value f_select(Interpreter& in, const Value& v, CallArgs& args) {
    return select_or_reject(in, v, args, true, false);
}
Value f_reject(Interpreter& in, const Value& v, CallArgs& args) {
    return select_or_reject(in, v, args, false, false);
}
Value f_selectattr(Interpreter& in, const Value& v, CallArgs& args) {
    return select_or_reject(in, v, args, true, true);
}
Value f_rejectattr(Interpreter& in, const Value& v, CallArgs& args) {
    return select_or_reject(in, v, args, false, true);
}

Value f_default(Interpreter&, const Value& v, CallArgs& args) {
    ArgReader a(args, "default()", {"default_value", "boolean"});
    const Value fallback = a.get_or(0, Value::text(""));
    const bool boolean = truthy(a.get_or(1, Value::boolean(false)));
    if (v.is_undefined() || (boolean && !truthy(v))) return fallback;
    return v;
}

Value f_attr(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "attr()", {"name"});
    if (!a.has(0)) fail("attr() missing required argument 'name'");
    const std::string name = soft_str(in, *a.get(0));
    if (v.is_object() || has_method(v, name)) return in.get_attr(v, name);
    if (v.is_undefined()) fail(v.undefined_message());
    return Value::undefined("'" + object_type_repr(v) + "' has no attribute '" + name + "'");
}

Value f_batch(Interpreter& in, const Value& v, CallArgs& args) {
    ArgReader a(args, "batch()", {"linecount", "fill_with"});
    const int64_t size = require_int(a.get_or(0, Value::integer(1)), "batch() linecount");
    if (size <= 0) fail("batch() linecount must be positive");
    std::vector<Value> out, current;
    for (const Value& item : in.iterate(v)) {
        if (static_cast<int64_t>(current.size()) == size) {
            out.push_back(Value::make_list(std::move(current)));
            current.clear();
        }
        current.push_back(item);
    }
    if (!current.empty()) {
        if (a.has(1) && !a.get(1)->is_none())
            while (static_cast<int64_t>(current.size()) < size) current.push_back(*a.get(1));
        out.push_back(Value::make_list(std::move(current)));
    }
    return Value::make_list(std::move(out));
}

struct FilterEntry {
    std::string_view name;
    Filter fn;
};

constexpr FilterEntry filters[] = {
    {"abs", f_abs},           {"attr", f_attr},
    {"batch", f_batch},       {"capitalize", f_capitalize},
    {"center", f_center},     {"count", f_length},
    {"d", f_default},         {"default", f_default},
    {"dictsort", f_dictsort}, {"e", f_escape},
    {"escape", f_escape},     {"first", f_first},
    {"float", f_float},       {"forceescape", f_forceescape},
    {"format", f_format},     {"indent", f_indent},
    {"int", f_int},           {"items", f_items},
    {"join", f_join},         {"last", f_last},
    {"length", f_length},     {"list", f_list},
    {"lower", f_lower},       {"map", f_map},
    {"max", f_max},           {"min", f_min},
    {"reject", f_reject},     {"rejectattr", f_rejectattr},
    {"replace", f_replace},   {"reverse", f_reverse},
    {"round", f_round},       {"safe", f_safe},
    {"select", f_select},     {"selectattr", f_selectattr},
    {"sort", f_sort},         {"string", f_string},
    {"sum", f_sum},           {"title", f_title},
    {"tojson", f_tojson},     {"trim", f_trim},
    {"truncate", f_truncate}, {"unique", f_unique},
    {"upper", f_upper},       {"wordcount", f_wordcount},
};

}  // namespace

bool has_filter(std::string_view name) {
    return find_named(filters, name) != nullptr;
}

Value apply_filter(Interpreter& interp, std::string_view name, const Value& operand, CallArgs& args) {
    const FilterEntry& f = named_entry(filters, name, "filter");
    interp.budget().step();
    Value result = f.fn(interp, operand, args);
    if (result.is_string()) interp.budget().charge_bytes(result.str().size());
    return result;
}

}  // namespace ember::chat::jinja
