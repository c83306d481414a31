// SPDX-License-Identifier: MIT
// Which layers attend within a sliding window: the <arch>.attention.sliding_window* keys, read once for the engine's
// models and their memory shapes (which architectures have them: model/architecture_registry.cpp).
#include <string>

#include "ember/gguf.h"

namespace ember::gguf {

namespace {

[[noreturn]] void bad(const File& file, const std::string& key, const std::string& problem) {
    throw Error(file.name() + ": key '" + key + "' " + problem);
}

}  // namespace

// As Hugging Face's Gemma3TextConfig has it: sliding_window_pattern N (else the architecture's default) makes layer
// i local unless i % N == N - 1; converters may instead list per layer whether it is local.
SlidingWindowLayout read_sliding_window(const File& file, const std::string& arch, int64_t n_layer,
                                        int64_t default_period) {
    SlidingWindowLayout layout;
    if (default_period <= 0) return layout;
    const std::string p = arch + ".attention.";
    layout.window = file.get_int(p + "sliding_window", 0);
    if (layout.window < 0 || layout.window > INT32_MAX)
        bad(file, p + "sliding_window", "is " + std::to_string(layout.window) + ", out of range");
    if (layout.window == 0) return layout;
    const std::string pattern_key = p + "sliding_window_pattern";
    const Value* pattern = file.find(pattern_key);
    if (pattern && pattern->type() == ValueType::ARRAY) {
        if (pattern->size() != static_cast<uint64_t>(n_layer))
            bad(file, pattern_key,
                "lists " + std::to_string(pattern->size()) + " layers, the model has " + std::to_string(n_layer));
        try {
            layout.local_layers = pattern->bool_array();
        } catch (const Error& e) {
            bad(file, pattern_key, e.what());
        }
        return layout;
    }
    const int64_t every = pattern ? pattern->as_int() : default_period;
    if (every <= 0 || every > 4096) bad(file, pattern_key, "is " + std::to_string(every) + ", out of range");
    for (int64_t il = 0; il < n_layer; ++il) layout.local_layers.push_back(il % every < every - 1);
    return layout;
}

}  // namespace ember::gguf
