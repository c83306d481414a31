// SPDX-License-Identifier: MIT
// The vision encoder and merger (spec §5) on the backend: patch embedding as one matmul over both temporal halves,
// the learned position table resampled bilinearly (align_corners = True), pre-LN blocks with 2-D RoPE and
// bidirectional attention, then the 2x2 merger. Scratch is sized by the image's patch count; the MLP runs in row
// chunks so its wide intermediate stays bounded.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "ember/error.h"
#include "vision/projector_impl.h"

namespace ember::vision {
namespace {

constexpr int64_t kMlpChunkRows = 4096;

struct PatchCoords {
    std::vector<int64_t> row, col;  // grid coordinates of patch n (merge-block order)
};

PatchCoords coords(const ImageGrid& grid) {
    const int64_t m = grid.merge, block_cols = grid.patch_cols / m;
    PatchCoords c;
    c.row.resize(static_cast<size_t>(grid.patches()));
    c.col.resize(static_cast<size_t>(grid.patches()));
    for (int64_t n = 0; n < grid.patches(); ++n) {
        const int64_t block = n / (m * m), within = n % (m * m);
        c.row[static_cast<size_t>(n)] = (block / block_cols) * m + within / m;
        c.col[static_cast<size_t>(n)] = (block % block_cols) * m + within % m;
    }
    return c;
}

}  // namespace

std::vector<float> QwenVisionProjector::positions_for(const ImageGrid& grid) const {
    const int64_t W = info_.width, G = info_.position_grid;
    const PatchCoords pc = coords(grid);
    // linspace(0, G - 1, g) per axis, bilinear between the four neighbours.
    const auto source = [&](int64_t i, int64_t g) {
        return g > 1 ? static_cast<double>(i) * static_cast<double>(G - 1) / static_cast<double>(g - 1) : 0.0;
    };
    std::vector<float> out(static_cast<size_t>(grid.patches() * W));
    for (int64_t n = 0; n < grid.patches(); ++n) {
        const double y = source(pc.row[static_cast<size_t>(n)], grid.patch_rows);
        const double x = source(pc.col[static_cast<size_t>(n)], grid.patch_cols);
        const int64_t y0 = static_cast<int64_t>(std::floor(y)), x0 = static_cast<int64_t>(std::floor(x));
        const int64_t y1 = std::min(y0 + 1, G - 1), x1 = std::min(x0 + 1, G - 1);
        const double fy = y - static_cast<double>(y0), fx = x - static_cast<double>(x0);
        const double w00 = (1 - fy) * (1 - fx), w01 = (1 - fy) * fx, w10 = fy * (1 - fx), w11 = fy * fx;
        const float* t00 = &w_.pos_table[static_cast<size_t>((y0 * G + x0) * W)];
        const float* t01 = &w_.pos_table[static_cast<size_t>((y0 * G + x1) * W)];
        const float* t10 = &w_.pos_table[static_cast<size_t>((y1 * G + x0) * W)];
        const float* t11 = &w_.pos_table[static_cast<size_t>((y1 * G + x1) * W)];
        float* dst = &out[static_cast<size_t>(n * W)];
        for (int64_t d = 0; d < W; ++d)
            dst[d] = static_cast<float>(w00 * t00[d] + w01 * t01[d] + w10 * t10[d] + w11 * t11[d]);
    }
    return out;
}

std::vector<float> QwenVisionProjector::encode_patches(const ImageGrid& grid, std::span<const float> patches) const {
    const int64_t N = grid.patches(), W = info_.width, F = info_.feed_forward, P = info_.patch_size;
    const int64_t M = info_.merge, H = info_.heads, D = W / H;
    if (grid.merge != M || N <= 0 || grid.patch_rows % M != 0 || grid.patch_cols % M != 0 ||
        static_cast<int64_t>(patches.size()) != N * 6 * P * P)
        throw Error(path_ + ": preprocessed patches do not match the grid");
    Backend& be = backend_;
    const auto alloc = [&](int64_t rows, int64_t cols) {
        auto buf = be.allocate(static_cast<size_t>(rows * cols) * sizeof(float));
        Tensor t = make_tensor(*buf, gguf::TensorType::F32, rows, cols);
        return std::make_pair(std::move(buf), t);
    };
    auto [in_buf, in] = alloc(N, 6 * P * P);
    auto [x_buf, x] = alloc(N, W);
    auto [a_buf, a] = alloc(N, W);
    auto [q_buf, q] = alloc(N, W);
    auto [k_buf, k] = alloc(N, W);
    auto [v_buf, v] = alloc(N, W);
    auto [o_buf, o] = alloc(N, W);
    const int64_t chunk = std::min(N, kMlpChunkRows);
    auto [ff_buf, ff] = alloc(chunk, F);

    be.write(in, std::as_bytes(patches));
    be.matmul(w_.patch_w, in, x, &w_.patch_b);
    in_buf.reset();
    {
        const std::vector<float> pos = positions_for(grid);
        be.write(o, std::as_bytes(std::span<const float>(pos)));
        be.add(x, o, x);
    }

    const PatchCoords pc = coords(grid);
    std::vector<int32_t> rope_pos(static_cast<size_t>(2 * N));
    for (int64_t n = 0; n < N; ++n) {
        rope_pos[static_cast<size_t>(n)] = static_cast<int32_t>(pc.row[static_cast<size_t>(n)]);
        rope_pos[static_cast<size_t>(N + n)] = static_cast<int32_t>(pc.col[static_cast<size_t>(n)]);
    }
    const std::vector<int32_t> attn_pos(static_cast<size_t>(N), static_cast<int32_t>(N - 1));
    RopeParams rope;
    rope.mode = RopeMode::vision;
    rope.n_rot = static_cast<int>(D);
    rope.freq_base = 10000.0f;
    AttentionParams ap;
    ap.n_head = ap.n_head_kv = static_cast<int>(H);
    ap.head_dim = static_cast<int>(D);
    ap.scale = 1.0f / std::sqrt(static_cast<float>(D));
    const float eps = info_.layer_norm_eps;

    for (const VisionBlock& b : w_.blocks) {
        be.layer_norm(x, b.ln1_w, b.ln1_b, eps, a);
        be.matmul(b.q_w, a, q, &b.q_b);
        be.matmul(b.k_w, a, k, &b.k_b);
        be.matmul(b.v_w, a, v, &b.v_b);
        be.rope(q, static_cast<int>(D), rope_pos, rope);
        be.rope(k, static_cast<int>(D), rope_pos, rope);
        be.attention(q, k, v, N, attn_pos, ap, o);
        be.matmul(b.out_w, o, a, &b.out_b);
        be.add(x, a, x);
        be.layer_norm(x, b.ln2_w, b.ln2_b, eps, a);
        for (int64_t first = 0; first < N; first += chunk) {
            const int64_t n = std::min(chunk, N - first);
            const Tensor f = ff.row_range(0, n);
            be.matmul(b.up_w, a.row_range(first, n), f, &b.up_b);
            be.unary(UnaryOp::gelu_tanh, f, f);
            be.matmul(b.down_w, f, o.row_range(first, n), &b.down_b);
        }
        be.add(x, o, x);
    }
    ff_buf.reset();

    // Merger: each 2x2 block's four consecutive patch rows side by side.
    be.layer_norm(x, w_.post_ln_w, w_.post_ln_b, eps, a);
    const int64_t tokens = N / (M * M), merged = W * M * M;
    const Tensor y4 = a.reshaped(merged);
    const Tensor h = q.reshaped(merged);
    be.matmul(w_.fc1_w, y4, h, &w_.fc1_b);
    be.unary(UnaryOp::gelu_erf, h, h);
    auto [out_buf, out] = alloc(tokens, info_.projection_dim);
    be.matmul(w_.fc2_w, h, out, &w_.fc2_b);
    std::vector<float> rows(static_cast<size_t>(tokens * info_.projection_dim));
    be.read(out, std::as_writable_bytes(std::span<float>(rows)));
    be.synchronize();
    return rows;
}

ImageGrid QwenVisionProjector::grid(const Image& image) const {
    return smart_resize(image.height, image.width, info_.patch_size, info_.merge, limits_);
}

ImageEmbedding QwenVisionProjector::encode(const Image& image) const {
    if (image.width <= 0 || image.height <= 0 ||
        image.rgb.size() != static_cast<size_t>(image.width * image.height * 3))
        throw Error(image.name + ": empty or malformed image");
    ImageEmbedding e;
    e.grid = grid(image);
    e.downscaled = downscaled_by_limits(image.height, image.width, info_.patch_size, info_.merge, limits_);
    e.n_embd = info_.projection_dim;
    const std::vector<float> patches =
        preprocess(image, e.grid, info_.patch_size, std::span<const float, 3>(mean_), std::span<const float, 3>(std_));
    e.rows = encode_patches(e.grid, patches);
    return e;
}

}  // namespace ember::vision
