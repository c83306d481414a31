# SPDX-License-Identifier: MIT
"""An independent float64 numpy forward pass of a DFlash draft model, written from
/work/shared/specs/speculative.md §3 and drafted-gguf.md §1-§5 (section numbers below refer to them).

    ref = DFlashReference(draft_path, target_path=None)
    g = ref.fuse(features)                       # [T, n_tl * d_t] -> [T, d]
    logits, tokens = ref.draft(context_features, context_positions, last_token, position, n)
    features = target_features(target_path, tokens, layers)   # the taps, from the target's own reference

draft_path is a drafted file (target + draft: draft tensors under `dflash.`, drafted-gguf.md §2) or a standalone
draft (`general.architecture` = dflash, tensors without prefix, §1); a standalone draft needs target_path, whose
`token_embd.weight` embeds the block and whose `output.weight` (else `token_embd.weight`) gives the logits.

The draft (speculative.md §3.3, §3.4):
- features f_i = the target's un-normed residual stream entering each layer of `dflash.target_layers`, concatenated
  in list order (a tap j = n_layer is the trunk output after output_norm);
- fusion g_i = RMSNorm(W_fc f_i) * enc.output_norm;
- injection: every draft layer l turns every context row into a key and a value, WITHOUT attn_norm:
  K = RoPE(RMSNorm_head(W_k g) * k_norm), V = W_v g, at the row's own position;
- the block [last_token, MASK x n] at positions position..position+n runs through the layers (attn_norm, Q/K/V,
  q_norm/k_norm, NeoX RoPE over the full head, attention of every block row over all context rows and the whole
  block with no mask, W_o and residual, ffn_norm, SwiGLU, residual), then output_norm and the target's output head;
- draft token i (i = 1..n) = argmax of block row i (row i predicts the token at position + i).
Optional q/k/v/output biases (§4) are added after their matrices, the K bias before the head norm. Nothing is kept
between calls: draft() recomputes the injected context every time.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

try:
    from . import qwen35moe_reference as q35
    from . import transformer_reference as dense
except ImportError:
    import qwen35moe_reference as q35
    import transformer_reference as dense

PREFIX = "dflash."
ARCHITECTURES = ("dflash", "dflash-draft")


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def silu(x):
    return x / (1.0 + np.exp(-x))


def softmax(x):
    z = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return z / np.sum(z, axis=-1, keepdims=True)


def rope_neox(x, positions, base):
    """x [T, heads, hd]: dims (i, i + hd/2) rotated by position * base^(-2i/hd)."""
    hd = x.shape[-1]
    half = hd // 2
    inv_freq = base ** (-2.0 * np.arange(half, dtype=np.float64) / hd)
    angles = np.outer(np.asarray(positions, dtype=np.float64), inv_freq)  # [T, half]
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


@dataclass
class DraftHparams:
    n_layer: int
    n_embd: int
    n_head: int
    n_head_kv: int
    head_dim: int
    n_ff: int
    eps: float
    rope_base: float
    block_size: int
    target_layers: list
    mask_token: int | None


def read_hparams(w: q35.Weights) -> DraftHparams:
    def key(name, default=None):
        value = w.key(PREFIX + name, default)
        if value is None:
            raise ValueError(f"{w.path}: missing key {PREFIX}{name}")
        return value

    n_embd, n_head = int(key("embedding_length")), int(key("attention.head_count"))
    head_dim = int(key("attention.key_length", n_embd // n_head))
    if int(key("attention.value_length", head_dim)) != head_dim:
        raise ValueError(f"{w.path}: {PREFIX}attention.value_length differs from key_length {head_dim}")
    if w.has_key(PREFIX + "attention.sliding_window"):
        raise NotImplementedError(f"{w.path}: the reference has no sliding-window drafts")
    scaling = w.key(PREFIX + "rope.scaling.type", "none")
    if scaling != "none":
        raise NotImplementedError(f"{w.path}: the reference has no rope scaling ({scaling})")
    mask = w.key(PREFIX + "mask_token_id", w.key("tokenizer.ggml.mask_token_id"))  # drafted-gguf.md §5
    return DraftHparams(
        n_layer=int(key("block_count")), n_embd=n_embd, n_head=n_head,
        n_head_kv=int(key("attention.head_count_kv", n_head)), head_dim=head_dim,
        n_ff=int(key("feed_forward_length")), eps=float(key("attention.layer_norm_rms_epsilon")),
        rope_base=float(key("rope.freq_base", 10000.0)), block_size=int(key("block_size", 16)),
        target_layers=[int(j) for j in key("target_layers")], mask_token=None if mask is None else int(mask))


class DFlashReference:
    def __init__(self, draft_path, target_path=None):
        self.w = q35.Weights(draft_path)
        arch = self.w.key("general.architecture")
        if arch in ARCHITECTURES:  # standalone draft: tensors without prefix, embeddings from the target
            if target_path is None:
                raise ValueError(f"{draft_path}: a standalone draft needs the target file")
            self.prefix, self.target = "", q35.Weights(target_path)
        else:
            if not self.w.has(PREFIX + "fc.weight"):
                raise ValueError(f"{draft_path}: neither a DFlash draft nor a drafted file")
            self.prefix = PREFIX
            self.target = self.w if target_path is None else q35.Weights(target_path)
        self.h = read_hparams(self.w)
        if self.h.mask_token is None:
            raise ValueError(f"{draft_path}: no DFlash mask token")
        self.embd = self.target.get("token_embd.weight")  # [n_vocab, d]
        self.out = self.target.get("output.weight") if self.target.has("output.weight") else self.embd
        self.n_vocab = self.embd.shape[0]
        if self.embd.shape[1] != self.h.n_embd:
            raise ValueError(f"{draft_path}: draft width {self.h.n_embd}, target width {self.embd.shape[1]}")

    def t(self, name):
        return self.w.get(self.prefix + name)

    def has(self, name):
        return self.w.has(self.prefix + name)

    def _project(self, layer, x, part):
        """x @ W^T (+ bias) for part in q, k, v, output of draft layer `layer`."""
        b = f"blk.{layer}.attn_{part}"
        y = x @ self.t(b + ".weight").T
        return y + self.t(b + ".bias") if self.has(b + ".bias") else y

    # --- speculative.md §3.3 -------------------------------------------------------------------------------------

    def fuse(self, features):
        f = np.asarray(features, dtype=np.float64)
        f = f.reshape(-1, len(self.h.target_layers) * self.h.n_embd)
        return rms_norm(f @ self.t("fc.weight").T, self.t("enc.output_norm.weight"), self.h.eps)

    def context_kv(self, layer, g, positions):
        """The injected keys and values of draft layer `layer` for fused rows g [C, d]: no attn_norm."""
        h, b = self.h, f"blk.{layer}."
        C = g.shape[0]
        k = rms_norm(self._project(layer, g, "k").reshape(C, h.n_head_kv, h.head_dim),
                     self.t(b + "attn_k_norm.weight"), h.eps)
        v = self._project(layer, g, "v").reshape(C, h.n_head_kv, h.head_dim)
        return rope_neox(k, positions, h.rope_base), v

    # --- speculative.md §3.4 -------------------------------------------------------------------------------------

    def draft(self, context_features, context_positions, last_token, position, n):
        """Returns (logits [n + 1, n_vocab] of the block rows, tokens [n] = argmax of rows 1..n)."""
        h = self.h
        if n < 0:
            raise ValueError("n must be >= 0")
        g = self.fuse(context_features) if len(context_positions) else np.zeros((0, h.n_embd))
        ctx_pos = np.asarray(context_positions, dtype=np.int64).reshape(-1)
        if g.shape[0] != ctx_pos.size:
            raise ValueError(f"{g.shape[0]} context rows but {ctx_pos.size} positions")
        block = np.array([int(last_token)] + [h.mask_token] * n, dtype=np.int64)
        if block.min() < 0 or block.max() >= self.n_vocab:
            raise ValueError(f"token id outside 0..{self.n_vocab - 1}")
        pos = position + np.arange(n + 1)
        x = self.embd[block]  # [B, d]
        B, group = n + 1, h.n_head // h.n_head_kv
        for layer in range(h.n_layer):
            b = f"blk.{layer}."
            kc, vc = self.context_kv(layer, g, ctx_pos)
            a = rms_norm(x, self.t(b + "attn_norm.weight"), h.eps)
            q = rms_norm(self._project(layer, a, "q").reshape(B, h.n_head, h.head_dim),
                         self.t(b + "attn_q_norm.weight"), h.eps)
            k = rms_norm(self._project(layer, a, "k").reshape(B, h.n_head_kv, h.head_dim),
                         self.t(b + "attn_k_norm.weight"), h.eps)
            v = self._project(layer, a, "v").reshape(B, h.n_head_kv, h.head_dim)
            q, k = rope_neox(q, pos, h.rope_base), rope_neox(k, pos, h.rope_base)
            K = np.repeat(np.concatenate([kc, k]), group, axis=1)  # query head j reads kv head j // group
            V = np.repeat(np.concatenate([vc, v]), group, axis=1)
            scores = np.einsum("thd,nhd->htn", q, K) / np.sqrt(h.head_dim)  # no mask: bidirectional
            o = np.einsum("htn,nhd->thd", softmax(scores), V).reshape(B, h.n_head * h.head_dim)
            x = x + self._project(layer, o, "output")
            f = rms_norm(x, self.t(b + "ffn_norm.weight"), h.eps)
            x = x + (silu(f @ self.t(b + "ffn_gate.weight").T) * (f @ self.t(b + "ffn_up.weight").T)) \
                @ self.t(b + "ffn_down.weight").T
        logits = rms_norm(x, self.t("output_norm.weight"), h.eps) @ self.out.T
        return logits, [int(t) for t in np.argmax(logits[1:], axis=-1)]


# ---------------------------------------------------------------------------------------------------------------
# The target side: features from the existing target references


def target_features(target_path, tokens, layers):
    """(logits [T, n_vocab], features [T, len(layers) * n_embd]) of the target on tokens at positions 0..T-1."""
    w = q35.Weights(target_path)
    if w.key("general.architecture") == q35.ARCH:
        logits, _, _, features = q35.Qwen35Reference(target_path).forward(tokens, capture_layers=list(layers))
        return logits, features
    return dense.forward(str(target_path), tokens, capture_layers=list(layers))


def greedy_with_drafts(target_path, draft: DFlashReference, prompt, steps, n):
    """Plain greedy decoding of the target for `steps` tokens and, at every step, the draft's n proposals from the
    features of everything before the last token. Returns (generated tokens, [(drafted tokens, target's next n
    tokens)] per step) for measuring how often draft and target agree. Recomputes everything: slow, tiny models."""
    tokens = list(prompt)
    for _ in range(steps + n):
        logits, _ = target_features(target_path, tokens, draft.h.target_layers)
        tokens.append(int(np.argmax(logits[-1])))
    _, features = target_features(target_path, tokens, draft.h.target_layers)
    pairs = []
    for step in range(steps):
        last = len(prompt) + step - 1  # the position of the last committed token
        drafted = draft.draft(features[:last], np.arange(last), tokens[last], last, n)[1]
        pairs.append((drafted, tokens[last + 1:last + 1 + n]))
    return tokens[:len(prompt) + steps], pairs


if __name__ == "__main__":
    import sys

    ref = DFlashReference(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
    print(f"{ref.h.n_layer} draft layers, taps {ref.h.target_layers}, block {ref.h.block_size}, mask "
          f"{ref.h.mask_token}")
