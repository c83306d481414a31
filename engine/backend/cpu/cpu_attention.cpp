// SPDX-License-Identifier: MIT
// KV-cache writes and causal attention. Attention streams over the cache once per (token, head) with an online
// softmax (running maximum and sum), so it needs no score buffer whatever the context length; an attention sink
// joins the softmax at the end, in the normalization.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/host_buffer.h"
#include "quant/quant.h"

namespace ember::cpu_backend {

namespace {

constexpr int max_head_dim = 512;

// Elements [first, first + n) of cache row `row` as floats.
void load_cache_slice(const Tensor& cache, int64_t row, int64_t first, int n, float* out) {
    const std::byte* base = host_data(cache) + static_cast<size_t>(row) * cache.row_stride;
    switch (cache.type) {
        case gguf::TensorType::F32:
            std::memcpy(out, base + first * 4, static_cast<size_t>(n) * 4);
            return;
        case gguf::TensorType::F16: {
            const auto* h = reinterpret_cast<const uint16_t*>(base) + first;
            for (int i = 0; i < n; ++i) out[i] = quant::fp16_to_fp32(h[i]);
            return;
        }
        default:  // block types: slices start on block boundaries (head_dim is a multiple of the block size)
            quant::dequantize_row(cache.type, base + gguf::row_bytes(cache.type, first), out, n);
    }
}

void store_row(const float* src, const Tensor& cache, int64_t row) {
    std::byte* dst = host_data(cache) + static_cast<size_t>(row) * cache.row_stride;
    if (cache.type == gguf::TensorType::F32)
        std::memcpy(dst, src, static_cast<size_t>(cache.cols) * 4);
    else
        quant::quantize_row(cache.type, src, dst, cache.cols);
}

bool is_float_cache(gguf::TensorType type) {
    return type == gguf::TensorType::F32 || type == gguf::TensorType::F16 || type == gguf::TensorType::BF16;
}

// The factor of a head's accumulated values for its output: 1 / running_sum, or with an attention sink
// (AttentionParams::sinks) the sink's e^(sink - m) joins the sum, m the larger of the sink and the running maximum.
float output_scale(float running_max, double running_sum, const float* sink) {
    if (!(running_sum > 0)) return 0.0f;
    if (!sink) return static_cast<float>(1.0 / running_sum);
    const double m = std::max<double>(running_max, *sink);
    const double shrink = std::exp(running_max - m);
    return static_cast<float>(shrink / (running_sum * shrink + std::exp(*sink - m)));
}

constexpr int kHeadsPerItem = 4;   // query heads of one kv group handled together (the dot kernels' widest tile)
constexpr int64_t kKvTile = 32;    // cache rows scored together before the softmax update

}  // namespace

// Float caches: each work item takes up to four query heads of one kv group for one query row, and walks the
// cache in tiles: the tile's scores for all its heads with the dot kernels (each cache row read once), one online
// softmax update per tile, then the tile's value rows accumulated with the vector kernels.
void CpuBackend::attention_float_cache(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, int64_t n_kv,
                                       std::span<const int32_t> positions, const AttentionParams& p,
                                       const Tensor& out) {
    const int group = p.n_head / p.n_head_kv;
    const int hd = p.head_dim;
    const int per_item = std::min(group, kHeadsPerItem);
    const int splits = (group + per_item - 1) / per_item;
    const int64_t items = q.rows * p.n_head_kv * splits;
    const size_t k_offset = gguf::row_bytes(k_cache.type, hd), v_offset = gguf::row_bytes(v_cache.type, hd);
    const float* sinks = p.sinks ? host_f32(*p.sinks) : nullptr;
    for_rows(items, n_kv * hd * 2 * per_item, [&](int64_t begin, int64_t end) {
        float acc[kHeadsPerItem * max_head_dim];
        float scores[kKvTile * kHeadsPerItem];
        for (int64_t item = begin; item < end; ++item) {
            const int64_t t = item / (p.n_head_kv * splits);
            const int kv_head = static_cast<int>(item / splits % p.n_head_kv);
            const int first = (static_cast<int>(item % splits)) * per_item;
            const int n = std::min(per_item, group - first);
            const int h0 = kv_head * group + first;
            const float* qh = reinterpret_cast<const float*>(host_data(q) + t * q.row_stride) + h0 * hd;
            const int64_t position = positions[static_cast<size_t>(t)];
            const int64_t visible = std::min<int64_t>(n_kv, position + 1);
            float running_max[kHeadsPerItem];
            double running_sum[kHeadsPerItem];
            std::fill(running_max, running_max + n, -INFINITY);
            std::fill(running_sum, running_sum + n, 0.0);
            std::fill(acc, acc + n * max_head_dim, 0.0f);
            for (int64_t j0 = first_visible_row(position, p); j0 < visible; j0 += kKvTile) {
                const int64_t rows = std::min(kKvTile, visible - j0);
                cpu::dot_float_rows(isa_, k_cache.type, host_data(k_cache) + j0 * k_cache.row_stride + kv_head * k_offset,
                                    k_cache.row_stride, rows, qh, hd, n, hd, scores);
                for (int i = 0; i < n; ++i) {
                    float tile_max = -INFINITY;
                    for (int64_t r = 0; r < rows; ++r) tile_max = std::max(tile_max, scores[r * n + i] *= p.scale);
                    if (tile_max > running_max[i]) {
                        const float correction = std::exp(running_max[i] - tile_max);
                        for (int c = 0; c < hd; ++c) acc[i * max_head_dim + c] *= correction;
                        running_sum[i] *= correction;
                        running_max[i] = tile_max;
                    }
                    for (int64_t r = 0; r < rows; ++r) {
                        const float weight = std::exp(scores[r * n + i] - running_max[i]);
                        scores[r * n + i] = weight;
                        running_sum[i] += weight;
                    }
                }
                cpu::accumulate_float_rows(isa_, v_cache.type,
                                           host_data(v_cache) + j0 * v_cache.row_stride + kv_head * v_offset,
                                           v_cache.row_stride, rows, scores, n, acc, max_head_dim, hd);
            }
            for (int i = 0; i < n; ++i) {
                float* oh = reinterpret_cast<float*>(host_data(out) + t * out.row_stride) + (h0 + i) * hd;
                const float inv = output_scale(running_max[i], running_sum[i], sinks ? sinks + h0 + i : nullptr);
                for (int c = 0; c < hd; ++c) oh[c] = acc[i * max_head_dim + c] * inv;
            }
        }
    });
}

void CpuBackend::do_store_kv(const Tensor& k, const Tensor& v, const Tensor& k_cache, const Tensor& v_cache,
                             std::span<const int32_t> positions) {
    for (size_t i = 0; i < positions.size(); ++i) {
        const int32_t pos = positions[i];
        store_row(reinterpret_cast<const float*>(host_data(k) + i * k.row_stride), k_cache, pos);
        store_row(reinterpret_cast<const float*>(host_data(v) + i * v.row_stride), v_cache, pos);
    }
}

void CpuBackend::do_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache, int64_t n_kv,
                              std::span<const int32_t> positions, const AttentionParams& p, const Tensor& out) {
    if (is_float_cache(k_cache.type) && is_float_cache(v_cache.type)) {
        attention_float_cache(q, k_cache, v_cache, n_kv, positions, p, out);
        return;
    }
    const int group = p.n_head / p.n_head_kv;
    const int hd = p.head_dim;
    const float* sinks = p.sinks ? host_f32(*p.sinks) : nullptr;

    for_rows(q.rows * p.n_head, n_kv * hd * 2, [&](int64_t begin, int64_t end) {
        float k_row[max_head_dim];
        float v_row[max_head_dim];
        float acc[max_head_dim];
        for (int64_t item = begin; item < end; ++item) {
            const int64_t t = item / p.n_head;
            const int h = static_cast<int>(item % p.n_head);
            const int kv_head = h / group;
            const float* qh = reinterpret_cast<const float*>(host_data(q) + t * q.row_stride) + h * hd;
            float* oh = reinterpret_cast<float*>(host_data(out) + t * out.row_stride) + h * hd;
            const int64_t position = positions[static_cast<size_t>(t)];
            const int64_t visible = std::min<int64_t>(n_kv, position + 1);

            float running_max = -INFINITY;
            double running_sum = 0.0;
            std::fill(acc, acc + hd, 0.0f);
            for (int64_t j = first_visible_row(position, p); j < visible; ++j) {
                load_cache_slice(k_cache, j, int64_t{kv_head} * hd, hd, k_row);
                float s = 0.0f;
                for (int i = 0; i < hd; ++i) s += qh[i] * k_row[i];
                s *= p.scale;
                if (s > running_max) {
                    const float correction = std::exp(running_max - s);
                    for (int i = 0; i < hd; ++i) acc[i] *= correction;
                    running_sum *= correction;
                    running_max = s;
                }
                const float weight = std::exp(s - running_max);
                running_sum += weight;
                load_cache_slice(v_cache, j, int64_t{kv_head} * hd, hd, v_row);
                for (int i = 0; i < hd; ++i) acc[i] += weight * v_row[i];
            }
            const float inv = output_scale(running_max, running_sum, sinks ? sinks + h : nullptr);
            for (int i = 0; i < hd; ++i) oh[i] = acc[i] * inv;
        }
    });
}

}  // namespace ember::cpu_backend
