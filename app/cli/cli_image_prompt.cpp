// SPDX-License-Identifier: MIT
// Image rows and M-RoPE positions of a token prompt, and its forward pass in batches.
#include "cli_image_prompt.h"

#include <algorithm>

#include "ember/error.h"

namespace ember::cli {

ImagePrompt make_image_prompt(std::span<const int32_t> tokens, int32_t image_pad,
                              std::vector<vision::ImageEmbedding> images, const std::vector<std::string>& names) {
    ImagePrompt out;
    const size_t n = tokens.size();
    out.positions.assign(3 * n, 0);
    int32_t* t = out.positions.data();
    int32_t* h = t + n;
    int32_t* w = h + n;
    int32_t next = 0;  // the running position index
    size_t image = 0;
    for (size_t i = 0; i < n;) {
        if (tokens[i] != image_pad) {
            t[i] = h[i] = w[i] = next++;
            ++i;
            continue;
        }
        size_t end = i;
        while (end < n && tokens[end] == image_pad) ++end;
        const int64_t run = static_cast<int64_t>(end - i);
        if (image >= images.size())
            throw Error("--tokens: run " + std::to_string(image + 1) + " of <|image_pad|> ids (at " +
                        std::to_string(i) + ") has no --image; " + std::to_string(images.size()) + " given");
        const vision::ImageEmbedding& e = images[image];
        if (run != e.tokens())
            throw Error(names[image] + ": the image has " + std::to_string(e.tokens()) + " tokens (grid " +
                        std::to_string(e.grid.merged_rows()) + "x" + std::to_string(e.grid.merged_cols()) +
                        ") but its run of <|image_pad|> ids in --tokens has " + std::to_string(run));
        const int64_t cols = e.grid.merged_cols();
        const int32_t s = next;
        for (int64_t j = 0; j < run; ++j) {
            const size_t row = i + static_cast<size_t>(j);
            t[row] = s;
            h[row] = s + static_cast<int32_t>(j / cols);
            w[row] = s + static_cast<int32_t>(j % cols);
        }
        next = s + static_cast<int32_t>(std::max(e.grid.merged_rows(), cols));
        out.first_rows.push_back(static_cast<int64_t>(i));
        ++image;
        i = end;
    }
    if (image != images.size())
        throw Error(names[image] + ": --tokens holds " + std::to_string(image) + " run(s) of <|image_pad|> ids for " +
                    std::to_string(images.size()) + " images");
    out.images = std::move(images);
    return out;
}

std::vector<float> forward_image_prompt(const Model& model, SequenceState& state, std::span<const int32_t> tokens,
                                        const ImagePrompt& prompt, size_t batch) {
    const size_t n = tokens.size();
    std::vector<float> all, logits;
    std::vector<int32_t> positions;
    std::vector<ForwardRequest::EmbeddedRows> rows;
    for (size_t first = 0; first < n; first += batch) {
        const size_t len = std::min(batch, n - first);
        positions.clear();
        for (size_t axis = 0; axis < 3; ++axis)
            positions.insert(positions.end(), prompt.positions.begin() + static_cast<ptrdiff_t>(axis * n + first),
                             prompt.positions.begin() + static_cast<ptrdiff_t>(axis * n + first + len));
        rows.clear();
        for (size_t k = 0; k < prompt.images.size(); ++k) {
            const vision::ImageEmbedding& e = prompt.images[k];
            const int64_t lo = std::max<int64_t>(prompt.first_rows[k], static_cast<int64_t>(first));
            const int64_t hi = std::min<int64_t>(prompt.first_rows[k] + e.tokens(), static_cast<int64_t>(first + len));
            if (lo >= hi) continue;
            const size_t skip = static_cast<size_t>((lo - prompt.first_rows[k]) * e.n_embd);
            rows.push_back({lo - static_cast<int64_t>(first), hi - lo,
                            std::span<const float>(e.rows).subspan(skip, static_cast<size_t>((hi - lo) * e.n_embd))});
        }
        ForwardRequest request;
        request.tokens = tokens.subspan(first, len);
        request.first_position = static_cast<int32_t>(first);
        request.all_logits = true;
        request.embedded = rows;
        request.rope_positions = positions;
        model.forward(state, request, logits);
        all.insert(all.end(), logits.begin(), logits.end());
    }
    return all;
}

}  // namespace ember::cli
