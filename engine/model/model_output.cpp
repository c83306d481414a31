// SPDX-License-Identifier: MIT
// The ends of a forward pass: captured residual streams, the final norm and the LM head.
#include "model/model_output.h"

#include <algorithm>

namespace ember::model {

LayerCapture::LayerCapture(const ForwardRequest& request, int64_t n_rows, int64_t n_embd)
    : request_(request), n_rows_(n_rows), n_embd_(n_embd) {
    if (request.captured && !request.capture_layers.empty())
        request.captured->assign(static_cast<size_t>(n_rows * n_embd) * request.capture_layers.size(), 0.0f);
}

void LayerCapture::at_layer(Backend& backend, int64_t layer, const Tensor& x) {
    if (!request_.captured) return;
    const auto& layers = request_.capture_layers;
    const size_t slots = layers.size();
    for (size_t k = 0; k < slots; ++k) {
        if (layers[k] != layer) continue;
        rows_.resize(static_cast<size_t>(n_rows_ * n_embd_));
        backend.read(x.row_range(0, n_rows_), std::as_writable_bytes(std::span(rows_)));
        for (int64_t i = 0; i < n_rows_; ++i)
            std::copy_n(rows_.begin() + i * n_embd_, n_embd_,
                        request_.captured->begin() + static_cast<ptrdiff_t>((static_cast<size_t>(i) * slots + k) * n_embd_));
    }
}

void finish_forward(Backend& be, const ForwardRequest& request, const Tensor& x, const Tensor& norm, float eps,
                    const Tensor& normed, const Tensor& head, const Tensor& logits_tensor, std::vector<float>& logits,
                    LayerCapture& capture, int64_t n_layer) {
    const int64_t n = x.rows;
    const int64_t n_out = logits_tensor.rows;
    // Every row is normed when the request wants all hidden states or the post-norm tap; otherwise only the rows
    // whose logits are asked for.
    const bool all = request.all_hidden || (request.captured && std::count(request.capture_layers.begin(),
                                                                            request.capture_layers.end(), n_layer));
    const int64_t first = all ? 0 : n - n_out;
    const Tensor rows = normed.row_range(0, n - first);
    be.rms_norm(x.row_range(first, n - first), norm, eps, rows);
    capture.at_layer(be, n_layer, rows);
    if (request.hidden) {
        const Tensor wanted = request.all_hidden ? rows : rows.row_range(rows.rows - n_out, n_out);
        request.hidden->resize(static_cast<size_t>(wanted.rows * wanted.cols));
        be.read(wanted, std::as_writable_bytes(std::span(*request.hidden)));
    }
    be.matmul(head, rows.row_range(rows.rows - n_out, n_out), logits_tensor);
    logits.resize(static_cast<size_t>(n_out * logits_tensor.cols));
    be.read(logits_tensor, std::as_writable_bytes(std::span(logits)));
}

}  // namespace ember::model
