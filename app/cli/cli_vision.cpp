// SPDX-License-Identifier: MIT
// Projector pairing and --image decoding for the ember-cli commands.
#include "cli_vision.h"

namespace ember::cli {

std::optional<std::filesystem::path> projector_for(const std::filesystem::path& model, const VisionArgs& vision) {
    if (vision.mmproj) return std::filesystem::path(*vision.mmproj);
    if (vision.no_mmproj) return std::nullopt;
    return vision::fitting_projector_beside(model);
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
