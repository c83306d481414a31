// SPDX-License-Identifier: MIT
// ember-quantize: convert a GGUF model to other tensor types, by preset or by type.
//   ember-quantize IN.gguf OUT.gguf TYPE|PRESET [--token-embedding-type T] [--output-tensor-type T]
//                  [--tensor-type REGEX=T ...] [--pure] [--threads N]
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "ember/quantize.h"
#include "ember_version.h"
#include "quantize_run.h"

namespace {

namespace qz = ember::cli::quantize;
using ember::gguf::TensorType;

std::string usage() {
    std::string presets;
    for (const qz::Preset& p : qz::presets()) presets += (presets.empty() ? "" : ", ") + std::string(p.name);
    std::string types;
    for (const ember::gguf::TypeTraits& t : ember::gguf::known_types())
        if (ember::quant::can_quantize(t.type) && t.type != TensorType::Q8_K)
            types += (types.empty() ? "" : ", ") + std::string(t.name);
    return "usage: ember-quantize IN.gguf OUT.gguf TYPE|PRESET [options]\n"
           "\n"
           "  PRESET  a tensor-by-tensor mix (../shared/specs/rocmfp4.md §6): " + presets + "\n"
           "  TYPE    every quantizable tensor in one type: " + types + "\n"
           "  Never quantized: 1-D tensors, norms, the MoE router (ffn_gate_inp), ssm_conv1d, names not ending in\n"
           "  'weight'. Rows that do not fit the type's block fall back to q4_0, then f16.\n"
           "\n"
           "  --token-embedding-type T  token_embd.weight gets exactly type T\n"
           "  --output-tensor-type T    output.weight gets exactly type T\n"
           "  --tensor-type REGEX=T     tensors whose name matches REGEX (PCRE2, anywhere in the name) get T;\n"
           "                            repeatable, the first match wins, before the preset's rules\n"
           "  --pure                    every quantizable tensor gets the preset's main type\n"
           "  --threads N               worker threads (default: all cores)\n";
}

// One line, so that scripts and the tests can rely on it; --help has the full text.
int usage_error(const std::string& message) {
    std::cerr << "ember-quantize: " << message << " (see ember-quantize --help)\n";
    return 2;
}

TensorType parse_type(const std::string& text, const std::string& option) {
    const std::optional<TensorType> t = ember::gguf::type_from_name(text);
    if (!t) throw ember::Error(option + ": unknown tensor type '" + text + "'");
    if (!ember::quant::can_quantize(*t) || *t == TensorType::Q8_K)
        throw ember::Error(option + ": Ember cannot quantize to " + std::string(ember::gguf::traits(*t).name));
    return *t;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
        std::cout << usage();
        return 0;
    }
    if (!args.empty() && args[0] == "--version") {
        std::cout << "ember-quantize " << EMBER_VERSION << "\n";
        return 0;
    }
    qz::RunOptions options;
    options.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::string> positional;
    try {
        for (size_t i = 0; i < args.size(); ++i) {
            const std::string& a = args[i];
            auto value = [&]() -> const std::string& {
                if (i + 1 == args.size()) throw ember::Error(a + " needs a value");
                return args[++i];
            };
            if (a == "--token-embedding-type") {
                options.rules.token_embedding_type = parse_type(value(), a);
            } else if (a == "--output-tensor-type") {
                options.rules.output_tensor_type = parse_type(value(), a);
            } else if (a == "--tensor-type") {
                const std::string& v = value();
                const size_t eq = v.rfind('=');
                if (eq == std::string::npos || eq == 0) throw ember::Error("--tensor-type needs REGEX=TYPE, got '" + v + "'");
                options.rules.tensor_types.push_back({qz::NamePattern(v.substr(0, eq)), parse_type(v.substr(eq + 1), a)});
            } else if (a == "--pure") {
                options.rules.pure = true;
            } else if (a == "--threads") {
                const std::string& v = value();
                int n = 0;
                try {
                    n = std::stoi(v);
                } catch (const std::exception&) {
                }
                if (n < 1 || n > 1024) throw ember::Error("--threads needs a number from 1 to 1024, got '" + v + "'");
                options.threads = n;
            } else if (a.size() > 1 && a[0] == '-') {
                return usage_error("unknown option '" + a + "'");
            } else {
                positional.push_back(a);
            }
        }
    } catch (const ember::Error& e) {
        return usage_error(e.what());
    }
    if (positional.size() != 3) return usage_error("expected IN.gguf OUT.gguf TYPE|PRESET");
    options.input = positional[0];
    options.output = positional[1];
    const std::string& what = positional[2];
    if (const qz::Preset* p = qz::find_preset(what)) {
        options.rules.preset = p;
    } else {
        const std::optional<TensorType> t = ember::gguf::type_from_name(what);
        if (!t || !ember::quant::can_quantize(*t) || *t == TensorType::Q8_K)
            return usage_error("unknown type or preset '" + what + "'");
        options.rules.plain_type = *t;
    }
    if (options.rules.pure && !options.rules.preset) return usage_error("--pure needs a PRESET");

    try {
        qz::run(options);
    } catch (const ember::Error& e) {
        std::cerr << "ember-quantize: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
