// SPDX-License-Identifier: MIT
// The HIP/CUDA backend: one implementation of ember::Backend over the kernels of kernels/hip, built with hipcc for
// AMD GPUs (EMBER_HIP) or with nvcc for NVIDIA GPUs (EMBER_CUDA). Operations are recorded and run at flush points
// as whole steps (step_recorder.h), so that decode steps replay a captured graph. Weights are uploaded once, or
// on a unified-memory machine (an APU) read in place from the file mapping.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

#include "backend/backend.h"
#include "backend/backend_operations.h"
#include "backend/env_switch.h"
#include "backend/gpu/gpu_key.h"
#include "backend/gpu/step_recorder.h"

namespace ember::gpu_backend {

// Expert products of the integer types (ROCmFP4, Q4_0, Q8_0) run per slot up to kPerSlotIntegerExpertTokens tokens
// (decode and short verify batches, where a grouping pass costs more than the repeated expert reads it saves) and
// as grouped mat x vec from there up to gpu_kernels::kMaxIntegerMatvecTokens. Float-path types run per slot up to
// kPerSlotFloatExpertTokens, so that a verify batch rounds exactly as decoding its tokens one by one does, and as
// grouped tiles past it (prefill).
inline constexpr int64_t kPerSlotIntegerExpertTokens = 8;
inline constexpr int64_t kPerSlotFloatExpertTokens = 32;
// The widest rows whose norms also write Q8_1 blocks for the products after them (times the mat x vec's tokens).
inline constexpr int64_t kMaxNormQuantizedCols = 16384;

enum class WeightPlacement {
    automatic,  // in place on an integrated GPU (unified memory), uploaded on a discrete one
    upload,     // copied once into device memory
    in_place,   // read from the file mapping (pageable access or a registered mapping), else uploaded
};

struct GpuBackendOptions {
    int device = 0;
    WeightPlacement weights = WeightPlacement::automatic;
    bool graphs = true;  // capture repeated steps into graphs
};

// The device, its stream and the recorder, shared by the backend and every buffer it made (a buffer flushes
// pending work before its memory goes away).
struct GpuContext {
    explicit GpuContext(const GpuBackendOptions& options);
    ~GpuContext();
    GpuContext(const GpuContext&) = delete;
    GpuContext& operator=(const GpuContext&) = delete;

    void synchronize();  // flush, then wait for the stream

    GpuBackendOptions options;
    gpu::DeviceProp prop{};
    std::string arch;
    gpu_kernels::Launch launch;
    std::unique_ptr<StepRecorder> steps;
};

// Memory the kernels address: device memory, or a host mapping the device reads.
class GpuBuffer : public Buffer {
public:
    virtual std::byte* device() = 0;
    virtual bool writable() const { return true; }
};

// How map_weights placed a tensor, for the memory plan.
struct WeightStats {
    uint64_t uploaded_bytes = 0;
    uint64_t in_place_bytes = 0;
    std::string in_place_how;  // "pageable memory access", "registered file mapping"
    std::string note;          // why in-place placement fell back to an upload
};

class GpuBackend final : public Backend {
public:
    explicit GpuBackend(const GpuBackendOptions& options);
    ~GpuBackend() override;

    std::string name() const override;
    std::unique_ptr<Buffer> allocate(size_t bytes) override;
    std::unique_ptr<Buffer> map_weights(std::span<const std::byte> bytes) override;
    void synchronize() override;

    BackendCounters counters() const override { return counters_; }

    const StepStats& step_stats() const { return ctx_->steps->stats(); }
    const WeightStats& weight_stats() const { return weight_stats_; }

protected:
    // The operations, called by Backend's checked entry points (backend/backend.h).
    EMBER_BACKEND_OPERATION_OVERRIDES
    // Runs of up to four products at mat x vec size, integer types or F32: one launch each; the rest one by one.
    void do_matmul_many(const Tensor& x, std::span<const Product> products) override;
    // Integer types of matvec size: both products and the activation in one launch; the rest composed (Backend).
    void do_matmul_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, const Tensor& x,
                         const Tensor& up_scratch, const Tensor& out) override;
    void do_matmul_experts_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, int64_t n_experts,
                                 const Tensor& x, const Tensor& ids, const Tensor& up_scratch,
                                 const Tensor& out) override;
    // One kernel each for what the base class composes.
    void do_add_rms_norm(const Tensor& x, const Tensor& y, const Tensor& weight, float eps, const Tensor& out) override;
    void do_conv1d_causal_silu(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out) override;
    void do_deltanet_gates(const Tensor& beta, const Tensor& alpha, const Tensor& dt_bias, const Tensor& a) override;
    void do_moe_combine_shared(const Tensor& y, const Tensor& weights, const Tensor& shared, const Tensor& gate,
                               const Tensor& out) override;
    // The sizes of qwen35moe's layers (gk::deltanet_recurrent_fits): one kernel; the rest composed.
    void do_deltanet_recurrent(const DeltaNetArgs& a) override;
    // Integer down weights, decode and short verify batches: one kernel (after one that quantizes its inputs); the rest
    // composed.
    void do_moe_down_combine(const MoeDownArgs& a) override;
    void do_moe_gate_up(const MoeGateUpArgs& a) override;
    void do_moe_router(const MoeRouterArgs& a) override;
    void do_matmul_add_rms_norm(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias,
                                const Tensor& residual, const Tensor& norm, float eps, const Tensor& norm_out) override;

private:
    enum Scratch { kActivations, kAttention, kExpertGroups, kMoeDownBlocks, kSplitProducts, kScratchKinds };
    // Device scratch of at least `bytes` (pending launches run first when it has to grow).
    std::byte* scratch(Scratch kind, size_t bytes);
    // Every launch but a product's: it may write anything, so the quantized activations are forgotten.
    void record(std::vector<uint64_t> key, LaunchFn fn) {
        quantized_ = {};
        ctx_->steps->record(std::move(key), std::move(fn));
    }
    // A launch that writes `written` only: the quantized activations stay unless it overlaps them.
    void record_writes(std::vector<uint64_t> key, LaunchFn fn, std::initializer_list<gpu_kernels::Rows> written);
    // A product's launch, named by its weights in a profile (EMBER_GPU_PROFILE): "matmul_tiled q4_0 2048x4096".
    // It writes out only, which forgets the quantized activations where out overlaps them.
    void record_product(const gpu_kernels::Weights& w, const gpu_kernels::Rows& out, std::vector<uint64_t> key,
                        LaunchFn fn);
    // Where x's Q8_1 blocks go (the activation scratch), and whether this launch must make them (false: the
    // previous product quantized the same rows and nothing has written since, as with the projections of one
    // normed input).
    std::pair<std::byte*, bool> quantized_activations(const gpu_kernels::Rows& x);
    // A product on x's Q8_1 blocks (quantize_q8_1 first, unless the previous product made the same blocks):
    // launch(l, xq) enqueues it; op and key_args name it for the step's replay.
    template <typename F, typename... A>
    void record_on_blocks(const gpu_kernels::Weights& w, const gpu_kernels::Rows& x, const gpu_kernels::Rows& out,
                          const char* op, F launch, const A&... key_args) {
        const auto [xq, fresh] = quantized_activations(x);
        record_product(w, out, launch_key(op, key_args..., w, x, out, xq, fresh),
                       [=, xq = xq, fresh = fresh](const gpu_kernels::Launch& l, const std::byte*) {
                           if (fresh) gpu_kernels::quantize_q8_1(l, x, xq);
                           launch(l, static_cast<const void*>(xq));
                       });
    }
    // Where a norm writes its output's Q8_1 blocks as it goes (the activation scratch), for outputs of a size the
    // integer mat x vec takes (decode and verify batches); nullptr for others.
    std::byte* norm_output_blocks(const gpu_kernels::Rows& out);
    // A norm's launch: with q8_1, its output is what the activation scratch then holds.
    void record_norm(std::vector<uint64_t> key, LaunchFn fn, const gpu_kernels::Rows& out, std::byte* q8_1);
    void record_conv1d(const Tensor& x, const Tensor& weight, const Tensor& state, const Tensor& out, bool silu);
    size_t stage(const void* data, size_t n) { return ctx_->steps->stage(data, n); }
    // The launch tails' counters of finished blocks (kernels/hip/launch_tail.cuh), 0 between launches.
    enum TailCounter { kRouteTail, kNormTail, kTailCounters };
    unsigned* tail_counter(TailCounter which);
    // A product launch's residual norm (kernels.h NormTail) over its output y, and the activation blocks' bookkeeping
    // once it is recorded.
    gpu_kernels::NormTail norm_tail(const Tensor& residual, const gpu_kernels::Rows& y, const Tensor& norm, float eps,
                                    const Tensor& out, const char* op);
    void after_norm_tail(const gpu_kernels::NormTail& t);

    std::shared_ptr<GpuContext> ctx_;
    std::unique_ptr<Buffer> scratch_[kScratchKinds];
    std::unique_ptr<Buffer> tail_counters_;
    gpu_kernels::Rows quantized_;  // the rows whose blocks the activation scratch holds (data nullptr: none)
    BackendCounters counters_;
    // The fused MoE and residual-norm launches (moe_router's route, moe_gate_up's shared expert, the norm tails of
    // moe_down_combine and matmul_add_rms_norm); EMBER_GPU_JOINED_LAUNCHES=0 composes them instead, for measuring.
    bool joined_launches_ = env_switched_on("EMBER_GPU_JOINED_LAUNCHES");
    WeightStats weight_stats_;
    std::shared_ptr<class HostRegistry> registry_;
};

std::unique_ptr<GpuBackend> make_gpu_backend(const GpuBackendOptions& options);

}  // namespace ember::gpu_backend
