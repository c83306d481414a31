# SPDX-License-Identifier: MIT
"""The numpy DFlash reference (tests/reference/dflash_reference.py) checked on its own, on the fixtures of
tests/fixtures/make_dflash_fixtures.py: shapes and determinism, properties the spec's draft must have (RoPE sees only
relative positions, the block attends both ways, context rows form a set, the target's taps), equal results from a
drafted file and from the standalone draft with its target, and the agreement the constructed echo/shift pairs
were built for."""
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
import dflash_reference as dr  # noqa: E402
import qwen35moe_reference as q35  # noqa: E402
import transformer_reference as dense  # noqa: E402

FIXTURES = Path(os.environ["EMBER_FIXTURES"]) / "dflash"
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
RANDOM = [name for name, entry in MANIFEST.items() if entry["agreement"] == "random"]
PROMPT = [72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100]


def draft_inputs(name):
    """(reference on the drafted file, context features, positions, last token, its position) for PROMPT."""
    ref = dr.DFlashReference(FIXTURES / name)
    _, features = dr.target_features(FIXTURES / MANIFEST[name]["target"], PROMPT, ref.h.target_layers)
    last = len(PROMPT) - 1
    return ref, features[:last], np.arange(last), PROMPT[last], last


@pytest.fixture(scope="module", params=RANDOM)
def random_case(request):
    return request.param, draft_inputs(request.param)


def test_shapes_tokens_and_determinism(random_case):
    _, (ref, ctx, pos, last, p) = random_case
    n = ref.h.block_size - 1
    logits, tokens = ref.draft(ctx, pos, last, p, n)
    assert logits.shape == (n + 1, ref.n_vocab)
    assert tokens == [int(t) for t in np.argmax(logits[1:], axis=-1)] and len(tokens) == n
    again, _ = ref.draft(ctx, pos, last, p, n)
    assert np.array_equal(logits, again)
    assert np.all(np.isfinite(logits))


def test_fuse_is_fc_then_rms_norm(random_case):
    _, (ref, ctx, _, _, _) = random_case
    g = ref.fuse(ctx)
    assert g.shape == (ctx.shape[0], ref.h.n_embd)
    W, w = ref.t("fc.weight"), ref.t("enc.output_norm.weight")
    for row, f in zip(g, ctx):
        y = W @ f
        assert np.allclose(row, y / np.sqrt(np.mean(y * y) + ref.h.eps) * w, rtol=1e-12, atol=1e-12)


def test_standalone_draft_with_its_target_equals_the_drafted_file(random_case):
    name, (ref, ctx, pos, last, p) = random_case
    standalone = dr.DFlashReference(FIXTURES / MANIFEST[name]["draft"], FIXTURES / MANIFEST[name]["target"])
    assert standalone.prefix == "" and ref.prefix == "dflash."
    assert np.array_equal(standalone.draft(ctx, pos, last, p, 5)[0], ref.draft(ctx, pos, last, p, 5)[0])


def test_only_relative_positions_matter(random_case):
    _, (ref, ctx, pos, last, p) = random_case
    a, _ = ref.draft(ctx, pos, last, p, 6)
    b, _ = ref.draft(ctx, pos + 1000, last, p + 1000, 6)
    assert np.allclose(a, b, rtol=1e-9, atol=1e-9)
    c, _ = ref.draft(ctx, pos + 1, last, p, 6)  # context moved against the block: different
    assert not np.allclose(a, c, rtol=1e-6, atol=1e-6)


def test_the_block_attends_both_ways(random_case):
    _, (ref, ctx, pos, last, p) = random_case
    short, _ = ref.draft(ctx, pos, last, p, 3)
    long, _ = ref.draft(ctx, pos, last, p, 7)
    # Row 0 (the last token) sees the mask rows after it: more of them change it. A causal block would not.
    assert not np.allclose(short[0], long[0], rtol=1e-6, atol=1e-6)
    assert not np.allclose(short[1:4], long[1:4], rtol=1e-6, atol=1e-6)


def test_context_rows_are_a_set_of_features_at_positions(random_case):
    _, (ref, ctx, pos, last, p) = random_case
    order = np.random.default_rng(1).permutation(len(pos))
    a, _ = ref.draft(ctx, pos, last, p, 4)
    b, _ = ref.draft(ctx[order], pos[order], last, p, 4)
    assert np.allclose(a, b, rtol=1e-9, atol=1e-9)
    changed = ctx.copy()
    changed[3] += 0.5
    assert not np.allclose(a, ref.draft(changed, pos, last, p, 4)[0], rtol=1e-6, atol=1e-6)
    empty, _ = ref.draft(ctx[:0], pos[:0], last, p, 4)  # no context at all is allowed
    assert empty.shape == a.shape and not np.allclose(a, empty, rtol=1e-6, atol=1e-6)


def test_injected_context_keys_skip_attn_norm(random_case):
    """speculative.md §3.3: context K/V come straight from g (no attn_norm); the block's own rows are normed."""
    _, (ref, ctx, pos, last, p) = random_case
    g = ref.fuse(ctx)
    k, v = ref.context_kv(0, g, pos)
    ref.w._cache["dflash.blk.0.attn_norm.weight"] = ref.t("blk.0.attn_norm.weight") * 3.0
    try:
        k2, v2 = ref.context_kv(0, g, pos)
        scaled, _ = ref.draft(ctx, pos, last, p, 4)
    finally:
        del ref.w._cache["dflash.blk.0.attn_norm.weight"]
    assert np.array_equal(k, k2) and np.array_equal(v, v2)
    bias = ref.t("blk.0.attn_v.bias") if ref.has("blk.0.attn_v.bias") else 0.0
    assert np.allclose(v.reshape(len(pos), -1), g @ ref.t("blk.0.attn_v.weight").T + bias)
    assert not np.allclose(scaled, ref.draft(ctx, pos, last, p, 4)[0], rtol=1e-6, atol=1e-6)


def test_dense_taps_are_the_layer_inputs():
    path = FIXTURES / "qwen3-f32.gguf"
    w = dense.Weights(str(path))
    logits, features = dense.forward(str(path), PROMPT, capture_layers=[0, 1, 2])
    d = w.key("qwen3.embedding_length")
    assert features.shape == (len(PROMPT), 3 * d)
    assert np.allclose(features[:, :d], w.get("token_embd.weight")[PROMPT])  # layer 0's input: the embeddings
    assert np.allclose(features[:, 2 * d:] @ w.get("output.weight").T, logits)  # n_layer: after output_norm
    assert np.allclose(logits, dense.forward(str(path), PROMPT))  # capturing changes nothing
    _, prefix = dense.forward(str(path), PROMPT[:5], capture_layers=[1])
    assert np.allclose(prefix, features[:5, d:2 * d])  # causal: a row's taps depend only on the tokens up to it


def test_qwen35moe_taps_are_the_layer_inputs():
    ref = q35.Qwen35Reference(FIXTURES / "qwen35moe-f32.gguf")
    logits, hidden, _, features = ref.forward(PROMPT, capture_layers=[0, 8, 3])
    plain, _, _ = ref.forward(PROMPT)
    d = ref.h.n_embd
    assert np.allclose(features[:, :d], ref.t("token_embd.weight")[PROMPT])
    assert np.allclose(features[:, d:2 * d], hidden)  # tap n_layer = 8 (the MTP block is not trunk)
    assert np.allclose(logits, plain)
    _, _, _, prefix = ref.forward(PROMPT[:6], capture_layers=[3])
    assert np.allclose(prefix, features[:6, 2 * d:])


@pytest.mark.parametrize("name", [n for n, e in MANIFEST.items() if e["agreement"] != "random"])
def test_constructed_pairs_agree_as_designed(name):
    entry = MANIFEST[name]
    ref = dr.DFlashReference(FIXTURES / name)
    n = ref.h.block_size - 1
    tokens, pairs = dr.greedy_with_drafts(FIXTURES / entry["target"], ref, PROMPT[:6], steps=4, n=n)
    agree = np.array([[a == b for a, b in zip(drafted, target)] for drafted, target in pairs])
    assert agree.shape == (4, n)
    if entry["agreement"] == "all":
        assert agree.all()
        assert tokens[6:] == [PROMPT[5]] * 4  # the echo target repeats the last token
    elif entry["agreement"] == "first":
        assert agree[:, 0].all() and not agree[:, 1:].any()
    else:
        assert not agree.any()
        assert all(d == [ref.h.mask_token] * n for d, _ in pairs)
