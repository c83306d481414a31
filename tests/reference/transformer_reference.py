# SPDX-License-Identifier: MIT
"""An independent forward pass of the Llama-family architectures (llama, qwen2, qwen3, qwen3moe, gemma3, gpt-oss) in float64
numpy, written from the math, reading a GGUF through the `gguf` package (which also dequantizes the weights).

    logits = forward(path, tokens)   # [len(tokens), n_vocab]

RMSNorm: x / sqrt(mean(x^2) + eps) * w. RoPE on the first n_rot dimensions of each head with angle
pos * freq_scale * base^(-2i/n_rot) (divided by rope_freqs[i] when present); llama pairs (2i, 2i+1), qwen2/qwen3
pair (i, i + n_rot/2). Causal attention with grouped KV heads (head h reads KV head h // (n_head / n_head_kv)),
SwiGLU feed-forward (qwen3moe: a mixture of SwiGLU experts, `experts`), tied output when output.weight is absent.
gemma3 (Hugging Face's Gemma3TextModel; its GGUF norms already hold 1 + w): embeddings times sqrt(n_embd), RMS norms
on q/k per head and on the outputs of attention and feed-forward before their residual adds, GeGLU with tanh GELU,
local layers (all but every sliding_window_pattern-th, default 6) attending to the last `sliding_window` positions
with RoPE base 10000, scores scaled by 1/sqrt(head_dim).
gpt-oss (Hugging Face's GptOssModel): q/k/v/o biases, a learned sink logit per head in every softmax, even layers
attending to the last `sliding_window` positions, YaRN RoPE (yarn_inv_freq; cos and sin times 0.1 ln(factor) + 1,
not truncated), RMS norm `post_attention_norm` before the feed-forward, a router with bias whose top-k logits are
softmaxed, experts with biases and the clamped SwiGLU (gpt_oss_experts).

    logits, features = forward(path, tokens, capture_layers=[1, 2])
features [len(tokens), len(capture_layers) * n_embd]: for each listed layer j, in list order, the residual stream
entering layer j (un-normed; j = 0 is the embeddings); j = n_layer is the output after output_norm (the DFlash tap
convention, speculative.md §3.3).
"""
import numpy as np
import gguf


class Weights:
    def __init__(self, path):
        self.reader = gguf.GGUFReader(path)
        self.fields = {k: f for k, f in self.reader.fields.items()}
        self.tensors = {t.name: t for t in self.reader.tensors}

    def key(self, name, default=None):
        field = self.fields.get(name)
        if field is None:
            return default
        value = field.contents()
        return value

    def has(self, name):
        return name in self.tensors

    def get(self, name):
        t = self.tensors[name]
        data = np.asarray(t.data)
        if t.tensor_type in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
            array = data.astype(np.float64)
        else:
            array = gguf.quants.dequantize(data, t.tensor_type).astype(np.float64)
        shape = [int(d) for d in reversed(t.shape)]  # numpy order: (rows = outputs, cols = inputs)
        return array.reshape(shape)


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def yarn_inv_freq(n_rot, base, factor, original_context, beta_fast=32.0, beta_slow=1.0, truncate=False):
    """Hugging Face's _compute_yarn_parameters: per pair, a blend of the original frequency (fast pairs) and the
    frequency divided by `factor` (slow pairs), with a linear ramp between the pairs that turn beta_fast and
    beta_slow times over the original context."""
    def pair_of(rotations):
        return n_rot * np.log(original_context / (rotations * 2 * np.pi)) / (2 * np.log(base))
    low, high = pair_of(beta_fast), pair_of(beta_slow)
    if truncate:
        low, high = np.floor(low), np.ceil(high)
    low, high = max(low, 0.0), min(high, n_rot - 1.0)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(n_rot // 2, dtype=np.float64) - low) / (high - low), 0.0, 1.0)
    extrapolation = 1.0 - ramp
    inv_freq = base ** (-np.arange(0, n_rot, 2, dtype=np.float64) / n_rot)
    return inv_freq / factor * (1.0 - extrapolation) + inv_freq * extrapolation


def rope(x, positions, n_rot, base, freq_scale, neox, factors, inv_freq=None):
    """x: [tokens, heads, head_dim]"""
    out = x.copy()
    half = n_rot // 2
    i = np.arange(half, dtype=np.float64)
    if inv_freq is None:
        inv_freq = base ** (-2.0 * i / n_rot)
    if factors is not None:
        inv_freq = inv_freq / factors
    angles = np.outer(np.asarray(positions, dtype=np.float64) * freq_scale, inv_freq)  # [tokens, half]
    cos = np.cos(angles)[:, None, :]
    sin = np.sin(angles)[:, None, :]
    if neox:
        a, b = x[..., :half], x[..., half:n_rot]
        out[..., :half] = a * cos - b * sin
        out[..., half:n_rot] = a * sin + b * cos
    else:
        a, b = x[..., 0:n_rot:2], x[..., 1:n_rot:2]
        out[..., 0:n_rot:2] = a * cos - b * sin
        out[..., 1:n_rot:2] = a * sin + b * cos
    return out


def silu(x):
    return x / (1.0 + np.exp(-x))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def gemma3_local_layers(w, p, n_layer):
    """Which layers use the sliding window (Gemma3TextConfig: 5 of every 6)."""
    pattern = w.key(p + "attention.sliding_window_pattern", 6)
    if isinstance(pattern, list):
        return [bool(v) for v in pattern]
    return [i % pattern < pattern - 1 for i in range(n_layer)]


def experts(w, b, h, k):
    """qwen3moe's feed-forward: softmax over all experts, the k most probable (ties to the lower index) with
    their probabilities renormalized, each a SwiGLU of its own weights, summed with those weights."""
    logits = h @ w.get(b + "ffn_gate_inp.weight").T  # [tokens, n_expert]
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    gate, up, down = w.get(b + "ffn_gate_exps.weight"), w.get(b + "ffn_up_exps.weight"), w.get(b + "ffn_down_exps.weight")
    out = np.zeros_like(h)
    for t in range(h.shape[0]):
        chosen = sorted(range(probs.shape[1]), key=lambda e: (-probs[t, e], e))[:k]
        total = sum(probs[t, e] for e in chosen)
        for e in chosen:
            y = silu(gate[e] @ h[t]) * (up[e] @ h[t])
            out[t] += probs[t, e] / total * (down[e] @ y)
    return out


def gpt_oss_experts(w, b, h, k, limit=7.0, alpha=1.702):
    """gpt-oss's feed-forward: router logits (with bias), softmax over the k largest, each expert's biased gate and
    up clamped (gate <= limit, |up| <= limit), gate * sigmoid(alpha gate) * (up + 1), its biased down product."""
    logits = h @ w.get(b + "ffn_gate_inp.weight").T + w.get(b + "ffn_gate_inp.bias")
    gate, up, down = w.get(b + "ffn_gate_exps.weight"), w.get(b + "ffn_up_exps.weight"), w.get(b + "ffn_down_exps.weight")
    gate_b, up_b = w.get(b + "ffn_gate_exps.bias"), w.get(b + "ffn_up_exps.bias")
    down_b = w.get(b + "ffn_down_exps.bias")
    out = np.zeros_like(h)
    for t in range(h.shape[0]):
        chosen = sorted(range(logits.shape[1]), key=lambda e: (-logits[t, e], e))[:k]
        top = np.array([logits[t, e] for e in chosen])
        weights = np.exp(top - top.max())
        weights /= weights.sum()
        for e, weight in zip(chosen, weights):
            g = np.minimum(gate[e] @ h[t] + gate_b[e], limit)
            u = np.clip(up[e] @ h[t] + up_b[e], -limit, limit)
            y = g / (1.0 + np.exp(-alpha * g)) * (u + 1.0)
            out[t] += weight * (down[e] @ y + down_b[e])
    return out


def forward(path, tokens, capture_layers=None, ignore_window=False, ignore_sinks=False):
    w = Weights(path)
    arch = w.key("general.architecture")
    p = arch + "."
    n_embd = w.key(p + "embedding_length")
    n_layer = w.key(p + "block_count")
    n_head = w.key(p + "attention.head_count")
    n_head_kv = w.key(p + "attention.head_count_kv", n_head)
    head_dim = w.key(p + "attention.key_length", n_embd // n_head)
    eps = w.key(p + "attention.layer_norm_rms_epsilon", 1e-5)
    n_rot = w.key(p + "rope.dimension_count", head_dim)
    base = w.key(p + "rope.freq_base", 10000.0)
    freq_scale = 1.0
    if w.key(p + "rope.scaling.type") == "linear":
        freq_scale = 1.0 / w.key(p + "rope.scaling.factor")
    neox = arch != "llama"
    factors = w.get("rope_freqs.weight").reshape(-1) if w.has("rope_freqs.weight") else None

    gemma = arch == "gemma3"
    oss = arch == "gpt-oss"
    window = w.key(p + "attention.sliding_window", 0) if (gemma or oss) and not ignore_window else 0
    local = gemma3_local_layers(w, p, n_layer) if gemma else [i % 2 == 0 for i in range(n_layer)] if oss \
        else [False] * n_layer
    inv_freq, cos_sin_factor = None, 1.0
    if w.key(p + "rope.scaling.type") == "yarn":
        factor = w.key(p + "rope.scaling.factor")
        inv_freq = yarn_inv_freq(n_rot, base, factor, w.key(p + "rope.scaling.original_context_length"),
                                 truncate=not oss)
        cos_sin_factor = 0.1 * np.log(factor) + 1.0 if factor > 1 else 1.0

    T = len(tokens)
    positions = np.arange(T)
    x = w.get("token_embd.weight")[np.asarray(tokens)]
    if gemma:
        x = x * np.sqrt(n_embd)
    group = n_head // n_head_kv
    causal = np.triu(np.full((T, T), -np.inf), k=1)
    distance = positions[:, None] - positions[None, :]
    windowed = np.where(distance >= window, -np.inf, causal) if window > 0 else causal
    layer_inputs = {}
    for layer in range(n_layer):
        layer_inputs[layer] = x
        b = f"blk.{layer}."
        is_local = local[layer] and window > 0
        mask = windowed if is_local else causal
        layer_base = 10000.0 if is_local and gemma else base
        layer_scale = 1.0 if is_local and gemma else freq_scale
        h = rms_norm(x, w.get(b + "attn_norm.weight"), eps)
        q = h @ w.get(b + "attn_q.weight").T
        k = h @ w.get(b + "attn_k.weight").T
        v = h @ w.get(b + "attn_v.weight").T
        if w.has(b + "attn_q.bias"):
            q += w.get(b + "attn_q.bias")
            k += w.get(b + "attn_k.bias")
            v += w.get(b + "attn_v.bias")
        q = q.reshape(T, n_head, head_dim)
        k = k.reshape(T, n_head_kv, head_dim)
        v = v.reshape(T, n_head_kv, -1)
        if w.has(b + "attn_q_norm.weight"):
            q = rms_norm(q, w.get(b + "attn_q_norm.weight"), eps)
            k = rms_norm(k, w.get(b + "attn_k_norm.weight"), eps)
        q = rope(q, positions, n_rot, layer_base, layer_scale, neox, factors, inv_freq) * cos_sin_factor
        k = rope(k, positions, n_rot, layer_base, layer_scale, neox, factors, inv_freq) * cos_sin_factor
        sinks = w.get(b + "attn_sinks.weight").reshape(-1) if w.has(b + "attn_sinks.weight") and not ignore_sinks \
            else None
        heads = []
        for hd in range(n_head):
            kv = hd // group
            scores = q[:, hd, :] @ k[:, kv, :].T / np.sqrt(head_dim) + mask
            if sinks is not None:  # one more column that takes probability but contributes no value
                scores = np.concatenate([scores, np.full((T, 1), sinks[hd])], axis=-1)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            heads.append(scores[:, :T] @ v[:, kv, :])
        attn = np.concatenate(heads, axis=-1) @ w.get(b + "attn_output.weight").T
        if w.has(b + "attn_output.bias"):
            attn += w.get(b + "attn_output.bias")
        if gemma:
            attn = rms_norm(attn, w.get(b + "post_attention_norm.weight"), eps)
        x = x + attn
        h = rms_norm(x, w.get(b + ("post_attention_norm.weight" if oss else "ffn_norm.weight")), eps)
        if oss:
            x = x + gpt_oss_experts(w, b, h, w.key(p + "expert_used_count"))
        elif w.has(b + "ffn_gate_inp.weight"):
            x = x + experts(w, b, h, w.key(p + "expert_used_count"))
        else:
            gate = h @ w.get(b + "ffn_gate.weight").T
            up = h @ w.get(b + "ffn_up.weight").T
            ffn = (gelu_tanh(gate) if gemma else silu(gate)) * up @ w.get(b + "ffn_down.weight").T
            if gemma:
                ffn = rms_norm(ffn, w.get(b + "post_ffw_norm.weight"), eps)
            x = x + ffn
    x = rms_norm(x, w.get("output_norm.weight"), eps)
    out = w.get("output.weight") if w.has("output.weight") else w.get("token_embd.weight")
    if capture_layers is None:
        return x @ out.T
    layer_inputs[n_layer] = x
    for j in capture_layers:
        if j not in layer_inputs:
            raise ValueError(f"capture layer {j} is outside 0..{n_layer}")
    features = np.concatenate([layer_inputs[j] for j in capture_layers], axis=-1)
    return x @ out.T, features


if __name__ == "__main__":
    import sys
    tokens = [int(t) for t in sys.argv[2].split(",")]
    np.save(sys.argv[3], forward(sys.argv[1], tokens))
