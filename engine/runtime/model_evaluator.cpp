// SPDX-License-Identifier: MIT
// ModelEvaluator: forward passes on a state of its own, in batches, with image rows laid out by the session's rule.
#include "ember/model_evaluator.h"

#include <algorithm>

#include "backend/backend.h"
#include "model/model.h"
#include "ember/runtime.h"
#include "runtime/session_images.h"

namespace ember {

ModelEvaluator::ModelEvaluator(std::shared_ptr<const LoadedModel> model, int64_t n_ctx, KvCacheType kv_type,
                               int64_t max_rollback)
    : model_(std::move(model)) {
    StateOptions options;
    options.n_ctx = n_ctx;
    options.kv_type = kv_type;
    options.max_rollback = max_rollback;
    state_ = model_->model().create_state(options);
}

ModelEvaluator::~ModelEvaluator() = default;

int64_t ModelEvaluator::max_batch() const { return model_->model().max_batch(); }

int64_t ModelEvaluator::position() const { return state_->position(); }

size_t ModelEvaluator::rows_per_pass(size_t batch) const {
    const auto most = static_cast<size_t>(max_batch());
    return batch == 0 ? most : std::min(batch, most);
}

const std::vector<float>& ModelEvaluator::forward(std::span<const int32_t> tokens, bool all_logits, int64_t rollback,
                                                  size_t batch) {
    const size_t step = rows_per_pass(batch);
    logits_.clear();
    for (size_t first = 0; first < tokens.size(); first += step) {
        const size_t n = std::min(step, tokens.size() - first);
        const bool last = first + n == tokens.size();
        ForwardRequest request{tokens.subspan(first, n), static_cast<int32_t>(state_->position()), all_logits,
                               last ? std::min<int64_t>(rollback, static_cast<int64_t>(n)) : 0};
        model_->model().forward(*state_, request, pass_);
        if (all_logits)
            logits_.insert(logits_.end(), pass_.begin(), pass_.end());
        else if (last)
            logits_.swap(pass_);
    }
    return logits_;
}

std::vector<float> ModelEvaluator::forward_image_prompt(std::span<const int32_t> tokens, int32_t image_pad,
                                                        std::vector<vision::ImageEmbedding> images,
                                                        const std::vector<std::string>& names, size_t batch) {
    if (!model_->model().takes_images())
        throw Error(model_->file().name() + ": this model cannot take image embeddings");
    // Each run of pads becomes one pad, which image_rows expands again to its image's rows.
    std::vector<int32_t> collapsed;
    std::vector<std::shared_ptr<const vision::ImageEmbedding>> embeddings;
    std::vector<uint64_t> keys;
    for (size_t i = 0; i < tokens.size();) {
        if (tokens[i] != image_pad) {
            collapsed.push_back(tokens[i++]);
            continue;
        }
        size_t end = i;
        while (end < tokens.size() && tokens[end] == image_pad) ++end;
        const size_t image = embeddings.size();
        if (image >= images.size())
            throw Error("--tokens: run " + std::to_string(image + 1) + " of <|image_pad|> ids (at " + std::to_string(i) +
                        ") has no --image; " + std::to_string(images.size()) + " given");
        const vision::ImageEmbedding& e = images[image];
        if (static_cast<int64_t>(end - i) != e.tokens())
            throw Error(names[image] + ": the image has " + std::to_string(e.tokens()) + " tokens (grid " +
                        std::to_string(e.grid.merged_rows()) + "x" + std::to_string(e.grid.merged_cols()) +
                        ") but its run of <|image_pad|> ids in --tokens has " + std::to_string(end - i));
        embeddings.push_back(std::make_shared<const vision::ImageEmbedding>(std::move(images[image])));
        keys.push_back(image + 1);
        collapsed.push_back(image_pad);
        i = end;
    }
    if (embeddings.size() != images.size())
        throw Error(names[embeddings.size()] + ": --tokens holds " + std::to_string(embeddings.size()) +
                    " run(s) of <|image_pad|> ids for " + std::to_string(images.size()) + " images");
    const runtime::PromptRows rows = runtime::image_rows(collapsed, image_pad, embeddings, keys);

    truncate(0);
    const size_t step = rows_per_pass(batch);
    std::vector<float> all;
    std::vector<ForwardRequest::EmbeddedRows> embedded;
    std::vector<int32_t> rope;
    for (size_t first = 0; first < rows.size(); first += step) {
        const size_t n = std::min(step, rows.size() - first);
        rows.slice(first, n, embedded, rope);
        ForwardRequest request;
        request.tokens = std::span<const int32_t>(rows.tokens).subspan(first, n);
        request.first_position = static_cast<int32_t>(first);
        request.all_logits = true;
        request.embedded = embedded;
        request.rope_positions = rope;
        model_->model().forward(*state_, request, pass_);
        all.insert(all.end(), pass_.begin(), pass_.end());
    }
    return all;
}

int64_t ModelEvaluator::truncate(int64_t n) { return state_->truncate(n); }

void ModelEvaluator::checkpoint() { state_->checkpoint(); }

uint64_t ModelEvaluator::weight_bytes_read() const { return model_->backend().counters().weight_bytes; }

}  // namespace ember
