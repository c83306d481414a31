// SPDX-License-Identifier: MIT
// What the model-running commands share for images: which projector goes with a model, the --image files
// decoded, and the projector's facts for info, run and bench.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "ember/runtime.h"
#include "ember/vision.h"

namespace ember::cli {

// --mmproj when given; else the first mmproj*.gguf beside the model (vision::projectors_beside order) whose
// projection_dim is the model's embedding length; none with --no-mmproj or when nothing fits.
std::optional<std::filesystem::path> projector_for(const std::filesystem::path& model, const VisionArgs& vision);
// The projector beside a model that projector_for would pair (none for a file that is not a text model).
std::optional<std::filesystem::path> projector_beside(const std::filesystem::path& model);

// Decodes the --image files; an unreadable or corrupt one is an ember::Error naming it.
std::vector<vision::Image> load_images(const std::vector<std::string>& paths);
// Throws ember::Error naming the first image when images are given and the model has no projector.
void require_projector(const LoadedModel& model, const std::vector<std::string>& images);

// "PATH (projection 2048, patch 16, merge 2, pixels 65536-16777216)"
std::string projector_line(const vision::Projector& projector);
nlohmann::ordered_json projector_json(const vision::Projector& projector);

}  // namespace ember::cli
