// SPDX-License-Identifier: MIT
// Projector pairing and --image decoding for the ember-cli commands.
#include "cli_vision.h"

#include "ember/gguf.h"

namespace ember::cli {

std::optional<std::filesystem::path> projector_beside(const std::filesystem::path& model) {
    int64_t n_embd = 0;
    try {
        const gguf::File file = gguf::File::open(model);
        const std::string arch(file.get_string("general.architecture", ""));
        if (arch.empty() || arch == "clip") return std::nullopt;
        n_embd = file.get_int(arch + ".embedding_length", 0);
    } catch (const std::exception&) {
        return std::nullopt;  // the model's own load reports what is wrong with it
    }
    if (n_embd <= 0) return std::nullopt;
    for (const std::filesystem::path& candidate : vision::projectors_beside(model)) {
        try {
            const gguf::File file = gguf::File::open(candidate);
            if (vision::read_projector_info(file, candidate).projection_dim == n_embd) return candidate;
        } catch (const std::exception&) {
            // not a projector this engine reads: look at the next one
        }
    }
    return std::nullopt;
}

std::optional<std::filesystem::path> projector_for(const std::filesystem::path& model, const VisionArgs& vision) {
    if (vision.mmproj) return std::filesystem::path(*vision.mmproj);
    if (vision.no_mmproj) return std::nullopt;
    return projector_beside(model);
}

std::vector<vision::Image> load_images(const std::vector<std::string>& paths) {
    std::vector<vision::Image> images;
    for (const std::string& p : paths) images.push_back(vision::load_image(p));
    return images;
}

void require_projector(const LoadedModel& model, const std::vector<std::string>& images) {
    if (images.empty() || model.projector()) return;
    throw Error(images.front() + ": " + model.file().name() +
                " has no vision projector to read images with: pass --mmproj FILE or put its mmproj*.gguf beside it");
}

std::string projector_line(const vision::Projector& p) {
    const vision::PixelLimits limits = p.limits();
    return p.path() + " (projection " + std::to_string(p.projection_dim()) + ", patch " +
           std::to_string(p.patch_size()) + ", merge " + std::to_string(p.merge()) + ", pixels " +
           std::to_string(limits.min_pixels) + "-" + std::to_string(limits.max_pixels) + ")";
}

nlohmann::ordered_json projector_json(const vision::Projector& p) {
    const vision::PixelLimits limits = p.limits();
    return {{"path", p.path()},   {"projection_dim", p.projection_dim()}, {"patch_size", p.patch_size()},
            {"merge", p.merge()}, {"min_pixels", limits.min_pixels},      {"max_pixels", limits.max_pixels}};
}

}  // namespace ember::cli
