// SPDX-License-Identifier: MIT
// Raw forward passes of a loaded model, public for benchmarks and reference checks (ember-cli bench and logits):
// no chat template, no sampling, no drafting; a state of its own. Conversations go through ember::Session.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ember/model_info.h"
#include "ember/vision.h"

namespace ember {

class LoadedModel;
class SequenceState;

class ModelEvaluator {
public:
    // A state of n_ctx positions; max_rollback: how many of a pass's last tokens truncate() may come back over
    // (verify passes of a recurrent model).
    ModelEvaluator(std::shared_ptr<const LoadedModel> model, int64_t n_ctx, KvCacheType kv_type,
                   int64_t max_rollback = 0);
    ~ModelEvaluator();

    // The most rows one forward pass takes.
    int64_t max_batch() const;
    // Positions held.
    int64_t position() const;
    // Runs `tokens` after the held positions in passes of at most `batch` rows (0: max_batch()) and returns the
    // logits of the last row, or of every row with all_logits ([n, n_vocab]). rollback: the state is kept after each
    // of the last `rollback` tokens (at most max_rollback), which are computed exactly as decoding computes them —
    // a verify pass.
    const std::vector<float>& forward(std::span<const int32_t> tokens, bool all_logits = false, int64_t rollback = 0,
                                      size_t batch = 0);
    // From position 0: a prompt whose maximal runs of `image_pad` stand for `images` in order, each run exactly as
    // long as its image's token count, with M-RoPE positions (../shared/specs/vision-qwen3vl.md §6); every row's
    // logits. Throws ember::Error naming the image (names[i]) whose run does not match, or when the model reads no
    // image embeddings.
    std::vector<float> forward_image_prompt(std::span<const int32_t> tokens, int32_t image_pad,
                                            std::vector<vision::ImageEmbedding> images,
                                            const std::vector<std::string>& names, size_t batch = 0);
    // Forgets positions >= n; returns the position kept (a recurrent state comes back only to kept states).
    int64_t truncate(int64_t n);
    // Keeps the current state so that truncate() can come back here.
    void checkpoint();
    // Bytes of weights the backend's matrix products have read so far (its counters).
    uint64_t weight_bytes_read() const;

private:
    size_t rows_per_pass(size_t batch) const;  // `batch` rows, or max_batch() for 0 or more

    std::shared_ptr<const LoadedModel> model_;
    std::unique_ptr<SequenceState> state_;
    std::vector<float> logits_, pass_;
};

}  // namespace ember
