// SPDX-License-Identifier: MIT
// Loading an mmproj GGUF of the Qwen3-VL merger type (spec §2-§3): the keys checked, every tensor's presence,
// type and shape checked before anything is bound, then the weights on the backend.
#include <cmath>

#include "ember/error.h"
#include "quant/quant.h"
#include "vision/load_projector.h"
#include "vision/projector_impl.h"

namespace ember::vision {
namespace {

using gguf::TensorType;

std::string shape_text(const gguf::TensorInfo& t) {
    std::string s = "[";
    for (uint32_t i = 0; i < t.n_dims; ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
    return s + "]";
}

const gguf::TensorInfo& require_tensor(const gguf::File& file, const std::string& path, const std::string& name,
                                       std::initializer_list<int64_t> shape) {
    const gguf::TensorInfo* t = file.find_tensor(name);
    if (!t) throw Error(path + ": missing tensor '" + name + "'");
    std::array<int64_t, gguf::max_dims> want{1, 1, 1, 1};
    size_t i = 0;
    for (int64_t d : shape) want[i++] = d;
    if (t->shape != want) {
        std::string w = "[";
        i = 0;
        for (int64_t d : shape) w += (i++ ? ", " : "") + std::to_string(d);
        throw Error(path + ": tensor '" + name + "' has shape " + shape_text(*t) + ", expected " + w + "]");
    }
    return *t;
}

int64_t positive_key(const gguf::File& file, const std::string& path, const std::string& key) {
    if (!file.has(key)) throw Error(path + ": missing key '" + key + "'");
    const int64_t v = file.get_int(key);
    if (v <= 0 || v > (int64_t{1} << 20)) throw Error(path + ": key '" + key + "' is out of range");
    return v;
}

}  // namespace

std::vector<float> tensor_as_f32(const gguf::File& file, const std::string& path, const gguf::TensorInfo& info) {
    if (info.type != TensorType::F32 && info.type != TensorType::F16 && info.type != TensorType::BF16)
        throw Error(path + ": tensor '" + std::string(info.name) + "' has type " +
                    std::string(gguf::traits(info.type).name) + ", expected f32 or f16");
    std::vector<float> out(static_cast<size_t>(info.n_elements()));
    quant::dequantize_row(info.type, file.tensor_data(info).data(), out.data(), info.n_elements());
    return out;
}

ProjectorInfo read_projector_info(const gguf::File& file, const std::filesystem::path& path_in) {
    const std::string path = path_in.string();
    ProjectorInfo info;
    const std::string_view arch = file.get_string("general.architecture", "");
    if (arch != "clip")
        throw Error(path + ": not a vision projector (general.architecture is '" + std::string(arch) + "')");
    info.projector_type = std::string(file.get_string("clip.projector_type", ""));
    if (info.projector_type != "qwen3vl_merger")
        throw Error(path + ": projector type '" + info.projector_type + "' is not supported (expected qwen3vl_merger)");
    info.block_count = positive_key(file, path, "clip.vision.block_count");
    info.width = positive_key(file, path, "clip.vision.embedding_length");
    info.feed_forward = positive_key(file, path, "clip.vision.feed_forward_length");
    info.heads = positive_key(file, path, "clip.vision.attention.head_count");
    info.patch_size = positive_key(file, path, "clip.vision.patch_size");
    info.projection_dim = positive_key(file, path, "clip.vision.projection_dim");
    info.merge =
        file.has("clip.vision.spatial_merge_size") ? positive_key(file, path, "clip.vision.spatial_merge_size") : 2;
    info.layer_norm_eps = static_cast<float>(file.get_float("clip.vision.attention.layer_norm_epsilon", 1e-6));
    if (info.width % info.heads != 0 || (info.width / info.heads) % 4 != 0)
        throw Error(path + ": embedding_length " + std::to_string(info.width) + " does not split into " +
                    std::to_string(info.heads) + " heads of a multiple of 4");
    if (file.has("clip.vision.image_min_pixels")) {
        info.limits.min_pixels = positive_key(file, path, "clip.vision.image_min_pixels");
        info.limits_from_keys = true;
    }
    if (file.has("clip.vision.image_max_pixels")) {
        info.limits.max_pixels = file.get_int("clip.vision.image_max_pixels");
        if (info.limits.max_pixels <= 0) throw Error(path + ": key 'clip.vision.image_max_pixels' is out of range");
        info.limits_from_keys = true;
    }
    if (info.limits.min_pixels > info.limits.max_pixels)
        throw Error(path + ": image_min_pixels is larger than image_max_pixels");
    const gguf::TensorInfo* pos = file.find_tensor("v.position_embd.weight");
    if (!pos) throw Error(path + ": missing tensor 'v.position_embd.weight'");
    const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(pos->shape[1]))));
    if (side < 2 || side * side != pos->shape[1])
        throw Error(path + ": tensor 'v.position_embd.weight' has " + std::to_string(pos->shape[1]) +
                    " positions, not a square grid");
    info.position_grid = side;
    const gguf::TensorInfo* up = file.find_tensor("v.blk.0.ffn_up.weight");
    info.weight_type = up ? std::string(gguf::traits(up->type).name) : "";
    return info;
}

void QwenVisionProjector::set_max_pixels(int64_t max_pixels) {
    if (max_pixels <= 0) return;
    limits_.max_pixels = std::min(max_pixels, info_.limits.max_pixels);
    limits_.min_pixels = std::min(info_.limits.min_pixels, limits_.max_pixels);
}

Tensor QwenVisionProjector::upload_f32(std::span<const float> values, int64_t rows, int64_t cols) {
    buffers_.push_back(backend_.allocate(values.size() * sizeof(float)));
    Tensor t = make_tensor(*buffers_.back(), TensorType::F32, rows, cols);
    backend_.write(t, std::as_bytes(values));
    return t;
}

Tensor QwenVisionProjector::upload_vector(const gguf::File& file, const std::string& name, int64_t n) {
    const gguf::TensorInfo& t = require_tensor(file, path_, name, {n});
    return upload_f32(tensor_as_f32(file, path_, t), 1, n);
}

Tensor QwenVisionProjector::map_matrix(const gguf::File& file, const std::string& name, int64_t rows, int64_t cols) {
    const gguf::TensorInfo& t = require_tensor(file, path_, name, {cols, rows});
    if (t.type != TensorType::F32 && t.type != TensorType::F16)
        throw Error(path_ + ": tensor '" + name + "' has type " + std::string(gguf::traits(t.type).name) +
                    ", expected f32 or f16");
    buffers_.push_back(backend_.map_weights(file.tensor_data(t)));
    return make_tensor(*buffers_.back(), t.type, rows, cols);
}

QwenVisionProjector::QwenVisionProjector(const gguf::File& file, const std::filesystem::path& path, Backend& backend)
    : path_(path.string()), backend_(backend), info_(read_projector_info(file, path)), limits_(info_.limits) {
    const int64_t W = info_.width, F = info_.feed_forward, P = info_.patch_size, M = info_.merge;
    const int64_t G = info_.position_grid;
    for (const char* key : {"clip.vision.image_mean", "clip.vision.image_std"}) {
        if (!file.has(key)) continue;
        const std::vector<float> v = file.at(key).float_array();
        if (v.size() != 3) throw Error(path_ + ": key '" + key + "' must hold 3 values");
        float* dst = std::string_view(key).ends_with("mean") ? mean_ : std_;
        for (int c = 0; c < 3; ++c) dst[c] = v[static_cast<size_t>(c)];
        if (dst == std_ && (std_[0] == 0 || std_[1] == 0 || std_[2] == 0))
            throw Error(path_ + ": key 'clip.vision.image_std' holds a zero");
    }
    // Validate every tensor before binding any, so a bad file costs no device memory.
    require_tensor(file, path_, "v.patch_embd.weight", {P, P, 3, W});
    require_tensor(file, path_, "v.patch_embd.weight.1", {P, P, 3, W});
    require_tensor(file, path_, "v.position_embd.weight", {W, G * G});
    for (int64_t b = 0; b < info_.block_count; ++b) {
        const std::string p = "v.blk." + std::to_string(b) + ".";
        for (const char* n : {"ln1.weight", "ln1.bias", "ln2.weight", "ln2.bias", "attn_out.bias", "ffn_down.bias"})
            require_tensor(file, path_, p + n, {W});
        require_tensor(file, path_, p + "attn_qkv.weight", {W, 3 * W});
        require_tensor(file, path_, p + "attn_qkv.bias", {3 * W});
        require_tensor(file, path_, p + "attn_out.weight", {W, W});
        require_tensor(file, path_, p + "ffn_up.weight", {W, F});
        require_tensor(file, path_, p + "ffn_up.bias", {F});
        require_tensor(file, path_, p + "ffn_down.weight", {F, W});
    }
    require_tensor(file, path_, "mm.0.weight", {W * M * M, W * M * M});
    require_tensor(file, path_, "mm.2.weight", {W * M * M, info_.projection_dim});

    // The two temporal halves side by side per output row, in the [C][T][y][x] order of preprocess's patches.
    const std::vector<float> w0 = tensor_as_f32(file, path_, file.tensor("v.patch_embd.weight"));
    const std::vector<float> w1 = tensor_as_f32(file, path_, file.tensor("v.patch_embd.weight.1"));
    const int64_t pp = P * P;
    std::vector<float> patch(static_cast<size_t>(W * 6 * pp));
    for (int64_t o = 0; o < W; ++o)
        for (int64_t c = 0; c < 3; ++c)
            for (int64_t t = 0; t < 2; ++t) {
                const float* src = (t == 0 ? w0 : w1).data() + (o * 3 + c) * pp;
                std::copy(src, src + pp, patch.begin() + (o * 6 + c * 2 + t) * pp);
            }
    w_.patch_w = upload_f32(patch, W, 6 * pp);
    w_.patch_b = upload_vector(file, "v.patch_embd.bias", W);
    w_.pos_table = tensor_as_f32(file, path_, file.tensor("v.position_embd.weight"));
    for (int64_t b = 0; b < info_.block_count; ++b) {
        const std::string p = "v.blk." + std::to_string(b) + ".";
        VisionBlock k;
        k.ln1_w = upload_vector(file, p + "ln1.weight", W);
        k.ln1_b = upload_vector(file, p + "ln1.bias", W);
        k.ln2_w = upload_vector(file, p + "ln2.weight", W);
        k.ln2_b = upload_vector(file, p + "ln2.bias", W);
        const Tensor qkv = map_matrix(file, p + "attn_qkv.weight", 3 * W, W);
        k.q_w = qkv.row_range(0, W);
        k.k_w = qkv.row_range(W, W);
        k.v_w = qkv.row_range(2 * W, W);
        const Tensor qkv_b = upload_vector(file, p + "attn_qkv.bias", 3 * W);
        k.q_b = make_tensor(*qkv_b.buffer, TensorType::F32, 1, W, 0);
        k.k_b = make_tensor(*qkv_b.buffer, TensorType::F32, 1, W, static_cast<size_t>(W) * 4);
        k.v_b = make_tensor(*qkv_b.buffer, TensorType::F32, 1, W, static_cast<size_t>(2 * W) * 4);
        k.out_w = map_matrix(file, p + "attn_out.weight", W, W);
        k.out_b = upload_vector(file, p + "attn_out.bias", W);
        k.up_w = map_matrix(file, p + "ffn_up.weight", F, W);
        k.up_b = upload_vector(file, p + "ffn_up.bias", F);
        k.down_w = map_matrix(file, p + "ffn_down.weight", W, F);
        k.down_b = upload_vector(file, p + "ffn_down.bias", W);
        w_.blocks.push_back(k);
    }
    w_.post_ln_w = upload_vector(file, "v.post_ln.weight", W);
    w_.post_ln_b = upload_vector(file, "v.post_ln.bias", W);
    const int64_t merged = W * M * M;
    w_.fc1_w = map_matrix(file, "mm.0.weight", merged, merged);
    w_.fc1_b = upload_vector(file, "mm.0.bias", merged);
    w_.fc2_w = map_matrix(file, "mm.2.weight", info_.projection_dim, merged);
    w_.fc2_b = upload_vector(file, "mm.2.bias", info_.projection_dim);
}

std::unique_ptr<Projector> load_projector(const gguf::File& file, const std::filesystem::path& path, Backend& backend) {
    return std::make_unique<QwenVisionProjector>(file, path, backend);
}

}  // namespace ember::vision
