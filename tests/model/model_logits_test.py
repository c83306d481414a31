# SPDX-License-Identifier: MIT
"""Ember's logits against the independent numpy forward pass (tests/reference/transformer_reference.py) on the
tiny llama, qwen2, qwen3, qwen3moe, gemma3 and gpt-oss fixtures: prefill in one batch, token-by-token decode and odd batch sizes.

F32 weights (with an f32 KV cache): max |ember - reference| / max |reference| < 1e-4.
Quantized weights: mean KL(softmax(reference) || softmax(ember)) < 1e-3, the reference using the same
dequantized weights (so this measures Ember's kernels, not the quantization)."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
import transformer_reference  # noqa: E402
from logit_metrics import mean_kl  # noqa: E402

BIN = Path(os.environ["EMBER_BIN"])
MODELS = Path(os.environ["EMBER_FIXTURES"]) / "dense"
TOKENS = [267, 116, 104, 101, 32, 259, 257, 32, 99, 97, 116, 268, 10, 3, 200, 255, 0, 65, 66, 67, 262, 263]


def ember_logits(path: Path, tmp_path: Path, batch: int, kv: str, tokens=TOKENS) -> np.ndarray:
    out = tmp_path / f"logits-{batch}.f32"
    subprocess.run([BIN / "ember-cli", "logits", "-m", str(path), "--tokens", ",".join(map(str, tokens)),
                    "-o", str(out), "--batch", str(batch), "--kv-type", kv, "--threads", "2"],
                   check=True, capture_output=True)
    return np.fromfile(out, dtype=np.float32).reshape(len(tokens), -1).astype(np.float64)


@pytest.mark.parametrize("arch", ["llama", "qwen2", "qwen3", "qwen3moe", "gemma3", "gpt-oss"])
@pytest.mark.parametrize("wtype", ["f32", "f16", "q8_0", "q4_0"])
@pytest.mark.parametrize("batch", [0, 1, 5])
def test_logits_match_the_numpy_reference(arch, wtype, batch, tmp_path):
    path = MODELS / f"{arch}-{wtype}.gguf"
    reference = transformer_reference.forward(str(path), TOKENS)
    got = ember_logits(path, tmp_path, batch, "f32" if wtype == "f32" else "f16")
    assert got.shape == reference.shape
    if wtype == "f32":
        error = np.abs(got - reference).max() / np.abs(reference).max()
        assert error < 1e-4, f"max relative error {error:.2e}"
    else:
        kl = mean_kl(reference, got)
        assert kl < 1e-3, f"mean KL {kl:.2e}"


@pytest.mark.parametrize("kv", ["f16", "q8_0"])
def test_quantized_kv_caches_stay_close(kv, tmp_path):
    path = MODELS / "qwen3-f32.gguf"
    reference = transformer_reference.forward(str(path), TOKENS)
    kl = mean_kl(reference, ember_logits(path, tmp_path, 0, kv))
    assert kl < (1e-4 if kv == "f16" else 1e-3), f"mean KL {kl:.2e}"


def test_gemma3_local_layers_see_only_their_window(tmp_path):
    """The 22-token prompt is longer than the fixture's 6-row window: without the window the last positions' logits
    are another function, so the comparison above would fail if any backend ignored it."""
    path = MODELS / "gemma3-f32.gguf"
    got = ember_logits(path, tmp_path, 0, "f32")
    windowless = transformer_reference.forward(str(path), TOKENS, ignore_window=True)
    error = np.abs(got - windowless).max() / np.abs(windowless).max()
    assert error > 1e-2, f"the window changes nothing ({error:.2e})"


@pytest.mark.parametrize("batch", [0, 1, 7])
def test_gemma3_local_caches_slide_over_a_long_prompt(batch, tmp_path):
    """Local layers keep 2 * window + 512 rows (524 here): 600 positions make the window's rows move to the front
    once, in the middle of a 512-token batch's successor (batch 0), of single tokens (1) or of odd batches (7)."""
    path = MODELS / "gemma3-f32.gguf"
    tokens = [int(t) for t in np.random.default_rng(3).integers(3, 256, size=600)]
    reference = transformer_reference.forward(str(path), tokens)
    got = ember_logits(path, tmp_path, batch, "f32", tokens)
    error = np.abs(got - reference).max() / np.abs(reference).max()
    assert error < 1e-4, f"max relative error {error:.2e}"


@pytest.mark.parametrize("batch", [0, 1, 5])
def test_gpt_oss_with_mxfp4_experts(batch, tmp_path):
    """gpt-oss as released: MXFP4 experts (the reference dequantizes them with the gguf package), Q8_0 elsewhere."""
    path = MODELS / "gpt-oss-mxfp4.gguf"
    kl = mean_kl(transformer_reference.forward(str(path), TOKENS), ember_logits(path, tmp_path, batch, "f16"))
    assert kl < 1e-3, f"mean KL {kl:.2e}"


@pytest.mark.parametrize("what", ["sinks", "window"])
def test_gpt_oss_sinks_and_window_matter(what, tmp_path):
    """Ignoring the attention sinks or the windowed layers' window gives other logits, so the comparison above
    would catch a backend that drops either."""
    path = MODELS / "gpt-oss-f32.gguf"
    got = ember_logits(path, tmp_path, 0, "f32")
    other = transformer_reference.forward(str(path), TOKENS, **{f"ignore_{what}": True})
    error = np.abs(got - other).max() / np.abs(other).max()
    assert error > 1e-2, f"the {what} change nothing ({error:.2e})"


@pytest.mark.parametrize("batch", [0, 7])
def test_gpt_oss_beyond_the_original_context(batch, tmp_path):
    """600 positions: past YaRN's 64-position original context, and the windowed layers' caches slide."""
    path = MODELS / "gpt-oss-f32.gguf"
    tokens = [int(t) for t in np.random.default_rng(5).integers(3, 256, size=600)]
    reference = transformer_reference.forward(str(path), tokens)
    error = np.abs(ember_logits(path, tmp_path, batch, "f32", tokens) - reference).max() / np.abs(reference).max()
    assert error < 1e-4, f"max relative error {error:.2e}"
