// SPDX-License-Identifier: MIT
// The built-in library: operators with Python's semantics, filters, tests, the methods of str/list/dict, and
// the global functions (range, namespace, dict, cycler, joiner, raise_exception, strftime_now).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "jinja/ast.h"
#include "jinja/budget.h"
#include "jinja/jinja_value.h"

namespace ember::chat::jinja {

class Interpreter;

// --- operators (operators.cpp) ---------------------------------------------------------------------------------
Value binary_op(BinaryOp op, const Value& a, const Value& b, Budget& budget);
Value unary_op(UnaryOp op, const Value& v);
bool contains(const Value& container, const Value& item, Budget& budget);  // Python's `item in container`
// `left op right` for the comparison operators, which the `eq`, `lt`, `in`, ... tests share.
bool compare_op(CompareOp op, const Value& left, const Value& right, Budget& budget);
Value slice_value(const Value& v, const Value& start, const Value& stop, const Value& step, Budget& budget);
// Python integer operations that fail on int64 overflow instead of growing.
int64_t checked_add(int64_t a, int64_t b);
int64_t checked_mul(int64_t a, int64_t b);

// --- string formatting (format.cpp) ----------------------------------------------------------------------------
std::string percent_format(const std::string& format, const Value& args, Budget& budget);   // "%s" % args
std::string brace_format(const std::string& format, const CallArgs& args, Budget& budget);  // str.format

// --- filters, tests, methods, globals --------------------------------------------------------------------------
// The entry called `name` of a table of entries with a `name` field; nullptr when there is none.
template <typename Entry, size_t N>
const Entry* find_named(const Entry (&table)[N], std::string_view name) {
    for (const Entry& e : table)
        if (e.name == name) return &e;
    return nullptr;
}
// The entry called `name`; fails with "no KIND named 'NAME'" when the table has none.
template <typename Entry, size_t N>
const Entry& named_entry(const Entry (&table)[N], std::string_view name, std::string_view kind) {
    const Entry* e = find_named(table, name);
    if (!e) fail("no " + std::string(kind) + " named '" + std::string(name) + "'");
    return *e;
}
bool has_filter(std::string_view name);
Value apply_filter(Interpreter& interp, std::string_view name, const Value& operand, CallArgs& args);
bool has_test(std::string_view name);
bool apply_test(Interpreter& interp, std::string_view name, const Value& operand, CallArgs& args);
bool has_method(const Value& self, std::string_view name);
Value call_method(Interpreter& interp, const Value& self, std::string_view name, CallArgs& args);
bool find_global(std::string_view name, Value& out);

// --- argument binding ------------------------------------------------------------------------------------------
// Binds positional and keyword arguments to parameter names, Python style; `what` names the callee in errors.
class ArgReader {
public:
    ArgReader(const CallArgs& args, std::string what, std::initializer_list<std::string_view> names);
    const Value* get(size_t index) const { return values_[index]; }
    Value get_or(size_t index, Value fallback) const { return values_[index] ? *values_[index] : fallback; }
    bool has(size_t index) const { return values_[index] != nullptr; }

private:
    std::vector<const Value*> values_;
};

// Helpers shared by the library.
std::string require_string(const Value& v, std::string_view what);  // strings only
int64_t require_int(const Value& v, std::string_view what);         // int or bool
std::string html_escape(std::string_view s);                        // markupsafe.escape
// str.replace with its result size computed and charged first, so a blow-up is refused before it is built.
std::string checked_replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count,
                            Budget& budget);

}  // namespace ember::chat::jinja
