# SPDX-License-Identifier: MIT
"""An independent float64 numpy forward pass of the `qwen35moe` architecture (Qwen3.6-35B-A3B) and its MTP head,
written from /work/shared/specs/qwen35moe.md §5 and speculative.md §2 (section numbers below refer to them).
Weights are read with the `gguf` package (GGUFReader) and dequantized with `gguf.quants.dequantize`, or with
rocmfp4_reference for the ROCmFP4/ROCmFPX type ids 100-104, which the gguf package does not know.

    ref = Qwen35Reference(path)
    logits, hidden, state = ref.forward(tokens, state=None)       # [T, n_vocab], [T, n_embd] after output_norm
    logits, hidden, state, features = ref.forward(tokens, capture_layers=[2, 5, 8])  # + [T, 3 * n_embd]
    logits, o, mtp_state = ref.mtp_forward(tokens, hiddens, positions, mtp_state=None)
    drafted, logits, mtp_state = ref.draft_mtp(last_token, last_hidden, position, n_steps)
    o, S = delta_rule_recurrent(q, k, v, g, beta, S0)  /  delta_rule_chunked(q, k, v, g, beta, S0, chunk=64)

capture_layers: for each listed layer j, in list order, the un-normed residual stream entering trunk layer j (j = 0:
the embeddings); j = n_layer is the trunk output after output_norm (the DFlash tap convention, speculative.md §3.3).

`state` (a Qwen35State) continues a sequence: the KV cache of every full-attention layer, the conv state
((kernel - 1) x conv_dim) and the delta state (H_v x d_k x d_v) of every Gated-DeltaNet layer, and n_past.
forward() updates the state it is given and returns it; copy() it first to branch. Everything is float64; the
spec's fp32 state is float64 here (a reference, not a bit-exact model of the fp32 engine).

ref.smallest_routing_margin is the smallest gap, over the tokens and layers of the last forward()/mtp_forward(),
between the probability of the last chosen expert and the first one left out. Top-k routing is discontinuous: a
backend whose rounding exceeds that gap may route differently, so tests against backends that quantize activations
should use prompts where it is comfortably large. Only the first MTP block is run (Qwen3.6 has one).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import gguf

try:
    from . import rocmfp4_reference as rocm
except ImportError:
    import rocmfp4_reference as rocm

ARCH = "qwen35moe"


# ---------------------------------------------------------------------------------------------------------------
# Reading: GGUFReader plus the ROCmFP4/FPX tensor types


class RocmAwareReader(gguf.GGUFReader):
    """GGUFReader that also lists tensors of type ids 100-104 (raw uint8 blocks, tensor_type = the int id)."""

    def _build_tensors(self, start_offs, fields):
        known, rocm_fields = [], []
        for f in fields:
            (rocm_fields if int(f.parts[4][0]) in rocm.BLOCK_BYTES else known).append(f)
        super()._build_tensors(start_offs, known)
        names = {t.name for t in self.tensors}
        for f in rocm_fields:
            _, name_data, _, dims, raw_type, offset = f.parts
            name = bytes(name_data).decode("utf-8")
            if name in names:
                raise ValueError(f"Found duplicated tensor with name {name}")
            names.add(name)
            type_id = int(raw_type[0])
            ne = [int(d) for d in dims]
            if ne[0] % rocm.BLOCK_WEIGHTS != 0:
                raise ValueError(f"tensor {name}: row length {ne[0]} is not a multiple of {rocm.BLOCK_WEIGHTS}")
            n_elements = int(np.prod(ne))
            n_bytes = n_elements // rocm.BLOCK_WEIGHTS * rocm.BLOCK_BYTES[type_id]
            data_offset = int(start_offs + offset[0])
            if data_offset + n_bytes > len(self.data):
                raise ValueError(f"tensor {name}: data extends past the end of the file")
            byte_shape = tuple(reversed(ne[1:])) + (ne[0] // rocm.BLOCK_WEIGHTS * rocm.BLOCK_BYTES[type_id],)
            data = self._get(data_offset, np.uint8, n_bytes).reshape(byte_shape)
            self.tensors.append(gguf.ReaderTensor(name=name, tensor_type=type_id, shape=dims, n_elements=n_elements,
                                                  n_bytes=n_bytes, data_offset=data_offset, data=data, field=f))


class Weights:
    """Keys and lazily dequantized float64 tensors of one GGUF file; tensors in numpy order (rows = outputs)."""

    def __init__(self, path):
        self.path = str(path)
        self.reader = RocmAwareReader(self.path)
        self.tensors = {t.name: t for t in self.reader.tensors}
        self._cache: dict[str, np.ndarray] = {}

    def has_key(self, key):
        return key in self.reader.fields

    def key(self, key, default=None):
        f = self.reader.fields.get(key)
        return default if f is None else f.contents()

    def require_key(self, key):
        if key not in self.reader.fields:
            raise ValueError(f"{self.path}: missing key {key}")
        return self.key(key)

    def has(self, name):
        return name in self.tensors

    def ne(self, name):
        """Shape in ggml order (ne[0] = the row length)."""
        return [int(d) for d in self.tensors[name].shape]

    def get(self, name) -> np.ndarray:
        if name not in self._cache:
            t = self.tensors[name]
            shape = tuple(reversed(self.ne(name)))
            if t.tensor_type in rocm.BLOCK_BYTES:
                values = rocm.dequantize(t.tensor_type, np.asarray(t.data), t.n_elements)
            elif t.tensor_type in (gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16):
                values = np.asarray(t.data)
            else:
                values = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type)
            self._cache[name] = np.asarray(values, dtype=np.float64).reshape(shape)
        return self._cache[name]


# ---------------------------------------------------------------------------------------------------------------
# Hyperparameters (§2)


@dataclass
class Hparams:
    n_embd: int
    block_count: int
    n_nextn: int  # nextn_predict_layers
    n_layer: int  # trunk layers = block_count - n_nextn
    n_head: int
    n_head_kv: int
    head_dim: int
    eps: float
    rope_base: float
    n_rot: int
    rope_sections: list
    n_expert: int
    n_expert_used: int
    n_ff_exp: int
    n_ff_shexp: int
    conv_kernel: int
    d_k: int  # ssm.state_size
    h_k: int  # ssm.group_count
    h_v: int  # ssm.time_step_rank
    value_dim: int  # ssm.inner_size
    recurrent: list  # per block: True for Gated DeltaNet
    n_vocab: int

    @property
    def d_v(self):
        return self.value_dim // self.h_v

    @property
    def key_dim(self):
        return self.h_k * self.d_k

    @property
    def conv_dim(self):
        return 2 * self.key_dim + self.value_dim


def read_hparams(w: Weights) -> Hparams:
    arch = w.require_key("general.architecture")
    if arch != ARCH:
        raise ValueError(f"{w.path}: general.architecture is '{arch}', expected '{ARCH}'")
    k = lambda name: w.require_key(f"{ARCH}.{name}")  # noqa: E731
    block_count = int(k("block_count"))
    n_nextn = int(w.key(f"{ARCH}.nextn_predict_layers", 0))
    if not 0 <= n_nextn < block_count:
        raise ValueError(f"{w.path}: {ARCH}.nextn_predict_layers is {n_nextn}, expected 0..{block_count - 1}")
    n_layer = block_count - n_nextn
    head_dim = int(k("attention.key_length"))
    if int(k("attention.value_length")) != head_dim:
        raise ValueError(f"{w.path}: {ARCH}.attention.value_length differs from key_length {head_dim}")
    if not w.has("token_embd.weight"):
        raise ValueError(f"{w.path}: missing tensor token_embd.weight")
    h = Hparams(
        n_embd=int(k("embedding_length")), block_count=block_count, n_nextn=n_nextn, n_layer=n_layer,
        n_head=int(k("attention.head_count")), n_head_kv=int(k("attention.head_count_kv")), head_dim=head_dim,
        eps=float(k("attention.layer_norm_rms_epsilon")), rope_base=float(k("rope.freq_base")),
        n_rot=int(w.key(f"{ARCH}.rope.dimension_count", head_dim)),
        rope_sections=[int(s) for s in k("rope.dimension_sections")],
        n_expert=int(k("expert_count")), n_expert_used=int(k("expert_used_count")),
        n_ff_exp=int(k("expert_feed_forward_length")), n_ff_shexp=int(k("expert_shared_feed_forward_length")),
        conv_kernel=int(k("ssm.conv_kernel")), d_k=int(k("ssm.state_size")), h_k=int(k("ssm.group_count")),
        h_v=int(k("ssm.time_step_rank")), value_dim=int(k("ssm.inner_size")),
        recurrent=layer_pattern(w, block_count, n_layer), n_vocab=w.ne("token_embd.weight")[1])
    if h.n_head % h.n_head_kv or h.h_v % h.h_k or h.value_dim % h.h_v or h.n_rot % 2 or h.n_rot > head_dim:
        raise ValueError(f"{w.path}: inconsistent head counts or rope.dimension_count")
    if not 0 < h.n_expert_used <= h.n_expert:
        raise ValueError(f"{w.path}: {ARCH}.expert_used_count {h.n_expert_used} is not in 1..{h.n_expert}")
    return h


def layer_pattern(w: Weights, block_count: int, n_layer: int) -> list:
    """§2: `attention.recurrent_layers` (bool per block) when present, else layer i < n_layer is recurrent iff
    (i + 1) mod full_attention_interval != 0. MTP blocks are full attention."""
    key = f"{ARCH}.attention.recurrent_layers"
    if w.has_key(key):
        flags = [bool(v) for v in w.key(key)]
        if len(flags) != block_count:
            raise ValueError(f"{w.path}: {key} has {len(flags)} entries, expected block_count {block_count}")
        if any(flags[n_layer:]):
            raise ValueError(f"{w.path}: {key} marks an MTP block (index >= {n_layer}) as recurrent")
        return flags
    interval = int(w.key(f"{ARCH}.full_attention_interval", 4))
    if interval < 1:
        raise ValueError(f"{w.path}: {ARCH}.full_attention_interval is {interval}, expected >= 1")
    return [i < n_layer and (i + 1) % interval != 0 for i in range(block_count)]


def expected_tensors(h: Hparams) -> dict:
    """Every tensor name the model needs, with its ggml-order shape (§3); optional ones are checked in load."""
    e, hd = h.n_embd, h.head_dim
    t = {"token_embd.weight": [e, h.n_vocab], "output_norm.weight": [e]}
    for i in range(h.block_count):
        b = f"blk.{i}."
        t.update({b + "attn_norm.weight": [e], b + "post_attention_norm.weight": [e],
                  b + "ffn_gate_inp.weight": [e, h.n_expert],
                  b + "ffn_gate_exps.weight": [e, h.n_ff_exp, h.n_expert],
                  b + "ffn_up_exps.weight": [e, h.n_ff_exp, h.n_expert],
                  b + "ffn_down_exps.weight": [h.n_ff_exp, e, h.n_expert],
                  b + "ffn_gate_inp_shexp.weight": [e],
                  b + "ffn_gate_shexp.weight": [e, h.n_ff_shexp], b + "ffn_up_shexp.weight": [e, h.n_ff_shexp],
                  b + "ffn_down_shexp.weight": [h.n_ff_shexp, e]})
        if h.recurrent[i]:
            t.update({b + "attn_qkv.weight": [e, h.conv_dim], b + "attn_gate.weight": [e, h.value_dim],
                      b + "ssm_beta.weight": [e, h.h_v], b + "ssm_alpha.weight": [e, h.h_v],
                      b + "ssm_conv1d.weight": [h.conv_kernel, h.conv_dim], b + "ssm_dt.bias": [h.h_v],
                      b + "ssm_a": [h.h_v], b + "ssm_norm.weight": [h.d_v],
                      b + "ssm_out.weight": [h.value_dim, e]})
        else:
            t.update({b + "attn_q.weight": [e, 2 * h.n_head * hd], b + "attn_k.weight": [e, h.n_head_kv * hd],
                      b + "attn_v.weight": [e, h.n_head_kv * hd], b + "attn_output.weight": [h.n_head * hd, e],
                      b + "attn_q_norm.weight": [hd], b + "attn_k_norm.weight": [hd]})
        if i >= h.n_layer:  # §3.5 / drafted-gguf.md §8.1
            t.update({b + "nextn.eh_proj.weight": [2 * e, e], b + "nextn.enorm.weight": [e],
                      b + "nextn.hnorm.weight": [e]})
    return t


OPTIONAL_TENSORS = ("output.weight", "nextn.shared_head_norm.weight", "nextn.embed_tokens.weight",
                    "nextn.shared_head_head.weight")


# ---------------------------------------------------------------------------------------------------------------
# Building blocks (§5)


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def l2_norm(x, eps):
    """ggml form: x / max(||x||, eps) (HF's x * rsqrt(sum x^2 + eps) differs only for near-zero vectors)."""
    return x / np.maximum(np.sqrt(np.sum(x * x, axis=-1, keepdims=True)), eps)


def silu(x):
    return x / (1.0 + np.exp(-x))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softplus(x):
    return np.logaddexp(0.0, x)


def softmax(x):
    z = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return z / np.sum(z, axis=-1, keepdims=True)


def imrope(x, positions_thw, n_rot, base, sections):
    """§5.3 interleaved multi-section RoPE with NeoX pairing on dims [0, n_rot) of x [T, H, head_dim].
    positions_thw [T, 3]: (t, h, w); text tokens have t = h = w = sequence index."""
    half = n_rot // 2
    j = np.arange(half)
    theta = base ** (-2.0 * j / n_rot)
    axis = np.where((j % 3 == 1) & (j < 3 * sections[1]), 1, np.where((j % 3 == 2) & (j < 3 * sections[2]), 2, 0))
    angle = positions_thw[:, axis].astype(np.float64) * theta  # [T, half]
    cos, sin = np.cos(angle)[:, None, :], np.sin(angle)[:, None, :]
    out = x.copy()
    a, b = x[..., :half], x[..., half:n_rot]
    out[..., :half] = a * cos - b * sin
    out[..., half:n_rot] = a * sin + b * cos
    return out


def text_positions(positions):
    p = np.asarray(positions, dtype=np.int64)
    return np.stack([p, p, p], axis=1)


def causal_conv(m, weight, conv_state):
    """§5.4 step 2: u_t[c] = sum_k w[c, k] m_{t-K+1+k}[c], with the previous K-1 inputs as state.
    m [T, C], weight [C, K], conv_state [K-1, C] -> (u [T, C], new state)."""
    kernel = weight.shape[1]
    seq = np.concatenate([conv_state, m], axis=0)  # [K-1+T, C]
    u = sum(weight[:, k] * seq[k:k + m.shape[0]] for k in range(kernel))
    return u, seq[-(kernel - 1):].copy()


# ---------------------------------------------------------------------------------------------------------------
# §5.4 steps 7 and 8: the gated delta rule


def delta_rule_recurrent(q, k, v, g, beta, state=None):
    """Token by token. q, k [T, H, d_k]; v [T, H, d_v]; g, beta [T, H]; state S [H, d_k, d_v] -> (o [T, H, d_v], S)."""
    T, H, d_k = k.shape
    S = np.zeros((H, d_k, v.shape[2])) if state is None else np.array(state, dtype=np.float64)
    o = np.empty(v.shape)
    for t in range(T):
        S = np.exp(g[t])[:, None, None] * S  # 1. decay
        r = np.einsum("hkv,hk->hv", S, k[t])  # 2. r = S^T k
        delta = beta[t][:, None] * (v[t] - r)  # 3.
        S = S + np.einsum("hk,hv->hkv", k[t], delta)  # 4. S += k delta^T
        o[t] = np.einsum("hkv,hk->hv", S, q[t])  # 5. o = S^T q
    return o, S


def forward_substitution(L, B):
    """Solves (I + L) X = B for strictly lower-triangular L [C, C], B [C, n]."""
    X = np.array(B, dtype=np.float64)
    for t in range(1, L.shape[0]):
        X[t] -= L[t, :t] @ X[:t]
    return X


def delta_rule_chunk(q, k, v, g, beta, S):
    """One chunk of one head (§5.4 step 8). q, k [C, d_k]; v [C, d_v]; g, beta [C]; S [d_k, d_v]."""
    gamma = np.cumsum(g)  # γ_t = Σ_{s<=t} g_s
    lower_incl = np.tril(np.ones((len(g), len(g)), dtype=bool))
    D = np.where(lower_incl, np.exp(np.where(lower_incl, gamma[:, None] - gamma[None, :], 0.0)), 0.0)
    k_beta, v_beta = beta[:, None] * k, beta[:, None] * v
    A = np.tril((k_beta @ k.T) * D, -1)
    U = forward_substitution(A, v_beta)  # (I + A)^-1 V_β
    W = forward_substitution(A, k_beta * np.exp(gamma)[:, None])  # (I + A)^-1 (K_β ⊙ e^γ)
    V_new = U - W @ S
    O = (q * np.exp(gamma)[:, None]) @ S + np.where(lower_incl, (q @ k.T) * D, 0.0) @ V_new
    S_out = np.exp(gamma[-1]) * S + (k * np.exp(gamma[-1] - gamma)[:, None]).T @ V_new
    return O, S_out


def delta_rule_chunked(q, k, v, g, beta, state=None, chunk=64):
    """The chunked form, chunk by chunk and head by head; same arguments and results as delta_rule_recurrent."""
    T, H, d_k = k.shape
    S = np.zeros((H, d_k, v.shape[2])) if state is None else np.array(state, dtype=np.float64)
    o = np.empty(v.shape)
    for first in range(0, T, chunk):
        part = slice(first, min(first + chunk, T))
        for head in range(H):
            o[part, head], S[head] = delta_rule_chunk(q[part, head], k[part, head], v[part, head], g[part, head],
                                                      beta[part, head], S[head])
    return o, S


# ---------------------------------------------------------------------------------------------------------------
# State


@dataclass
class AttentionCache:
    """KV cache of one full-attention layer; entries are visible to queries at positions >= their own."""
    positions: np.ndarray  # [n]
    k: np.ndarray  # [n, n_head_kv, head_dim]
    v: np.ndarray  # [n, n_head_kv, head_dim]

    @staticmethod
    def empty(h: Hparams):
        return AttentionCache(np.zeros(0, np.int64), np.zeros((0, h.n_head_kv, h.head_dim)),
                              np.zeros((0, h.n_head_kv, h.head_dim)))

    def append(self, positions, k, v):
        self.positions = np.concatenate([self.positions, positions])
        self.k = np.concatenate([self.k, k])
        self.v = np.concatenate([self.v, v])

    def remove_from(self, position):
        """Drops the cells at positions >= position (rollback of drafted or rejected rows)."""
        keep = self.positions < position
        self.positions, self.k, self.v = self.positions[keep], self.k[keep], self.v[keep]


@dataclass
class DeltaNetState:
    conv: np.ndarray  # [conv_kernel - 1, conv_dim], the previous inputs of the causal conv
    ssm: np.ndarray  # [H_v, d_k, d_v], the delta-rule state S

    @staticmethod
    def empty(h: Hparams):
        return DeltaNetState(np.zeros((h.conv_kernel - 1, h.conv_dim)), np.zeros((h.h_v, h.d_k, h.d_v)))


@dataclass
class Qwen35State:
    n_past: int = 0
    layers: dict = field(default_factory=dict)  # layer index -> AttentionCache | DeltaNetState

    def copy(self):
        return copy.deepcopy(self)


@dataclass
class MtpState:
    cache: AttentionCache

    def copy(self):
        return copy.deepcopy(self)


# ---------------------------------------------------------------------------------------------------------------
# The model


class Qwen35Reference:
    def __init__(self, path):
        self.w = Weights(path)
        self.h = read_hparams(self.w)
        self._check_tensors()
        self.smallest_routing_margin = np.inf  # min over routed tokens of p(k-th) - p(k+1-th) expert, last call

    def _check_tensors(self):
        path = self.w.path
        for name, shape in expected_tensors(self.h).items():
            if not self.w.has(name):
                raise ValueError(f"{path}: missing tensor {name}")
            if self.w.ne(name) != shape:
                raise ValueError(f"{path}: tensor {name} has shape {self.w.ne(name)} (ggml order), expected {shape}")
        e, v = self.h.n_embd, self.h.n_vocab
        optional = {"output.weight": [e, v]}
        for i in range(self.h.n_layer, self.h.block_count):
            optional.update({f"blk.{i}.nextn.shared_head_norm.weight": [e],
                             f"blk.{i}.nextn.embed_tokens.weight": [e, v],
                             f"blk.{i}.nextn.shared_head_head.weight": [e, v]})
        for name, shape in optional.items():
            if self.w.has(name) and self.w.ne(name) != shape:
                raise ValueError(f"{path}: tensor {name} has shape {self.w.ne(name)} (ggml order), expected {shape}")

    @property
    def has_mtp(self):
        return self.h.n_nextn > 0

    def t(self, name):
        return self.w.get(name)

    def new_state(self) -> Qwen35State:
        layers = {i: DeltaNetState.empty(self.h) if self.h.recurrent[i] else AttentionCache.empty(self.h)
                  for i in range(self.h.n_layer)}
        return Qwen35State(0, layers)

    def new_mtp_state(self) -> MtpState:
        return MtpState(AttentionCache.empty(self.h))

    # --- trunk (§5.1) --------------------------------------------------------------------------------------

    def embed(self, tokens, table="token_embd.weight"):
        tokens = np.asarray(tokens, dtype=np.int64).reshape(-1)
        if tokens.size and (tokens.min() < 0 or tokens.max() >= self.h.n_vocab):
            raise ValueError(f"token id out of range 0..{self.h.n_vocab - 1}")
        return self.t(table)[tokens]

    def forward(self, tokens, state: Qwen35State | None = None, chunk: int | None = 64, capture_layers=None,
                embedded=None, thw=None):
        """Runs tokens at positions n_past.. and returns (logits [T, n_vocab], hidden after output_norm [T, n_embd],
        state). chunk: the DeltaNet chunk length (None: the token-by-token recurrence). With capture_layers, also
        the features [T, len(capture_layers) * n_embd] (see the module notes) as a fourth value.
        Images (vision-qwen3vl.md §6): embedded = [(first_row, rows [n, n_embd]), ...] replace those rows' token
        embeddings; thw [T, 3] gives each row's M-RoPE (t, h, w) (default t = h = w = the row's position). The
        causal mask and the cache order stay by row index."""
        h = self.h
        state = self.new_state() if state is None else state
        self.smallest_routing_margin = np.inf
        x = self.embed(tokens).astype(np.float64)  # [T, n_embd]
        for first, rows in embedded or []:
            rows = np.asarray(rows, dtype=np.float64).reshape(-1, h.n_embd)
            x[first:first + rows.shape[0]] = rows
        positions = state.n_past + np.arange(x.shape[0])
        thw = text_positions(positions) if thw is None else np.asarray(thw, dtype=np.int64).reshape(-1, 3)
        layer_inputs = {}
        for i in range(h.n_layer):
            layer_inputs[i] = x
            b = f"blk.{i}."
            mixer_in = rms_norm(x, self.t(b + "attn_norm.weight"), h.eps)
            if h.recurrent[i]:
                x = x + self.gated_deltanet(i, mixer_in, state.layers[i], chunk)
            else:
                x = x + self.gated_attention(i, mixer_in, positions, state.layers[i], thw)
            x = x + self.moe(i, rms_norm(x, self.t(b + "post_attention_norm.weight"), h.eps))
        hidden = rms_norm(x, self.t("output_norm.weight"), h.eps)
        state.n_past += x.shape[0]
        if capture_layers is None:
            return hidden @ self.output_matrix().T, hidden, state
        layer_inputs[h.n_layer] = hidden
        for j in capture_layers:
            if j not in layer_inputs:
                raise ValueError(f"capture layer {j} is outside 0..{h.n_layer}")
        features = np.concatenate([layer_inputs[j] for j in capture_layers], axis=-1)
        return hidden @ self.output_matrix().T, hidden, state, features

    def output_matrix(self):
        return self.t("output.weight" if self.w.has("output.weight") else "token_embd.weight")

    # --- §5.2 gated full attention ---------------------------------------------------------------------------

    def gated_attention(self, i, x, positions, cache: AttentionCache, thw=None):
        h, b = self.h, f"blk.{i}."
        T, hd = x.shape[0], h.head_dim
        P = (x @ self.t(b + "attn_q.weight").T).reshape(T, h.n_head, 2 * hd)  # per head: [q (hd) | gate (hd)]
        q, gate = P[..., :hd], P[..., hd:]
        k = (x @ self.t(b + "attn_k.weight").T).reshape(T, h.n_head_kv, hd)
        v = (x @ self.t(b + "attn_v.weight").T).reshape(T, h.n_head_kv, hd)
        q = rms_norm(q, self.t(b + "attn_q_norm.weight"), h.eps)
        k = rms_norm(k, self.t(b + "attn_k_norm.weight"), h.eps)
        thw = text_positions(positions) if thw is None else thw
        q = imrope(q, thw, h.n_rot, h.rope_base, h.rope_sections)
        k = imrope(k, thw, h.n_rot, h.rope_base, h.rope_sections)
        cache.append(np.asarray(positions, dtype=np.int64), k, v)
        group = h.n_head // h.n_head_kv
        K = np.repeat(cache.k, group, axis=1)  # [n, n_head, hd]: q head j reads kv head j // group
        V = np.repeat(cache.v, group, axis=1)
        scores = np.einsum("thd,nhd->htn", q, K) / np.sqrt(hd)
        visible = cache.positions[None, :] <= np.asarray(positions)[:, None]  # [T, n], causal
        scores = np.where(visible[None], scores, -np.inf)
        o = np.einsum("htn,nhd->thd", softmax(scores), V).reshape(T, h.n_head * hd)
        return (o * sigmoid(gate.reshape(T, h.n_head * hd))) @ self.t(b + "attn_output.weight").T

    # --- §5.4 Gated DeltaNet ---------------------------------------------------------------------------------

    def gated_deltanet(self, i, x, st: DeltaNetState, chunk):
        h, b = self.h, f"blk.{i}."
        T = x.shape[0]
        m = x @ self.t(b + "attn_qkv.weight").T  # [T, conv_dim]
        z = (x @ self.t(b + "attn_gate.weight").T).reshape(T, h.h_v, h.d_v)
        beta = sigmoid(x @ self.t(b + "ssm_beta.weight").T)  # [T, H_v]
        a = x @ self.t(b + "ssm_alpha.weight").T
        g = self.t(b + "ssm_a") * softplus(a + self.t(b + "ssm_dt.bias"))  # [T, H_v], <= 0
        u, st.conv = causal_conv(m, self.t(b + "ssm_conv1d.weight"), st.conv)
        u = silu(u)
        q = u[:, :h.key_dim].reshape(T, h.h_k, h.d_k)
        k = u[:, h.key_dim:2 * h.key_dim].reshape(T, h.h_k, h.d_k)
        v = u[:, 2 * h.key_dim:].reshape(T, h.h_v, h.d_v)
        q = l2_norm(q, h.eps) / np.sqrt(h.d_k)
        k = l2_norm(k, h.eps)
        heads = np.arange(h.h_v) % h.h_k  # GGUF order: v-head p uses q/k head p mod H_k
        q, k = q[:, heads], k[:, heads]
        if chunk is None:
            o, st.ssm = delta_rule_recurrent(q, k, v, g, beta, st.ssm)
        else:
            o, st.ssm = delta_rule_chunked(q, k, v, g, beta, st.ssm, chunk)
        o = rms_norm(o, self.t(b + "ssm_norm.weight"), h.eps) * silu(z)  # normalise, then gate
        return o.reshape(T, h.value_dim) @ self.t(b + "ssm_out.weight").T

    # --- §5.5 MoE --------------------------------------------------------------------------------------------

    def moe(self, i, x):
        h, b = self.h, f"blk.{i}."
        p = softmax(x @ self.t(b + "ffn_gate_inp.weight").T)  # [T, n_expert], over all experts
        gate_exps, up_exps = self.t(b + "ffn_gate_exps.weight"), self.t(b + "ffn_up_exps.weight")
        down_exps = self.t(b + "ffn_down_exps.weight")  # [E, n_embd, n_ff]
        out = np.zeros_like(x)
        for t in range(x.shape[0]):
            order = np.argsort(-p[t], kind="stable")
            chosen = order[:h.n_expert_used]
            if h.n_expert_used < h.n_expert:
                margin = p[t, order[h.n_expert_used - 1]] - p[t, order[h.n_expert_used]]
                self.smallest_routing_margin = min(self.smallest_routing_margin, margin)
            weights = p[t, chosen] / max(p[t, chosen].sum(), 6.1035e-5)
            for e, weight in zip(chosen, weights):
                hidden = silu(gate_exps[e] @ x[t]) * (up_exps[e] @ x[t])
                out[t] += weight * (down_exps[e] @ hidden)
        shared_gate = sigmoid(x @ self.t(b + "ffn_gate_inp_shexp.weight"))  # [T], a scalar per token
        shared = silu(x @ self.t(b + "ffn_gate_shexp.weight").T) * (x @ self.t(b + "ffn_up_shexp.weight").T)
        return out + shared_gate[:, None] * (shared @ self.t(b + "ffn_down_shexp.weight").T)

    # --- speculative.md §2.2: the MTP block ------------------------------------------------------------------

    def mtp_forward(self, tokens, hiddens, positions, mtp_state: MtpState | None = None):
        """Rows (x_r at position p_r, h_r = the trunk's hidden after output_norm at p_r - 1) -> (logits [T, n_vocab],
        o [T, n_embd] (the normed output, the next step's h), mtp_state). Attention runs over the MTP block's own
        cache, causal by position."""
        if not self.has_mtp:
            raise ValueError(f"{self.w.path}: no MTP block ({ARCH}.nextn_predict_layers is 0)")
        h, L = self.h, self.h.n_layer  # the first nextn block
        b = f"blk.{L}."
        mtp_state = self.new_mtp_state() if mtp_state is None else mtp_state
        self.smallest_routing_margin = np.inf
        embd = b + "nextn.embed_tokens.weight"
        e = self.embed(tokens, embd if self.w.has(embd) else "token_embd.weight")
        hiddens = np.asarray(hiddens, dtype=np.float64).reshape(e.shape)
        c = np.concatenate([rms_norm(e, self.t(b + "nextn.enorm.weight"), h.eps),
                            rms_norm(hiddens, self.t(b + "nextn.hnorm.weight"), h.eps)], axis=1)  # embedding first
        u = c @ self.t(b + "nextn.eh_proj.weight").T
        positions = np.asarray(positions, dtype=np.int64).reshape(-1)
        u = u + self.gated_attention(L, rms_norm(u, self.t(b + "attn_norm.weight"), h.eps), positions,
                                     mtp_state.cache)
        u = u + self.moe(L, rms_norm(u, self.t(b + "post_attention_norm.weight"), h.eps))
        norm = b + "nextn.shared_head_norm.weight"
        o = rms_norm(u, self.t(norm if self.w.has(norm) else "output_norm.weight"), h.eps)
        head = b + "nextn.shared_head_head.weight"
        W = self.t(head) if self.w.has(head) else self.output_matrix()
        return o @ W.T, o, mtp_state

    def draft_mtp(self, last_token, last_hidden, position, n_steps, mtp_state: MtpState | None = None):
        """Greedy drafting (§2.4 without p_min): step 0 feeds (last_token at position, last_hidden); step i feeds
        (d_i at position + i, the o of step i - 1). Works on a copy of mtp_state.
        Returns (drafted tokens [n_steps], logits [n_steps, n_vocab], the updated copy of the state)."""
        state = self.new_mtp_state() if mtp_state is None else mtp_state.copy()
        token, hidden = int(last_token), np.asarray(last_hidden, dtype=np.float64).reshape(1, -1)
        drafted, all_logits = [], []
        for step in range(n_steps):
            logits, o, state = self.mtp_forward([token], hidden, [position + step], state)
            token, hidden = int(np.argmax(logits[0])), o
            drafted.append(token)
            all_logits.append(logits[0])
        return drafted, np.array(all_logits).reshape(n_steps, self.h.n_vocab), state


def mtp_batch_inputs(hiddens, pending_h):
    """speculative.md §2.3: the MTP rows of a trunk batch pair token t_k with h_{k-1}; row 0 takes pending_h
    (the last h of the previous batch). Returns the shifted hiddens [T, n_embd]."""
    hiddens = np.asarray(hiddens, dtype=np.float64)
    return np.concatenate([np.asarray(pending_h, dtype=np.float64).reshape(1, -1), hiddens[:-1]], axis=0)


if __name__ == "__main__":
    import sys

    ref = Qwen35Reference(Path(sys.argv[1]))
    logits, hidden, _ = ref.forward([1, 2, 3, 4])
    print(f"{ref.h.n_layer} trunk layers, MTP: {ref.has_mtp}, logits {logits.shape}, argmax {logits.argmax(-1)}")
