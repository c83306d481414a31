// SPDX-License-Identifier: MIT
// Binding a projector file to a backend the caller owns (the runtime's LoadedModel, tests); the public entry point
// is vision::open_projector.
#pragma once

#include <filesystem>
#include <memory>

#include "backend/backend.h"
#include "ember/vision.h"

namespace ember::vision {

// Throws ember::Error "PATH: problem" for a file that is not a Qwen3-VL merger projector (another projector type,
// a missing tensor, a wrong shape). The file and the backend must outlive the projector.
std::unique_ptr<Projector> load_projector(const gguf::File& file, const std::filesystem::path& path, Backend& backend);

}  // namespace ember::vision
