// SPDX-License-Identifier: MIT
// gpu_bench MODEL.gguf BACKEND [PROMPT_TOKENS] [DECODE_TOKENS]: prefill and decode tokens/s of a model on one
// backend (make_backend's names), and the decode step's weight bytes over its time beside the device's bandwidth
// (measured here with a device-to-device copy where the backend is the HIP/CUDA one). Needs only the engine's
// model module, so it builds where ember-cli's dependencies would take long.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/model.h"

using namespace ember;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Bytes per second of a device-to-device copy of `bytes` through the backend's own ops (convert F32 -> F32).
double copy_bandwidth(Backend& b, size_t bytes) {
    const int64_t cols = 1 << 20, rows = static_cast<int64_t>(bytes / 4 / cols);
    auto src = b.allocate(static_cast<size_t>(rows * cols) * 4), dst = b.allocate(static_cast<size_t>(rows * cols) * 4);
    const Tensor ts = make_tensor(*src, gguf::TensorType::F32, rows, cols);
    const Tensor td = make_tensor(*dst, gguf::TensorType::F32, rows, cols);
    b.convert(ts, td);
    b.synchronize();
    const auto start = Clock::now();
    constexpr int reps = 10;
    for (int i = 0; i < reps; ++i) b.convert(ts, td);
    b.synchronize();
    return 2.0 * static_cast<double>(rows * cols * 4) * reps / seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: gpu_bench MODEL.gguf BACKEND [PROMPT_TOKENS] [DECODE_TOKENS] [DECODE_BYTES]\n");
        return 2;
    }
    try {
        const std::string path = argv[1], backend_name = argv[2];
        const int64_t n_prompt = argc > 3 ? std::atoll(argv[3]) : 512;
        const int64_t n_gen = argc > 4 ? std::atoll(argv[4]) : 64;
        const double step_bytes = argc > 5 ? std::atof(argv[5]) : 0.0;  // weight bytes a decode step reads
        auto start = Clock::now();
        gguf::File file = gguf::File::open(path);
        auto backend = make_backend(backend_name);
        auto model = load_model(file, *backend);
        backend->synchronize();
        const double load = seconds_since(start);
        const int64_t n_vocab = model->info().n_vocab;
        StateOptions so;
        so.n_ctx = n_prompt + n_gen + 1;
        so.kv_type = KvCacheType::f16;
        auto state = model->create_state(so);
        std::vector<int32_t> prompt(static_cast<size_t>(n_prompt));
        for (int64_t i = 0; i < n_prompt; ++i) prompt[static_cast<size_t>(i)] = static_cast<int32_t>((i * 7919 + 13) % n_vocab);
        std::vector<float> logits;
        double best_prefill = 0, best_decode = 0;
        for (int rep = 0; rep < 2; ++rep) {  // the first round warms up (graphs are captured on the second step)
            state->truncate(0);
            start = Clock::now();
            for (int64_t first = 0; first < n_prompt; first += model->max_batch()) {
                const int64_t n = std::min(model->max_batch(), n_prompt - first);
                model->forward(*state, {std::span(prompt).subspan(static_cast<size_t>(first), static_cast<size_t>(n)),
                                        static_cast<int32_t>(first), false},
                               logits);
            }
            best_prefill = std::max(best_prefill, n_prompt / seconds_since(start));
            start = Clock::now();
            for (int64_t i = 0; i < n_gen; ++i) {
                const int32_t next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
                model->forward(*state, {std::span(&next, 1), static_cast<int32_t>(n_prompt + i), false}, logits);
            }
            best_decode = std::max(best_decode, n_gen / seconds_since(start));
        }
        std::printf("%s on %s: load %.1f s, prefill %.1f tok/s (%lld tokens), decode %.1f tok/s (%lld tokens)\n",
                    path.c_str(), backend->name().c_str(), load, best_prefill, static_cast<long long>(n_prompt),
                    best_decode, static_cast<long long>(n_gen));
        if (step_bytes > 0) {
            const double achieved = step_bytes * best_decode;
            const double peak = copy_bandwidth(*backend, size_t{4} << 30);
            std::printf("  decode reads %.2f GB/step: %.0f GB/s achieved, copy bandwidth %.0f GB/s -> %.0f%% of it\n",
                        step_bytes / 1e9, achieved / 1e9, peak / 1e9, 100.0 * achieved / peak);
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "gpu_bench: %s\n", e.what());
        return 1;
    }
}
