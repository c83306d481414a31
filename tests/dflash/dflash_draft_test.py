# SPDX-License-Identifier: MIT
"""The engine's DFlash draft (engine/model/dflash_draft) against the numpy reference (tests/reference/
dflash_reference.py) on the fixtures of tests/fixtures/make_dflash_fixtures.py: the target's captured features, the
draft's block logits and tokens, for drafted files and for standalone drafts beside their target, with the
context injected in one batch or in chunks.

F32 drafts: max relative error < 1e-4. Quantized drafts (q8_0, bf16 matrices): the reference uses the same
dequantized weights, the engine quantizes activations, so mean KL < 1e-3."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
import dflash_reference as dr  # noqa: E402
from logit_metrics import mean_kl, rel_error  # noqa: E402

BIN = Path(os.environ["EMBER_BIN"])
FIXTURES = Path(os.environ["EMBER_FIXTURES"]) / "dflash"
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
PROMPT = [72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100, 33, 10, 5, 200, 33]
QUANTIZED = {"draft-qwen3-b16.gguf", "draft-qwen35moe-b16.gguf"}


def probe(target, draft, out, n, batch=0, gap=None):
    out.mkdir(parents=True, exist_ok=True)
    extra = ["--gap", str(gap[0]), str(gap[1])] if gap else []
    subprocess.run([BIN / "dflash_probe", str(target), str(draft), str(out), ",".join(map(str, PROMPT)), str(n),
                    "--batch", str(batch)] + extra, check=True, capture_output=True)
    got = {p.stem: np.fromfile(p, dtype=np.float32) for p in out.glob("*.f32")}
    got["tokens"] = [int(t) for t in (out / "draft_tokens.txt").read_text().split()]
    return got


def assert_matches(entry, got, logits, tokens):
    got_logits = got["draft_logits"].reshape(logits.shape)
    if entry["draft"] in QUANTIZED:
        assert mean_kl(logits, got_logits) < 1e-3
    else:
        assert rel_error(got_logits, logits) < 1e-4
        assert got["tokens"] == tokens


@pytest.fixture(scope="module", params=sorted(MANIFEST))
def case(request):
    name = request.param
    entry = MANIFEST[name]
    ref = dr.DFlashReference(FIXTURES / name)
    n = ref.h.block_size - 1
    last = len(PROMPT) - 1
    _, features = dr.target_features(FIXTURES / entry["target"], PROMPT, ref.h.target_layers)
    logits, tokens = ref.draft(features[:last], np.arange(last), PROMPT[last], last, n)
    return name, entry, n, features[:last], logits, tokens


@pytest.mark.parametrize("layout", ["drafted", "standalone"])
@pytest.mark.parametrize("batch", [0, 5])
def test_draft_matches_the_reference(case, layout, batch, tmp_path):
    name, entry, n, features, logits, tokens = case
    target = FIXTURES / (name if layout == "drafted" else entry["target"])
    draft = FIXTURES / (name if layout == "drafted" else entry["draft"])
    got = probe(target, draft, tmp_path, n, batch)
    assert rel_error(got["features"].reshape(features.shape), features) < 1e-4
    assert_matches(entry, got, logits, tokens)
    # Drafting leaves the injected context as it was.
    np.testing.assert_array_equal(got["again_logits"], got["draft_logits"])


@pytest.mark.parametrize("gap", [(3, 9), (0, 12)])
def test_a_context_with_a_gap_matches_the_reference(case, gap, tmp_path):
    # The session leaves rows out of the draft's context while drafts do not agree: the draft then attends to the
    # rows it has, each at its own position.
    name, entry, n, features, _, _ = case
    last = len(PROMPT) - 1
    kept = np.array([p for p in range(last) if not gap[0] <= p < gap[1]])
    ref = dr.DFlashReference(FIXTURES / name)
    logits, tokens = ref.draft(features[kept], kept, PROMPT[last], last, n)
    got = probe(FIXTURES / name, FIXTURES / name, tmp_path, n, 5, gap)
    assert_matches(entry, got, logits, tokens)
    full = probe(FIXTURES / name, FIXTURES / name, tmp_path / "full", n, 5)
    assert not np.array_equal(full["draft_logits"], got["draft_logits"])  # the gap did change what the draft saw


def test_shorter_drafts_are_a_prefix_of_longer_ones_on_the_agreeing_pair(tmp_path):
    name = "echo-agree-drafted.gguf"
    full = probe(FIXTURES / name, FIXTURES / name, tmp_path / "full", 7)
    short = probe(FIXTURES / name, FIXTURES / name, tmp_path / "short", 3)
    assert len(full["tokens"]) == 7 and len(short["tokens"]) == 3
    assert all(t == PROMPT[-1] for t in full["tokens"])  # the echo target repeats the last token
    assert short["tokens"] == full["tokens"][:3]
