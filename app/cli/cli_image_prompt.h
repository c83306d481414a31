// SPDX-License-Identifier: MIT
// A token prompt whose <|image_pad|> runs stand for images (ember-cli logits --image): the runs matched with the
// images' embeddings, the M-RoPE positions of every row (../shared/specs/vision-qwen3vl.md §6), and the forward
// pass that replaces those rows by the embeddings.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ember/model.h"
#include "ember/vision.h"

namespace ember::cli {

struct ImagePrompt {
    std::vector<vision::ImageEmbedding> images;
    std::vector<int64_t> first_rows;  // where each image's run starts in the tokens
    std::vector<int32_t> positions;   // (t, h, w) of every row, axis-major: [t...][h...][w...]
};

// Each maximal run of `image_pad` ids is the next image, and must be exactly as long as its token count. Throws
// ember::Error (one line naming the image) when a run's length or the number of runs does not match.
ImagePrompt make_image_prompt(std::span<const int32_t> tokens, int32_t image_pad,
                              std::vector<vision::ImageEmbedding> images, const std::vector<std::string>& names);

// Evaluates the prompt from the start of `state`, `batch` rows per forward pass; logits of every row
// ([n_tokens, n_vocab]).
std::vector<float> forward_image_prompt(const Model& model, SequenceState& state, std::span<const int32_t> tokens,
                                        const ImagePrompt& prompt, size_t batch);

}  // namespace ember::cli
