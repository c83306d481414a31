// SPDX-License-Identifier: MIT
// What every decoder-only model does at the ends of a forward pass: capture the residual streams a request asks
// for (DFlash features), and the final norm, hidden states and logits.
#pragma once

#include <vector>

#include "model/model.h"

namespace ember::model {

// Copies the residual stream entering requested layers into ForwardRequest::captured.
class LayerCapture {
public:
    LayerCapture(const ForwardRequest& request, int64_t n_rows, int64_t n_embd);
    // Before layer `layer` runs, with x = its input rows (layer == n_layer: the output after the final norm).
    void at_layer(Backend& backend, int64_t layer, const Tensor& x);

private:
    const ForwardRequest& request_;
    int64_t n_rows_;
    int64_t n_embd_;
    std::vector<float> rows_;
};

// The final norm of x's rows into `normed` (scratch of at least x.rows rows), the hidden states the request asks
// for, and the logits of the last n_out rows through `head` into `logits_tensor` and `logits`.
void finish_forward(Backend& backend, const ForwardRequest& request, const Tensor& x, const Tensor& norm, float eps,
                    const Tensor& normed, const Tensor& head, const Tensor& logits_tensor, std::vector<float>& logits,
                    LayerCapture& capture, int64_t n_layer);

}  // namespace ember::model
