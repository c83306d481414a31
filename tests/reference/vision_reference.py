# SPDX-License-Identifier: MIT
# Numpy reference of the Qwen3-VL vision path (../shared/specs/vision-qwen3vl.md §4-§5), written from the spec
# alone: smart_resize, PyTorch's antialiased bicubic resize as dense weight matrices, patches in merge-block order,
# the encoder (pre-LN blocks, 2-D RoPE, bidirectional attention, tanh GELU) and the merger (erf GELU), in float64.
import math

import numpy as np


def smart_resize(h, w, patch=16, merge=2, min_px=65536, max_px=16777216):
    f = patch * merge
    hb = max(f, round(h / f) * f)  # Python's round: half to even
    wb = max(f, round(w / f) * f)
    down = False
    if hb * wb > max_px:
        beta = math.sqrt(h * w / max_px)
        hb = max(f, math.floor(h / beta / f) * f)
        wb = max(f, math.floor(w / beta / f) * f)
        down = True
    elif hb * wb < min_px:
        beta = math.sqrt(min_px / (h * w))
        hb = math.ceil(h * beta / f) * f
        wb = math.ceil(w * beta / f) * f
    return hb, wb, down


def _cubic(x, a=-0.5):
    x = np.abs(x)
    return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                    np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0))


def aa_weights(in_size, out_size):
    """[out, in] weights of torch's interpolate(bicubic, antialias=True, align_corners=False) on one axis."""
    scale = in_size / out_size
    support = 2.0 * scale if scale >= 1.0 else 2.0
    inv = 1.0 / scale if scale >= 1.0 else 1.0
    m = np.zeros((out_size, in_size))
    for i in range(out_size):
        center = scale * (i + 0.5)
        xmin = max(int(center - support + 0.5), 0)
        xmax = min(int(center + support + 0.5), in_size)
        j = np.arange(xmin, xmax)
        w = _cubic((j - center + 0.5) * inv)
        if w.sum() != 0:
            w = w / w.sum()
        m[i, xmin:xmax] = w
    return m


def resize(rgb, out_h, out_w):
    """uint8 [h, w, 3] -> uint8 [out_h, out_w, 3]: width pass, height pass, round half to even, clamp."""
    x = rgb.astype(np.float64)
    x = np.einsum("ow,hwc->hoc", aa_weights(x.shape[1], out_w), x)
    x = np.einsum("oh,hwc->owc", aa_weights(x.shape[0], out_h), x)
    return np.rint(np.clip(x, 0, 255)).astype(np.uint8)


def patch_coords(gh, gw, merge=2):
    rows, cols = [], []
    for br in range(gh // merge):
        for bc in range(gw // merge):
            for dy in range(merge):
                for dx in range(merge):
                    rows.append(br * merge + dy)
                    cols.append(bc * merge + dx)
    return np.array(rows), np.array(cols)


def preprocess(rgb, hb, wb, patch=16, merge=2, mean=(0.5,) * 3, std=(0.5,) * 3):
    """-> float32 [patches, 3 * 2 * patch * patch] in merge-block order, [C][T][y][x] per patch."""
    px = resize(rgb, hb, wb).astype(np.float32)
    v = (px / np.float32(255.0) - np.array(mean, np.float32)) / np.array(std, np.float32)
    gh, gw = hb // patch, wb // patch
    rows, cols = patch_coords(gh, gw, merge)
    out = np.empty((len(rows), 3, 2, patch, patch), np.float32)
    for n, (r, c) in enumerate(zip(rows, cols)):
        p = v[r * patch:(r + 1) * patch, c * patch:(c + 1) * patch, :].transpose(2, 0, 1)
        out[n, :, 0] = p
        out[n, :, 1] = p
    return out.reshape(len(rows), -1)


def _ln(x, w, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


_erf = np.vectorize(math.erf)


def _gelu_erf(x):
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def pos_interp(table, g, gh, gw, rows, cols):
    ys = np.linspace(0, g - 1, gh)[rows]
    xs = np.linspace(0, g - 1, gw)[cols]
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, g - 1), np.minimum(x0 + 1, g - 1)
    fy, fx = (ys - y0)[:, None], (xs - x0)[:, None]
    t = lambda y, x: table[y * g + x]
    return ((1 - fy) * (1 - fx) * t(y0, x0) + (1 - fy) * fx * t(y0, x1) + fy * (1 - fx) * t(y1, x0)
            + fy * fx * t(y1, x1))


def _rope(x, heads, rows, cols, base=10000.0):
    n, width = x.shape
    d = width // heads
    half, q = d // 2, d // 4
    j = np.arange(half)
    pos = np.where(j[None, :] < q, rows[:, None], cols[:, None]).astype(np.float64)
    inv = base ** (-(j % q) / q)
    ang = pos * inv[None, :]
    c, s = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    h = x.reshape(n, heads, d)
    a, b = h[..., :half], h[..., half:]
    return np.concatenate([a * c - b * s, b * c + a * s], -1).reshape(n, width)


def encode(weights, hp, patches, gh, gw):
    """weights: name -> float64 array in numpy order (rows = output features). Returns [tokens, projection_dim]."""
    m, heads, eps = hp["merge"], hp["heads"], hp["eps"]
    width = hp["width"]
    rows, cols = patch_coords(gh, gw, m)
    n = len(rows)
    p = patches.astype(np.float64).reshape(n, 3, 2, -1)
    w0 = weights["v.patch_embd.weight"].reshape(width, 3, -1)
    w1 = weights["v.patch_embd.weight.1"].reshape(width, 3, -1)
    x = (np.einsum("ncs,ocs->no", p[:, :, 0], w0) + np.einsum("ncs,ocs->no", p[:, :, 1], w1)
         + weights["v.patch_embd.bias"])
    x = x + pos_interp(weights["v.position_embd.weight"], hp["pos_grid"], gh, gw, rows, cols)
    d = width // heads
    for i in range(hp["blocks"]):
        g = lambda name: weights[f"v.blk.{i}.{name}"]
        a = _ln(x, g("ln1.weight"), g("ln1.bias"), eps)
        qkv = a @ g("attn_qkv.weight").T + g("attn_qkv.bias")
        q, k, v = qkv[:, :width], qkv[:, width:2 * width], qkv[:, 2 * width:]
        q, k = _rope(q, heads, rows, cols), _rope(k, heads, rows, cols)
        q, k, v = (t.reshape(n, heads, d).transpose(1, 0, 2) for t in (q, k, v))
        s = q @ k.transpose(0, 2, 1) / math.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        o = (s @ v).transpose(1, 0, 2).reshape(n, width)
        x = x + o @ g("attn_out.weight").T + g("attn_out.bias")
        a = _ln(x, g("ln2.weight"), g("ln2.bias"), eps)
        h = _gelu_tanh(a @ g("ffn_up.weight").T + g("ffn_up.bias"))
        x = x + h @ g("ffn_down.weight").T + g("ffn_down.bias")
    y = _ln(x, weights["v.post_ln.weight"], weights["v.post_ln.bias"], eps).reshape(n // (m * m), -1)
    h = _gelu_erf(y @ weights["mm.0.weight"].T + weights["mm.0.bias"])
    return h @ weights["mm.2.weight"].T + weights["mm.2.bias"]
