// SPDX-License-Identifier: MIT
// Prompts with images (../shared/specs/vision-qwen3vl.md §6): the rows of a prompt beyond their token ids (image
// embeddings, M-RoPE positions, the content keys that prompt reuse compares), the expansion of each image
// placeholder into the image's rows, and a session's bounded cache of image encodings.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "model/model.h"
#include "ember/runtime.h"
#include "ember/vision.h"

namespace ember::runtime {

struct PromptRows {
    std::vector<int32_t> tokens;
    std::vector<uint64_t> keys;  // per row: 0 for a token's own embedding, else the content key of its image
    std::vector<int32_t> next;   // per row: the text position of the row after it (§6 step 4)
    std::vector<int32_t> thw;    // per row (t, h, w), [n][3]; empty when the prompt has no image
    struct Image {
        int64_t first_row = 0;
        std::shared_ptr<const vision::ImageEmbedding> embedding;
    };
    std::vector<Image> images;
    int64_t image_tokens = 0;
    size_t conversation_end = 0;  // a row where prefill keeps a checkpoint (Session::render); 0: none

    // A prompt of tokens only (row i at position i).
    static PromptRows text(std::span<const int32_t> tokens);
    size_t size() const { return tokens.size(); }
    bool empty() const { return tokens.empty(); }
    // The forward inputs of rows [first, first + n): their image rows (relative to first) and their M-RoPE
    // positions axis-major (empty for a prompt without images).
    void slice(size_t first, size_t n, std::vector<ForwardRequest::EmbeddedRows>& embedded,
               std::vector<int32_t>& rope) const;
    // The first row of [first, first + n) after every image row in it (first + n when the range ends in an image):
    // drafters see only the rows from there.
    size_t text_after_images(size_t first, size_t n) const;
    // Where a prefill batch from `first` ends: after at most `batch` rows, and at every checkpoint row.
    size_t batch_end(size_t first, size_t batch) const;
    // Rows before which the state keeps a checkpoint: where an image starts (a later turn with another image
    // there reuses everything before it) and the conversation's end.
    bool checkpoint_at(size_t row) const;
};

// Image encodings by content key, the least recently used dropped beyond max_bytes.
class EncodingCache {
public:
    explicit EncodingCache(size_t max_bytes) : max_bytes_(max_bytes) {}
    std::shared_ptr<const vision::ImageEmbedding> find(uint64_t key);
    void insert(uint64_t key, std::shared_ptr<const vision::ImageEmbedding> embedding);
    size_t bytes() const { return bytes_; }

private:
    using Entry = std::pair<uint64_t, std::shared_ptr<const vision::ImageEmbedding>>;
    size_t max_bytes_;
    size_t bytes_ = 0;
    std::list<Entry> order_;  // most recent first
    std::unordered_map<uint64_t, std::list<Entry>::iterator> index_;
};

// A key of the image's size and pixels (never 0).
uint64_t image_key(const vision::Image& image);

// The rows of `tokens` with each `pad` token expanded to the rows of the next of `images`, in order (M-RoPE
// positions of §6: an image's rows at (s, s + row, s + col), the text after it at s + max(rows, cols)); keys[i] is
// image i's content key; `conversation_end` (a token index, 0: none) becomes the rows' conversation_end. The caller
// has matched the pads with the images.
PromptRows image_rows(std::span<const int32_t> tokens, int32_t pad,
                      std::span<const std::shared_ptr<const vision::ImageEmbedding>> images,
                      std::span<const uint64_t> keys, size_t conversation_end = 0);

// The prompt `tokens` with each `pad` token expanded to the rows of the next image (in order), their embeddings
// taken from `cache` or encoded by `projector` (options.on_image before each; stats.image_seconds and
// image_tokens filled); `conversation_end` (a token index, 0: none) becomes the rows' conversation_end. Throws
// ember::Error when the pads and the images differ in number or an embedding does not have the model's width.
// Returns nothing when `cancelled` says so between two encodings.
std::optional<PromptRows> expand_images(std::span<const int32_t> tokens, int32_t pad,
                                        std::span<const vision::Image> images, const vision::Projector& projector,
                                        int64_t n_embd, EncodingCache& cache, const GenerationOptions& options,
                                        GenerationStats& stats, const std::function<bool()>& cancelled,
                                        size_t conversation_end = 0);

}  // namespace ember::runtime
