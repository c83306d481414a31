// SPDX-License-Identifier: MIT
// The global functions a template can call: range, namespace, dict, cycler, joiner (jinja2's), and
// raise_exception, strftime_now (Hugging Face's).
#include <locale.h>
#include <time.h>

#include <array>

#include "jinja/budget.h"
#include "jinja/interpreter.h"
#include "jinja/builtins.h"
#include "jinja/objects.h"

namespace ember::chat::jinja {

namespace {

Value g_range(Interpreter& in, CallArgs& args) {
    if (!args.keywords.empty()) fail("range() takes no keyword arguments");
    const auto& p = args.positional;
    if (p.empty() || p.size() > 3) fail("range expected 1 to 3 arguments, got " + std::to_string(p.size()));
    for (const Value& v : p)
        if (!v.is_int() && !v.is_bool()) fail("'" + type_name(v) + "' object cannot be interpreted as an integer");
    int64_t start = 0, stop, step = 1;
    if (p.size() == 1) {
        stop = p[0].to_int();
    } else {
        start = p[0].to_int();
        stop = p[1].to_int();
        if (p.size() == 3) step = p[2].to_int();
    }
    if (step == 0) fail("range() arg 3 must not be zero");
    uint64_t count = 0;
    if (step > 0 && stop > start)
        count = (static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) - 1) / static_cast<uint64_t>(step) + 1;
    if (step < 0 && start > stop)
        count =
            (static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) - 1) / (0 - static_cast<uint64_t>(step)) + 1;
    in.budget().step(count);  // refuses a range longer than the step budget before allocating it
    std::vector<Value> items;
    items.reserve(count);
    for (uint64_t i = 0; i < count; ++i)
        items.push_back(
            Value::integer(static_cast<int64_t>(static_cast<uint64_t>(start) + i * static_cast<uint64_t>(step))));
    return Value::make_list(std::move(items));
}

// dict(mapping or pairs, **kwargs), shared by dict() and namespace().
std::vector<std::pair<Value, Value>> dict_entries(Interpreter& in, CallArgs& args, std::string_view what) {
    if (args.positional.size() > 1)
        fail(std::string(what) + " expected at most 1 argument, got " + std::to_string(args.positional.size()));
    std::vector<std::pair<Value, Value>> entries;
    if (!args.positional.empty()) {
        const Value& src = args.positional[0];
        if (src.is_dict()) {
            entries = src.dict().entries;
        } else {
            size_t index = 0;
            for (const Value& item : in.iterate(src)) {
                std::vector<Value> pair = in.iterate(item);
                if (pair.size() != 2)
                    fail("dictionary update sequence element #" + std::to_string(index) + " has length " +
                         std::to_string(pair.size()) + "; 2 is required");
                if (!is_hashable(pair[0])) fail("unhashable type: '" + type_name(pair[0]) + "'");
                entries.emplace_back(std::move(pair[0]), std::move(pair[1]));
                ++index;
            }
        }
    }
    for (auto& [k, v] : args.keywords) entries.emplace_back(Value::text(k), v);
    return entries;
}

Value g_dict(Interpreter& in, CallArgs& args) {
    auto d = std::make_shared<Dict>();
    for (auto& [k, v] : dict_entries(in, args, "dict")) d->set(std::move(k), std::move(v));
    return Value::make_dict(std::move(d));
}

Value g_namespace(Interpreter& in, CallArgs& args) {
    auto ns = std::make_shared<Namespace>();
    for (auto& [k, v] : dict_entries(in, args, "namespace")) {
        if (!k.is_string()) fail("namespace attribute names must be strings");
        ns->set(k.str(), std::move(v));
    }
    return Value::make_object(std::move(ns));
}

Value g_cycler(Interpreter&, CallArgs& args) {
    if (!args.keywords.empty()) fail("cycler() takes no keyword arguments");
    if (args.positional.empty()) fail("at least one item has to be provided");
    return Value::make_object(std::make_shared<Cycler>(args.positional));
}

Value g_joiner(Interpreter& in, CallArgs& args) {
    ArgReader a(args, "joiner()", {"sep"});
    return Value::make_object(std::make_shared<Joiner>(to_str(a.get_or(0, Value::text(", ")), in.budget())));
}

Value g_raise_exception(Interpreter& in, CallArgs& args) {
    ArgReader a(args, "raise_exception()", {"message"});
    throw Failure(Failure::Kind::raised, a.has(0) ? to_str(*a.get(0), in.budget()) : std::string("raise_exception()"));
}

// strftime in the C locale, whatever locale the application has set (Python formats in the C locale too).
Value g_strftime_now(Interpreter& in, CallArgs& args) {
    ArgReader a(args, "strftime_now()", {"format"});
    if (!a.has(0)) fail("strftime_now() missing required argument 'format'");
    const std::string format = require_string(*a.get(0), "strftime_now() format");
    if (format.size() > 1024) fail("strftime_now() format longer than 1024 bytes");
    const locale_t c_locale = newlocale(LC_TIME_MASK, "C", static_cast<locale_t>(nullptr));
    std::string out(256 + format.size() * 16, '\0');
    const std::string guarded = format + "\x01";  // tells an empty result from a full buffer
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"  // the format is the template's, by design
    const size_t n = c_locale ? strftime_l(out.data(), out.size(), guarded.c_str(), &in.now(), c_locale)
                              : strftime(out.data(), out.size(), guarded.c_str(), &in.now());
#pragma GCC diagnostic pop
    if (c_locale) freelocale(c_locale);
    if (n == 0) fail("strftime_now(): the formatted date is too long");
    out.resize(n - 1);
    return Value::text(std::move(out));
}

struct GlobalEntry {
    std::string_view name;
    BuiltinFunction fn;
};

constexpr std::array<GlobalEntry, 7> globals = {{
    {"range", g_range},
    {"dict", g_dict},
    {"namespace", g_namespace},
    {"cycler", g_cycler},
    {"joiner", g_joiner},
    {"raise_exception", g_raise_exception},
    {"strftime_now", g_strftime_now},
}};

}  // namespace

bool find_global(std::string_view name, Value& out) {
    for (const auto& g : globals) {
        if (g.name == name) {
            out = Value::make_object(std::make_shared<Builtin>(g.name, g.fn));
            return true;
        }
    }
    return false;
}

}  // namespace ember::chat::jinja
