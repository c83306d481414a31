#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The synthetic qwen35moe file of tests/fixtures/make_synthetic_qwen35moe.py with Q4_0 in place of both ROCmFP4
types (token_embd stays Q6_K), for the Q4_0 column of the GPU benchmarks.

    make_synthetic_q4_0.py OUT.gguf [--scale full|mid|small] [--seed N]
"""
import sys
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as QT

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "fixtures"))
import make_synthetic_qwen35moe as synthetic  # noqa: E402

_strix_type = synthetic.tensor_type
_strix_tensor = synthetic.make_tensor


def tensor_type(t):
    type_id = _strix_type(t)
    return int(QT.Q4_0) if type_id in (100, 101) else type_id


def make_tensor(rng, t, type_id):
    if type_id != int(QT.Q4_0):
        return _strix_tensor(rng, t, type_id)
    n = int(np.prod(t.ne))
    blocks = synthetic.random_bytes(rng, n // 32 * 18).reshape(-1, 18)
    # uniform codes q - 8 have std 4.6: d puts the weights near std 1/sqrt(row length)
    d = (rng.uniform(0.9, 1.1, size=len(blocks)) / np.sqrt(t.ne[0]) / 4.6).astype(np.float16)
    blocks[:, 0:2] = d.view(np.uint8).reshape(-1, 2)
    return blocks


synthetic.tensor_type = tensor_type
synthetic.make_tensor = make_tensor

if __name__ == "__main__":
    sys.exit(synthetic.main())
