// SPDX-License-Identifier: MIT
// The HIP/CUDA backend: device, memory, transfers and the matrix products (dense and expert).
#include "backend/gpu/gpu_backend.h"

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>

#include "backend/env_switch.h"
#include "backend/gpu/gpu_buffers.h"
#include "backend/gpu/gpu_key.h"
#include "ember/gguf.h"

namespace ember::gpu_backend {

namespace gk = gpu_kernels;

GpuContext::GpuContext(const GpuBackendOptions& opts) : options(opts) {
    int count = 0;
    const gpu::Error e = gpu::device_count(&count);
    if (e != gpu::kSuccess || count == 0) {
        clear_last_error();
        throw Error(std::string(gpu::kRuntimeName) + " backend: no GPU device (" +
                    (e != gpu::kSuccess ? gpu::error_string(e) : "the runtime lists none") + ")");
    }
    if (options.device < 0 || options.device >= count)
        throw Error(std::string(gpu::kRuntimeName) + " backend: device " + std::to_string(options.device) +
                    " does not exist (" + std::to_string(count) + " found)");
    check(gpu::set_device(options.device), "selecting the device");
    check(gpu::device_properties(&prop, options.device), "reading the device properties");
    char name[64];
    gpu::arch_name(prop, name, sizeof name);
    arch = name;
    check(gpu::stream_create(&launch.stream), "creating a stream");
    launch.multiprocessors = prop.multiProcessorCount;
    launch.matrix_cores = gpu::has_matrix_cores(prop) && env_switched_on("EMBER_GPU_TENSOR_CORES");
    launch.dependent_launches = gpu::has_dependent_launches(prop) && env_switched_on("EMBER_GPU_DEPENDENT_LAUNCHES");
    steps = std::make_unique<StepRecorder>(launch, options.graphs);
}

GpuContext::~GpuContext() {
    try {
        synchronize();
    } catch (const Error&) {
    }
    steps.reset();
    release(gpu::stream_destroy(launch.stream));
}

void GpuContext::synchronize() {
    steps->flush();
    check(gpu::stream_synchronize(launch.stream), "running a step");
}

GpuBackend::GpuBackend(const GpuBackendOptions& options)
    : ctx_(std::make_shared<GpuContext>(options)), registry_(std::make_shared<HostRegistry>()) {}

GpuBackend::~GpuBackend() {
    for (auto& s : scratch_) s.reset();
}

std::string GpuBackend::name() const {
    return std::string(gpu::kRuntimeName) + " (" + ctx_->prop.name + ", " + ctx_->arch + ")";
}

std::unique_ptr<Buffer> GpuBackend::allocate(size_t bytes) {
    quantized_ = {};  // a new buffer may take the freed memory of the quantized rows
    return std::make_unique<DeviceBuffer>(ctx_, bytes);
}

std::unique_ptr<Buffer> GpuBackend::map_weights(std::span<const std::byte> bytes) {
    quantized_ = {};
    const WeightPlacement placement = ctx_->options.weights;
    const bool in_place = placement == WeightPlacement::in_place ||
                          (placement == WeightPlacement::automatic && ctx_->prop.integrated);
    if (in_place) {
        std::string why;
        std::byte* device = nullptr;
        if (gpu::reads_pageable_memory(ctx_->prop)) {
            device = const_cast<std::byte*>(bytes.data());
            weight_stats_.in_place_how = "pageable memory access";
        } else {
            device = registry_->device_address(bytes.data(), why);
            if (device) weight_stats_.in_place_how = "registered file mapping";
        }
        if (device) {
            weight_stats_.in_place_bytes += bytes.size();
            return std::make_unique<InPlaceBuffer>(ctx_, registry_, bytes, device);
        }
        weight_stats_.note = why;
    }
    auto buffer = std::make_unique<DeviceBuffer>(ctx_, bytes.size());
    check(gpu::memcpy_sync(buffer->device(), bytes.data(), bytes.size(), gpu::kHostToDevice), "uploading weights");
    weight_stats_.uploaded_bytes += bytes.size();
    return buffer;
}

void GpuBackend::do_write(const Tensor& dst, std::span<const std::byte> src) {
    require(dst.contiguous(), "write: the destination must be contiguous");
    GpuBuffer& b = gpu_buffer(dst, "write");
    require(b.writable(), "write: weights read in place from the file cannot be written");
    std::byte* d = device_data(dst, "write");
    constexpr size_t kStagedLimit = 64 * 1024;  // small writes join the step (and its graph)
    if (src.size() <= kStagedLimit) {
        const size_t off = stage(src.data(), src.size());
        const size_t n = src.size();
        record(launch_key("write", d, n, off), [d, n, off](const gk::Launch& l, const std::byte* args) {
            check(gpu::memcpy_async(d, args + off, n, gpu::kDeviceToDevice, l.stream), "writing a tensor");
        });
        return;
    }
    quantized_ = {};
    ctx_->synchronize();
    check(gpu::memcpy_sync(d, src.data(), src.size(), gpu::kHostToDevice), "writing a tensor");
}

void GpuBackend::do_read(const Tensor& src, std::span<std::byte> dst) {
    require(src.contiguous(), "read: the source must be contiguous");
    std::byte* s = device_data(src, "read");
    ctx_->steps->flush();
    check(gpu::memcpy_async(dst.data(), s, dst.size(), gpu::kDeviceToHost, ctx_->launch.stream), "reading a tensor");
    check(gpu::stream_synchronize(ctx_->launch.stream), "reading a tensor");
}

void GpuBackend::synchronize() { ctx_->synchronize(); }

namespace {

bool overlaps(const gk::Rows& a, const gk::Rows& b) {
    if (!a.data || !b.data || a.rows == 0 || b.rows == 0) return false;
    const float* a_end = a.data + (a.rows - 1) * a.stride + a.cols;
    const float* b_end = b.data + (b.rows - 1) * b.stride + b.cols;
    return a.data < b_end && b.data < a_end;
}

// The same activations in the Q8_1 layout: the same view, or the same contiguous run of whole blocks seen with
// other row lengths (a norm over heads, read as whole rows by the product after it).
bool same_blocks(const gk::Rows& a, const gk::Rows& b) {
    if (a.data != b.data) return false;
    if (a.rows == b.rows && a.cols == b.cols && a.stride == b.stride) return true;
    const bool contiguous = (a.rows == 1 || a.stride == a.cols) && (b.rows == 1 || b.stride == b.cols);
    return contiguous && a.rows * a.cols == b.rows * b.cols && a.cols % 32 == 0 && b.cols % 32 == 0;
}

}  // namespace

std::pair<std::byte*, bool> GpuBackend::quantized_activations(const gk::Rows& x) {
    const bool same = same_blocks(quantized_, x);
    const Buffer* before = scratch_[kActivations].get();
    std::byte* xq = scratch(kActivations, gk::q8_1_bytes(x.rows, x.cols));
    const bool fresh = !same || scratch_[kActivations].get() != before;
    quantized_ = x;
    return {xq, fresh};
}

std::byte* GpuBackend::norm_output_blocks(const gk::Rows& out) {
    if (out.cols % 32 != 0 || out.rows * out.cols > gk::kMaxIntegerMatvecTokens * kMaxNormQuantizedCols) return nullptr;
    return scratch(kActivations, gk::q8_1_bytes(out.rows, out.cols));
}

void GpuBackend::record_writes(std::vector<uint64_t> key, LaunchFn fn, std::initializer_list<gk::Rows> written) {
    for (const gk::Rows& w : written)
        if (overlaps(w, quantized_)) quantized_ = {};
    ctx_->steps->record(std::move(key), std::move(fn));
}

void GpuBackend::record_norm(std::vector<uint64_t> key, LaunchFn fn, const gk::Rows& out, std::byte* q8_1) {
    record(std::move(key), std::move(fn));
    if (q8_1) quantized_ = out;
}

void GpuBackend::record_product(const gk::Weights& w, const gk::Rows& out, std::vector<uint64_t> key, LaunchFn fn) {
    if (overlaps(out, quantized_)) quantized_ = {};
    std::string label;
    if (ctx_->steps->profiling())
        label = std::string(reinterpret_cast<const char*>(key[0])) + " " +
                std::string(gguf::traits(static_cast<gguf::TensorType>(w.type)).name) + " " + std::to_string(w.rows) +
                "x" + std::to_string(w.cols);
    ctx_->steps->record(std::move(key), std::move(fn), std::move(label));
}

std::byte* GpuBackend::scratch(Scratch kind, size_t bytes) {
    std::unique_ptr<Buffer>& s = scratch_[kind];
    if (!s || s->size() < bytes) {
        s.reset();  // flushes pending launches that still use it
        s = std::make_unique<DeviceBuffer>(ctx_, std::max<size_t>(bytes, 1 << 16) * 3 / 2);
    }
    return static_cast<GpuBuffer&>(*s).device();
}

void GpuBackend::do_matmul(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias) {
    const gk::Weights wv = weights_of(w, "matmul weights");
    const gk::Rows xv = f32_rows(x, "matmul input");
    const gk::Rows ov = f32_rows(out, "matmul output");
    const float* bv = nullptr;
    if (bias) {
        bv = f32_rows(*bias, "matmul bias").data;
    }
    counters_.weight_bytes += static_cast<uint64_t>(w.rows) * w.row_stride;
    if (x.rows == 0) return;
    const bool matvec = x.rows <= gk::max_matvec_tokens(wv.type, w.cols);
    if (matvec && w.cols % 32 == 0 && gk::has_integer_matvec(wv.type)) {
        record_on_blocks(
            wv, xv, ov, "matvec_integer",
            [=](const gk::Launch& l, const void* xq) { gk::matvec_integer(l, wv, xq, xv.rows, ov, bv); }, bv);
    } else if (matvec) {
        record_product(wv, ov, launch_key("matvec_float", wv, xv, ov, bv),
                       [=](const gk::Launch& l, const std::byte*) { gk::matvec_float(l, wv, xv, ov, bv); });
    } else if (gk::int8_tiles_available(ctx_->launch, wv)) {
        const size_t split_bytes = gk::int8_tiles_split_bytes(ctx_->launch, wv, xv.rows);
        std::byte* split = split_bytes ? scratch(kSplitProducts, split_bytes) : nullptr;
        record_on_blocks(
            wv, xv, ov, "matmul_int8_tiles",
            [=](const gk::Launch& l, const void* xq) { gk::matmul_int8_tiles(l, wv, xq, xv.rows, ov, bv, split); },
            bv, split);
    } else {
        const size_t split_bytes = gk::matmul_tiled_scratch_bytes(ctx_->launch, wv, xv.rows);
        std::byte* split = split_bytes ? scratch(kSplitProducts, split_bytes) : nullptr;
        record_product(wv, ov, launch_key("matmul_tiled", wv, xv, ov, bv, split),
                       [=](const gk::Launch& l, const std::byte*) { gk::matmul_tiled(l, wv, xv, ov, bv, split); });
    }
}

namespace {

// Which shared launch a product joins: integer types at mat x vec size one, F32 another; none for the rest.
enum class ManyKind { none, integer, f32 };

ManyKind many_kind(const Product& p, const Tensor& x) {
    const auto type = static_cast<uint32_t>(p.w->type);
    if (x.rows > gk::max_matvec_tokens(type, p.w->cols)) return ManyKind::none;
    if (gk::has_integer_matvec(type) && p.w->cols % 32 == 0) return ManyKind::integer;
    return type == gk::kF32 ? ManyKind::f32 : ManyKind::none;
}

}  // namespace

gk::NormTail GpuBackend::norm_tail(const Tensor& residual, const gk::Rows& y, const Tensor& norm, float eps,
                                   const Tensor& out, const char* op) {
    gk::NormTail t;
    t.counter = tail_counter(kNormTail);
    t.x = f32_rows(residual, op);
    t.y = y;
    t.weight = f32_rows(norm, op).data;
    t.eps = eps;
    t.out = f32_rows(out, op);
    t.q8_1 = norm_output_blocks(t.out);
    return t;
}

void GpuBackend::after_norm_tail(const gk::NormTail& t) {
    if (overlaps(t.x, quantized_)) quantized_ = {};
    if (t.q8_1)
        quantized_ = t.out;
    else if (overlaps(t.out, quantized_))
        quantized_ = {};
}

void GpuBackend::do_matmul_add_rms_norm(const Tensor& w, const Tensor& x, const Tensor& out, const Tensor* bias,
                                        const Tensor& residual, const Tensor& norm, float eps, const Tensor& norm_out) {
    const auto type = static_cast<uint32_t>(w.type);
    const bool joined = joined_launches_ && x.rows > 0 && x.rows <= gk::max_matvec_tokens(type, w.cols) &&
                        w.cols % 32 == 0 && gk::has_integer_matvec(type);
    if (!joined) return Backend::do_matmul_add_rms_norm(w, x, out, bias, residual, norm, eps, norm_out);
    const gk::Weights wv = weights_of(w, "matmul_add_rms_norm weights");
    const gk::Rows xv = f32_rows(x, "matmul_add_rms_norm input"), ov = f32_rows(out, "matmul_add_rms_norm output");
    const float* bv = bias ? f32_rows(*bias, "matmul_add_rms_norm bias").data : nullptr;
    counters_.weight_bytes += static_cast<uint64_t>(w.rows) * w.row_stride;
    // The input's activation blocks and the norm's share the activation scratch (the norm writes its blocks after
    // every block of the product has read the input's): sized for both first, so that neither request moves it.
    const Buffer* before = scratch_[kActivations].get();
    scratch(kActivations, std::max(gk::q8_1_bytes(xv.rows, xv.cols), gk::q8_1_bytes(ov.rows, ov.cols)));
    if (scratch_[kActivations].get() != before) quantized_ = {};
    const gk::NormTail tail = norm_tail(residual, ov, norm, eps, norm_out, "matmul_add_rms_norm norm");
    record_on_blocks(
        wv, xv, ov, "matvec_integer_norm",
        [=](const gk::Launch& l, const void* xq) { gk::matvec_integer(l, wv, xq, xv.rows, ov, bv, &tail); }, bv,
        tail.counter, tail.x, tail.weight, tail.eps, tail.out, tail.q8_1);
    after_norm_tail(tail);
}

void GpuBackend::do_matmul_many(const Tensor& x, std::span<const Product> products) {
    for (size_t i = 0; i < products.size();) {
        const ManyKind kind = many_kind(products[i], x);
        size_t end = i + 1;
        while (kind != ManyKind::none && end < products.size() && end - i < gk::kMaxManyProducts &&
               many_kind(products[end], x) == kind)
            ++end;
        if (end - i < 2) {
            do_matmul(*products[i].w, x, products[i].out, products[i].bias);
            ++i;
            continue;
        }
        const gk::Rows xv = f32_rows(x, "matmul_many input");
        gk::ProductRows rows[gk::kMaxManyProducts];
        const int count = static_cast<int>(end - i);
        for (int m = 0; m < count; ++m) {
            const Product& p = products[i + m];
            rows[m].w = weights_of(*p.w, "matmul_many weights");
            rows[m].out = f32_rows(p.out, "matmul_many output");
            if (p.bias) rows[m].bias = f32_rows(*p.bias, "matmul_many bias").data;
            counters_.weight_bytes += static_cast<uint64_t>(p.w->rows) * p.w->row_stride;
        }
        i = end;
        if (x.rows == 0) continue;
        std::byte* xq = nullptr;
        bool fresh = false;
        if (kind == ManyKind::integer) std::tie(xq, fresh) = quantized_activations(xv);
        std::vector<uint64_t> key = launch_key("matvec_many", kind, xv, xq, fresh, count);
        for (int m = 0; m < count; ++m) {
            key_words(key, rows[m]);
            if (m > 0 && overlaps(rows[m].out, quantized_)) quantized_ = {};
        }
        record_product(rows[0].w, rows[0].out, std::move(key), [=](const gk::Launch& l, const std::byte*) {
            if (kind == ManyKind::f32) return gk::matvec_float_many(l, rows, count, xv);
            if (fresh) gk::quantize_q8_1(l, xv, xq);
            gk::matvec_integer_many(l, rows, count, xq, xv.rows);
        });
    }
}

unsigned* GpuBackend::tail_counter(TailCounter which) {
    constexpr size_t bytes = kTailCounters * sizeof(unsigned);
    if (!tail_counters_) {
        tail_counters_ = std::make_unique<DeviceBuffer>(ctx_, bytes);
        check(gpu::memset_async(static_cast<GpuBuffer&>(*tail_counters_).device(), 0, bytes, ctx_->launch.stream),
              "clearing the launch tails' counters");
    }
    return reinterpret_cast<unsigned*>(static_cast<GpuBuffer&>(*tail_counters_).device()) + which;
}

void GpuBackend::do_moe_router(const MoeRouterArgs& a) {
    const Product router{a.router, a.logits, a.router_bias}, gate{a.shared_gate_weight, a.shared_gate};
    // F32 routers of decode and verify batches route in the last block of their product's launch.
    const bool joined = joined_launches_ && many_kind(router, a.x) == ManyKind::f32 &&
                        (!a.shared_gate_weight || many_kind(gate, a.x) == ManyKind::f32) &&
                        gk::route_tail_fits(a.logits.cols);
    if (!joined) return Backend::do_moe_router(a);
    const gk::Rows xv = f32_rows(a.x, "moe_router input");
    const int count = a.shared_gate_weight ? 2 : 1;
    gk::ProductRows rows[2];
    for (int m = 0; m < count; ++m) {
        const Product& p = m == 0 ? router : gate;
        rows[m].w = weights_of(*p.w, "moe_router weights");
        rows[m].out = f32_rows(p.out, "moe_router output");
        if (p.bias) rows[m].bias = f32_rows(*p.bias, "moe_router bias").data;
        counters_.weight_bytes += static_cast<uint64_t>(p.w->rows) * p.w->row_stride;
    }
    if (a.x.rows == 0) return;
    gk::RouteTail tail;
    tail.counter = tail_counter(kRouteTail);
    tail.logits = rows[0].out;
    tail.k = a.k;
    tail.ids = reinterpret_cast<int32_t*>(device_data(a.ids, "moe_router ids"));
    tail.ids_stride = static_cast<int64_t>(a.ids.row_stride / 4);
    tail.weights = f32_rows(a.weights, "moe_router weights output");
    // The ids as rows of floats' width, for the overlap test of record_writes.
    const gk::Rows id_rows{reinterpret_cast<float*>(tail.ids), a.ids.rows, a.ids.cols, tail.ids_stride};
    std::vector<uint64_t> key =
        launch_key("moe_router", xv, count, a.k, tail.ids, tail.ids_stride, tail.weights, tail.counter);
    for (int m = 0; m < count; ++m) key_words(key, rows[m]);
    record_writes(std::move(key),
                  [=](const gk::Launch& l, const std::byte*) { gk::matvec_float_many(l, rows, count, xv, &tail); },
                  {rows[0].out, rows[1].out, id_rows, tail.weights});
}

void GpuBackend::do_matmul_experts(const Tensor& w, int64_t n_experts, const Tensor& x, const Tensor& ids,
                                   const Tensor& out) {
    const int64_t rows = w.rows / n_experts;
    const int64_t tokens = ids.rows;
    const int k = static_cast<int>(ids.cols);
    require(w.cols % 32 == 0, "matmul_experts: row length must be a multiple of 32");
    const gk::Weights wv = weights_of(w, "matmul_experts weights");
    const gk::Rows xv = f32_rows(x, "matmul_experts input");
    const gk::Rows ov = f32_rows(out, "matmul_experts output");
    const auto* idv = reinterpret_cast<const int32_t*>(device_data(ids, "matmul_experts ids"));
    const bool per_slot = x.rows == tokens * k && k > 1;
    const int64_t slots = tokens * k;
    counters_.expert_weight_bytes += static_cast<uint64_t>(std::min(slots, n_experts) * rows) * w.row_stride;
    counters_.weight_bytes += static_cast<uint64_t>(std::min(slots, n_experts) * rows) * w.row_stride;
    if (slots == 0) return;
    const bool integer = gk::has_integer_matvec(wv.type);
    if (integer && tokens <= kPerSlotIntegerExpertTokens) {
        record_on_blocks(
            wv, xv, ov, "experts_integer",
            [=](const gk::Launch& l, const void* xq) {
                gk::matvec_experts_integer(l, wv, n_experts, xq, per_slot, idv, tokens, k, ov);
            },
            n_experts, idv, k);
    } else if (integer && (tokens <= gk::kMaxIntegerMatvecTokens || gk::int8_tiles_available(ctx_->launch, wv))) {
        // Slots grouped by expert: a verify batch reads each routed expert's rows once for all its slots (mat x vec),
        // a prompt multiplies them on the int8 tiles.
        const bool tiles = tokens > gk::kMaxIntegerMatvecTokens;
        auto* groups = scratch(kExpertGroups, gk::expert_group_bytes(n_experts, slots));
        record_on_blocks(
            wv, xv, ov, tiles ? "experts_int8_tiles" : "experts_grouped_integer",
            [=](const gk::Launch& l, const void* xq) {
                if (tiles)
                    gk::matmul_experts_int8_tiles(l, wv, n_experts, xq, per_slot, idv, tokens, k, ov, groups);
                else
                    gk::matvec_experts_grouped(l, wv, n_experts, xq, per_slot, idv, tokens, k, ov, groups);
            },
            n_experts, idv, k, groups);
    } else if (!integer && tokens <= kPerSlotFloatExpertTokens) {
        record_product(wv, ov, launch_key("experts_float", wv, n_experts, xv, idv, k, ov),
                       [=](const gk::Launch& l, const std::byte*) {
                           gk::matvec_experts_float(l, wv, n_experts, xv, per_slot, idv, tokens, k, ov);
                       });
    } else {
        auto* groups = scratch(kExpertGroups, gk::expert_group_bytes(n_experts, slots));
        record_product(wv, ov, launch_key("experts_grouped", wv, n_experts, xv, idv, k, ov, groups),
                       [=](const gk::Launch& l, const std::byte*) {
                           gk::matmul_experts_grouped(l, wv, n_experts, xv, per_slot, idv, tokens, k, ov, groups);
                       });
    }
}

namespace {

// Gate and up of one type and shape, so that one kernel walks both.
bool same_shape(const gk::Weights& g, const gk::Weights& u) {
    return g.type == u.type && g.rows == u.rows && g.cols == u.cols && g.row_stride == u.row_stride;
}

// The same, of an integer type, for the integer mat x vec.
bool integer_pair(const gk::Weights& g, const gk::Weights& u) {
    return gk::has_integer_matvec(g.type) && same_shape(g, u) && g.cols % 32 == 0;
}

}  // namespace

void GpuBackend::do_matmul_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, const Tensor& x,
                                 const Tensor& up_scratch, const Tensor& out) {
    const gk::Weights gv = weights_of(w_gate, "matmul_gated gate weights"), uv = weights_of(w_up, "matmul_gated up weights");
    if (x.rows > gk::max_matvec_tokens(gv.type, gv.cols) && same_shape(gv, uv)) {
        // Tiles: gate and up in one tensor-core pass where the device has one.
        const gk::Rows xv = f32_rows(x, "matmul_gated input"), ov = f32_rows(out, "matmul_gated output"),
                       sv = f32_rows(up_scratch, "matmul_gated scratch");
        counters_.weight_bytes += static_cast<uint64_t>(w_gate.rows) * w_gate.row_stride * 2;
        const gk::Gated a = gated_of(act);
        if (gk::int8_tiles_available(ctx_->launch, gv)) {
            record_on_blocks(
                gv, xv, ov, "matmul_gated_int8_tiles",
                [=](const gk::Launch& l, const void* xq) {
                    gk::matmul_gated_int8_tiles(l, a, gv, uv, xq, xv.rows, ov);
                },
                a, uv);
            return;
        }
        if (overlaps(sv, quantized_)) quantized_ = {};
        record_product(gv, ov, launch_key("matmul_gated_tiled", a, gv, uv, xv, sv, ov),
                       [=](const gk::Launch& l, const std::byte*) { gk::matmul_gated_tiled(l, a, gv, uv, xv, sv, ov); });
        return;
    }
    if (!integer_pair(gv, uv) || x.rows > gk::max_matvec_tokens(gv.type, gv.cols))
        return Backend::do_matmul_gated(act, w_gate, w_up, x, up_scratch, out);
    const gk::Rows xv = f32_rows(x, "matmul_gated input"), ov = f32_rows(out, "matmul_gated output");
    counters_.weight_bytes += static_cast<uint64_t>(w_gate.rows) * w_gate.row_stride * 2;
    if (x.rows == 0) return;
    const gk::Gated a = gated_of(act);
    record_on_blocks(
        gv, xv, ov, "matvec_gated_integer",
        [=](const gk::Launch& l, const void* xq) { gk::matvec_gated_integer(l, a, gv, uv, xq, xv.rows, ov); }, a, uv);
}

void GpuBackend::do_matmul_experts_gated(Activation act, const Tensor& w_gate, const Tensor& w_up, int64_t n_experts,
                                         const Tensor& x, const Tensor& ids, const Tensor& up_scratch,
                                         const Tensor& out) {
    const gk::Weights gv = weights_of(w_gate, "matmul_experts_gated gate weights"),
                      uv = weights_of(w_up, "matmul_experts_gated up weights");
    const int64_t tokens = ids.rows;
    const bool integer = gk::has_integer_matvec(gv.type);
    if (tokens > (integer ? gk::kMaxIntegerMatvecTokens : kPerSlotFloatExpertTokens) && same_shape(gv, uv) &&
        w_gate.cols % 32 == 0) {
        // The grouped tiles of matmul_experts: gate and up in one tensor-core pass where the device has one.
        const int k = static_cast<int>(ids.cols);
        const int64_t slots = tokens * k;
        const gk::Rows xv = f32_rows(x, "matmul_experts_gated input"), ov = f32_rows(out, "matmul_experts_gated output"),
                       sv = f32_rows(up_scratch, "matmul_experts_gated scratch");
        const auto* idv = reinterpret_cast<const int32_t*>(device_data(ids, "matmul_experts_gated ids"));
        const bool per_slot = x.rows == slots && k > 1;
        const uint64_t bytes =
            static_cast<uint64_t>(std::min(slots, n_experts) * (w_gate.rows / n_experts)) * w_gate.row_stride * 2;
        counters_.expert_weight_bytes += bytes;
        counters_.weight_bytes += bytes;
        if (slots == 0) return;
        const gk::Gated a = gated_of(act);
        if (gk::int8_tiles_available(ctx_->launch, gv)) {
            auto* groups = scratch(kExpertGroups, gk::expert_group_bytes(n_experts, slots));
            record_on_blocks(
                gv, xv, ov, "experts_gated_int8_tiles",
                [=](const gk::Launch& l, const void* xq) {
                    gk::matmul_experts_gated_int8_tiles(l, a, gv, uv, n_experts, xq, per_slot, idv, tokens, k, ov,
                                                        groups);
                },
                a, uv, n_experts, idv, k, groups);
            return;
        }
        if (overlaps(sv, quantized_)) quantized_ = {};
        auto* groups = scratch(kExpertGroups, gk::expert_group_bytes(n_experts, slots));
        record_product(gv, ov, launch_key("experts_gated_grouped", a, gv, uv, n_experts, xv, idv, k, sv, ov, groups),
                       [=](const gk::Launch& l, const std::byte*) {
                           gk::matmul_experts_gated_grouped(l, a, gv, uv, n_experts, xv, per_slot, idv, tokens, k, sv,
                                                            ov, groups);
                       });
        return;
    }
    if (!integer_pair(gv, uv))
        return Backend::do_matmul_experts_gated(act, w_gate, w_up, n_experts, x, ids, up_scratch, out);
    const int64_t rows = w_gate.rows / n_experts;
    const int k = static_cast<int>(ids.cols);
    const gk::Rows xv = f32_rows(x, "matmul_experts_gated input"), ov = f32_rows(out, "matmul_experts_gated output");
    const auto* idv = reinterpret_cast<const int32_t*>(device_data(ids, "matmul_experts_gated ids"));
    const bool per_slot = x.rows == tokens * k && k > 1;
    const int64_t slots = tokens * k;
    const uint64_t bytes = static_cast<uint64_t>(std::min(slots, n_experts) * rows) * w_gate.row_stride * 2;
    counters_.expert_weight_bytes += bytes;
    counters_.weight_bytes += bytes;
    if (slots == 0) return;
    const gk::Gated a = gated_of(act);
    if (tokens > kPerSlotIntegerExpertTokens) {
        // A verify batch: the slots grouped by expert, each routed expert's gate and up rows read once for its slots.
        auto* groups = scratch(kExpertGroups, gk::expert_group_bytes(n_experts, slots));
        record_on_blocks(
            gv, xv, ov, "experts_gated_grouped_integer",
            [=](const gk::Launch& l, const void* xq) {
                gk::matvec_experts_gated_grouped(l, a, gv, uv, n_experts, xq, per_slot, idv, tokens, k, ov, groups);
            },
            a, uv, n_experts, idv, k, groups);
        return;
    }
    record_on_blocks(
        gv, xv, ov, "experts_gated_integer",
        [=](const gk::Launch& l, const void* xq) {
            gk::matvec_experts_gated_integer(l, a, gv, uv, n_experts, xq, per_slot, idv, tokens, k, ov);
        },
        a, uv, n_experts, idv, k);
}

void GpuBackend::do_moe_gate_up(const MoeGateUpArgs& a) {
    const gk::Weights gv = weights_of(*a.gate_exps, "moe_gate_up gate weights"),
                      uv = weights_of(*a.up_exps, "moe_gate_up up weights");
    const gk::Weights sg = weights_of(*a.shared_gate, "moe_gate_up shared gate weights"),
                      su = weights_of(*a.shared_up, "moe_gate_up shared up weights");
    const int64_t tokens = a.ids.rows;
    const int k = static_cast<int>(a.ids.cols);
    // Decode and short verify batches: the shared expert's rows join the routed slots' launch.
    const bool joined = joined_launches_ && integer_pair(gv, uv) && integer_pair(sg, su) && sg.type == gv.type &&
                        sg.cols == gv.cols && sg.row_stride == gv.row_stride && tokens <= kPerSlotIntegerExpertTokens &&
                        a.x.rows == tokens && tokens > 0;
    if (!joined) return Backend::do_moe_gate_up(a);
    const int64_t rows = a.gate_exps->rows / a.n_experts;
    const gk::Rows xv = f32_rows(a.x, "moe_gate_up input"), ov = f32_rows(a.out, "moe_gate_up output");
    const gk::SharedGated shared{sg, su, f32_rows(a.shared_out, "moe_gate_up shared output")};
    const auto* idv = reinterpret_cast<const int32_t*>(device_data(a.ids, "moe_gate_up ids"));
    const uint64_t bytes = static_cast<uint64_t>(std::min(tokens * k, a.n_experts) * rows) * gv.row_stride * 2;
    counters_.expert_weight_bytes += bytes;
    counters_.weight_bytes += bytes + static_cast<uint64_t>(sg.rows) * sg.row_stride * 2;
    const gk::Gated act = gated_of(a.act);
    const int64_t n_experts = a.n_experts;
    record_on_blocks(
        gv, xv, ov, "experts_gated_shared_integer",
        [=](const gk::Launch& l, const void* xq) {
            gk::matvec_experts_gated_integer(l, act, gv, uv, n_experts, xq, false, idv, tokens, k, ov, &shared);
        },
        act, uv, n_experts, idv, k, sg, su, shared.out);
    if (overlaps(shared.out, quantized_)) quantized_ = {};
}

void GpuBackend::do_moe_down_combine(const MoeDownArgs& a) {
    if (a.norm && !joined_launches_) {
        MoeDownArgs block = a;
        block.norm = nullptr;
        do_moe_down_combine(block);
        return add_rms_norm(a.residual, a.out, *a.norm, a.norm_eps, a.norm_out);
    }
    const gk::Weights dv = weights_of(*a.down, "moe_down_combine down weights");
    const int64_t tokens = a.ids.rows;
    const int k = static_cast<int>(a.ids.cols);
    std::optional<gk::Weights> sv;
    if (a.shared_down) sv = weights_of(*a.shared_down, "moe_down_combine shared down weights");
    const bool fits = k + (sv ? 1 : 0) <= gk::kMaxMoeDownInputs;
    const bool same_shared = !sv || (sv->type == dv.type && sv->cols == dv.cols && sv->row_stride == dv.row_stride);
    if (!gk::has_integer_matvec(dv.type) || dv.cols % 32 != 0 || tokens > kPerSlotIntegerExpertTokens || !fits ||
        !same_shared)
        return Backend::do_moe_down_combine(a);
    const int64_t rows = a.down->rows / a.n_experts;
    const gk::Rows xv = f32_rows(a.act, "moe_down_combine activations"),
                   wv = f32_rows(a.weights, "moe_down_combine weights"), ov = f32_rows(a.out, "moe_down_combine output");
    const auto* idv = reinterpret_cast<const int32_t*>(device_data(a.ids, "moe_down_combine ids"));
    gk::Rows sav, gv;
    if (sv) {
        sav = f32_rows(a.shared_act, "moe_down_combine shared activations");
        gv = f32_rows(a.shared_gate, "moe_down_combine shared gate");
    }
    const bool per_slot = a.act.rows == tokens * k && k > 1;
    const uint64_t bytes = static_cast<uint64_t>(std::min<int64_t>(tokens * k, a.n_experts) * rows) * dv.row_stride;
    counters_.expert_weight_bytes += bytes;
    counters_.weight_bytes += bytes + (sv ? static_cast<uint64_t>(sv->rows) * sv->row_stride : 0);
    if (tokens == 0) return;
    const int64_t n_experts = a.n_experts;
    const gk::Weights shared_key = sv.value_or(gk::Weights{});
    auto* blocks = scratch(kMoeDownBlocks, gk::moe_down_blocks_bytes(tokens, k, dv.cols, sv.has_value()));
    // The residual add and the norm after the block end its launch.
    const bool with_norm = a.norm != nullptr;
    const gk::NormTail norm = with_norm
                                  ? norm_tail(a.residual, ov, *a.norm, a.norm_eps, a.norm_out, "moe_down_combine norm")
                                  : gk::NormTail{};
    record_product(dv, ov,
                   launch_key("moe_down_combine", dv, n_experts, xv, per_slot, idv, k, wv, shared_key, sav, gv, ov,
                              blocks, norm.counter, norm.x, norm.weight, norm.eps, norm.out, norm.q8_1),
                   [=](const gk::Launch& l, const std::byte*) {
                       gk::moe_down_combine(l, dv, n_experts, xv, per_slot, idv, k, wv, sv ? &*sv : nullptr, sav, gv,
                                            ov, blocks, with_norm ? &norm : nullptr);
                   });
    if (with_norm) after_norm_tail(norm);
}

std::unique_ptr<GpuBackend> make_gpu_backend(const GpuBackendOptions& options) {
    return std::make_unique<GpuBackend>(options);
}

}  // namespace ember::gpu_backend
