// SPDX-License-Identifier: MIT
// Every tensor type with a reference quantizer and dequantizer (the types of the issue), for the quant tests that
// run over all of them.
#pragma once

#include "ember/gguf.h"

namespace ember::test {

inline constexpr gguf::TensorType kReferenceTypes[] = {
    gguf::TensorType::F32,          gguf::TensorType::F16,          gguf::TensorType::BF16,
    gguf::TensorType::Q4_0,         gguf::TensorType::Q4_1,         gguf::TensorType::Q5_0,
    gguf::TensorType::Q5_1,         gguf::TensorType::Q8_0,         gguf::TensorType::Q2_K,
    gguf::TensorType::Q3_K,         gguf::TensorType::Q4_K,         gguf::TensorType::Q5_K,
    gguf::TensorType::Q6_K,         gguf::TensorType::Q8_K,         gguf::TensorType::MXFP4,
    gguf::TensorType::Q4_0_ROCMFP4, gguf::TensorType::Q4_0_ROCMFP4_FAST, gguf::TensorType::Q6_0_ROCMFPX,
    gguf::TensorType::Q8_0_ROCMFPX, gguf::TensorType::Q3_0_ROCMFPX,
};

}  // namespace ember::test
