// SPDX-License-Identifier: MIT
// What the op suite does not see of the HIP/CUDA backend: decode steps replayed from one captured graph give the
// results of the CPU backend step after step while positions, token ids and the cache length change; every
// matrix-product path (integer mat x vec, float mat x vec, tiles, grouped experts) against a float64 reference;
// weights read in place from a file mapping; Q8_0 written on the device (convert, store_kv) byte for byte what the
// CPU quantizer writes. Skipped where no such GPU is present.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "backend/gpu/gpu_backend.h"
#include "quant/quant.h"
#include "hip/matmul_mma.cuh"

using namespace ember;
using gguf::TensorType;

namespace {

bool has_device() {
    for (const DeviceInfo& d : list_devices())
        if (d.backend == EMBER_GPU_BACKEND_NAME) return true;
    return false;
}

std::vector<float> random_values(std::mt19937& rng, size_t n, float scale = 1.0f) {
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
}

std::vector<std::byte> quantized(TensorType type, int64_t rows, int64_t cols, const std::vector<float>& v) {
    const size_t stride = gguf::row_bytes(type, cols);
    std::vector<std::byte> bytes(stride * static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) quant::quantize_row(type, v.data() + r * cols, bytes.data() + r * stride, cols);
    return bytes;
}

std::vector<double> dequantized(TensorType type, int64_t rows, int64_t cols, const std::vector<std::byte>& bytes) {
    const size_t stride = gguf::row_bytes(type, cols);
    std::vector<float> row(static_cast<size_t>(cols));
    std::vector<double> out;
    for (int64_t r = 0; r < rows; ++r) {
        quant::dequantize_row(type, bytes.data() + r * stride, row.data(), cols);
        out.insert(out.end(), row.begin(), row.end());
    }
    return out;
}

// Products of many tokens run on the tensor cores where the device has them: with the other block-quantized weights
// on f16 activations (11-bit significands) and f32 sums, a few 1e-4 of the largest output; float weights as three
// TF32 products (about 2^-21).
constexpr double kTensorCoreTolerance = 2e-3;

double relative_error(const std::vector<float>& got, const std::vector<double>& want) {
    double scale = 1e-30, worst = 0;
    for (double w : want) scale = std::max(scale, std::abs(w));
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
    return worst / scale;
}

// The integer path's products (mat x vec; tiles on a device with tensor cores) take 8-bit activations: against a
// reference on the same activations only the f32 sums' rounding is left.
constexpr double kEightBitTolerance = 1e-4;

// Whether products of `type` over `tokens` tokens take 8-bit activations on this device.
bool on_eight_bit_activations(TensorType type, int64_t cols, int64_t tokens) {
    const auto id = static_cast<uint32_t>(type);
    if (!gpu_kernels::has_integer_matvec(id)) return false;
    if (tokens <= gpu_kernels::max_matvec_tokens(id, cols)) return true;
    gpu::DeviceProp prop{};
    if (gpu::device_properties(&prop, 0) != gpu::kSuccess) return false;
    gpu_kernels::Launch l;
    l.matrix_cores = gpu::has_matrix_cores(prop);
    return gpu_kernels::int8_tiles_available(l, gpu_kernels::Weights{.type = id, .cols = cols});
}

// x as those products see it: each block of 32 quantized as the kernels' Q8_1 blocks (scale amax / 127 in float,
// codes rounded half away from zero) and read back exactly.
std::vector<double> through_q8_1(const std::vector<float>& x) {
    std::vector<double> out(x.size());
    for (size_t b = 0; b < x.size(); b += 32) {
        float amax = 0.0f;
        for (size_t i = b; i < b + 32; ++i) amax = std::max(amax, std::abs(x[i]));
        const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        for (size_t i = b; i < b + 32; ++i)
            out[i] = static_cast<double>(d) * std::clamp(std::round(x[i] * id), -127.0f, 127.0f);
    }
    return out;
}

// out[n, r] = w[r, :] . x[n, :] in float64.
template <typename X>
std::vector<double> product(const std::vector<double>& w, int64_t rows, int64_t cols, const std::vector<X>& x,
                            int64_t tokens) {
    std::vector<double> out(static_cast<size_t>(tokens * rows));
    for (int64_t n = 0; n < tokens; ++n)
        for (int64_t r = 0; r < rows; ++r) {
            double s = 0;
            for (int64_t c = 0; c < cols; ++c) s += w[r * cols + c] * x[n * cols + c];
            out[n * rows + r] = s;
        }
    return out;
}

// Tensors of one backend.
struct Tensors {
    explicit Tensors(Backend& b) : backend(b) {}
    Tensor upload(TensorType type, int64_t rows, int64_t cols, std::span<const std::byte> bytes) {
        buffers.push_back(backend.allocate(bytes.size()));
        Tensor t = make_tensor(*buffers.back(), type, rows, cols);
        backend.write(t, bytes);
        return t;
    }
    Tensor f32(int64_t rows, int64_t cols, const std::vector<float>& v) {
        return upload(TensorType::F32, rows, cols, std::as_bytes(std::span(v)));
    }
    Tensor empty(TensorType type, int64_t rows, int64_t cols) {
        buffers.push_back(backend.allocate(gguf::row_bytes(type, cols) * static_cast<size_t>(rows)));
        return make_tensor(*buffers.back(), type, rows, cols);
    }
    std::vector<float> download(const Tensor& t) {
        std::vector<float> out(static_cast<size_t>(t.rows * t.cols));
        backend.read(t, std::as_writable_bytes(std::span(out)));
        return out;
    }
    Backend& backend;
    std::vector<std::unique_ptr<Buffer>> buffers;
};

class GpuBackendTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!has_device()) GTEST_SKIP() << EMBER_GPU_BACKEND_NAME << ": no device here";
    }
    std::mt19937 rng_{7};
};

// One decode step of a small attention layer: embed, norm, project, rotate, cache, attend (with gpt-oss's attention
// sinks, whose tensor is part of the replayed launch), project, add.
struct Layer {
    static constexpr int64_t vocab = 50, embd = 128, heads = 4, kv_heads = 2, head_dim = 32, ctx = 64;
    Tensor embd_table, norm, wq, wk, wv, wo, sinks;
    Tensor k_cache, v_cache, x, h, q, k, v, attn;

    Layer(Tensors& t, std::mt19937& rng) {
        auto weight = [&](TensorType type, int64_t rows, int64_t cols) {
            return t.upload(type, rows, cols, quantized(type, rows, cols, random_values(rng, rows * cols, 0.2f)));
        };
        embd_table = weight(TensorType::Q8_0, vocab * 2, embd);
        norm = t.f32(1, embd, random_values(rng, embd));
        wq = weight(TensorType::Q4_0_ROCMFP4_FAST, heads * head_dim, embd);
        wk = weight(TensorType::Q4_0_ROCMFP4, kv_heads * head_dim, embd);
        wv = weight(TensorType::Q4_0_ROCMFP4, kv_heads * head_dim, embd);
        wo = weight(TensorType::Q8_0, embd, heads * head_dim);
        sinks = t.f32(1, heads, random_values(rng, heads));
        k_cache = t.empty(TensorType::F16, ctx, kv_heads * head_dim);
        v_cache = t.empty(TensorType::F16, ctx, kv_heads * head_dim);
        x = t.empty(TensorType::F32, 1, embd);
        h = t.empty(TensorType::F32, 1, embd);
        q = t.empty(TensorType::F32, 1, heads * head_dim);
        k = t.empty(TensorType::F32, 1, kv_heads * head_dim);
        v = t.empty(TensorType::F32, 1, kv_heads * head_dim);
        attn = t.empty(TensorType::F32, 1, heads * head_dim);
    }

    std::vector<float> step(Tensors& t, int32_t token, int32_t pos) {
        Backend& b = t.backend;
        const int32_t ids[] = {token};
        const int32_t positions[] = {pos};
        RopeParams rope{RopeMode::neox, head_dim, 10000.0f, 1.0f};
        b.get_rows(embd_table, ids, x);
        b.rms_norm(x, norm, 1e-6f, h);
        b.matmul(wq, h, q);
        b.matmul(wk, h, k);
        b.matmul(wv, h, v);
        b.rope(q, head_dim, positions, rope);
        b.rope(k, head_dim, positions, rope);
        b.store_kv(k, v, k_cache, v_cache, positions);
        AttentionParams p{heads, kv_heads, head_dim, 0.1767767f};
        p.sinks = &sinks;
        b.attention(q, k_cache, v_cache, pos + 1, positions, p, attn);
        b.matmul(wo, attn, h);
        b.add(x, h, x);
        return t.download(x);
    }
};

TEST_F(GpuBackendTest, DecodeStepsReplayOneGraphAndMatchTheCpu) {
    for (bool graphs : {true, false}) {
        gpu_backend::GpuBackendOptions options;
        options.graphs = graphs;
        auto gpu = gpu_backend::make_gpu_backend(options);
        auto cpu = make_cpu_backend({1});
        Tensors tg(*gpu), tc(*cpu);
        std::mt19937 rng_g(11), rng_c(11);
        Layer lg(tg, rng_g), lc(tc, rng_c);
        gpu->synchronize();  // the small weight uploads are staged into a step of their own, before the decode steps
        for (int32_t pos = 0; pos < 12; ++pos) {
            const int32_t token = (pos * 7 + 3) % static_cast<int32_t>(Layer::vocab * 2);
            const std::vector<float> want = lc.step(tc, token, pos);
            const std::vector<float> got = lg.step(tg, token, pos);
            EXPECT_LE(relative_error(got, {want.begin(), want.end()}), 2e-2) << "step " << pos << " graphs " << graphs;
        }
        const gpu_backend::StepStats& s = gpu->step_stats();
        if (graphs) {
            EXPECT_EQ(s.captured_steps, 1u) << "the second decode step is captured";
            EXPECT_GE(s.replayed_steps, 10u) << "every later step replays it";
        } else {
            EXPECT_EQ(s.replayed_steps + s.captured_steps, 0u);
        }
    }
}

TEST_F(GpuBackendTest, EveryMatrixProductPathAgainstFloat64) {
    auto gpu = gpu_backend::make_gpu_backend({});
    Tensors t(*gpu);
    const int64_t cols = 512;
    // 32 rows: the narrow token tiles of the tensor-core path.
    for (int64_t rows : {96, 32})
        for (TensorType type : {TensorType::Q4_0_ROCMFP4, TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q4_0,
                                TensorType::Q8_0, TensorType::Q6_K, TensorType::Q4_K, TensorType::F16}) {
            const std::vector<std::byte> bytes = quantized(type, rows, cols, random_values(rng_, rows * cols));
            const std::vector<double> w = dequantized(type, rows, cols, bytes);
            const Tensor tw = t.upload(type, rows, cols, bytes);
            // Mat x vec up to 32 tokens (integer types, runs of 16) or 16 (float path, runs of 8); past that, tiles,
            // including partial tiles.
            for (int64_t tokens : {1, 3, 8, 9, 16, 17, 32, 33, 64, 100}) {
                const std::vector<float> x = random_values(rng_, tokens * cols);
                const Tensor out = t.empty(TensorType::F32, tokens, rows);
                gpu->matmul(tw, t.f32(tokens, cols, x), out);
                const bool eight_bit = on_eight_bit_activations(type, cols, tokens);
                const std::vector<double> want =
                    eight_bit ? product(w, rows, cols, through_q8_1(x), tokens) : product(w, rows, cols, x, tokens);
                const bool matvec = tokens <= gpu_kernels::max_matvec_tokens(static_cast<uint32_t>(type), cols);
                const double tolerance = eight_bit                                ? kEightBitTolerance
                                         : !matvec && type != TensorType::F16   ? kTensorCoreTolerance
                                                                                : 1e-4;
                EXPECT_LE(relative_error(t.download(out), want), tolerance)
                    << gguf::traits(type).name << ", " << rows << " rows, " << tokens << " tokens";
            }
        }
}

// The tensor-core tiles run wherever the device has tensor cores (not only where the build happened to target
// them): a build whose kernels came from older PTX would fall back to the scalar tiles, and this says so.
TEST_F(GpuBackendTest, TensorCoresRunWhereTheDeviceHasThem) {
    gpu::DeviceProp prop{};
    ASSERT_EQ(gpu::device_properties(&prop, 0), gpu::kSuccess);
    gpu_kernels::Launch l;
    l.matrix_cores = gpu::has_matrix_cores(prop);
    EXPECT_EQ(gpu_kernels::mma_available(l, gpu_kernels::kQ4_0), l.matrix_cores) << prop.name;
    EXPECT_EQ(gpu_kernels::mma_available(l, gpu_kernels::kF32), l.matrix_cores) << prop.name;
    l.matrix_cores = false;  // EMBER_GPU_TENSOR_CORES=0
    EXPECT_FALSE(gpu_kernels::mma_available(l, gpu_kernels::kQ4_0));
}

// Shapes large enough for the wide token tiles of the tensor-core path (64 and 32 tokens per block on a GPU with
// up to 136 multiprocessors, such as the H200's 132), against float64.
TEST_F(GpuBackendTest, LargeProductsMatchTheReference) {
    auto gpu = gpu_backend::make_gpu_backend({});
    Tensors t(*gpu);
    const int64_t rows = 17 * 128 + 5, cols = 256;
    for (TensorType type : {TensorType::Q4_0_ROCMFP4_FAST, TensorType::F32}) {
        const std::vector<std::byte> bytes = quantized(type, rows, cols, random_values(rng_, rows * cols));
        const std::vector<double> w = dequantized(type, rows, cols, bytes);
        const Tensor tw = t.upload(type, rows, cols, bytes);
        for (int64_t tokens : {512, 260}) {
            const std::vector<float> x = random_values(rng_, tokens * cols);
            const Tensor out = t.empty(TensorType::F32, tokens, rows);
            gpu->matmul(tw, t.f32(tokens, cols, x), out);
            const bool eight_bit = on_eight_bit_activations(type, cols, tokens);
            const std::vector<double> want =
                eight_bit ? product(w, rows, cols, through_q8_1(x), tokens) : product(w, rows, cols, x, tokens);
            const double tolerance = eight_bit                  ? kEightBitTolerance
                                     : type == TensorType::F32 ? 1e-5
                                                               : kTensorCoreTolerance;
            EXPECT_LE(relative_error(t.download(out), want), tolerance) << gguf::traits(type).name << ", " << tokens
                                                                        << " tokens";
        }
    }
}

TEST_F(GpuBackendTest, GroupedExpertsMatchTheReference) {
    auto gpu = gpu_backend::make_gpu_backend({});
    Tensors t(*gpu);
    const int64_t experts = 16, rows = 64, cols = 256;
    const int k = 4;
    // 40 tokens: about 10 slots per expert (narrow tiles); 200: 50 (the wide tiles of the tensor-core path).
    for (int64_t tokens : {40, 200}) {
        const TensorType type = TensorType::Q4_0_ROCMFP4_FAST;
        const std::vector<std::byte> bytes =
            quantized(type, experts * rows, cols, random_values(rng_, experts * rows * cols));
        const std::vector<double> w = dequantized(type, experts * rows, cols, bytes);
        const Tensor tw = t.upload(type, experts * rows, cols, bytes);
        std::vector<int32_t> ids(static_cast<size_t>(tokens * k));
        for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 5 + i / 7) % experts);
        const Tensor tids = t.upload(TensorType::I32, tokens, k, std::as_bytes(std::span(ids)));
        for (bool per_slot : {false, true}) {
            const int64_t x_rows = per_slot ? tokens * k : tokens;
            const std::vector<float> x = random_values(rng_, x_rows * cols);
            const Tensor out = t.empty(TensorType::F32, tokens * k, rows);
            gpu->matmul_experts(tw, experts, t.f32(x_rows, cols, x), tids, out);
            const bool eight_bit = on_eight_bit_activations(type, cols, tokens);
            const std::vector<double> xs = eight_bit ? through_q8_1(x) : std::vector<double>(x.begin(), x.end());
            std::vector<double> want(static_cast<size_t>(tokens * k * rows));
            for (int64_t s = 0; s < tokens * k; ++s) {
                const int64_t e = ids[static_cast<size_t>(s)], src = per_slot ? s : s / k;
                for (int64_t r = 0; r < rows; ++r) {
                    double sum = 0;
                    for (int64_t c = 0; c < cols; ++c) sum += w[(e * rows + r) * cols + c] * xs[src * cols + c];
                    want[s * rows + r] = sum;
                }
            }
            EXPECT_LE(relative_error(t.download(out), want), eight_bit ? kEightBitTolerance : kTensorCoreTolerance)
                << (per_slot ? "per slot, " : "per token, ") << tokens << " tokens";
        }
    }
}

// Verify batches of the integer types (from 9 tokens on; fewer run per slot) group the slots by expert and read
// each expert's rows once per tile of 8 of its slots: every slot's row must be the one-token (per-slot) product's,
// bit for bit, so that verifying drafted tokens sees exactly what decoding them one by one sees; a slot with an
// expert outside the range gives zeros.
TEST_F(GpuBackendTest, GroupedExpertMatvecEqualsOneTokenAtATime) {
    auto gpu = gpu_backend::make_gpu_backend({});
    Tensors t(*gpu);
    const int64_t experts = 12, rows = 80, cols = 512;
    const int k = 4;
    for (TensorType type : {TensorType::Q4_0_ROCMFP4, TensorType::Q4_0_ROCMFP4_FAST, TensorType::Q4_0,
                            TensorType::Q8_0}) {
        const std::vector<std::byte> bytes =
            quantized(type, experts * rows, cols, random_values(rng_, experts * rows * cols));
        const std::vector<double> w = dequantized(type, experts * rows, cols, bytes);
        const Tensor tw = t.upload(type, experts * rows, cols, bytes);
        for (int64_t tokens : {2, 9, 16, 32}) {
            // Expert 3 in every token (more than one tile of 8 slots past 8 tokens), one slot out of range.
            std::vector<int32_t> ids(static_cast<size_t>(tokens * k));
            for (size_t i = 0; i < ids.size(); ++i)
                ids[i] = i % k == 0 ? 3 : static_cast<int32_t>((i * 7 + i / 5) % experts);
            ids[1] = -1;
            const Tensor tids = t.upload(TensorType::I32, tokens, k, std::as_bytes(std::span(ids)));
            for (bool per_slot : {false, true}) {
                const int64_t x_rows = per_slot ? tokens * k : tokens;
                const std::vector<float> x = random_values(rng_, x_rows * cols);
                const Tensor tx = t.f32(x_rows, cols, x);
                const Tensor out = t.empty(TensorType::F32, tokens * k, rows);
                gpu->matmul_experts(tw, experts, tx, tids, out);
                const std::vector<float> batch = t.download(out);
                std::vector<double> want(static_cast<size_t>(tokens * k * rows), 0.0);
                for (int64_t s = 0; s < tokens * k; ++s) {
                    const int64_t e = ids[static_cast<size_t>(s)], src = per_slot ? s : s / k;
                    if (e < 0) continue;
                    for (int64_t r = 0; r < rows; ++r) {
                        double sum = 0;
                        for (int64_t c = 0; c < cols; ++c) sum += w[(e * rows + r) * cols + c] * x[src * cols + c];
                        want[s * rows + r] = sum;
                    }
                }
                const std::string what = std::string(gguf::traits(type).name) + ", " + std::to_string(tokens) +
                                         " tokens" + (per_slot ? ", per slot" : "");
                EXPECT_LE(relative_error(batch, want), 3e-2) << what;
                for (int64_t r = 0; r < rows; ++r) EXPECT_EQ(batch[rows + r], 0.0f) << what;
                for (int64_t token = 0; token < tokens; ++token) {
                    const Tensor one = t.empty(TensorType::F32, k, rows);
                    gpu->matmul_experts(tw, experts, per_slot ? tx.row_range(token * k, k) : tx.row_range(token, 1),
                                        tids.row_range(token, 1), one);
                    const std::vector<float> single = t.download(one);
                    EXPECT_TRUE(std::equal(single.begin(), single.end(), batch.begin() + token * k * rows))
                        << what << ": token " << token << " differs from its one-token product";
                }
            }
        }
    }
}

TEST_F(GpuBackendTest, WeightsReadInPlaceFromAFileMapping) {
    const int64_t rows = 64, cols = 256;
    const std::vector<std::byte> bytes =
        quantized(TensorType::Q4_0_ROCMFP4_FAST, rows, cols, random_values(rng_, rows * cols));
    // A file mapped read-only, as gguf::File maps a model; the tensor starts at an odd offset like a GGUF tensor
    // after a 17-byte-block neighbour.
    char path[] = "/tmp/ember-gpu-weights-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    const size_t offset = 4096 + 17 * 3;
    std::vector<std::byte> file(offset + bytes.size() + 100);
    std::copy(bytes.begin(), bytes.end(), file.begin() + static_cast<std::ptrdiff_t>(offset));
    ASSERT_EQ(::write(fd, file.data(), file.size()), static_cast<ssize_t>(file.size()));
    void* map = ::mmap(nullptr, file.size(), PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
    ::unlink(path);
    ASSERT_NE(map, MAP_FAILED);
    const std::span<const std::byte> tensor(static_cast<const std::byte*>(map) + offset, bytes.size());

    const std::vector<float> x = random_values(rng_, 3 * cols);
    std::vector<std::vector<float>> results;
    for (auto placement : {gpu_backend::WeightPlacement::upload, gpu_backend::WeightPlacement::in_place}) {
        gpu_backend::GpuBackendOptions options;
        options.weights = placement;
        auto gpu = gpu_backend::make_gpu_backend(options);
        Tensors t(*gpu);
        auto buffer = gpu->map_weights(tensor);
        Tensor w = make_tensor(*buffer, TensorType::Q4_0_ROCMFP4_FAST, rows, cols);
        const Tensor out = t.empty(TensorType::F32, 3, rows);
        gpu->matmul(w, t.f32(3, cols, x), out);
        results.push_back(t.download(out));
        const gpu_backend::WeightStats& s = gpu->weight_stats();
        if (placement == gpu_backend::WeightPlacement::in_place) {
            std::printf("in place: %llu bytes (%s)%s%s\n", static_cast<unsigned long long>(s.in_place_bytes),
                        s.in_place_how.c_str(), s.note.empty() ? "" : "; fell back: ", s.note.c_str());
            EXPECT_EQ(s.in_place_bytes + s.uploaded_bytes, bytes.size());
        } else {
            EXPECT_EQ(s.uploaded_bytes, bytes.size());
        }
        gpu->synchronize();
    }
    EXPECT_EQ(results[0], results[1]);
    ::munmap(map, file.size());
}

std::string hex_block(const std::vector<std::byte>& bytes, size_t block) {
    std::string s;
    char text[4];
    for (size_t i = 34 * block; i < 34 * block + 34 && i < bytes.size(); ++i) {
        std::snprintf(text, sizeof text, "%02x ", static_cast<unsigned>(bytes[i]));
        s += text;
    }
    return s;
}

// Q8_0 written on the device (convert, and store_kv into a Q8_0 cache) holds exactly the bytes of
// quant::quantize_row, and converting them back gives exactly its dequantized values. On a mismatch the first
// differing block is printed byte by byte.
TEST_F(GpuBackendTest, Q8_0RowsAreTheBytesOfTheCpuQuantizer) {
    auto gpu = gpu_backend::make_gpu_backend({});
    Tensors t(*gpu);
    constexpr int64_t rows = 5, cols = 128;
    const std::vector<float> x = random_values(rng_, rows * cols, 1.5f);
    const std::vector<std::byte> want = quantized(TensorType::Q8_0, rows, cols, x);
    auto first_difference = [&](const std::vector<std::byte>& got, const char* what) {
        ASSERT_EQ(got.size(), want.size());
        size_t first = want.size(), count = 0;
        for (size_t b = 0; b < want.size() / 34; ++b)
            if (!std::equal(got.begin() + 34 * b, got.begin() + 34 * b + 34, want.begin() + 34 * b)) {
                first = std::min(first, b);
                ++count;
            }
        if (count)
            ADD_FAILURE() << what << ": " << count << " of " << want.size() / 34 << " blocks differ, the first (" << first
                          << "):\n  want " << hex_block(want, first) << "\n  got  " << hex_block(got, first);
    };
    auto raw = [&](const Tensor& q) {
        std::vector<std::byte> bytes(want.size());
        gpu->read(q, bytes);
        return bytes;
    };
    const Tensor src = t.f32(rows, cols, x);
    const Tensor converted = t.empty(TensorType::Q8_0, rows, cols);
    gpu->convert(src, converted);
    first_difference(raw(converted), "convert f32 -> q8_0");

    const Tensor k_cache = t.empty(TensorType::Q8_0, rows + 3, cols), v_cache = t.empty(TensorType::Q8_0, rows + 3, cols);
    std::vector<int32_t> positions(rows);
    for (int64_t i = 0; i < rows; ++i) positions[static_cast<size_t>(i)] = static_cast<int32_t>(i);
    gpu->store_kv(src, src, k_cache, v_cache, positions);
    first_difference(raw(k_cache.row_range(0, rows)), "store_kv into a q8_0 cache");

    const Tensor cpu_bytes = t.upload(TensorType::Q8_0, rows, cols, want);
    const Tensor back = t.empty(TensorType::F32, rows, cols);
    gpu->convert(cpu_bytes, back);
    const std::vector<float> got = t.download(back);
    const std::vector<double> expected = dequantized(TensorType::Q8_0, rows, cols, want);
    size_t bad = 0;
    while (bad < got.size() && got[bad] == static_cast<float>(expected[bad])) ++bad;
    EXPECT_EQ(bad, got.size()) << "convert q8_0 -> f32: element " << bad << " is "
                               << (bad < got.size() ? got[bad] : 0) << ", want "
                               << (bad < got.size() ? expected[bad] : 0);
}

TEST_F(GpuBackendTest, BadIdsAndForeignTensorsAreErrors) {
    auto gpu = gpu_backend::make_gpu_backend({});
    auto cpu = make_cpu_backend({1});
    Tensors t(*gpu), c(*cpu);
    const Tensor table = t.f32(4, 32, std::vector<float>(128, 1.0f));
    const int32_t bad[] = {4};
    EXPECT_THROW(gpu->get_rows(table, bad, t.empty(TensorType::F32, 1, 32)), Error);
    const int32_t ok[] = {1};
    EXPECT_THROW(gpu->get_rows(c.f32(4, 32, std::vector<float>(128, 1.0f)), ok, t.empty(TensorType::F32, 1, 32)), Error);
    gpu_backend::GpuBackendOptions options;
    options.device = 1 << 20;
    EXPECT_THROW(gpu_backend::make_gpu_backend(options), Error);
}

}  // namespace
