// SPDX-License-Identifier: MIT
// Arithmetic, containment and slicing with Python's semantics (floor division and modulo signs, str/list
// repetition, exact messages for type errors). Integers are 64-bit: overflow is an error, not a bigint.
#include <cmath>
#include <optional>

#include "jinja/budget.h"
#include "jinja/builtins.h"
#include "jinja/unicode.h"

namespace ember::chat::jinja {

namespace {

[[noreturn]] void unsupported(std::string_view op, const Value& a, const Value& b) {
    fail("unsupported operand type(s) for " + std::string(op) + ": '" + type_name(a) + "' and '" + type_name(b) + "'");
}

[[noreturn]] void overflow() {
    fail("integer overflow (Ember's integers are 64-bit)");
}

double python_float_mod(double x, double y) {
    double mod = std::fmod(x, y);
    if (mod != 0.0) {
        if ((y < 0) != (mod < 0)) mod += y;
    } else {
        mod = std::copysign(0.0, y);
    }
    return mod;
}

double python_float_floordiv(double x, double y) {
    double mod = std::fmod(x, y);
    double div = (x - mod) / y;
    if (mod != 0.0 && ((y < 0) != (mod < 0))) div -= 1.0;
    if (div == 0.0) return std::copysign(0.0, x / y);
    double floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
    return floordiv;
}

Value repeat(const Value& seq, int64_t times, Budget& budget) {
    if (times < 0) times = 0;
    // An empty sequence repeated stays empty: no loop over a count that may be near 2^63.
    const bool empty = seq.is_string() ? seq.str().empty() : seq.list().items.empty();
    if (empty || times == 0)
        return seq.is_string() ? Value::text(std::string(), seq.is_markup()) : Value::make_list({}, seq.is_tuple());
    if (seq.is_string()) {
        const std::string& s = seq.str();
        if (!s.empty() && static_cast<uint64_t>(times) > budget.limits().max_output_bytes / s.size())
            budget.charge_bytes(budget.limits().max_output_bytes + 1);
        budget.charge_bytes(s.size() * static_cast<size_t>(times));
        std::string out;
        out.reserve(s.size() * static_cast<size_t>(times));
        for (int64_t i = 0; i < times; ++i) out += s;
        return Value::text(std::move(out), seq.is_markup());
    }
    const auto& items = seq.list().items;
    if (!items.empty()) budget.step(items.size() * static_cast<uint64_t>(std::min<int64_t>(times, INT32_MAX)));
    std::vector<Value> out;
    for (int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
    return Value::make_list(std::move(out), seq.is_tuple());
}

bool is_sequence_for_repeat(const Value& v) {
    return v.is_string() || v.is_list();
}

Value add(const Value& a, const Value& b, Budget& budget) {
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return Value::number(a.to_double() + b.to_double());
        return Value::integer(checked_add(a.to_int(), b.to_int()));
    }
    if (a.is_string() && b.is_string()) {
        budget.charge_bytes(a.str().size() + b.str().size());
        if (a.is_markup() == b.is_markup()) return Value::text(a.str() + b.str(), a.is_markup());
        // Markup escapes the plain string it is added to (markupsafe's __add__ / __radd__).
        if (a.is_markup()) return Value::text(a.str() + html_escape(b.str()), true);
        return Value::text(html_escape(a.str()) + b.str(), true);
    }
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
        std::vector<Value> items = a.list().items;
        items.insert(items.end(), b.list().items.begin(), b.list().items.end());
        budget.step(items.size());
        return Value::make_list(std::move(items), a.is_tuple());
    }
    if (a.is_string() || a.is_list())
        fail("can only concatenate " + type_name(a) + " (not \"" + type_name(b) + "\") to " + type_name(a));
    unsupported("+", a, b);
}

Value multiply(const Value& a, const Value& b, Budget& budget) {
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return Value::number(a.to_double() * b.to_double());
        return Value::integer(checked_mul(a.to_int(), b.to_int()));
    }
    if (is_sequence_for_repeat(a) && (b.is_int() || b.is_bool())) return repeat(a, b.to_int(), budget);
    if (is_sequence_for_repeat(b) && (a.is_int() || a.is_bool())) return repeat(b, a.to_int(), budget);
    if (is_sequence_for_repeat(a) && b.is_float()) fail("can't multiply sequence by non-int of type 'float'");
    if (is_sequence_for_repeat(b) && a.is_float()) fail("can't multiply sequence by non-int of type 'float'");
    unsupported("*", a, b);
}

Value power(const Value& a, const Value& b) {
    if (!a.is_number() || !b.is_number()) unsupported("** or pow()", a, b);
    if (!a.is_float() && !b.is_float()) {
        int64_t base = a.to_int();
        int64_t exp = b.to_int();
        if (exp < 0) {
            if (base == 0) fail("0.0 cannot be raised to a negative power");
            return Value::number(std::pow(static_cast<double>(base), static_cast<double>(exp)));
        }
        int64_t result = 1;
        while (exp > 0) {
            if (exp & 1) result = checked_mul(result, base);
            exp >>= 1;
            if (exp > 0) base = checked_mul(base, base);
        }
        return Value::integer(result);
    }
    const double x = a.to_double(), y = b.to_double();
    if (x == 0.0 && y < 0.0) fail("0.0 cannot be raised to a negative power");
    if (x < 0.0 && std::floor(y) != y) fail("a negative number raised to a fractional power is complex");
    return Value::number(std::pow(x, y));
}

Value divide(BinaryOp op, const Value& a, const Value& b) {
    if (!a.is_number() || !b.is_number()) {
        unsupported(op == BinaryOp::div ? "/" : op == BinaryOp::floordiv ? "//" : "%", a, b);
    }
    const bool ints = !a.is_float() && !b.is_float();
    if (op == BinaryOp::div) {
        if (b.to_double() == 0.0) fail("division by zero");
        return Value::number(a.to_double() / b.to_double());
    }
    if (ints) {
        const int64_t x = a.to_int(), y = b.to_int();
        if (y == 0) fail("integer division or modulo by zero");
        if (op == BinaryOp::floordiv) {
            if (x == INT64_MIN && y == -1) overflow();
            int64_t q = x / y;
            if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
            return Value::integer(q);
        }
        if (y == -1) return Value::integer(0);
        int64_t r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return Value::integer(r);
    }
    const double x = a.to_double(), y = b.to_double();
    if (y == 0.0) fail(op == BinaryOp::floordiv ? "float floor division by zero" : "float modulo");
    return Value::number(op == BinaryOp::floordiv ? python_float_floordiv(x, y) : python_float_mod(x, y));
}

}  // namespace

int64_t checked_add(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) overflow();
    return r;
}

int64_t checked_mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) overflow();
    return r;
}

std::string html_escape(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&#34;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

Value binary_op(BinaryOp op, const Value& a, const Value& b, Budget& budget) {
    if (a.is_undefined()) fail(a.undefined_message());
    if (b.is_undefined()) fail(b.undefined_message());
    switch (op) {
        case BinaryOp::add:
            return add(a, b, budget);
        case BinaryOp::sub:
            if (a.is_number() && b.is_number()) {
                if (a.is_float() || b.is_float()) return Value::number(a.to_double() - b.to_double());
                int64_t r;
                if (__builtin_sub_overflow(a.to_int(), b.to_int(), &r)) overflow();
                return Value::integer(r);
            }
            unsupported("-", a, b);
        case BinaryOp::mul:
            return multiply(a, b, budget);
        case BinaryOp::mod:
            if (a.is_string()) {
                std::string out = percent_format(a.str(), b, budget);
                return Value::text(std::move(out), a.is_markup());
            }
            return divide(op, a, b);
        case BinaryOp::div:
        case BinaryOp::floordiv:
            return divide(op, a, b);
        case BinaryOp::pow:
            return power(a, b);
        default:
            break;
    }
    fail("unsupported operator");
}

Value unary_op(UnaryOp op, const Value& v) {
    if (v.is_undefined()) fail(v.undefined_message());
    const char* symbol = op == UnaryOp::neg ? "-" : "+";
    if (v.is_float()) return Value::number(op == UnaryOp::neg ? -v.as_float() : v.as_float());
    if (v.is_int() || v.is_bool()) {
        const int64_t i = v.to_int();
        if (op == UnaryOp::pos) return Value::integer(i);
        if (i == INT64_MIN) overflow();
        return Value::integer(-i);
    }
    fail(std::string("bad operand type for unary ") + symbol + ": '" + type_name(v) + "'");
}

bool contains(const Value& container, const Value& item, Budget& budget) {
    switch (container.kind()) {
        case Value::Kind::undefined:
            return false;
        case Value::Kind::string:
            if (!item.is_string()) fail("'in <string>' requires string as left operand, not " + type_name(item));
            budget.step(container.str().size() / 64);
            return container.str().find(item.str()) != std::string::npos;
        case Value::Kind::list:
            for (const auto& v : container.list().items) {
                budget.step();
                if (equal(v, item, budget)) return true;
            }
            return false;
        case Value::Kind::dict:
            if (!is_hashable(item)) fail("unhashable type: '" + type_name(item) + "'");
            budget.step(container.dict().entries.size());
            return container.dict().find(item) != nullptr;
        default:
            fail("argument of type '" + type_name(container) + "' is not iterable");
    }
}

bool compare_op(CompareOp op, const Value& left, const Value& right, Budget& budget) {
    switch (op) {
        case CompareOp::eq: return equal(left, right, budget);
        case CompareOp::ne: return !equal(left, right, budget);
        case CompareOp::lt: return compare(left, right, "<", budget) != 0;
        case CompareOp::le: return compare(left, right, "<=", budget) != 0;
        case CompareOp::gt: return compare(left, right, ">", budget) != 0;
        case CompareOp::ge: return compare(left, right, ">=", budget) != 0;
        case CompareOp::in: return contains(right, left, budget);
        case CompareOp::not_in: return !contains(right, left, budget);
    }
    return false;
}

Value slice_value(const Value& v, const Value& start_v, const Value& stop_v, const Value& step_v, Budget& budget) {
    auto index = [](const Value& x, const char* which) -> std::optional<int64_t> {
        if (x.is_none()) return std::nullopt;
        if (x.is_int() || x.is_bool()) return x.to_int();
        (void)which;
        fail("slice indices must be integers or None or have an __index__ method");
    };
    const std::optional<int64_t> start_i = index(start_v, "start"), stop_i = index(stop_v, "stop");
    int64_t step = index(step_v, "step").value_or(1);
    if (step == 0) fail("slice step cannot be zero");
    if (step == INT64_MIN) step = -INT64_MAX;

    std::vector<size_t> bounds;
    int64_t n;
    if (v.is_string()) {
        if (!unicode::is_ascii(v.str())) bounds = unicode::boundaries(v.str());
        n = static_cast<int64_t>(bounds.empty() ? v.str().size() : bounds.size() - 1);
    } else if (v.is_list()) {
        n = static_cast<int64_t>(v.list().items.size());
    } else {
        fail("'" + type_name(v) + "' object is not subscriptable");
    }
    auto clamp = [&](std::optional<int64_t> x, bool is_start) {
        if (!x) return is_start ? (step < 0 ? n - 1 : 0) : (step < 0 ? -1 : n);
        int64_t i = *x;
        if (i < 0) {
            i = (i < -n) ? (step < 0 ? -1 : 0) : i + n;
        } else if (i >= n) {
            i = step < 0 ? n - 1 : n;
        }
        return i;
    };
    const int64_t start = clamp(start_i, true), stop = clamp(stop_i, false);
    int64_t count = 0;
    if (step > 0 && stop > start) count = (stop - start - 1) / step + 1;
    if (step < 0 && start > stop) count = (start - stop - 1) / (-step) + 1;
    budget.step(static_cast<uint64_t>(count));

    if (v.is_string()) {
        const std::string& s = v.str();
        std::string out;
        for (int64_t k = 0; k < count; ++k) {
            const size_t u = static_cast<size_t>(start + k * step);
            if (bounds.empty())
                out += s[u];
            else
                out.append(s, bounds[u], bounds[u + 1] - bounds[u]);
        }
        return Value::text(std::move(out));
    }
    const auto& items = v.list().items;
    std::vector<Value> out;
    out.reserve(static_cast<size_t>(count));
    for (int64_t k = 0; k < count; ++k) out.push_back(items[static_cast<size_t>(start + k * step)]);
    return Value::make_list(std::move(out), v.is_tuple());
}

}  // namespace ember::chat::jinja
