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

// --mmproj when given; none with --no-mmproj; else vision::fitting_projector_beside.
std::optional<std::filesystem::path> projector_for(const std::filesystem::path& model, const VisionArgs& vision);

// Decodes the --image files; an unreadable or corrupt one is an ember::Error naming it.
std::vector<vision::Image> load_images(const std::vector<std::string>& paths);
// Throws ember::Error naming the first image when images are given and the model has no projector.
void require_projector(const LoadedModel& model, const std::vector<std::string>& images);

// "PATH (projection 2048, patch 16, merge 2, pixels 65536-16777216)"
std::string projector_line(const vision::Projector& projector);
nlohmann::ordered_json projector_json(const vision::Projector& projector);

}  // namespace ember::cli
