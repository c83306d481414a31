// SPDX-License-Identifier: MIT
// Options of an ember-cli command: declared up front, parsed once; unknown options and missing values are usage
// errors (UsageError, exit code 2).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_commands.h"

namespace ember::cli {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct OptionSpec {
    std::string name;        // "--temp"
    std::string alias;       // "-t" or empty
    bool takes_value = true;
};

class ParsedArgs {
public:
    ParsedArgs(const Args& args, const std::vector<OptionSpec>& specs);

    bool has(const std::string& name) const { return values_.count(name) > 0; }
    std::string get(const std::string& name, const std::string& fallback = "") const;
    std::string require(const std::string& name) const;
    long long get_int(const std::string& name, long long fallback) const;
    double get_double(const std::string& name, double fallback) const;
    const std::vector<std::string>& positional() const { return positional_; }
    // Every value of an option given several times (e.g. --stop).
    std::vector<std::string> all(const std::string& name) const;

private:
    std::map<std::string, std::vector<std::string>> values_;
    std::vector<std::string> positional_;
};

// "1,2,3" -> {1, 2, 3}
std::vector<int32_t> parse_token_list(const std::string& text);

// --mmproj FILE (the vision projector; without it, an mmproj*.gguf beside the model that fits it), --no-mmproj
// (none), --image IMG (repeatable), --max-pixels N (lowers the projector's pixel limit)
std::vector<OptionSpec> vision_option_specs();
struct VisionArgs {
    std::optional<std::string> mmproj;
    bool no_mmproj = false;
    std::vector<std::string> images;
    int64_t max_pixels = 0;  // 0: the projector's own limit
};
VisionArgs vision_from_args(const ParsedArgs& args);

}  // namespace ember::cli
