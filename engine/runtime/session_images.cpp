// SPDX-License-Identifier: MIT
// Chat turns with images: placeholder expansion, M-RoPE positions (vision-qwen3vl.md §6) and cached encodings.
#include "runtime/session_images.h"

#include <algorithm>
#include <chrono>

namespace ember::runtime {

PromptRows PromptRows::text(std::span<const int32_t> tokens) {
    PromptRows rows;
    rows.tokens.assign(tokens.begin(), tokens.end());
    rows.keys.assign(tokens.size(), 0);
    rows.next.resize(tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) rows.next[i] = static_cast<int32_t>(i + 1);
    return rows;
}

void PromptRows::slice(size_t first, size_t n, std::vector<ForwardRequest::EmbeddedRows>& embedded,
                       std::vector<int32_t>& rope) const {
    embedded.clear();
    rope.clear();
    if (images.empty()) return;
    const auto lo_row = static_cast<int64_t>(first), hi_row = static_cast<int64_t>(first + n);
    for (const Image& image : images) {
        const int64_t e = image.embedding->n_embd, count = image.embedding->tokens();
        const int64_t lo = std::max(lo_row, image.first_row), hi = std::min(hi_row, image.first_row + count);
        if (lo >= hi) continue;
        embedded.push_back(
            {lo - lo_row, hi - lo,
             std::span<const float>(image.embedding->rows)
                 .subspan(static_cast<size_t>((lo - image.first_row) * e), static_cast<size_t>((hi - lo) * e))});
    }
    rope.resize(3 * n);
    for (size_t i = 0; i < n; ++i)
        for (size_t axis = 0; axis < 3; ++axis) rope[axis * n + i] = thw[(first + i) * 3 + axis];
}

size_t PromptRows::text_after_images(size_t first, size_t n) const {
    size_t start = first;
    for (const Image& image : images) {
        const auto end = static_cast<size_t>(image.first_row + image.embedding->tokens());
        if (static_cast<size_t>(image.first_row) < first + n && end > start) start = std::min(end, first + n);
    }
    return start;
}

size_t PromptRows::batch_end(size_t first, size_t batch) const {
    size_t end = std::min(size(), first + batch);
    for (const Image& image : images) {
        const auto start = static_cast<size_t>(image.first_row);
        if (start > first && start < end) end = start;
    }
    if (conversation_end > first && conversation_end < end) end = conversation_end;
    return end;
}

bool PromptRows::checkpoint_at(size_t row) const {
    return (conversation_end != 0 && row == conversation_end) ||
           std::any_of(images.begin(), images.end(),
                       [row](const Image& image) { return static_cast<size_t>(image.first_row) == row; });
}

std::shared_ptr<const vision::ImageEmbedding> EncodingCache::find(uint64_t key) {
    const auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
}

void EncodingCache::insert(uint64_t key, std::shared_ptr<const vision::ImageEmbedding> embedding) {
    if (index_.contains(key)) return;
    bytes_ += embedding->rows.size() * sizeof(float);
    order_.emplace_front(key, std::move(embedding));
    index_[key] = order_.begin();
    while (bytes_ > max_bytes_ && order_.size() > 1) {
        bytes_ -= order_.back().second->rows.size() * sizeof(float);
        index_.erase(order_.back().first);
        order_.pop_back();
    }
}

uint64_t image_key(const vision::Image& image) {
    // FNV-1a over the size and the pixels.
    uint64_t h = 0xcbf29ce484222325ull;
    auto mix = [&h](uint8_t b) { h = (h ^ b) * 0x100000001b3ull; };
    for (const int64_t v : {image.width, image.height})
        for (int i = 0; i < 8; ++i) mix(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
    for (const uint8_t b : image.rgb) mix(b);
    return h == 0 ? 1 : h;
}

PromptRows image_rows(std::span<const int32_t> tokens, int32_t pad,
                      std::span<const std::shared_ptr<const vision::ImageEmbedding>> images,
                      std::span<const uint64_t> keys, size_t conversation_end) {
    PromptRows rows;
    int32_t position = 0;  // the running M-RoPE position
    size_t next_image = 0;
    auto add = [&rows](int32_t token, uint64_t key, int32_t t, int32_t h, int32_t w, int32_t next) {
        rows.tokens.push_back(token);
        rows.keys.push_back(key);
        rows.thw.insert(rows.thw.end(), {t, h, w});
        rows.next.push_back(next);
    };
    for (size_t t = 0; t < tokens.size(); ++t) {
        const int32_t token = tokens[t];
        if (t == conversation_end && t != 0) rows.conversation_end = rows.tokens.size();
        if (token != pad) {
            add(token, 0, position, position, position, position + 1);
            ++position;
            continue;
        }
        const size_t i = next_image++;
        const vision::ImageEmbedding& e = *images[i];
        const auto grid_rows = static_cast<int32_t>(e.grid.merged_rows()),
                   cols = static_cast<int32_t>(e.grid.merged_cols());
        const int32_t s = position, after = s + std::max(grid_rows, cols);
        rows.images.push_back({static_cast<int64_t>(rows.tokens.size()), images[i]});
        for (int32_t r = 0; r < grid_rows; ++r)
            for (int32_t c = 0; c < cols; ++c) add(pad, keys[i], s, s + r, s + c, after);
        rows.image_tokens += e.tokens();
        position = after;
    }
    return rows;
}

std::optional<PromptRows> expand_images(std::span<const int32_t> tokens, int32_t pad,
                                        std::span<const vision::Image> images, const vision::Projector& projector,
                                        int64_t n_embd, EncodingCache& cache, const GenerationOptions& options,
                                        GenerationStats& stats, const std::function<bool()>& cancelled,
                                        size_t conversation_end) {
    const auto pads = static_cast<size_t>(std::count(tokens.begin(), tokens.end(), pad));
    if (pads != images.size())
        throw Error("chat: the conversation has " + std::to_string(pads) + " image placeholder" +
                    (pads == 1 ? "" : "s") + " but " + std::to_string(images.size()) + " image" +
                    (images.size() == 1 ? " was" : "s were") + " given");
    // Encodings first (cached ones cost nothing), so on_image knows how many are left.
    std::vector<std::shared_ptr<const vision::ImageEmbedding>> encoded(images.size());
    std::vector<uint64_t> keys(images.size());
    std::vector<size_t> missing;
    for (size_t i = 0; i < images.size(); ++i) {
        keys[i] = image_key(images[i]);
        encoded[i] = cache.find(keys[i]);
        if (!encoded[i]) missing.push_back(i);
    }
    const auto start = std::chrono::steady_clock::now();
    for (size_t done = 0; done < missing.size(); ++done) {
        if (cancelled && cancelled()) return std::nullopt;
        if (options.on_image) options.on_image(static_cast<int>(done), static_cast<int>(missing.size()));
        const size_t i = missing[done];
        auto embedding = std::make_shared<vision::ImageEmbedding>(projector.encode(images[i]));
        if (embedding->n_embd != n_embd ||
            static_cast<int64_t>(embedding->rows.size()) != embedding->tokens() * embedding->n_embd)
            throw Error(images[i].name + ": the projector gave embeddings of width " +
                        std::to_string(embedding->n_embd) + ", the model reads " + std::to_string(n_embd));
        encoded[i] = embedding;
        cache.insert(keys[i], std::move(embedding));
    }
    if (!missing.empty())
        stats.image_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    PromptRows rows = image_rows(tokens, pad, encoded, keys, conversation_end);
    stats.image_tokens = rows.image_tokens;
    return rows;
}

}  // namespace ember::runtime

namespace ember {

namespace {
constexpr size_t kEncodingCacheBytes = size_t{512} << 20;
}  // namespace

GenerationResult Session::chat(const chat::RenderRequest& conversation, std::span<const vision::Image> images,
                               const GenerationOptions& options, const StreamCallback& on_chunk) {
    const vision::Projector* projector = model_->projector();
    if (!images.empty() && !projector)
        throw Error(model_->file().name() +
                    ": no vision projector is paired with this model, so it cannot read images (give an mmproj file)");
    chat::ParserOptions parser;
    size_t conversation_end = 0;
    const std::vector<int32_t> tokens = render(conversation, parser, &conversation_end);
    const std::optional<int32_t> pad = model_->tokenizer().find_token("<|image_pad|>");
    if (!pad || (images.empty() && std::find(tokens.begin(), tokens.end(), *pad) == tokens.end())) {
        if (!images.empty())
            throw Error(model_->file().name() + ": the vocabulary has no <|image_pad|> token for images");
        runtime::PromptRows rows = runtime::PromptRows::text(tokens);
        rows.conversation_end = conversation_end;
        return run(rows, options, on_chunk, parser);
    }
    if (images.empty()) throw Error("chat: the conversation has image placeholders but no images were given");
    if (!encodings_) encodings_ = std::make_unique<runtime::EncodingCache>(kEncodingCacheBytes);
    GenerationStats image_stats;
    // Cancelling stops between two encodings (run() watches the flags from then on).
    cancel_.store(false, std::memory_order_relaxed);
    const std::atomic<bool>* caller = options.cancel;
    auto stop = [this, caller] {
        return cancel_.load(std::memory_order_relaxed) || (caller && caller->load(std::memory_order_relaxed));
    };
    const std::optional<runtime::PromptRows> rows =
        runtime::expand_images(tokens, *pad, images, *projector, model_->info().n_embd, *encodings_, options,
                               image_stats, stop, conversation_end);
    if (!rows) {
        GenerationResult cancelled;
        cancelled.stop_reason = StopReason::cancelled;
        cancelled.stats.image_seconds = image_stats.image_seconds;
        return cancelled;
    }
    GenerationResult result = run(*rows, options, on_chunk, parser);
    result.stats.image_tokens = image_stats.image_tokens;
    result.stats.image_seconds = image_stats.image_seconds;
    return result;
}

}  // namespace ember
