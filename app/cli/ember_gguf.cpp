// SPDX-License-Identifier: MIT
// ember-gguf: look inside GGUF files.
//   ember-gguf inspect FILE [--json] [--max-array N]
//   ember-gguf validate FILE
//   ember-gguf types [--json]
//   ember-gguf merge-draft TARGET DRAFT -o OUT [--replace]
//   ember-gguf split-draft IN -o DRAFT [--target-out TARGET]
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "ember/chat.h"
#include "gguf_draft_merge.h"
#include "ember_version.h"
#include "gguf_report.h"

namespace {

constexpr const char* kUsage =
    "usage: ember-gguf inspect FILE [--json] [--max-array N]\n"
    "       ember-gguf validate FILE\n"
    "       ember-gguf types [--json]\n"
    "       ember-gguf merge-draft TARGET.gguf DRAFT.gguf -o OUT.gguf [--replace]\n"
    "       ember-gguf split-draft IN.gguf -o DRAFT.gguf [--target-out TARGET.gguf]\n"
    "       ember-gguf --version\n"
    "\n"
    "  inspect   metadata, tensors, totals by type and capabilities (MTP head, DFlash draft, vision projector,\n"
    "            tokenizer model and pre-tokenizer, and whether Ember knows them)\n"
    "            --json        machine-readable; every key with its type and full value\n"
    "            --max-array N with --json: cut arrays after N items\n"
    "  validate  checks the whole container; prints one line and exits 0 (valid) or 1 (the problem)\n"
    "  types     the tensor types Ember knows: id, name, weights per block, bytes per block\n"
    "  merge-draft  a target plus a standalone DFlash draft into one drafted file (the draft's tensors under\n"
    "               dflash.); --replace swaps the draft of an already drafted target\n"
    "  split-draft  a drafted file back into the standalone draft (and, with --target-out, the bare target)\n";

int print_types(bool json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const ember::gguf::TypeTraits& t : ember::gguf::known_types()) {
        if (json) {
            list.push_back({{"id", static_cast<uint32_t>(t.type)}, {"name", std::string(t.name)},
                            {"block_size", t.block_size}, {"block_bytes", t.block_bytes}});
        } else {
            std::printf("%4u  %-18s %4u weights  %4u bytes  %6.3f bits/weight\n", static_cast<uint32_t>(t.type),
                        std::string(t.name).c_str(), t.block_size, t.block_bytes, 8.0 * t.block_bytes / t.block_size);
        }
    }
    if (json) std::cout << list.dump(1) << "\n";
    return 0;
}

int usage_error(const std::string& message) {
    std::cerr << "ember-gguf: " << message << "\n" << kUsage;
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) return usage_error("missing command");
    if (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
        std::cout << kUsage;
        return 0;
    }
    if (args[0] == "--version" || args[0] == "version") {
        std::cout << "ember-gguf " << EMBER_VERSION << "\n";
        return 0;
    }
    const std::string& command = args[0];
    if (command == "merge-draft") return ember::cli::merge_draft_command({args.begin() + 1, args.end()});
    if (command == "split-draft") return ember::cli::split_draft_command({args.begin() + 1, args.end()});
    std::string path;
    bool json = false;
    uint64_t max_array = 0;
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--json" && (command == "inspect" || command == "types")) {
            json = true;
        } else if (args[i] == "--max-array" && command == "inspect") {
            if (++i == args.size()) return usage_error("--max-array needs a number");
            try {
                max_array = std::stoull(args[i]);
            } catch (const std::exception&) {
                return usage_error("--max-array needs a number, got '" + args[i] + "'");
            }
        } else if (!args[i].empty() && args[i][0] == '-') {
            return usage_error("unknown option '" + args[i] + "' for " + command);
        } else if (path.empty()) {
            path = args[i];
        } else {
            return usage_error("more than one file given");
        }
    }
    if (command == "types") return path.empty() ? print_types(json) : usage_error("types takes no FILE");
    if (command != "inspect" && command != "validate") return usage_error("unknown command '" + command + "'");
    if (path.empty()) return usage_error(command + " needs a FILE");

    try {
        const ember::gguf::File file = ember::gguf::File::open(path);
        if (command == "validate") {
            std::cout << file.name() << ": ok (GGUF v" << file.version() << ", " << file.metadata().size()
                      << " keys, " << file.tensors().size() << " tensors)\n";
            // The file format is what validate checks; a chat template that cannot even be parsed is worth a
            // warning (rendering stays the engine's business: it fails with one line, whatever the template).
            if (const auto source = ember::chat::template_from_gguf(file)) {
                try {
                    (void)ember::chat::Template::parse(*source, "tokenizer.chat_template");
                } catch (const ember::Error& e) {
                    std::cout << file.name() << ": warning: the chat template cannot be used: " << e.what() << "\n";
                }
            }
        } else if (json) {
            std::cout << ember::cli::gguf_to_json(file, max_array)
                             .dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
                      << "\n";
        } else {
            ember::cli::print_gguf_report(file, std::cout);
        }
    } catch (const ember::Error& e) {
        std::cerr << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << path << ": " << (dynamic_cast<const std::bad_alloc*>(&e) ? "out of memory" : e.what()) << "\n";
        return 1;
    }
    return 0;
}
