# SPDX-License-Identifier: MIT
"""Tests of the numpy references and the qwen35moe fixture generators.

    build/venv/bin/python -m pytest -q tests/reference/test_references.py
"""
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import gguf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "fixtures"))

import rocmfp4_reference as rocm  # noqa: E402
import qwen35moe_reference as q35  # noqa: E402
import make_qwen35moe_fixtures as fixtures  # noqa: E402
import make_synthetic_qwen35moe as synthetic  # noqa: E402

F32 = np.float32


# ---------------------------------------------------------------------------------------------------------------
# ROCmFP4 / ROCmFPX


def test_rocmfp4_worked_example():
    rocm.self_test()


def test_scale_byte_decoding():
    assert rocm.SCALES[0] == 0 and rocm.SCALES[0x7F] == 0 and np.all(rocm.SCALES[0x80:] == 0)
    for e in range(1, 0x7F):
        exponent, mantissa = e >> 3, e & 7
        expected = mantissa * 2.0 ** -10 if exponent == 0 else (8 + mantissa) * 2.0 ** (exponent - 11)
        assert rocm.SCALES[e] == expected
    assert np.all(np.diff(rocm.VALID_SCALES) > 0)


def test_dequantize_every_code():
    codes = np.arange(16, dtype=np.uint8)
    qs = codes | (codes[::-1] << 4)  # weight j: code j, weight j + 16: code 15 - j
    dual = bytes(qs) + bytes([0x40, 0x38])  # s = 1 for the low half, 0.5 for the high half
    values = rocm.dequantize(rocm.Q4_0_ROCMFP4, dual, 32)
    book = [0, 1, 2, 3, 4, 6, 8, 10, 0, -1, -2, -3, -4, -6, -8, -10]
    assert values[:16].tolist() == book
    assert values[16:].tolist() == [0.5 * v for v in book[::-1]]
    fast = bytes(qs) + bytes([0x7F])  # invalid scale byte decodes as 0
    assert not rocm.dequantize(rocm.Q4_0_ROCMFP4_FAST, fast, 32).any()
    fp6 = rocm.pack_bits(np.array([[32, 33, 31, 0] + [0] * 28], dtype=np.uint8), 6)
    y = rocm.dequantize(rocm.Q6_0_ROCMFPX, bytes(fp6[0]) + bytes([0x40, 0x40]), 32)
    assert y[:4].tolist() == [-32, -1, 31, 0]  # sign with magnitude 0 is -32
    fp3 = rocm.pack_bits(np.tile(np.arange(8, dtype=np.uint8), 4)[None], 3)
    y = rocm.dequantize(rocm.Q3_0_ROCMFPX, bytes(fp3[0]) + bytes([0x40, 0x30]), 32)
    assert y[:8].tolist() == [0, 1, 2, 4, 0, -1, -2, -4] and y[16:24].tolist() == [0, .25, .5, 1, 0, -.25, -.5, -1]
    fp8 = np.arange(-16, 16, dtype=np.int8).view(np.uint8).tobytes() + bytes([0x38])
    assert rocm.dequantize(rocm.Q8_0_ROCMFPX, fp8, 32).tolist() == [0.5 * v for v in range(-16, 16)]
    with pytest.raises(ValueError, match="need 36 bytes"):
        rocm.dequantize(rocm.Q4_0_ROCMFP4, dual, 64)


def test_bit_packing_round_trip():
    rng = np.random.default_rng(3)
    for bits in (3, 6):
        codes = rng.integers(0, 1 << bits, size=(5, 32), dtype=np.uint8)
        packed = rocm.pack_bits(codes, bits)
        assert packed.shape == (5, bits * 4)
        assert np.array_equal(rocm.unpack_bits(packed, bits, 32), codes)
    # weight i at bit 3i, least significant bit first
    assert rocm.pack_bits(np.array([[1, 0, 0, 0, 0, 0, 0, 0] + [0] * 24], dtype=np.uint8), 3)[0, 0] == 1
    assert rocm.pack_bits(np.array([[0, 0, 4] + [0] * 29], dtype=np.uint8), 3)[0, 1] == 1


# A literal, scalar transcription of rocmfp4.md §4 (per sub-block, with early exit and pruning), the oracle for the
# vectorised search in rocmfp4_reference.

def literal_scale(e):
    return rocm.half_scale(e)


def literal_nearest(target, floor):
    if not (target > 0) or not math.isfinite(target):
        return floor
    best = 1
    for e in range(2, 127):
        if abs(float(literal_scale(e)) - float(target)) < abs(float(literal_scale(best)) - float(target)):
            best = e
    return best


def literal_value(type_id, x, inv):
    """The reconstructed value (before the scale) of x at 1/s = inv, per §4.1 and §5."""
    if not math.isfinite(x):
        return F32(0)
    a = abs(x * inv)
    if type_id in (100, 101):
        for bound, magnitude in ((0.5, 0), (1.5, 1), (2.5, 2), (3.5, 3), (5.0, 4), (7.0, 6), (9.0, 8)):
            if a <= F32(bound):
                break
        else:
            magnitude = 10
        return F32(-magnitude if (x < 0 and magnitude) else magnitude)
    if type_id == 104:
        magnitude = 0 if a <= 0.5 else 1 if a <= 1.5 else 2 if a <= 3.0 else 4
        return F32(-magnitude if (x < 0 and magnitude) else magnitude)
    v = float(x * inv)
    q = math.copysign(math.floor(abs(v) + 0.5), v)
    low, high = (-32, 31) if type_id == 102 else (-127, 127)
    return F32(min(max(q, low), high))


def literal_error(type_id, xs, ws, e, best):
    s = literal_scale(e)
    inv = F32(1) / s
    err = F32(0)
    for i, x in enumerate(xs):
        if type_id not in (100, 101) and not math.isfinite(x):
            continue
        d = x - literal_value(type_id, x, inv) * s
        err = err + (d * d if ws is None else ws[i] * d * d)
        if err > best:
            return err
    return err


def literal_choose_scale(type_id, xs, ws=None):
    top = {100: 10, 101: 10, 104: 4, 102: 31, 103: 127}[type_id]
    fp4 = type_id in (100, 101)
    max_abs, max_w = F32(0), F32(0)
    for i, x in enumerate(xs):
        if not fp4 and not math.isfinite(x):
            continue
        if abs(x) > max_abs:
            max_abs, max_w = abs(x), (ws[i] if ws is not None else F32(0))
        elif ws is not None and abs(x) == max_abs and ws[i] > max_w:
            max_w = ws[i]
    if not (max_abs > 0) or not math.isfinite(max_abs):
        return 0
    start = literal_nearest(max_abs / F32(top), 1 if fp4 else 0)
    if type_id == 103 and ws is None:
        return start
    best_e, best = (0, F32(np.finfo(F32).max)) if fp4 else (start, F32(np.inf))
    lower_done = False
    for delta in range(126):
        e0 = start - delta
        if not lower_done and 1 <= e0 <= 126:
            clip = max_abs - F32(top) * literal_scale(e0)
            clip_err = clip * clip if ws is None else max_w * clip * clip
            if clip > 0 and clip_err > best and not (fp4 and ws is not None and not max_w > 0):
                lower_done = True
            else:
                err = literal_error(type_id, xs, ws, e0, best)
                if err < best or (err == best and e0 < best_e):
                    best, best_e = err, e0
        e1 = start + delta
        if delta and 1 <= e1 <= 126:
            err = literal_error(type_id, xs, ws, e1, best)
            if err < best or (err == best and e1 < best_e):
                best, best_e = err, e1
        if (lower_done or e0 <= 1) and e1 >= 126:
            break
    return best_e


def tricky_blocks(rng, n, count):
    """Random blocks plus the cases where a search goes wrong: exact ties on the codebook grid, zeros, negative
    maxima (FP6's asymmetric range), outliers, values near the bottom of the scale range, non-finite values."""
    blocks = []
    for b in range(count):
        kind = b % 8
        if kind == 0:
            x = rng.normal(0, 0.05, n)
        elif kind == 1:
            x = rng.integers(-40, 41, n) * 0.125 * 2.0 ** rng.integers(-4, 3)
        elif kind == 2:
            x = np.where(rng.random(n) < 0.5, 0.0, rng.normal(0, 1, n))
        elif kind == 3:
            x = rng.normal(0, 1, n)
            x[rng.integers(n)] = -abs(x).max() * 1.3
        elif kind == 4:
            x = rng.normal(0, 1, n)
            x[rng.integers(n)] = 40.0
        elif kind == 5:
            x = rng.normal(0, 1e-4, n)
        elif kind == 6:
            x = rng.normal(0, 1, n)
            x[rng.integers(n)] = [np.nan, np.inf, -np.inf][b % 3]
        else:
            x = rng.uniform(-3, 3, n).round(1)
        blocks.append(x)
    return np.array(blocks, dtype=F32)


@pytest.mark.parametrize("type_id", [100, 101, 102, 103, 104])
def test_vectorised_search_matches_literal_transcription(type_id):
    rng = np.random.default_rng(type_id)
    n = 32 if type_id in (101, 103) else 16
    x = tricky_blocks(rng, n, 48)
    with np.errstate(invalid="ignore", over="ignore"):
        chosen = rocm.choose_scales(type_id, x)
        literal = [literal_choose_scale(type_id, list(row)) for row in x]
    assert chosen.tolist() == literal


@pytest.mark.parametrize("type_id", [100, 101, 102, 103, 104])
def test_weighted_search_matches_literal_transcription(type_id):
    rng = np.random.default_rng(100 + type_id)
    rows = tricky_blocks(rng, 64, 16)
    imatrix = rng.uniform(0, 2, 64).astype(F32)
    imatrix[[3, 10, 40]] = [0.0, -1.0, np.nan]
    with np.errstate(invalid="ignore", over="ignore"):
        weights = rocm.imatrix_weights(type_id, rows, imatrix)
        n = 32 if type_id in (101, 103) else 16
        x, w = rows.reshape(-1, n), weights.reshape(-1, n)
        chosen = rocm.choose_scales(type_id, x, w)
        literal = [literal_choose_scale(type_id, list(xr), list(wr)) for xr, wr in zip(x, w)]
    assert chosen.tolist() == literal


def test_fp6_low_side_pruning_shapes_the_result():
    """FP6 prunes with the bound 31 s although -32 s is representable: for this block (a negative maximum) the
    search stops before byte 48, the least-error byte, and returns 50. The reference keeps that behaviour."""
    x = np.array([-8.25, -0.25, -1.5, 1.25, 1.25, -1.0, -1.75, -0.75, -1.5, 1.25, 0.0, 0.0, -1.0, 0.0, 2.0, -1.0],
                 dtype=F32)
    assert literal_choose_scale(102, list(x)) == 50
    assert rocm.choose_scales(102, x[None]).tolist() == [50]
    assert rocm.block_error(102, x, 48) < rocm.block_error(102, x, 50)


def test_imatrix_weights_follow_the_spec():
    rows = np.array([[1.0, -2.0] + [0.0] * 30], dtype=F32)
    imatrix = np.ones(32, dtype=F32)
    imatrix[1] = -1
    w = rocm.imatrix_weights(rocm.Q4_0_ROCMFP4, rows, imatrix)
    sigma2 = F32(5.0) / F32(32)
    assert w[0, 0] == F32(np.sqrt(sigma2 + F32(1)))
    assert w[0, 1] == 0 and w[0, 2] == F32(np.sqrt(sigma2))


@pytest.mark.parametrize("type_id,tolerance", [(100, 0.12), (101, 0.12), (102, 0.05), (103, 0.03), (104, 0.25)])
def test_quantize_round_trip(type_id, tolerance):
    x = np.random.default_rng(7).normal(0, 1, (8, 256)).astype(F32)
    raw = rocm.quantize(type_id, x)
    assert len(raw) == x.size // 32 * rocm.BLOCK_BYTES[type_id]
    y = rocm.dequantize(type_id, raw, x.size).reshape(x.shape)
    assert np.sqrt(np.mean((x - y) ** 2)) < tolerance
    assert rocm.quantize(type_id, np.zeros(64, F32)) == rocm.quantize(type_id, np.zeros(64, F32) * -1)
    assert not rocm.dequantize(type_id, rocm.quantize(type_id, np.zeros(64, F32)), 64).any()


def test_quantize_rejects_bad_rows():
    with pytest.raises(ValueError, match="not a multiple of 32"):
        rocm.quantize(rocm.Q4_0_ROCMFP4, np.zeros(48, F32))
    with pytest.raises(ValueError, match="imatrix has 16 entries"):
        rocm.quantize(rocm.Q4_0_ROCMFP4, np.zeros((2, 32), F32), imatrix=np.ones(16))
    with pytest.raises(ValueError, match="unknown"):
        rocm.quantize(7, np.zeros(32, F32))


# ---------------------------------------------------------------------------------------------------------------
# Gated delta rule


def random_delta_inputs(rng, T, H=3, d_k=16, d_v=8):
    q = rng.normal(size=(T, H, d_k))
    k = rng.normal(size=(T, H, d_k))
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    q /= np.linalg.norm(q, axis=-1, keepdims=True) * np.sqrt(d_k)
    v = rng.normal(size=(T, H, d_v))
    g = -rng.uniform(0.0, 1.5, size=(T, H))
    beta = rng.uniform(0.05, 0.95, size=(T, H))
    state = rng.normal(size=(H, d_k, d_v))
    return q, k, v, g, beta, state


@pytest.mark.parametrize("T,chunk", [(1, 64), (63, 64), (64, 64), (65, 64), (200, 64), (37, 16), (50, 7)])
def test_delta_rule_chunked_matches_recurrent(T, chunk):
    q, k, v, g, beta, state = random_delta_inputs(np.random.default_rng(T * 100 + chunk), T)
    o_ref, s_ref = q35.delta_rule_recurrent(q, k, v, g, beta, state)
    o, s = q35.delta_rule_chunked(q, k, v, g, beta, state, chunk=chunk)
    scale = max(np.abs(o_ref).max(), 1.0)
    assert np.abs(o - o_ref).max() / scale < 1e-10
    assert np.abs(s - s_ref).max() / max(np.abs(s_ref).max(), 1.0) < 1e-10
    o0, s0 = q35.delta_rule_chunked(q, k, v, g, beta, None, chunk=chunk)  # from a zero state too
    o0_ref, s0_ref = q35.delta_rule_recurrent(q, k, v, g, beta, None)
    assert np.allclose(o0, o0_ref, rtol=0, atol=1e-10) and np.allclose(s0, s0_ref, rtol=0, atol=1e-10)


def test_delta_rule_recurrence_by_hand():
    """One step from a known state: S' = e^g S - β k (k^T e^g S) + β k v^T, o = S'^T q."""
    k = np.array([[[1.0, 0.0]]])
    q = np.array([[[0.0, 1.0]]])
    v = np.array([[[2.0]]])
    S = np.array([[[3.0], [5.0]]])
    o, S_new = q35.delta_rule_recurrent(q, k, v, np.array([[np.log(0.5)]]), np.array([[0.25]]), S)
    # e^g S = [1.5, 2.5]; r = 1.5; δ = 0.25 * (2 - 1.5) = 0.125; S' = [1.625, 2.5]; o = 2.5
    assert np.allclose(S_new[0, :, 0], [1.625, 2.5]) and np.isclose(o[0, 0, 0], 2.5)


# ---------------------------------------------------------------------------------------------------------------
# Tiny qwen35moe fixtures and the reference forward


@pytest.fixture(scope="module")
def fixture_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("qwen35moe")
    (out / "bad").mkdir()
    for name, args in fixtures.VARIANTS.items():
        fixtures.write_model(out / name, **args)
    (out / "bad" / "EXPECTED.json").write_text(json.dumps(fixtures.bad_files(out / "bad")))
    return out


@pytest.fixture(scope="module")
def f32_model(fixture_dir):
    return q35.Qwen35Reference(fixture_dir / "qwen35moe-f32.gguf")


PROMPT = [268, 77, 104, 101, 32, 270, 5, 99, 120, 7, 44, 260, 33, 58, 271, 200, 11, 3]


def test_fixtures_load(fixture_dir):
    for name in fixtures.VARIANTS:
        ref = q35.Qwen35Reference(fixture_dir / name)
        logits, hidden, state = ref.forward(PROMPT[:4])
        assert logits.shape == (4, 273) and hidden.shape == (4, 64) and np.isfinite(logits).all()
        assert state.n_past == 4
    counts = {name: len(gguf.GGUFReader(fixture_dir / name).tensors) for name in ("qwen35moe-f32.gguf",
                                                                                   "qwen35moe-nomtp-f32.gguf")}
    assert counts == {"qwen35moe-f32.gguf": 3 + 2 * 16 + 6 * 19 + 20, "qwen35moe-nomtp-f32.gguf": 3 + 2 * 16 + 6 * 19}


def test_layer_patterns(fixture_dir):
    interval = q35.Qwen35Reference(fixture_dir / "qwen35moe-f32.gguf").h
    assert interval.n_layer == 8 and interval.block_count == 9 and interval.n_nextn == 1
    assert [i for i, r in enumerate(interval.recurrent) if not r] == [3, 7, 8]
    listed = q35.Qwen35Reference(fixture_dir / "qwen35moe-reclayers-f32.gguf").h
    assert [i for i, r in enumerate(listed.recurrent) if not r] == [1, 6, 8]
    nomtp = q35.Qwen35Reference(fixture_dir / "qwen35moe-nomtp-f32.gguf")
    assert nomtp.h.block_count == 8 and not nomtp.has_mtp


def test_keys_and_tokenizer(fixture_dir):
    r = gguf.GGUFReader(fixture_dir / "qwen35moe-f32.gguf")
    key = lambda k: r.fields[k].contents()  # noqa: E731
    assert key("general.architecture") == "qwen35moe" and key("tokenizer.ggml.pre") == "qwen35"
    assert key("qwen35moe.rope.dimension_sections") == [3, 3, 2, 0]
    tokens = key("tokenizer.ggml.tokens")
    for special in ("<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>"):
        assert special in tokens
    import jinja2
    template = jinja2.Environment().from_string(key("tokenizer.chat_template"))
    text = template.render(messages=[{"role": "user", "content": "hi"}], add_generation_prompt=True)
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    text = template.render(messages=[], add_generation_prompt=True, enable_thinking=False)
    assert text == "<|im_start|>assistant\n<think>\n\n</think>\n\n"


def assert_states_equal(a, b, tol):
    assert a.n_past == b.n_past
    for i, layer in a.layers.items():
        other = b.layers[i]
        if isinstance(layer, q35.DeltaNetState):
            assert np.abs(layer.conv - other.conv).max() <= tol * max(1, np.abs(layer.conv).max())
            assert np.abs(layer.ssm - other.ssm).max() <= tol * max(1, np.abs(layer.ssm).max())
        else:
            assert np.array_equal(layer.positions, other.positions)
            assert np.abs(layer.k - other.k).max() <= tol * max(1, np.abs(layer.k).max())
            assert np.abs(layer.v - other.v).max() <= tol * max(1, np.abs(layer.v).max())


def test_token_by_token_equals_batched(f32_model):
    batched, hidden, batched_state = f32_model.forward(PROMPT)
    state = f32_model.new_state()
    rows = []
    for token in PROMPT:
        logits, _, state = f32_model.forward([token], state)
        rows.append(logits[0])
    scale = np.abs(batched).max()
    assert np.abs(np.array(rows) - batched).max() / scale < 1e-10
    assert_states_equal(state, batched_state, 1e-10)
    # chunked prefill in uneven pieces, DeltaNet chunks of 4, then decode
    state = f32_model.new_state()
    first, _, state = f32_model.forward(PROMPT[:7], state, chunk=4)
    rest, _, state = f32_model.forward(PROMPT[7:], state, chunk=4)
    assert np.abs(np.concatenate([first, rest]) - batched).max() / scale < 1e-10
    assert_states_equal(state, batched_state, 1e-10)


def test_state_continues_a_sequence(f32_model):
    full, _, _ = f32_model.forward(PROMPT)
    _, _, state = f32_model.forward(PROMPT[:10])
    branch = state.copy()
    tail, _, _ = f32_model.forward(PROMPT[10:], state)
    assert np.allclose(tail, full[10:], rtol=0, atol=1e-10)
    other, _, _ = f32_model.forward(PROMPT[11:], branch)  # a different continuation from the copied state
    assert not np.allclose(other[0], full[10])


def test_every_path_matters(f32_model):
    """Zeroing one output projection of each kind moves the logits a lot: no path is negligible."""
    base, _, _ = f32_model.forward(PROMPT)
    for name in ("blk.0.ssm_out.weight", "blk.3.attn_output.weight", "blk.5.ffn_down_exps.weight",
                 "blk.6.ffn_down_shexp.weight", "blk.1.ssm_conv1d.weight"):
        saved = f32_model.w.get(name)
        f32_model.w._cache[name] = np.zeros_like(saved)
        try:
            changed, _, _ = f32_model.forward(PROMPT)
        finally:
            f32_model.w._cache[name] = saved
        assert np.linalg.norm(changed - base) / np.linalg.norm(base) > 0.03, name


def test_value_heads_use_key_head_p_mod_hk(fixture_dir):
    """GGUF order (qwen35moe.md §4.3): v-head p reads q/k head p mod H_k. With q head 1 silenced, v-heads 1 and 5
    output zero (HF's grouped order would silence heads 2 and 3 instead)."""
    ref = q35.Qwen35Reference(fixture_dir / "qwen35moe-f32.gguf")
    h, b = ref.h, "blk.0."
    qkv = ref.w.get(b + "attn_qkv.weight").copy()
    qkv[h.d_k:2 * h.d_k] = 0  # q channels of key head 1
    ref.w._cache[b + "attn_qkv.weight"] = qkv
    pick = np.zeros((h.n_embd, h.value_dim))  # ssm_out that copies v-heads 1, 5 and 2 to outputs 0-15, 16-31, 32-47
    for row, head in ((0, 1), (16, 5), (32, 2)):
        pick[row:row + h.d_v, head * h.d_v:(head + 1) * h.d_v] = np.eye(h.d_v)
    ref.w._cache[b + "ssm_out.weight"] = pick
    x = np.random.default_rng(2).normal(size=(5, h.n_embd))
    out = ref.gated_deltanet(0, x, q35.DeltaNetState.empty(h), chunk=64)
    assert not out[:, :32].any() and np.abs(out[:, 32:48]).min() > 0


def test_attention_gate_is_interleaved_per_head(fixture_dir):
    """§5.2: attn_q's output is [head][q (head_dim) | gate (head_dim)]. Zeroing head 1's gate rows turns its gate
    into sigmoid(0) = 1/2 and leaves head 0 alone."""
    ref = q35.Qwen35Reference(fixture_dir / "qwen35moe-f32.gguf")
    h, b, hd = ref.h, "blk.3.", ref.h.head_dim
    ref.w._cache[b + "attn_output.weight"] = np.eye(h.n_embd, h.n_head * hd)  # output = columns 0-63: heads 0, 1
    x = np.random.default_rng(4).normal(size=(3, h.n_embd))
    wq = ref.w.get(b + "attn_q.weight")
    gate_h1 = (x @ wq.T).reshape(3, h.n_head, 2 * hd)[:, 1, hd:]
    before = ref.gated_attention(3, x, np.arange(3), q35.AttentionCache.empty(h))
    wq = wq.copy()
    wq[2 * hd + hd:4 * hd] = 0  # gate rows of head 1
    ref.w._cache[b + "attn_q.weight"] = wq
    after = ref.gated_attention(3, x, np.arange(3), q35.AttentionCache.empty(h))
    assert np.allclose(after[:, :hd], before[:, :hd], rtol=0, atol=1e-12)
    assert np.allclose(after[:, hd:2 * hd], 0.5 * before[:, hd:2 * hd] / q35.sigmoid(gate_h1), rtol=1e-10)


def test_mtp_concatenates_embedding_first(fixture_dir):
    """speculative.md §2.2: c = [RMSNorm(E[x]; enorm), RMSNorm(h; hnorm)]: zeroing the second half of eh_proj's
    input columns makes the MTP output independent of h."""
    ref = q35.Qwen35Reference(fixture_dir / "qwen35moe-f32.gguf")
    eh = ref.w.get("blk.8.nextn.eh_proj.weight").copy()
    eh[:, ref.h.n_embd:] = 0
    ref.w._cache["blk.8.nextn.eh_proj.weight"] = eh
    rng = np.random.default_rng(5)
    a, _, _ = ref.mtp_forward([7], rng.normal(size=(1, 64)), [0])
    b, _, _ = ref.mtp_forward([7], rng.normal(size=(1, 64)), [0])
    c, _, _ = ref.mtp_forward([8], rng.normal(size=(1, 64)), [0])
    assert np.allclose(a, b, rtol=0, atol=1e-12) and not np.allclose(a, c)


@pytest.mark.parametrize("variant,min_corr", [("f16", 0.99999), ("q8_0", 0.999), ("strix", 0.95),
                                              ("q4_0", 0.9)])
def test_quantized_fixtures_track_f32(fixture_dir, f32_model, variant, min_corr):
    base, _, _ = f32_model.forward(PROMPT)
    logits, _, _ = q35.Qwen35Reference(fixture_dir / f"qwen35moe-{variant}.gguf").forward(PROMPT)
    assert np.corrcoef(base.ravel(), logits.ravel())[0, 1] > min_corr


def test_strix_fixture_types_and_blocks(fixture_dir):
    strix = q35.Weights(fixture_dir / "qwen35moe-strix.gguf")
    f32 = q35.Weights(fixture_dir / "qwen35moe-f32.gguf")
    types = {name: int(t.tensor_type) for name, t in strix.tensors.items()}
    assert types["token_embd.weight"] == int(gguf.GGMLQuantizationType.Q8_0)
    assert types["output.weight"] == 101
    for name in ("blk.3.attn_k.weight", "blk.3.attn_v.weight", "blk.0.attn_qkv.weight", "blk.8.attn_v.weight"):
        assert types[name] == 100, name
    for name in ("blk.3.attn_q.weight", "blk.3.attn_output.weight", "blk.0.attn_gate.weight",
                 "blk.0.ssm_alpha.weight", "blk.0.ssm_beta.weight", "blk.0.ssm_out.weight",
                 "blk.2.ffn_gate_exps.weight", "blk.2.ffn_down_exps.weight", "blk.2.ffn_up_shexp.weight",
                 "blk.8.nextn.eh_proj.weight"):
        assert types[name] == 101, name
    for name in ("blk.0.ssm_conv1d.weight", "blk.0.ssm_a", "blk.0.ssm_dt.bias", "blk.0.ssm_norm.weight",
                 "blk.2.ffn_gate_inp.weight", "blk.2.ffn_gate_inp_shexp.weight", "blk.8.nextn.enorm.weight"):
        assert types[name] == 0, name
    for name in ("blk.0.attn_qkv.weight", "blk.2.ffn_down_exps.weight"):
        t = strix.tensors[name]
        expected = rocm.dequantize(t.tensor_type, rocm.quantize(t.tensor_type, f32.get(name)), t.n_elements)
        assert np.array_equal(strix.get(name).ravel(), expected.astype(np.float64))


def test_bad_fixtures_are_rejected(fixture_dir):
    expected = json.loads((fixture_dir / "bad" / "EXPECTED.json").read_text())
    assert len(expected) == 4
    for name, needle in expected.items():
        with pytest.raises(ValueError, match=needle.replace(".", r"\.")):
            q35.Qwen35Reference(fixture_dir / "bad" / name)


def test_mtp_forward_and_drafting(fixture_dir, f32_model):
    logits, hidden, _ = f32_model.forward(PROMPT)
    T = len(PROMPT)
    # §2.3: the MTP rows pair token k with the trunk's hidden at k - 1
    mtp_logits, o, mtp_state = f32_model.mtp_forward(PROMPT[1:], hidden[:-1], np.arange(1, T))
    assert mtp_logits.shape == (T - 1, 273) and o.shape == (T - 1, 64)
    step_state = f32_model.new_mtp_state()
    for k in range(1, T):
        row, _, step_state = f32_model.mtp_forward([PROMPT[k]], hidden[k - 1], [k], step_state)
        assert np.allclose(row[0], mtp_logits[k - 1], rtol=0, atol=1e-10)
    shifted = q35.mtp_batch_inputs(hidden, np.zeros(64))
    assert np.array_equal(shifted[1:], hidden[:-1]) and not shifted[0].any()
    # drafting: each step feeds the previous step's argmax and normed output, at the next position
    last = int(logits[-1].argmax())
    before = len(mtp_state.cache.positions)
    drafted, draft_logits, after = f32_model.draft_mtp(last, hidden[-1], T, 4, mtp_state)
    assert len(mtp_state.cache.positions) == before and len(after.cache.positions) == before + 4
    assert drafted == [int(row.argmax()) for row in draft_logits]
    state, token, h = mtp_state.copy(), last, hidden[-1]
    for step in range(4):
        row, o_step, state = f32_model.mtp_forward([token], h, [T + step], state)
        assert np.allclose(row[0], draft_logits[step], rtol=0, atol=1e-10)
        token, h = drafted[step], o_step[0]
    after.cache.remove_from(T)
    assert len(after.cache.positions) == before
    with pytest.raises(ValueError, match="no MTP block"):
        q35.Qwen35Reference(fixture_dir / "qwen35moe-nomtp-f32.gguf").mtp_forward([1], np.zeros((1, 64)), [0])


def test_imrope_reduces_to_neox_for_text():
    x = np.random.default_rng(1).normal(size=(5, 2, 32))
    positions = np.arange(3, 8)
    out = q35.imrope(x, q35.text_positions(positions), 16, 10000.0, [3, 3, 2, 0])
    theta = 10000.0 ** (-np.arange(8) * 2 / 16)
    angle = positions[:, None] * theta
    a, b = x[..., :8], x[..., 8:16]
    assert np.allclose(out[..., :8], a * np.cos(angle)[:, None] - b * np.sin(angle)[:, None])
    assert np.allclose(out[..., 8:16], a * np.sin(angle)[:, None] + b * np.cos(angle)[:, None])
    assert np.array_equal(out[..., 16:], x[..., 16:])
    # sections: pair j takes h when j % 3 == 1 (j < 9), w when j % 3 == 2 (j < 6), else t
    thw = np.array([[0, 1, 0]])
    moved = q35.imrope(x[:1], thw, 16, 10000.0, [3, 3, 2, 0])
    rotated = ~np.isclose(moved[0, 0, :8], x[0, 0, :8])
    assert rotated.tolist() == [False, True, False, False, True, False, False, True]


# ---------------------------------------------------------------------------------------------------------------
# Synthetic full-shape generator (on a reduced shape)


def test_synthetic_blocks_are_valid(tmp_path):
    shape = replace(fixtures.FULL, n_embd=256, n_layer=4, n_head=2, head_dim=64, n_rot=16, rope_sections=(3, 3, 2, 0),
                    n_expert=4, n_expert_used=2, n_ff_exp=64, n_ff_shexp=64, d_k=32, h_k=2, h_v=4, value_dim=128,
                    n_vocab=1024)
    path = tmp_path / "synthetic.gguf"
    synthetic.write_synthetic(path, shape, seed=1)
    ref = q35.Qwen35Reference(path)  # checks every key, name and shape
    assert ref.h.n_layer == 4 and ref.has_mtp and ref.h.n_vocab == 1024
    types = {name: int(t.tensor_type) for name, t in ref.w.tensors.items()}
    assert types["token_embd.weight"] == int(gguf.GGMLQuantizationType.Q6_K)
    assert types["blk.0.attn_qkv.weight"] == 100 and types["blk.2.ffn_up_exps.weight"] == 101
    for name, t in ref.w.tensors.items():
        if t.tensor_type in rocm.BLOCK_BYTES:
            scales = np.asarray(t.data).reshape(-1, rocm.BLOCK_BYTES[t.tensor_type])[:, 16:]
            assert scales.max() <= 0x7E and scales.min() >= 1, name
        values = ref.w.get(name)
        assert np.isfinite(values).all(), name
    assert 0.5 < np.std(ref.w.get("blk.0.attn_norm.weight") - 1) * 20 < 2
    assert (ref.w.get("blk.0.ssm_a") < 0).all()
    w_std = ref.w.get("blk.1.ffn_gate_exps.weight").std()
    assert 0.3 / np.sqrt(256) < w_std < 3 / np.sqrt(256)
    logits, _, _ = ref.forward([1, 2, 3])
    assert np.isfinite(logits).all()
