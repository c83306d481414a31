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

Value python_mod(const Value& a, const Value& b, Budget& budget) {
    return binary_op(BinaryOp::mod, a, b, budget);
}

// The tests below take no arguments unless they read one with one_arg; apply_test checks that for them.

bool t_odd(Interpreter& in, const Value& v, CallArgs&) {
    return equal(python_mod(v, Value::integer(2), in.budget()), Value::integer(1), in.budget());
}
bool t_even(Interpreter& in, const Value& v, CallArgs&) {
    return equal(python_mod(v, Value::integer(2), in.budget()), Value::integer(0), in.budget());
}
bool t_divisibleby(Interpreter& in, const Value& v, CallArgs& args) {
    return equal(python_mod(v, one_arg(args, "divisibleby"), in.budget()), Value::integer(0), in.budget());
}
bool t_defined(Interpreter&, const Value& v, CallArgs&) { return !v.is_undefined(); }
bool t_false(Interpreter&, const Value& v, CallArgs&) { return v.is_bool() && !v.as_bool(); }
bool t_true(Interpreter&, const Value& v, CallArgs&) { return v.is_bool() && v.as_bool(); }
// The tests of a value's kind: none, boolean, integer, float, number, string, mapping, escaped, undefined.
template <bool (Value::*kIsKind)() const>
bool t_kind(Interpreter&, const Value& v, CallArgs&) {
    return (v.*kIsKind)();
}
// Undefined counts as iterable and as a sequence in jinja2 (it has __iter__, __len__ and __getitem__).
bool t_iterable(Interpreter&, const Value& v, CallArgs&) {
    return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict() ||
           (v.is_object() && v.object().type_name() == "LoopContext");
}
bool t_sequence(Interpreter&, const Value& v, CallArgs&) {
    return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict();
}
bool t_callable(Interpreter&, const Value& v, CallArgs&) {
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
bool t_lower(Interpreter& in, const Value& v, CallArgs&) { return pystr::is_lower(to_str(v, in.budget())); }
bool t_upper(Interpreter& in, const Value& v, CallArgs&) { return pystr::is_upper(to_str(v, in.budget())); }
bool t_filter(Interpreter&, const Value& v, CallArgs&) { return v.is_string() && has_filter(v.str()); }
bool t_test(Interpreter&, const Value& v, CallArgs&) { return v.is_string() && has_test(v.str()); }

// `eq`, `lt`, `in`, ... and their aliases; argument errors name the test the alias stands for.
constexpr std::string_view compare_test_name(CompareOp op) {
    switch (op) {
        case CompareOp::eq: return "eq";
        case CompareOp::ne: return "ne";
        case CompareOp::lt: return "lt";
        case CompareOp::le: return "le";
        case CompareOp::gt: return "gt";
        case CompareOp::ge: return "ge";
        default: return "in";
    }
}
template <CompareOp kOp>
bool t_compare(Interpreter& in, const Value& v, CallArgs& args) {
    return compare_op(kOp, v, one_arg(args, compare_test_name(kOp)), in.budget());
}

struct TestEntry {
    std::string_view name;
    Test fn;
    bool takes_no_arguments = true;
};

constexpr bool kOneArgument = false;

constexpr TestEntry tests[] = {
    {"odd", t_odd},
    {"even", t_even},
    {"divisibleby", t_divisibleby, kOneArgument},
    {"defined", t_defined},
    {"undefined", t_kind<&Value::is_undefined>},
    {"none", t_kind<&Value::is_none>},
    {"boolean", t_kind<&Value::is_bool>},
    {"false", t_false},
    {"true", t_true},
    {"integer", t_kind<&Value::is_int>},
    {"float", t_kind<&Value::is_float>},
    {"number", t_kind<&Value::is_number>},
    {"string", t_kind<&Value::is_string>},
    {"mapping", t_kind<&Value::is_dict>},
    {"iterable", t_iterable},
    {"sequence", t_sequence},
    {"callable", t_callable},
    {"sameas", t_sameas, kOneArgument},
    {"escaped", t_kind<&Value::is_markup>},
    {"in", t_compare<CompareOp::in>, kOneArgument},
    {"lower", t_lower},
    {"upper", t_upper},
    {"filter", t_filter},
    {"test", t_test},
    {"==", t_compare<CompareOp::eq>, kOneArgument},
    {"eq", t_compare<CompareOp::eq>, kOneArgument},
    {"equalto", t_compare<CompareOp::eq>, kOneArgument},
    {"!=", t_compare<CompareOp::ne>, kOneArgument},
    {"ne", t_compare<CompareOp::ne>, kOneArgument},
    {"<", t_compare<CompareOp::lt>, kOneArgument},
    {"lt", t_compare<CompareOp::lt>, kOneArgument},
    {"lessthan", t_compare<CompareOp::lt>, kOneArgument},
    {"<=", t_compare<CompareOp::le>, kOneArgument},
    {"le", t_compare<CompareOp::le>, kOneArgument},
    {">", t_compare<CompareOp::gt>, kOneArgument},
    {"gt", t_compare<CompareOp::gt>, kOneArgument},
    {"greaterthan", t_compare<CompareOp::gt>, kOneArgument},
    {">=", t_compare<CompareOp::ge>, kOneArgument},
    {"ge", t_compare<CompareOp::ge>, kOneArgument},
};

}  // namespace

bool has_test(std::string_view name) {
    return find_named(tests, name) != nullptr;
}

bool apply_test(Interpreter& interp, std::string_view name, const Value& operand, CallArgs& args) {
    const TestEntry& t = named_entry(tests, name, "test");
    interp.budget().step();
    if (t.takes_no_arguments && (!args.positional.empty() || !args.keywords.empty()))
        fail("test '" + std::string(name) + "' takes no arguments");
    return t.fn(interp, operand, args);
}

}  // namespace ember::chat::jinja
