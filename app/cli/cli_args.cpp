// SPDX-License-Identifier: MIT
#include "cli_args.h"

#include <charconv>

namespace ember::cli {

ParsedArgs::ParsedArgs(const Args& args, const std::vector<OptionSpec>& specs) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a.size() < 2 || a[0] != '-') {
            positional_.push_back(a);
            continue;
        }
        const OptionSpec* spec = nullptr;
        for (const OptionSpec& s : specs)
            if (a == s.name || (!s.alias.empty() && a == s.alias)) spec = &s;
        if (!spec) throw UsageError("unknown option '" + a + "'");
        if (!spec->takes_value) {
            values_[spec->name].push_back("1");
            continue;
        }
        if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
        values_[spec->name].push_back(args[++i]);
    }
}

std::string ParsedArgs::get(const std::string& name, const std::string& fallback) const {
    const auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second.back();
}

std::string ParsedArgs::require(const std::string& name) const {
    if (!has(name)) throw UsageError("missing " + name);
    return get(name);
}

std::vector<std::string> ParsedArgs::all(const std::string& name) const {
    const auto it = values_.find(name);
    return it == values_.end() ? std::vector<std::string>{} : it->second;
}

long long ParsedArgs::get_int(const std::string& name, long long fallback) const {
    if (!has(name)) return fallback;
    const std::string v = get(name);
    long long out = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || end != v.data() + v.size()) throw UsageError(name + " needs an integer, got '" + v + "'");
    return out;
}

double ParsedArgs::get_double(const std::string& name, double fallback) const {
    if (!has(name)) return fallback;
    const std::string v = get(name);
    try {
        size_t used = 0;
        const double out = std::stod(v, &used);
        if (used == v.size()) return out;
    } catch (const std::exception&) {
    }
    throw UsageError(name + " needs a number, got '" + v + "'");
}

std::vector<int32_t> parse_token_list(const std::string& text) {
    std::vector<int32_t> ids;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        const std::string part = text.substr(start, comma - start);
        int32_t id = 0;
        const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), id);
        if (part.empty() || ec != std::errc() || end != part.data() + part.size())
            throw UsageError("bad token id '" + part + "' in '" + text + "'");
        ids.push_back(id);
        start = comma + 1;
    }
    return ids;
}

std::vector<OptionSpec> vision_option_specs() {
    return {{"--mmproj", ""}, {"--no-mmproj", "", false}, {"--image", ""}, {"--max-pixels", ""}};
}

VisionArgs vision_from_args(const ParsedArgs& args) {
    VisionArgs v;
    if (args.has("--mmproj")) v.mmproj = args.get("--mmproj");
    v.no_mmproj = args.has("--no-mmproj");
    if (v.mmproj && v.no_mmproj) throw UsageError("--mmproj and --no-mmproj exclude each other");
    v.images = args.all("--image");
    v.max_pixels = args.get_int("--max-pixels", 0);
    if (v.max_pixels < 0) throw UsageError("--max-pixels must be a positive number of pixels");
    if (!v.images.empty() && v.no_mmproj) throw UsageError("--image needs a vision projector, not --no-mmproj");
    return v;
}

}  // namespace ember::cli
