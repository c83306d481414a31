// SPDX-License-Identifier: MIT
// The Vulkan backend: weights uploaded once into device-local memory (or mapped memory on APUs and CPU
// implementations), operations recorded into one command stream (vk_stream.h) and run by the shaders of
// kernels/vulkan. Every operation follows the CPU backend's semantics and argument checks.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "backend/backend_operations.h"
#include "backend/backend_require.h"
#include "backend/vulkan/vk_context.h"
#include "backend/vulkan/vk_pipelines.h"
#include "backend/vulkan/vk_stream.h"
#include "backend/backend.h"

namespace ember::vulkan {

// What every weight x activation kernel's push constants start with: where the weights, activations and outputs
// are and the product's size.
struct ProductAddress {
    uint32_t w_off, w_stride, x_off, x_stride, out_off, out_stride, cols, rows;
};
// Push constants of the matrix x vector and tiled kernels (matvec, matvec_blocks, matvec_dot, their experts
// variants, matmul_tiled, matmul_coop): each kernel reads the prefix it declares.
struct MatvecPush : ProductAddress {
    uint32_t tokens, bias_off, has_bias;
    uint32_t ids_off, ids_stride, k, expert_rows, per_slot;  // experts only
    uint32_t row_lanes, x_vec4;                               // matvec_blocks and matvec_dot
    uint32_t x_scales;  // matvec_dot only: x_off and x_stride then address Q8_1 codes (words, blocks)
};
static_assert(sizeof(MatvecPush) == 19 * sizeof(uint32_t), "push constants are copied as they lie");
// MatvecPush followed by the constants of matvec_dot.comp's EXPERTS variants: the up weights of the gated pair, and
// the grouping of the slots by expert (grouped = 0: one slot per work group row).
struct ExpertsDotPush {
    MatvecPush m;
    uint32_t w_up_off, act;
    uint32_t grouped, offsets_off, tiles_off, list_off;
};
static_assert(sizeof(ExpertsDotPush) == 25 * sizeof(uint32_t), "push constants are copied as they lie");
// The addressing of a product of w (bound as wv) with x (bound as xv) into out (bound as ov).
void address_product(ProductAddress& p, const View& wv, const Tensor& w, const View& xv, const Tensor& x,
                     const View& ov, const Tensor& out);
// The expert fields of a per-slot expert product (one slot a work group row): ids (bound as iv), the rows of one
// expert, and whether x has a row per slot or per token.
void address_expert_slots(MatvecPush& p, const View& iv, const Tensor& ids, int64_t expert_rows, const Tensor& x);

// The matrix x vector kernels take up to this many activation rows in one dispatch (decode).
constexpr int64_t kMatvecMaxTokens = 8;
// The most invocations the block matrix x vector kernels give one weight row (of their 128 per work group). With 32
// (four rows per work group; on a 2048-long row each invocation takes a quarter of 8 blocks) the full STRIX file
// decoded at 110 tok/s on an H100, against 104 with 128 (one row per work group), 110 with 64 and 100 with 16.
constexpr uint32_t kMaxRowLanes = 32;
// Up to this many rows (speculative verification), products run those kernels in chunks of kMatvecMaxTokens, each
// re-reading the weights, which costs far less than a tiled product of a few rows; more take the tiled (or
// cooperative-matrix) prefill kernels.
constexpr int64_t kChunkedMatvecMaxTokens = 32;
// From this many expert slots on (more than 32 tokens of 8 experts), expert products are grouped by expert
// (experts_group.comp) and tiled; below, one matrix x vector per slot, which needs no grouping pass.
constexpr int64_t kGroupedMinSlots = 257;
// From this many tokens on (verification), the integer matrix x vector expert products group their slots by expert
// too, in tiles of 8 slots of one expert, so that an expert chosen by several tokens is read once for all of them;
// fewer (decode) skip the grouping pass, which would cost more than it saves.
constexpr int64_t kGroupedMatvecMinTokens = 4;

class VulkanBackend final : public Backend {
public:
    explicit VulkanBackend(const std::string& device_selector);
    ~VulkanBackend() override;

    std::string name() const override;
    std::unique_ptr<Buffer> allocate(size_t bytes) override;
    std::unique_ptr<Buffer> map_weights(std::span<const std::byte> bytes) override;
    void synchronize() override;

    BackendCounters counters() const override { return counters_; }

    const Context& context() const { return *ctx_; }

protected:
    // The operations, called by Backend's checked entry points (backend/backend.h).
    EMBER_BACKEND_OPERATION_OVERRIDES
    // Fused for decode (vk_ops_gated.cpp); otherwise Backend's composition.
    void do_matmul_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, const Tensor& x,
                         const Tensor& up_scratch, const Tensor& out) override;
    void do_matmul_experts_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, int64_t n_experts,
                                 const Tensor& x, const Tensor& ids, const Tensor& up_scratch,
                                 const Tensor& out) override;
    // The residual add and the norm after it in one dispatch (rms_norm.comp mode 4).
    void do_add_rms_norm(const Tensor& x, const Tensor& y, const Tensor& weight, float eps, const Tensor& out) override;
    // The Gated DeltaNet's beta and decay gates in one dispatch (elementwise.comp op 12).
    void do_deltanet_gates(const Tensor& beta, const Tensor& alpha, const Tensor& dt_bias, const Tensor& a) override;
    // The routed experts' combination with the gated shared expert in one dispatch (moe.comp mode 2).
    void do_moe_combine_shared(const Tensor& y, const Tensor& weights, const Tensor& shared, const Tensor& gate,
                               const Tensor& out) override;

private:
    enum class Elementwise : uint32_t {
        add = 0,
        mul = 1,
        scale = 2,
        swiglu = 3,
        geglu = 4,
        silu = 5,
        sigmoid = 6,
        softplus = 7,
        exp = 8,
        gelu_tanh = 9,
        gelu_erf = 10,
        swiglu_clamped = 11,
        deltanet_gates = 12  // out = softplus(a + b) * c, and gate = sigmoid(gate)
    };
    void elementwise(Elementwise op, const Tensor& a, const Tensor* b, float s, const Tensor& out,
                     const Tensor* gate = nullptr, const Tensor* c = nullptr);
    // moe.comp's combination: out = sum_j weights[t, j] y[t k + j] (+ shared[t] sigmoid(gate[t]) where given).
    void combine_experts(const Tensor& y, const Tensor& weights, const Tensor* shared, const Tensor* gate,
                         const Tensor& out);
    enum class Norm : uint32_t { rms = 0, l2 = 1, rms_gated = 2, layer = 3, add_rms = 4 };
    void normalize(Norm mode, const Tensor& x, const Tensor* weight, const Tensor* z, int64_t segment, float eps,
                   const Tensor& out);
    void convert_rows(const Tensor& x, const Tensor& out, const View* row_map);
    std::unique_ptr<DeviceBuffer> make_buffer(size_t bytes);
    // `bytes` of attention_scratch_ (the chunks' partial results of attention_split.comp), grown on demand.
    View attention_scratch(size_t bytes);
    // `bytes` of experts_scratch_ (the slots of an expert product grouped by expert, experts_group.comp), grown on
    // demand.
    View experts_scratch(size_t bytes);
    // The slots of an expert product grouped by expert on the GPU (experts_group.comp), in tiles of tile_slots:
    // the scratch holding the grouping, where its parts start, and the most tiles the slots can make.
    struct ExpertGroups {
        View scratch;
        uint32_t offsets_off = 0, tiles_off = 0, list_off = 0;
        uint64_t max_tiles = 0;
    };
    ExpertGroups group_slots_by_expert(const View& iv, const Tensor& ids, int64_t n_experts, uint32_t tile_slots);
    // How the matvec_dot EXPERTS kernels cover the slots of ids with `groups` work groups of rows each: one slot per
    // grid row, or (kGroupedMatvecMinTokens tokens or more) one tile of grouped slots per grid row. Sets p's
    // grouping and returns the grid and what binding 4 holds (the ids, or the grouping).
    // Counts `matrices` expert matrices of `rows` rows as read: one per slot, or, where the slots are grouped, one
    // per expert that can have slots (which ones do stays on the GPU).
    void count_expert_reads(int64_t matrices, int64_t rows, size_t row_stride);
    std::pair<Grid, View> experts_dot_slots(ExpertsDotPush& p, const View& iv, const Tensor& ids, int64_t n_experts,
                                            uint64_t groups);
    // Activation rows quantized to Q8_1 (kernels/vulkan/quantize_q8_1.comp) in the next free part of the scratch
    // ring, for the matvec_dot kernels; nullopt when they would not fit one binding.
    struct Q8Activations {
        View view;
        uint32_t codes_off = 0;       // words
        uint32_t scales_off = 0;      // (d, s) pairs
        uint32_t blocks_per_row = 0;
    };
    std::optional<Q8Activations> quantize_q8_1(const Tensor& x);
    // The pieces of quantize_q8_1, also used by operations that write Q8_1 beside their F32 output (normalize):
    // a quantization of x still valid, room in the ring for rows x cols, and remembering what went there.
    struct Q8Slot {
        Q8Activations q;
        size_t ring_begin = 0, ring_end = 0;
    };
    std::optional<Q8Activations> reusable_q8_1(const Tensor& x, const View& xv) const;
    std::optional<Q8Slot> reserve_q8_1(int64_t rows, int64_t cols);
    void remember_q8_1(const Tensor& x, const View& xv, const Q8Slot& slot);
    // Sets the block kernels' lanes per row and activation addressing (Q8_1 codes with xq, else floats) in p and
    // returns how many work groups cover `rows` weight rows.
    static uint64_t block_matvec_groups(MatvecPush& p, int64_t cols, int64_t rows, const Q8Activations* xq);

    std::unique_ptr<Context> ctx_;
    std::unique_ptr<Pipelines> pipelines_;
    std::unique_ptr<Stream> stream_;
    std::map<std::pair<const Buffer*, size_t>, std::vector<float>> rope_factors_;  // forgotten on write()
    BackendCounters counters_;
    // Made without a before-free wait: attention_scratch() finishes the stream before replacing it, and members
    // go after the destructor has finished the stream.
    std::unique_ptr<DeviceBuffer> attention_scratch_;
    std::unique_ptr<DeviceBuffer> experts_scratch_;  // made like attention_scratch_
    // Mat x vec of 4- and 8-bit blocks by integer dot products: the device has them and EMBER_VULKAN_NO_INTEGER_DOT
    // is not set (read once here, so that tests can run both paths on one device).
    bool integer_dot_ = false;
    // Attention split over the cache rows (attention_split.comp): the device can shuffle within subgroups of 8 or
    // more and EMBER_VULKAN_ATTENTION_SPLIT is not "0" (read once here, like integer_dot_).
    bool attention_split_ = false;
    // Many queries in tiles (attention_tiled.comp): the device can shuffle within subgroups of 8 or more and
    // EMBER_VULKAN_ATTENTION_TILED is not "0" (read once here, like integer_dot_).
    bool attention_tiled_ = false;
    // Prefill products on cooperative matrices (matmul_coop, experts_coop): the device has them and
    // EMBER_VULKAN_COOPERATIVE_MATRIX is not "0" (read once here, like integer_dot_).
    bool cooperative_matrix_ = false;
    // Q8_1 activations, taken in turn from a ring (a product need not wait for the previous one's reads before
    // its activations are written: decode's are a few KiB); grown (never shrunk) on demand.
    static constexpr size_t kQ8MinBytes = size_t{1} << 20;
    std::unique_ptr<DeviceBuffer> q8_scratch_;
    size_t q8_capacity_ = 0;
    size_t q8_next_ = 0;  // bytes, a multiple of 256
    // Recent quantizations, reused while their input is unchanged (the stream says so) and their part of the ring
    // was not handed out again: Q/K/V, gate/up and the routed and shared experts read the same activations.
    struct Q8Reuse {
        View x;
        int64_t rows = 0, cols = 0;
        size_t row_stride = 0;
        uint64_t mark = 0;
        Q8Slot slot;
    };
    std::vector<Q8Reuse> q8_reuse_;
};

// What the Vulkan backend itself cannot do (the arguments passed Backend's checks): "vulkan backend: <what>".
template <RequireMessage Message>
void require(bool ok, Message&& what) {
    require_or_throw(ok, "vulkan backend: ", std::forward<Message>(what));
}
uint32_t u32(int64_t v);  // throws when a size does not fit the shaders' 32-bit indices
uint32_t words(size_t bytes);  // a byte stride of an F32 tensor in floats
// The GGUF name of a type ("q4_0"), which names its shader variants.
inline std::string type_name(gguf::TensorType t) { return std::string(gguf::traits(t).name); }

}  // namespace ember::vulkan
