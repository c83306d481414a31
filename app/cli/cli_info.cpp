// SPDX-License-Identifier: MIT
// ember-cli info FILE: what a model file holds, in a few lines, the vision projector beside it that the model
// commands would pair, and where the backend "auto" would run it.
#include <iostream>

#include "cli_commands.h"
#include "cli_vision.h"
#include "ember/devices.h"
#include "ember/gguf.h"
#include "ember/model_info.h"

namespace ember::cli {

int run_info(const Args& args) {
    if (args.size() != 1) {
        std::cerr << "usage: ember-cli info FILE\n";
        return 2;
    }
    const gguf::File file = gguf::File::open(args[0]);
    const gguf::Capabilities caps = gguf::describe(file);
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
    if (caps.architecture.empty()) return 0;
    if (!caps.vision_projector)
        if (const auto projector = vision::fitting_projector_beside(args[0]))
            std::cout << "  paired projector      " << projector->string() << "\n";
    // The device choice of `ember-cli run` with no --backend, at its default context.
    try {
        const DeviceChoice choice = choose_device(list_devices(), estimate_memory_needs(file, 4096), {});
        std::cout << "  device (auto)         " << choice.device << " (" << choice.backend << ", "
                  << placement_name(choice.placement) << "): " << choice.reason << "\n";
        if (!choice.notice.empty()) std::cout << "                        " << choice.notice << "\n";
    } catch (const Error& e) {
        std::cout << "  device (auto)         cannot tell: " << e.what() << "\n";
    }
    return 0;
}

}  // namespace ember::cli
