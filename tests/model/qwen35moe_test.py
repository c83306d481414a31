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


# --- image rows (vision-qwen3vl.md §6): embeddings replace the <|image_pad|> rows, M-RoPE (t, h, w) positions ---

def image_prompt(vocab):
    """<|im_start|>He<|vision_start|> [2 x 3 merged image tokens] <|vision_end|>d!\\n, the image at s = 4: token
    (r, c) gets (4, 4 + r, 4 + c), <|vision_end|> 4 + max(2, 3) = 7 and the text after it 8, 9, 10."""
    start, end, pad = (vocab.index(t) for t in ("<|vision_start|>", "<|vision_end|>", "<|image_pad|>"))
    tokens = [vocab.index("<|im_start|>"), 72, 101, start] + [pad] * 6 + [end, 100, 33, 10]
    thw = [[p, p, p] for p in range(4)] + [[4, 4 + r, 4 + c] for r in range(2) for c in range(3)] + \
        [[p, p, p] for p in range(7, 11)]
    return tokens, np.array(thw, dtype=np.int64)


@pytest.fixture(scope="module")
def vision_case():
    path = FIXTURES / "qwen35moe-vision-f32.gguf"
    ref = qwen35moe_reference.Qwen35Reference(path)
    tokens, thw = image_prompt(ref.w.key("tokenizer.ggml.tokens"))
    image = np.random.default_rng(19).normal(0.0, 1.0, (6, ref.h.n_embd)).astype(np.float32)
    logits, hidden, _ = ref.forward(tokens, embedded=[(4, image)], thw=thw)
    return path, ref, tokens, thw, image, logits, hidden


@pytest.mark.parametrize("batch", [0, 1, 5])
def test_image_rows_and_mrope_positions_match_the_reference(vision_case, batch, tmp_path):
    path, ref, tokens, thw, image, logits, hidden = vision_case
    image.tofile(tmp_path / "image.f32")
    thw.T.astype(np.int32).tofile(tmp_path / "thw.i32")  # axis-major
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    subprocess.run([BIN / "qwen35_probe", str(path), str(out_dir), ",".join(map(str, tokens)), "--batch", str(batch),
                    "--embed", f"4:{tmp_path / 'image.f32'}", "--rope", str(tmp_path / "thw.i32")],
                   check=True, capture_output=True)
    out = np.fromfile(out_dir / "logits.f32", dtype=np.float32).reshape(logits.shape)
    assert rel_error(out, logits) < 1e-4
    assert rel_error(np.fromfile(out_dir / "hidden.f32", dtype=np.float32).reshape(hidden.shape), hidden) < 1e-4
    # Both the substituted rows and the positions matter: the reference without either differs clearly.
    plain, _, _ = ref.forward(tokens, embedded=[(4, image)])
    assert rel_error(plain, logits) > 1e-3
    tokens_only, _, _ = ref.forward(tokens, thw=thw)
    assert rel_error(tokens_only, logits) > 1e-3
