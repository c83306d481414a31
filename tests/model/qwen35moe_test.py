# SPDX-License-Identifier: MIT
"""qwen35moe (Qwen3.6-35B-A3B's architecture) in Ember against the independent numpy reference
(tests/reference/qwen35moe_reference.py) on the tiny fixtures of tests/fixtures/make_qwen35moe_fixtures.py:
trunk logits for batched (chunked delta rule) and token-by-token prefill, the MTP head's prompt rows and several
greedy drafting steps, and the loader's one-line errors on bad files.

F32 weights with an f32 KV cache: max relative error < 1e-4. Quantized weights: mean KL < 1e-3 against the
reference on the same dequantized weights."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
import qwen35moe_reference  # noqa: E402
from logit_metrics import mean_kl, rel_error  # noqa: E402

BIN = Path(os.environ["EMBER_BIN"])
FIXTURES = Path(os.environ["EMBER_FIXTURES"]) / "qwen35moe"
TOKENS = [260, 72, 101, 108, 108, 111, 44, 32, 119, 111, 114, 108, 100, 33, 10, 5, 200, 33, 64, 65]


def probe(model: Path, out: Path, batch: int = 0, mtp_steps: int = 0, kv: str = "f32") -> dict:
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run([BIN / "qwen35_probe", str(model), str(out), ",".join(map(str, TOKENS)), "--batch", str(batch),
                    "--mtp-steps", str(mtp_steps), "--kv", kv], check=True, capture_output=True)
    return {p.stem: np.fromfile(p, dtype=np.float32) for p in out.glob("*.f32")}


@pytest.fixture(scope="module")
def reference_f32():
    ref = qwen35moe_reference.Qwen35Reference(FIXTURES / "qwen35moe-f32.gguf")
    logits, hidden, _ = ref.forward(TOKENS)
    return ref, logits, hidden


@pytest.mark.parametrize("batch", [0, 1, 7])
def test_trunk_logits_match_the_reference(reference_f32, batch, tmp_path):
    _, logits, hidden = reference_f32
    out = probe(FIXTURES / "qwen35moe-f32.gguf", tmp_path, batch)
    assert rel_error(out["logits"].reshape(logits.shape), logits) < 1e-4
    assert rel_error(out["hidden"].reshape(hidden.shape), hidden) < 1e-4


def test_chunked_prefill_equals_token_by_token(tmp_path):
    a = probe(FIXTURES / "qwen35moe-f32.gguf", tmp_path / "a", 0)
    b = probe(FIXTURES / "qwen35moe-f32.gguf", tmp_path / "b", 1)
    assert rel_error(a["logits"], b["logits"]) < 1e-4


@pytest.mark.parametrize("variant", ["f16", "q8_0", "q4_0", "strix"])
def test_quantized_logits_stay_close_to_the_reference(variant, tmp_path):
    path = FIXTURES / f"qwen35moe-{variant}.gguf"
    ref = qwen35moe_reference.Qwen35Reference(path)
    logits, _, _ = ref.forward(TOKENS)
    out = probe(path, tmp_path, 0, kv="f16")
    kl = mean_kl(logits, out["logits"].reshape(logits.shape))
    assert kl < 1e-3, f"mean KL {kl:.2e}"


@pytest.mark.parametrize("variant", ["nomtp-f32", "reclayers-f32"])
def test_layer_pattern_variants(variant, tmp_path):
    path = FIXTURES / f"qwen35moe-{variant}.gguf"
    logits, _, _ = qwen35moe_reference.Qwen35Reference(path).forward(TOKENS)
    out = probe(path, tmp_path, 5)
    assert rel_error(out["logits"].reshape(logits.shape), logits) < 1e-4


def test_mtp_head_prompt_rows_and_drafting_steps(reference_f32, tmp_path):
    ref, logits, hidden = reference_f32
    steps = 4
    out = probe(FIXTURES / "qwen35moe-f32.gguf", tmp_path, 0, mtp_steps=steps)
    n = len(TOKENS)
    m_logits, _, m_state = ref.mtp_forward(TOKENS[1:], hidden[:-1], list(range(1, n)))
    assert rel_error(out["mtp_prompt"].reshape(m_logits.shape), m_logits) < 1e-4
    drafted, d_logits, _ = ref.draft_mtp(int(np.argmax(logits[-1])), hidden[-1], n, steps, m_state)
    assert rel_error(out["mtp_draft"].reshape(d_logits.shape), d_logits) < 1e-4
    ember_tokens = [int(t) for t in (tmp_path / "mtp_tokens.txt").read_text().split()]
    assert ember_tokens == drafted


def test_bad_files_give_one_line_errors(tmp_path):
    expected = json.loads((FIXTURES / "bad" / "EXPECTED.json").read_text())
    assert len(expected) >= 4
    for name, needle in expected.items():
        result = subprocess.run([BIN / "qwen35_probe", str(FIXTURES / "bad" / name), str(tmp_path), "1,2"],
                                capture_output=True, text=True)
        assert result.returncode == 1, name
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0] and name in lines[0], (name, result.stderr)
