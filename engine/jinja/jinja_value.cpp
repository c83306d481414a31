// SPDX-License-Identifier: MIT
// The interpreter's values: construction, conversion, comparison and Python-style printing.
#include "jinja/jinja_value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <unordered_set>

#include "jinja/budget.h"
#include "jinja/unicode.h"

namespace ember::chat::jinja {

namespace {

// Releases a tree of values without recursion: children of containers this holds the last reference to are
// moved out and released in turn.
void release_all(std::vector<Value>& work) {
    while (!work.empty()) {
        Value v = std::move(work.back());
        work.pop_back();
        v.release_children_into(work);
    }
}

bool keys_equal(const Value& a, const Value& b) {
    if (a.is_string() && b.is_string()) return a.str() == b.str();
    if (a.is_tuple() && b.is_tuple()) {
        const auto& x = a.list().items;
        const auto& y = b.list().items;
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i)
            if (!keys_equal(x[i], y[i])) return false;
        return true;
    }
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return a.to_double() == b.to_double();
        return a.to_int() == b.to_int();
    }
    return a.is_none() && b.is_none();
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Value

Value Value::undefined(std::string hint) {
    return Value(Undefined{std::make_shared<const std::string>(std::move(hint))});
}

Value Value::text(std::string s, bool markup) {
    return Value(Text{std::make_shared<const std::string>(std::move(s)), markup});
}

Value Value::make_list(std::vector<Value> items, bool tuple) {
    return Value(std::make_shared<List>(std::move(items), tuple));
}

Value Value::make_dict() {
    return Value(std::make_shared<Dict>());
}

bool Value::is_tuple() const {
    return is_list() && list().tuple;
}

double Value::to_double() const {
    switch (kind()) {
        case Kind::boolean:
            return as_bool() ? 1.0 : 0.0;
        case Kind::integer:
            return static_cast<double>(as_int());
        case Kind::floating:
            return as_float();
        default:
            return 0.0;
    }
}

int64_t Value::to_int() const {
    switch (kind()) {
        case Kind::boolean:
            return as_bool() ? 1 : 0;
        case Kind::integer:
            return as_int();
        default:
            return 0;
    }
}

std::string Value::undefined_message() const {
    const auto& hint = std::get<Undefined>(v_).hint;
    return hint ? *hint : "value is undefined";
}

const void* Value::identity() const {
    switch (kind()) {
        case Kind::list:
            return list_ptr().get();
        case Kind::dict:
            return dict_ptr().get();
        case Kind::object:
            return object_ptr().get();
        default:
            return nullptr;
    }
}

void Value::release_children_into(std::vector<Value>& out) {
    switch (kind()) {
        case Kind::list: {
            auto& p = std::get<ListPtr>(v_);
            if (p.use_count() == 1) {
                for (auto& item : p->items) out.push_back(std::move(item));
                p->items.clear();
            }
            break;
        }
        case Kind::dict: {
            auto& p = std::get<DictPtr>(v_);
            if (p.use_count() == 1) {
                for (auto& [k, item] : p->entries) out.push_back(std::move(item));
                p->entries.clear();
            }
            break;
        }
        case Kind::object: {
            auto& p = std::get<ObjectPtr>(v_);
            if (p.use_count() == 1) p->release_children_into(out);
            break;
        }
        default:
            break;
    }
}

List::~List() {
    if (items.empty()) return;
    std::vector<Value> work = std::move(items);
    release_all(work);
}

Dict::~Dict() {
    if (entries.empty()) return;
    std::vector<Value> work;
    work.reserve(entries.size());
    for (auto& [k, v] : entries) work.push_back(std::move(v));
    entries.clear();
    release_all(work);
}

const Value* Dict::find(const Value& key) const {
    if (key.is_string()) return find(std::string_view(key.str()));
    if (!is_hashable(key)) return nullptr;
    for (const auto& [k, v] : entries)
        if (keys_equal(k, key)) return &v;
    return nullptr;
}

const Value* Dict::find(std::string_view key) const {
    for (const auto& [k, v] : entries)
        if (k.is_string() && k.str() == key) return &v;
    return nullptr;
}

Value* Dict::find(std::string_view key) {
    for (auto& [k, v] : entries)
        if (k.is_string() && k.str() == key) return &v;
    return nullptr;
}

void Dict::set(Value key, Value value) {
    for (auto& [k, v] : entries) {
        if (keys_equal(k, key)) {
            v = std::move(value);
            return;
        }
    }
    entries.emplace_back(std::move(key), std::move(value));
}

void Dict::set(std::string_view key, Value value) {
    if (Value* existing = find(key)) {
        *existing = std::move(value);
        return;
    }
    entries.emplace_back(Value::text(std::string(key)), std::move(value));
}

Value Object::call(Interpreter&, CallArgs&) {
    fail("'" + std::string(type_name()) + "' object is not callable");
}

bool Object::attribute(std::string_view, Interpreter&, Value&) {
    return false;
}

Value Object::call_method(std::string_view name, Interpreter&, CallArgs&) {
    fail("'" + std::string(type_name()) + "' object has no method '" + std::string(name) + "'");
}

void Object::repr(std::string& out, Budget&, int) const {
    out += "<" + std::string(type_name()) + " object>";
}

// ---------------------------------------------------------------------------------------------------------------
// Types and truth

std::string type_name(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::undefined:
            return "Undefined";
        case Value::Kind::none:
            return "NoneType";
        case Value::Kind::boolean:
            return "bool";
        case Value::Kind::integer:
            return "int";
        case Value::Kind::floating:
            return "float";
        case Value::Kind::string:
            return v.is_markup() ? "Markup" : "str";
        case Value::Kind::list:
            return v.is_tuple() ? "tuple" : "list";
        case Value::Kind::dict:
            return "dict";
        case Value::Kind::object:
            return std::string(v.object().type_name());
    }
    return "object";
}

std::string object_type_repr(const Value& v) {
    if (v.is_none()) return "None";
    return type_name(v) + " object";
}

bool truthy(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::undefined:
        case Value::Kind::none:
            return false;
        case Value::Kind::boolean:
            return v.as_bool();
        case Value::Kind::integer:
            return v.as_int() != 0;
        case Value::Kind::floating:
            return v.as_float() != 0.0;
        case Value::Kind::string:
            return !v.str().empty();
        case Value::Kind::list:
            return !v.list().items.empty();
        case Value::Kind::dict:
            return !v.dict().entries.empty();
        case Value::Kind::object:
            return true;
    }
    return false;
}

bool is_hashable(const Value& v) {
    switch (v.kind()) {
        case Value::Kind::none:
        case Value::Kind::boolean:
        case Value::Kind::integer:
        case Value::Kind::floating:
        case Value::Kind::string:
            return true;
        case Value::Kind::list: {
            if (!v.is_tuple()) return false;
            for (const auto& item : v.list().items)
                if (!is_hashable(item)) return false;
            return true;
        }
        default:
            return false;
    }
}

// ---------------------------------------------------------------------------------------------------------------
// str() and repr()

std::string float_repr(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    if (d == 0.0) return std::signbit(d) ? "-0.0" : "0.0";
    // Shortest round-trip digits, then Python's layout: positional for 1e-4 <= |d| < 1e16, else exponent.
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    std::string sign;
    if (sci[0] == '-') {
        sign = "-";
        sci.erase(0, 1);
    }
    const size_t e = sci.find('e');
    std::string digits = sci.substr(0, e);
    digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
    const int exponent = std::stoi(sci.substr(e + 1));
    std::string out = sign;
    if (exponent >= -4 && exponent < 16) {
        if (exponent < 0) {
            out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
        } else if (static_cast<size_t>(exponent + 1) >= digits.size()) {
            out += digits + std::string(static_cast<size_t>(exponent + 1) - digits.size(), '0') + ".0";
        } else {
            out += digits.substr(0, static_cast<size_t>(exponent + 1)) + "." +
                   digits.substr(static_cast<size_t>(exponent + 1));
        }
        return out;
    }
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp;
}

void append_string_repr(std::string& out, std::string_view s) {
    const bool has_single = s.find('\'') != std::string_view::npos;
    const bool has_double = s.find('"') != std::string_view::npos;
    const char quote = (has_single && !has_double) ? '"' : '\'';
    out += quote;
    for (size_t i = 0; i < s.size();) {
        const char32_t c = unicode::next(s, i);
        if (c == static_cast<char32_t>(quote) || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (unicode::is_printable(c)) {
            unicode::append(out, c);
        } else {
            unicode::append_escape(out, c);
        }
    }
    out += quote;
}

void append_repr(std::string& out, const Value& v, Budget& budget, int depth) {
    budget.check_value_depth(depth);
    switch (v.kind()) {
        case Value::Kind::undefined:
            out += "Undefined";
            return;
        case Value::Kind::string:
            append_string_repr(out, v.str());
            budget.check_size(out.size());
            return;
        case Value::Kind::list: {
            const List& l = v.list();
            out += l.tuple ? '(' : '[';
            for (size_t i = 0; i < l.items.size(); ++i) {
                if (i) out += ", ";
                append_repr(out, l.items[i], budget, depth + 1);
            }
            if (l.tuple && l.items.size() == 1) out += ',';
            out += l.tuple ? ')' : ']';
            budget.check_size(out.size());
            return;
        }
        case Value::Kind::dict: {
            out += '{';
            bool first = true;
            for (const auto& [k, item] : v.dict().entries) {
                if (!first) out += ", ";
                first = false;
                append_repr(out, k, budget, depth + 1);
                out += ": ";
                append_repr(out, item, budget, depth + 1);
            }
            out += '}';
            budget.check_size(out.size());
            return;
        }
        case Value::Kind::object:
            v.object().repr(out, budget, depth + 1);
            return;
        default:
            append_str(out, v, budget, depth);
            return;
    }
}

void append_str(std::string& out, const Value& v, Budget& budget, int depth) {
    switch (v.kind()) {
        case Value::Kind::undefined:
            return;
        case Value::Kind::none:
            out += "None";
            return;
        case Value::Kind::boolean:
            out += v.as_bool() ? "True" : "False";
            return;
        case Value::Kind::integer:
            out += std::to_string(v.as_int());
            return;
        case Value::Kind::floating:
            out += float_repr(v.as_float());
            return;
        case Value::Kind::string:
            out += v.str();
            return;
        default:
            append_repr(out, v, budget, depth);
            return;
    }
}

std::string to_str(const Value& v, Budget& budget) {
    if (v.is_string()) return v.str();
    std::string out;
    append_str(out, v, budget);
    return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Comparison

namespace {

// Exact comparison of an int64 with a double (both finite or not): -1, 0, 1, or 2 when unordered (NaN).
int compare_int_double(int64_t i, double d) {
    if (std::isnan(d)) return 2;
    const long double li = static_cast<long double>(i);
    const long double ld = d;
    return li < ld ? -1 : (li > ld ? 1 : 0);
}

int compare_numbers(const Value& a, const Value& b) {
    if (!a.is_float() && !b.is_float()) {
        const int64_t x = a.to_int(), y = b.to_int();
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (a.is_float() && b.is_float()) {
        const double x = a.as_float(), y = b.as_float();
        if (std::isnan(x) || std::isnan(y)) return 2;
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    if (a.is_float()) {
        const int r = compare_int_double(b.to_int(), a.as_float());
        return r == 2 ? 2 : -r;
    }
    return compare_int_double(a.to_int(), b.as_float());
}

bool apply_op(int cmp, std::string_view op) {
    if (cmp == 2) return false;  // NaN: every ordering is false
    if (op == "<") return cmp < 0;
    if (op == "<=") return cmp <= 0;
    if (op == ">") return cmp > 0;
    return cmp >= 0;
}

}  // namespace

bool equal(const Value& a, const Value& b, Budget& budget, int depth) {
    budget.check_value_depth(depth);
    if (a.is_number() && b.is_number()) return compare_numbers(a, b) == 0;
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case Value::Kind::undefined:
        case Value::Kind::none:
            return true;
        case Value::Kind::string:
            return a.str() == b.str();
        case Value::Kind::list: {
            const List& x = a.list();
            const List& y = b.list();
            if (x.tuple != y.tuple || x.items.size() != y.items.size()) return false;
            if (&x == &y) return true;
            budget.step(x.items.size());
            for (size_t i = 0; i < x.items.size(); ++i)
                if (!equal(x.items[i], y.items[i], budget, depth + 1)) return false;
            return true;
        }
        case Value::Kind::dict: {
            const Dict& x = a.dict();
            const Dict& y = b.dict();
            if (x.entries.size() != y.entries.size()) return false;
            if (&x == &y) return true;
            budget.step(x.entries.size());
            for (const auto& [k, v] : x.entries) {
                const Value* other = y.find(k);
                if (!other || !equal(v, *other, budget, depth + 1)) return false;
            }
            return true;
        }
        case Value::Kind::object:
            return a.identity() == b.identity();
        default:
            return false;
    }
}

int compare(const Value& a, const Value& b, std::string_view op, Budget& budget, int depth) {
    budget.check_value_depth(depth);
    if (a.is_undefined()) fail(a.undefined_message());
    if (b.is_undefined()) fail(b.undefined_message());
    if (a.is_number() && b.is_number()) return apply_op(compare_numbers(a, b), op) ? 1 : 0;
    if (a.is_string() && b.is_string()) return apply_op(a.str().compare(b.str()), op) ? 1 : 0;
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
        const auto& x = a.list().items;
        const auto& y = b.list().items;
        budget.step(std::min(x.size(), y.size()));
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (!equal(x[i], y[i], budget, depth + 1)) return compare(x[i], y[i], op, budget, depth + 1);
        }
        const int cmp = x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
        return apply_op(cmp, op) ? 1 : 0;
    }
    fail("'" + std::string(op) + "' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) +
         "'");
}

bool reaches(const Value& from, const void* target, Budget& budget) {
    if (!target || !from.identity()) return false;
    std::vector<const Value*> stack{&from};
    std::unordered_set<const void*> seen;
    bool found = false;
    while (!stack.empty() && !found) {
        const Value* v = stack.back();
        stack.pop_back();
        const void* id = v->identity();
        if (!id) continue;
        if (id == target) return true;
        if (!seen.insert(id).second) continue;
        budget.step();
        switch (v->kind()) {
            case Value::Kind::list:
                for (const auto& item : v->list().items) stack.push_back(&item);
                break;
            case Value::Kind::dict:
                for (const auto& [k, item] : v->dict().entries) stack.push_back(&item);
                break;
            case Value::Kind::object:
                v->object().for_each_child([&](const Value& child) {
                    if (child.identity() == target) found = true;
                    stack.push_back(&child);
                });
                break;
            default:
                break;
        }
    }
    return found;
}

// ---------------------------------------------------------------------------------------------------------------
// JSON input

namespace {

Value from_json_at(const nlohmann::ordered_json& j, Budget& budget, std::string_view where, int depth) {
    budget.check_value_depth(depth, where);
    budget.step();
    using T = nlohmann::ordered_json::value_t;
    switch (j.type()) {
        case T::null:
            return Value::none();
        case T::boolean:
            return Value::boolean(j.get<bool>());
        case T::number_integer:
            return Value::integer(j.get<int64_t>());
        case T::number_unsigned: {
            const uint64_t u = j.get<uint64_t>();
            if (u > static_cast<uint64_t>(INT64_MAX)) return Value::number(static_cast<double>(u));
            return Value::integer(static_cast<int64_t>(u));
        }
        case T::number_float:
            return Value::number(j.get<double>());
        case T::string: {
            const auto& s = j.get_ref<const std::string&>();
            if (unicode::find_invalid(s) != std::string::npos) fail(std::string(where) + " holds invalid UTF-8");
            budget.charge_bytes(s.size());
            return Value::text(s);
        }
        case T::array: {
            std::vector<Value> items;
            items.reserve(j.size());
            for (const auto& item : j) items.push_back(from_json_at(item, budget, where, depth + 1));
            return Value::make_list(std::move(items));
        }
        case T::object: {
            auto d = std::make_shared<Dict>();
            d->entries.reserve(j.size());
            for (const auto& [key, item] : j.items()) {
                if (unicode::find_invalid(key) != std::string::npos) fail(std::string(where) + " holds invalid UTF-8");
                d->entries.emplace_back(Value::text(key), from_json_at(item, budget, where, depth + 1));
            }
            return Value::make_dict(std::move(d));
        }
        default:
            fail(std::string(where) + " holds a value that is not JSON data");
    }
}

}  // namespace

Value from_json(const nlohmann::ordered_json& j, Budget& budget, std::string_view where) {
    return from_json_at(j, budget, where, 0);
}

}  // namespace ember::chat::jinja
