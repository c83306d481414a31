// SPDX-License-Identifier: MIT
// Jinja's tests (`x is defined`, `x is divisibleby 3`, ...), as jinja2 3.1 defines them.
#include "jinja/budget.h"
#include "jinja/interpreter.h"
#include "jinja/builtins.h"
#include "jinja/pystr.h"

namespace ember::chat::jinja {

namespace {

using Test = bool (*)(Interpreter&, const Value&, CallArgs&);

const Value& one_arg(const CallArgs& args, std::string_view test) {
    if (args.positional.size() + args.keywords.size() != 1)
        fail("test '" + std::string(test) + "' takes exactly one argument");
    return args.positional.empty() ? args.keywords[0].second : args.positional[0];
}

void no_args(const CallArgs& args, std::string_view test) {
    if (!args.positional.empty() || !args.keywords.empty()) fail("test '" + std::string(test) + "' takes no arguments");
}

Value python_mod(const Value& a, const Value& b, Budget& budget) {
    return binary_op(BinaryOp::mod, a, b, budget);
}

bool t_odd(Interpreter& in, const Value& v, CallArgs& args) {
    no_args(args, "odd");
    return equal(python_mod(v, Value::integer(2), in.budget()), Value::integer(1), in.budget());
}
bool t_even(Interpreter& in, const Value& v, CallArgs& args) {
    no_args(args, "even");
    return equal(python_mod(v, Value::integer(2), in.budget()), Value::integer(0), in.budget());
}
bool t_divisibleby(Interpreter& in, const Value& v, CallArgs& args) {
    return equal(python_mod(v, one_arg(args, "divisibleby"), in.budget()), Value::integer(0), in.budget());
}
bool t_defined(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "defined"), !v.is_undefined();
}
bool t_undefined(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "undefined"), v.is_undefined();
}
bool t_none(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "none"), v.is_none();
}
bool t_boolean(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "boolean"), v.is_bool();
}
bool t_false(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "false"), v.is_bool() && !v.as_bool();
}
bool t_true(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "true"), v.is_bool() && v.as_bool();
}
bool t_integer(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "integer"), v.is_int();
}
bool t_float(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "float"), v.is_float();
}
bool t_number(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "number"), v.is_number();
}
bool t_string(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "string"), v.is_string();
}
bool t_mapping(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "mapping"), v.is_dict();
}
// Undefined counts as iterable and as a sequence in jinja2 (it has __iter__, __len__ and __getitem__).
bool t_iterable(Interpreter&, const Value& v, CallArgs& args) {
    no_args(args, "iterable");
    return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict() ||
           (v.is_object() && v.object().type_name() == "LoopContext");
}
bool t_sequence(Interpreter&, const Value& v, CallArgs& args) {
    no_args(args, "sequence");
    return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict();
}
bool t_callable(Interpreter&, const Value& v, CallArgs& args) {
    no_args(args, "callable");
    return v.is_undefined() || (v.is_object() && v.object().callable());
}
bool t_sameas(Interpreter& in, const Value& v, CallArgs& args) {
    const Value& other = one_arg(args, "sameas");
    if (v.identity() || other.identity()) return v.identity() == other.identity();
    if (v.kind() != other.kind()) return false;
    if (v.is_float()) return false;  // two float objects are never the same object
    if (v.is_string()) return v.str_ptr() == other.str_ptr();
    return equal(v, other, in.budget());
}
bool t_escaped(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "escaped"), v.is_markup();
}
bool t_in(Interpreter& in, const Value& v, CallArgs& args) {
    return contains(one_arg(args, "in"), v, in.budget());
}
bool t_lower(Interpreter& in, const Value& v, CallArgs& args) {
    no_args(args, "lower");
    return pystr::is_lower(to_str(v, in.budget()));
}
bool t_upper(Interpreter& in, const Value& v, CallArgs& args) {
    no_args(args, "upper");
    return pystr::is_upper(to_str(v, in.budget()));
}
bool t_filter(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "filter"), v.is_string() && has_filter(v.str());
}
bool t_test(Interpreter&, const Value& v, CallArgs& args) {
    return no_args(args, "test"), v.is_string() && has_test(v.str());
}
bool t_eq(Interpreter& in, const Value& v, CallArgs& args) {
    return equal(v, one_arg(args, "eq"), in.budget());
}
bool t_ne(Interpreter& in, const Value& v, CallArgs& args) {
    return !equal(v, one_arg(args, "ne"), in.budget());
}
bool t_lt(Interpreter& in, const Value& v, CallArgs& args) {
    return compare(v, one_arg(args, "lt"), "<", in.budget()) != 0;
}
bool t_le(Interpreter& in, const Value& v, CallArgs& args) {
    return compare(v, one_arg(args, "le"), "<=", in.budget()) != 0;
}
bool t_gt(Interpreter& in, const Value& v, CallArgs& args) {
    return compare(v, one_arg(args, "gt"), ">", in.budget()) != 0;
}
bool t_ge(Interpreter& in, const Value& v, CallArgs& args) {
    return compare(v, one_arg(args, "ge"), ">=", in.budget()) != 0;
}

struct TestEntry {
    std::string_view name;
    Test fn;
};

constexpr TestEntry tests[] = {
    {"odd", t_odd},
    {"even", t_even},
    {"divisibleby", t_divisibleby},
    {"defined", t_defined},
    {"undefined", t_undefined},
    {"none", t_none},
    {"boolean", t_boolean},
    {"false", t_false},
    {"true", t_true},
    {"integer", t_integer},
    {"float", t_float},
    {"number", t_number},
    {"string", t_string},
    {"mapping", t_mapping},
    {"iterable", t_iterable},
    {"sequence", t_sequence},
    {"callable", t_callable},
    {"sameas", t_sameas},
    {"escaped", t_escaped},
    {"in", t_in},
    {"lower", t_lower},
    {"upper", t_upper},
    {"filter", t_filter},
    {"test", t_test},
    {"==", t_eq},
    {"eq", t_eq},
    {"equalto", t_eq},
    {"!=", t_ne},
    {"ne", t_ne},
    {"<", t_lt},
    {"lt", t_lt},
    {"lessthan", t_lt},
    {"<=", t_le},
    {"le", t_le},
    {">", t_gt},
    {"gt", t_gt},
    {"greaterthan", t_gt},
    {">=", t_ge},
    {"ge", t_ge},
};

const TestEntry* find_test(std::string_view name) {
    for (const auto& t : tests)
        if (t.name == name) return &t;
    return nullptr;
}

}  // namespace

bool has_test(std::string_view name) {
    return find_test(name) != nullptr;
}

bool apply_test(Interpreter& interp, std::string_view name, const Value& operand, CallArgs& args) {
    const TestEntry* t = find_test(name);
    if (!t) fail("no test named '" + std::string(name) + "'");
    interp.budget().step();
    return t->fn(interp, operand, args);
}

}  // namespace ember::chat::jinja
