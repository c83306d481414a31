// SPDX-License-Identifier: MIT
// Reading the arguments of built-in filters, tests and methods by position and name, with type checks.
#include "jinja/budget.h"
#include "jinja/builtins.h"

namespace ember::chat::jinja {

ArgReader::ArgReader(const CallArgs& args, std::string what, std::initializer_list<std::string_view> names)
    : values_(names.size(), nullptr) {
    if (args.positional.size() > names.size())
        fail(what + " takes at most " + std::to_string(names.size()) + " argument(s) (" +
             std::to_string(args.positional.size()) + " given)");
    for (size_t i = 0; i < args.positional.size(); ++i) values_[i] = &args.positional[i];
    for (const auto& [key, value] : args.keywords) {
        size_t i = 0;
        for (std::string_view n : names) {
            if (n == key) break;
            ++i;
        }
        if (i == names.size()) fail(what + " got an unexpected keyword argument '" + key + "'");
        if (values_[i]) fail(what + " got multiple values for argument '" + key + "'");
        values_[i] = &value;
    }
}

std::string require_string(const Value& v, std::string_view what) {
    if (!v.is_string()) fail(std::string(what) + " must be a string, not " + type_name(v));
    return v.str();
}

int64_t require_int(const Value& v, std::string_view what) {
    if (!v.is_int() && !v.is_bool()) fail(std::string(what) + " must be an integer, not " + type_name(v));
    return v.to_int();
}

}  // namespace ember::chat::jinja
