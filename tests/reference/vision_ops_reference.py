# SPDX-License-Identifier: MIT
"""The vision encoder's new backend ops in float64 numpy, written from vision-qwen3vl.md §5, and the fixtures that
check the CPU backend and the C++ reference (tests/backend/reference_ops.cpp) against them.

    vision_ops_reference.py OUT_DIR    writes OUT_DIR/<case>.<array>.f32 (raw little-endian float32 / int32)

Cases (shapes fixed here and in tests/backend/backend_vision_numpy_test.cpp):
  layer_norm_1152: x [6, 1152] (offset mean, uneven spread), weight, bias [1152], eps 1e-6 -> want [6, 1152]
  layer_norm_72:   x [3, 72], eps 1e-5
  gelu:            x [1, 2048] (-9..9 and random) -> erf [1, 2048], tanh [1, 2048]
  rope_vision:     grid 3 x 5 (15 rows), 16 heads of 72, n_rot 72, base 10000; positions int32 [2 * 15]
                   (rows then cols) -> want [15, 1152]
  rope_vision_partial: grid 4 x 2 (8 rows), 2 heads of 32, n_rot 16, base 100, freq_scale 0.5
"""
import math
import sys
from pathlib import Path

import numpy as np


def layer_norm(x, weight, bias, eps):
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def gelu_erf(x):
    erf = np.vectorize(math.erf)
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    x = np.asarray(x, dtype=np.float64)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def rope_vision(x, head_dim, n_rot, rows, cols, base, freq_scale=1.0):
    """§5 step 3.2 for a head of n_rot rotated dims: rotate_half pairs (d, d + n_rot/2), d < n_rot/4 turns by
    row * base^(-2d / (n_rot/2)), the rest by col * base^(-2(d - n_rot/4) / (n_rot/2))."""
    x = np.array(x, dtype=np.float64)
    half, quarter = n_rot // 2, n_rot // 4
    d = np.arange(half)
    exponent = np.where(d < quarter, 2.0 * d / half, 2.0 * (d - quarter) / half)
    pos = np.where(d[None, :] < quarter, np.asarray(rows)[:, None], np.asarray(cols)[:, None]) * freq_scale
    theta = pos * base ** -exponent  # [tokens, half]
    c, s = np.cos(theta), np.sin(theta)
    heads = x.reshape(x.shape[0], -1, head_dim)
    a, b = heads[:, :, :half].copy(), heads[:, :, half:n_rot].copy()
    heads[:, :, :half] = a * c[:, None, :] - b * s[:, None, :]
    heads[:, :, half:n_rot] = a * s[:, None, :] + b * c[:, None, :]
    return heads.reshape(x.shape)


def grid(g_h, g_w):
    r, c = np.meshgrid(np.arange(g_h), np.arange(g_w), indexing="ij")
    return r.ravel().astype(np.int32), c.ravel().astype(np.int32)


def write(out, name, **arrays):
    for key, value in arrays.items():
        dtype = np.int32 if np.asarray(value).dtype.kind == "i" else np.float32
        np.ascontiguousarray(value, dtype=dtype).tofile(out / f"{name}.{key}.f32")


def make_fixtures(out):
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(19)
    f32 = lambda a: np.asarray(a, dtype=np.float32)  # noqa: E731  (inputs as the backend stores them)

    for name, shape, eps in (("layer_norm_1152", (6, 1152), 1e-6), ("layer_norm_72", (3, 72), 1e-5)):
        x = f32(rng.normal(size=shape) * rng.uniform(0.1, 4.0, size=(shape[0], 1)) + rng.normal(size=(shape[0], 1)) * 5)
        w, b = f32(rng.normal(size=shape[1])), f32(rng.normal(size=shape[1]))
        write(out, name, x=x, weight=w, bias=b, want=layer_norm(x, w, b, eps))

    x = f32(np.concatenate([np.linspace(-9, 9, 1024), rng.normal(size=1024) * 3])[None, :])
    write(out, "gelu", x=x, erf=gelu_erf(x), tanh=gelu_tanh(x))

    for name, (g_h, g_w), heads, head_dim, n_rot, base, scale in (
            ("rope_vision", (3, 5), 16, 72, 72, 10000.0, 1.0),
            ("rope_vision_partial", (4, 2), 2, 32, 16, 100.0, 0.5)):
        rows, cols = grid(g_h, g_w)
        x = f32(rng.normal(size=(g_h * g_w, heads * head_dim)))
        write(out, name, x=x, positions=np.concatenate([rows, cols]),
              want=rope_vision(x, head_dim, n_rot, rows, cols, base, scale))


def self_test():
    # LayerNorm of a constant row is the bias; erf GELU at 0, 1 and -1; the vision RoPE of grid cell (0, 0) is the
    # identity and of (1, 0) turns pair 0 by exactly 1 radian.
    np.testing.assert_allclose(layer_norm(np.full((1, 4), 3.0), np.ones(4), np.arange(4), 1e-6), [np.arange(4.0)])
    np.testing.assert_allclose(gelu_erf([0.0, 1.0, -1.0]), [0.0, 0.8413447460685429, -0.15865525393145707])
    x = np.arange(8, dtype=np.float64)[None, :]
    np.testing.assert_allclose(rope_vision(x, 8, 8, [0], [0], 10000.0), x)
    y = rope_vision(np.array([[1.0, 0, 0, 0, 0, 0, 0, 0]]), 8, 8, [1], [0], 10000.0)
    np.testing.assert_allclose(y[0, [0, 4]], [math.cos(1.0), math.sin(1.0)])


if __name__ == "__main__":
    self_test()
    make_fixtures(Path(sys.argv[1]))
