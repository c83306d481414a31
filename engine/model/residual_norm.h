// SPDX-License-Identifier: MIT
// The residual add and norm that follow a sub-layer, handed to the sub-layer so that its backend call can end with it.
#pragma once

#include "backend/backend.h"

namespace ember::model {

// residual += the sub-layer's output, then out = rms_norm(residual) * norm, as Backend::add_rms_norm.
struct ResidualNorm {
    Tensor residual;
    const Tensor& norm;
    float eps;
    Tensor out;
};

}  // namespace ember::model
