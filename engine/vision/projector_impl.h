// SPDX-License-Identifier: MIT
// The loaded Qwen3-VL merger projector: its facts, its weights on the backend, and the encoder that runs them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "ember/vision.h"

namespace ember::vision {

struct VisionBlock {
    Tensor ln1_w, ln1_b, ln2_w, ln2_b;
    Tensor q_w, k_w, v_w, q_b, k_b, v_b;  // row ranges of attn_qkv (q ‖ k ‖ v)
    Tensor out_w, out_b, up_w, up_b, down_w, down_b;
};

struct ProjectorWeights {
    Tensor patch_w;                // F32 [width, 3 * 2 * patch * patch]: both temporal halves, [C][T][y][x] per row
    Tensor patch_b;                // F32 [1, width]
    std::vector<float> pos_table;  // host F32 [position_grid^2, width]
    std::vector<VisionBlock> blocks;
    Tensor post_ln_w, post_ln_b;
    Tensor fc1_w, fc1_b, fc2_w, fc2_b;
};

class QwenVisionProjector final : public Projector {
public:
    QwenVisionProjector(const gguf::File& file, const std::filesystem::path& path, Backend& backend);

    const std::string& path() const override { return path_; }
    int64_t projection_dim() const override { return info_.projection_dim; }
    int64_t patch_size() const override { return info_.patch_size; }
    int64_t merge() const override { return info_.merge; }
    PixelLimits limits() const override { return limits_; }
    void set_max_pixels(int64_t max_pixels) override;
    ImageGrid grid(const Image& image) const override;
    ImageEmbedding encode(const Image& image) const override;

    // The encoder and merger on preprocessed patches ([grid.patches(), 3 * 2 * patch^2], merge-block order).
    std::vector<float> encode_patches(const ImageGrid& grid, std::span<const float> patches) const;

private:
    Tensor upload_vector(const gguf::File& file, const std::string& name, int64_t n);
    Tensor map_matrix(const gguf::File& file, const std::string& name, int64_t rows, int64_t cols);
    Tensor upload_f32(std::span<const float> values, int64_t rows, int64_t cols);
    std::vector<float> positions_for(const ImageGrid& grid) const;

    std::string path_;
    Backend& backend_;
    ProjectorInfo info_;
    PixelLimits limits_;
    float mean_[3] = {0.5f, 0.5f, 0.5f};
    float std_[3] = {0.5f, 0.5f, 0.5f};
    std::vector<std::unique_ptr<Buffer>> buffers_;
    ProjectorWeights w_;
};

// The tensor's data as F32 (F32, F16 or BF16 in the file); throws "PATH: tensor 'x' ..." otherwise.
std::vector<float> tensor_as_f32(const gguf::File& file, const std::string& path, const gguf::TensorInfo& info);

}  // namespace ember::vision
