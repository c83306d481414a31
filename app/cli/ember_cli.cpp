// SPDX-License-Identifier: MIT
// ember-cli: the engine from the command line. Commands arrive with the engine parts they drive; this revision
// has the container layer only, so the command set is the file overview.
#include <iostream>
#include <string>
#include <vector>

#include "gguf_report.h"

namespace {

constexpr const char* kVersion = "0.1.0";

constexpr const char* kUsage =
    "usage: ember-cli COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  info FILE     what a model file holds: architecture, MTP head, DFlash draft, vision projector, sizes\n"
    "  version       print the version\n"
    "  help          this text\n"
    "\n"
    "Inspect a file in depth with ember-gguf (inspect, validate).\n";

int info(const std::string& path) {
    const ember::gguf::File file = ember::gguf::File::open(path);
    const ember::gguf::Capabilities caps = ember::gguf::describe(file);
    uint64_t weight_bytes = 0;
    for (const auto& t : file.tensors()) weight_bytes += t.n_bytes;
    std::cout << file.name() << "\n"
              << "  architecture          " << (caps.architecture.empty() ? "(none)" : caps.architecture) << "\n"
              << "  name                  " << file.get_string("general.name", "(unnamed)") << "\n"
              << "  tensors               " << file.tensors().size() << " (" << weight_bytes / (1024 * 1024)
              << " MiB)\n"
              << "  speculative drafting  "
              << (caps.has_dflash() ? "embedded DFlash draft" : caps.has_mtp() ? "MTP head" : "none") << "\n"
              << "  vision projector      " << (caps.vision_projector ? "yes" : "no") << "\n"
              << "  chat template         " << (caps.has_chat_template ? "yes" : "no") << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    const std::string command = args.empty() ? "help" : args[0];
    try {
        if (command == "help" || command == "-h" || command == "--help") {
            std::cout << "Ember " << kVersion << ": local language models with their own inference engine.\n\n"
                      << kUsage;
            return 0;
        }
        if (command == "version" || command == "--version") {
            std::cout << "ember-cli " << kVersion << "\n";
            return 0;
        }
        if (command == "info") {
            if (args.size() != 2) {
                std::cerr << "ember-cli: info needs exactly one FILE\n" << kUsage;
                return 2;
            }
            return info(args[1]);
        }
        std::cerr << "ember-cli: unknown command '" << command << "'\n" << kUsage;
        return 2;
    } catch (const ember::Error& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
}
