// SPDX-License-Identifier: MIT
// The methods of str, list and dict that templates call ("x".startswith(...), d.items(), l.append(...)).
// Nothing else on a value is reachable: the sandbox exposes data and these methods only.
#include <algorithm>
#include <array>

#include "jinja/budget.h"
#include "jinja/interpreter.h"
#include "jinja/builtins.h"
#include "jinja/pystr.h"
#include "jinja/unicode.h"

namespace ember::chat::jinja {

namespace {

constexpr std::array<std::string_view, 35> string_methods = {
    "startswith", "endswith", "split",   "rsplit",  "splitlines",   "strip",        "lstrip",
    "rstrip",     "replace",  "upper",   "lower",   "title",        "capitalize",   "swapcase",
    "casefold",   "find",     "rfind",   "index",   "rindex",       "count",        "join",
    "format",     "isdigit",  "isalpha", "isalnum", "isspace",      "islower",      "isupper",
    "zfill",      "center",   "ljust",   "rjust",   "removeprefix", "removesuffix", "partition"};
constexpr std::array<std::string_view, 4> dict_methods = {"items", "keys", "values", "get"};
constexpr std::array<std::string_view, 3> list_methods = {"append", "index", "count"};

template <size_t N>
bool listed(const std::array<std::string_view, N>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::optional<int64_t> optional_index(const Value* v, std::string_view what) {
    if (!v || v->is_none()) return std::nullopt;
    return require_int(*v, what);
}

std::optional<std::string> optional_chars(const Value* v, std::string_view method) {
    if (!v || v->is_none()) return std::nullopt;
    if (!v->is_string()) fail(std::string(method) + " arg must be None or str");
    return v->str();
}

Value strings_to_list(std::vector<std::string> parts, Budget& budget) {
    std::vector<Value> out;
    out.reserve(parts.size());
    budget.step(parts.size());
    for (auto& p : parts) out.push_back(Value::text(std::move(p)));
    return Value::make_list(std::move(out));
}

Value affix_test(const std::string& s, CallArgs& args, bool prefix) {
    const char* method = prefix ? "startswith" : "endswith";
    ArgReader a(args, std::string(method) + "()", {"prefix", "start", "end"});
    if (!a.has(0)) fail(std::string(method) + "() takes at least 1 argument (0 given)");
    const std::string window = (a.has(1) || a.has(2))
                                   ? pystr::slice(s, optional_index(a.get(1), "start"), optional_index(a.get(2), "end"))
                                   : s;
    auto matches = [&](const std::string& affix) {
        if (affix.size() > window.size()) return false;
        return prefix ? window.compare(0, affix.size(), affix) == 0
                      : window.compare(window.size() - affix.size(), affix.size(), affix) == 0;
    };
    const Value& what = *a.get(0);
    if (what.is_string()) return Value::boolean(matches(what.str()));
    if (what.is_tuple()) {
        for (const Value& item : what.list().items) {
            if (!item.is_string())
                fail(std::string("tuple for ") + method + " must only contain str, not " + type_name(item));
            if (matches(item.str())) return Value::boolean(true);
        }
        return Value::boolean(false);
    }
    fail(std::string(method) + " first arg must be str or a tuple of str, not " + type_name(what));
}

}  // namespace

std::string checked_replace(std::string_view s, std::string_view old, std::string_view repl, int64_t count,
                            Budget& budget) {
    budget.step(1 + s.size() / 64);  // counting the matches
    uint64_t matches = static_cast<uint64_t>(pystr::count(s, old));
    if (count >= 0) matches = std::min(matches, static_cast<uint64_t>(count));
    budget.charge_pieces(s.size() - matches * old.size(), matches, repl.size());
    return pystr::replace(s, old, repl, count);
}

namespace {

Value pad_method(const std::string& s, CallArgs& args, std::string_view method, Budget& budget) {
    ArgReader a(args, std::string(method) + "()", {"width", "fillchar"});
    if (!a.has(0)) fail(std::string(method) + "() takes at least 1 argument (0 given)");
    const int64_t width = require_int(*a.get(0), "width");
    std::string fill = " ";
    if (a.has(1)) {
        fill = require_string(*a.get(1), "fillchar");
        if (unicode::length(fill) != 1) fail("The fill character must be exactly one character long");
    }
    const int64_t len = static_cast<int64_t>(unicode::length(s));
    if (width <= len) return Value::text(s);
    const int64_t missing = width - len;
    budget.charge_pieces(s.size(), static_cast<uint64_t>(missing), fill.size());
    int64_t left = 0;
    if (method == "rjust") left = missing;
    if (method == "center") left = missing / 2 + (missing & width & 1);
    std::string out;
    for (int64_t i = 0; i < left; ++i) out += fill;
    out += s;
    for (int64_t i = left; i < missing; ++i) out += fill;
    return Value::text(std::move(out));
}

Value string_method(Interpreter& in, const std::string& s, std::string_view name, CallArgs& args) {
    Budget& budget = in.budget();
    budget.step(1 + s.size() / 256);
    const std::string what = std::string(name) + "()";
    if (name == "startswith") return affix_test(s, args, true);
    if (name == "endswith") return affix_test(s, args, false);
    if (name == "split" || name == "rsplit") {
        ArgReader a(args, what, {"sep", "maxsplit"});
        const auto sep = optional_chars(a.get(0), "sep");
        const int64_t maxsplit = a.has(1) ? require_int(*a.get(1), "maxsplit") : -1;
        return strings_to_list(name == "split" ? pystr::split(s, sep, maxsplit) : pystr::rsplit(s, sep, maxsplit),
                               budget);
    }
    if (name == "splitlines") {
        ArgReader a(args, what, {"keepends"});
        return strings_to_list(pystr::splitlines(s, truthy(a.get_or(0, Value::boolean(false)))), budget);
    }
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
        ArgReader a(args, what, {"chars"});
        return Value::text(pystr::strip(s, optional_chars(a.get(0), name), name != "rstrip", name != "lstrip"));
    }
    if (name == "replace") {
        ArgReader a(args, what, {"old", "new", "count"});
        if (!a.has(0) || !a.has(1)) fail("replace() takes at least 2 arguments");
        const int64_t count = a.has(2) ? require_int(*a.get(2), "count") : -1;
        return Value::text(checked_replace(s, require_string(*a.get(0), "replace() argument 1"),
                                           require_string(*a.get(1), "replace() argument 2"), count, budget));
    }
    if (name == "upper") return ArgReader(args, what, {}), Value::text(unicode::upper(s));
    if (name == "lower" || name == "casefold") return ArgReader(args, what, {}), Value::text(unicode::lower(s));
    if (name == "title") return ArgReader(args, what, {}), Value::text(pystr::title(s));
    if (name == "capitalize") return ArgReader(args, what, {}), Value::text(pystr::capitalize(s));
    if (name == "swapcase") return ArgReader(args, what, {}), Value::text(pystr::swapcase(s));
    if (name == "find" || name == "rfind" || name == "index" || name == "rindex") {
        ArgReader a(args, what, {"sub", "start", "end"});
        if (!a.has(0)) fail(what + " takes at least 1 argument (0 given)");
        const int64_t at = pystr::find(s, require_string(*a.get(0), what), optional_index(a.get(1), "start"),
                                       optional_index(a.get(2), "end"), name[0] == 'r');
        if (at < 0 && (name == "index" || name == "rindex")) fail("substring not found");
        return Value::integer(at);
    }
    if (name == "count") {
        ArgReader a(args, what, {"sub", "start", "end"});
        if (!a.has(0)) fail("count() takes at least 1 argument (0 given)");
        const std::string window = pystr::slice(s, optional_index(a.get(1), "start"), optional_index(a.get(2), "end"));
        return Value::integer(pystr::count(window, require_string(*a.get(0), "count() argument")));
    }
    if (name == "join") {
        ArgReader a(args, what, {"iterable"});
        if (!a.has(0)) fail("join() takes exactly one argument (0 given)");
        std::string out;
        size_t index = 0;
        for (const Value& item : in.iterate(*a.get(0))) {
            if (!item.is_string())
                fail("sequence item " + std::to_string(index) + ": expected str instance, " + type_name(item) +
                     " found");
            budget.check_size(out.size() + item.str().size() + (index ? s.size() : 0));  // before it grows
            if (index++) out += s;
            out += item.str();
        }
        return Value::text(std::move(out));
    }
    if (name == "format") return Value::text(brace_format(s, args, budget));
    if (name == "isdigit") return ArgReader(args, what, {}), Value::boolean(pystr::all_of(s, unicode::is_digit));
    if (name == "isalpha") return ArgReader(args, what, {}), Value::boolean(pystr::all_of(s, unicode::is_alpha));
    if (name == "isalnum")
        return ArgReader(args, what, {}), Value::boolean(pystr::all_of(s, [](char32_t c) {
                   return unicode::is_alpha(c) || unicode::is_digit(c);
               }));
    if (name == "isspace") return ArgReader(args, what, {}), Value::boolean(pystr::all_of(s, unicode::is_space));
    if (name == "islower") return ArgReader(args, what, {}), Value::boolean(pystr::is_lower(s));
    if (name == "isupper") return ArgReader(args, what, {}), Value::boolean(pystr::is_upper(s));
    if (name == "zfill") {
        ArgReader a(args, what, {"width"});
        if (!a.has(0)) fail("zfill() takes exactly one argument (0 given)");
        const int64_t width = require_int(*a.get(0), "width");
        const int64_t len = static_cast<int64_t>(unicode::length(s));
        if (width <= len) return Value::text(s);
        budget.charge_bytes(static_cast<size_t>(width));
        const size_t sign = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
        return Value::text(s.substr(0, sign) + std::string(static_cast<size_t>(width - len), '0') + s.substr(sign));
    }
    if (name == "center" || name == "ljust" || name == "rjust") return pad_method(s, args, name, budget);
    if (name == "removeprefix" || name == "removesuffix") {
        ArgReader a(args, what, {"affix"});
        if (!a.has(0)) fail(what + " takes exactly one argument (0 given)");
        const std::string affix = require_string(*a.get(0), what);
        if (name == "removeprefix")
            return Value::text(s.compare(0, affix.size(), affix) == 0 ? s.substr(affix.size()) : s);
        if (affix.size() <= s.size() && s.compare(s.size() - affix.size(), affix.size(), affix) == 0)
            return Value::text(s.substr(0, s.size() - affix.size()));
        return Value::text(s);
    }
    if (name == "partition") {
        ArgReader a(args, what, {"sep"});
        if (!a.has(0)) fail("partition() takes exactly one argument (0 given)");
        const std::string sep = require_string(*a.get(0), "partition() argument");
        if (sep.empty()) fail("empty separator");
        const size_t at = s.find(sep);
        if (at == std::string::npos) return Value::make_list({Value::text(s), Value::text(""), Value::text("")}, true);
        return Value::make_list(
            {Value::text(s.substr(0, at)), Value::text(sep), Value::text(s.substr(at + sep.size()))}, true);
    }
    fail("'str' object has no attribute '" + std::string(name) + "'");
}

Value list_method(Interpreter& in, const Value& self, std::string_view name, CallArgs& args) {
    List& list = self.list();
    const std::string what = std::string(name) + "()";
    if (name == "append") {
        if (list.tuple) fail("'tuple' object has no attribute 'append'");
        ArgReader a(args, what, {"object"});
        if (!a.has(0)) fail("append() takes exactly one argument (0 given)");
        if (reaches(*a.get(0), &list, in.budget())) fail("cannot append a list to itself");
        list.items.push_back(*a.get(0));
        in.budget().step();
        return Value::none();
    }
    ArgReader a(args, what, {"value"});
    if (!a.has(0)) fail(what + " takes exactly one argument (0 given)");
    int64_t count = 0;
    for (size_t i = 0; i < list.items.size(); ++i) {
        in.budget().step();
        if (equal(list.items[i], *a.get(0), in.budget())) {
            if (name == "index") return Value::integer(static_cast<int64_t>(i));
            ++count;
        }
    }
    if (name == "index") fail(type_name(self) + ".index(x): x not in " + type_name(self));
    return Value::integer(count);
}

Value dict_method(Interpreter& in, const Value& self, std::string_view name, CallArgs& args) {
    const Dict& dict = self.dict();
    const std::string what = std::string(name) + "()";
    in.budget().step(dict.entries.size());
    if (name == "get") {
        ArgReader a(args, what, {"key", "default"});
        if (!a.has(0)) fail("get expected at least 1 argument, got 0");
        if (!is_hashable(*a.get(0))) fail("unhashable type: '" + type_name(*a.get(0)) + "'");
        if (const Value* v = dict.find(*a.get(0))) return *v;
        return a.get_or(1, Value::none());
    }
    ArgReader a(args, what, {});
    std::vector<Value> out;
    for (const auto& [k, v] : dict.entries) {
        if (name == "keys")
            out.push_back(k);
        else if (name == "values")
            out.push_back(v);
        else
            out.push_back(Value::make_list({k, v}, true));
    }
    return Value::make_list(std::move(out));
}

}  // namespace

bool has_method(const Value& self, std::string_view name) {
    switch (self.kind()) {
        case Value::Kind::string:
            return listed(string_methods, name);
        case Value::Kind::list:
            return listed(list_methods, name) && !(self.is_tuple() && name == "append");
        case Value::Kind::dict:
            return listed(dict_methods, name);
        default:
            return false;
    }
}

Value call_method(Interpreter& interp, const Value& self, std::string_view name, CallArgs& args) {
    switch (self.kind()) {
        case Value::Kind::string: {
            Value result = string_method(interp, self.str(), name, args);
            if (result.is_string()) interp.budget().charge_bytes(result.str().size());
            return result;
        }
        case Value::Kind::list:
            return list_method(interp, self, name, args);
        case Value::Kind::dict:
            return dict_method(interp, self, name, args);
        default:
            fail("'" + type_name(self) + "' object has no attribute '" + std::string(name) + "'");
    }
}

}  // namespace ember::chat::jinja
