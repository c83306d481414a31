# SPDX-License-Identifier: MIT
"""ember-quantize end to end: the type of every tensor under each preset (read back with `ember-gguf inspect
--json`), the data against the numpy reference quantizer of make_quant_fixtures.py and the gguf package, the
metadata, determinism across thread counts, and the one-line errors for bad input.

Environment: EMBER_BIN (build/bin), EMBER_FIXTURES (make_quant_fixtures.py writes EMBER_FIXTURES/quant).
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import gguf

BIN = Path(os.environ["EMBER_BIN"])
MODELS = Path(os.environ["EMBER_FIXTURES"]) / "quant" / "models"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
import make_quant_fixtures as ref  # noqa: E402  (the numpy ROCmFP4 reference)

DUAL, FAST = "q4_0_rocmfp4", "q4_0_rocmfp4_fast"


def quantize(*args, ok=True):
    r = subprocess.run([BIN / "ember-quantize", *map(str, args)], capture_output=True, text=True)
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def inspect(path: Path) -> dict:
    out = subprocess.run([BIN / "ember-gguf", "inspect", "--json", str(path)], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def types_of(path: Path) -> dict:
    return {t["name"]: t["type"] for t in inspect(path)["tensors"]}


def tensor_bytes(path: Path, name: str) -> bytes:
    doc = inspect(path)
    t = next(t for t in doc["tensors"] if t["name"] == name)
    with open(path, "rb") as f:
        f.seek(t["file_offset"])
        return f.read(t["bytes"])


def source_floats(path: Path, name: str) -> np.ndarray:
    """A tensor of an F32/F16/BF16 fixture as float32 rows [n_rows, row_length]."""
    t = next(t for t in gguf.GGUFReader(path).tensors if t.name == name)
    data = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type).astype(np.float32)
    return data.reshape(-1, int(t.shape[0]))


def one_line_error(r) -> str:
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


# --- qwen35moe under STRIX (../shared/specs/rocmfp4.md §6.6) ----------------------------------------------------

KEPT = ("norm.weight", "ssm_a", "ssm_dt.bias", "ffn_gate_inp_shexp.weight", "ssm_conv1d.weight",
        "ffn_gate_inp.weight")


def strix_type(name: str, source: str, lean: bool) -> str:
    if name == "token_embd.weight":
        return "q5_K" if lean else "q6_K"
    if name == "output.weight":
        return FAST
    if name.endswith(KEPT):
        return source
    if name.endswith(("attn_k.weight", "attn_v.weight", "attn_qkv.weight")):
        return DUAL
    return FAST  # attn_q, attn_output, attn_gate, ssm_alpha/beta/out, experts, shared experts, nextn.eh_proj


@pytest.mark.parametrize("preset,lean,file_type", [("Q4_0_ROCMFP4_STRIX", False, 105),
                                                    ("Q4_0_ROCMFP4_STRIX_LEAN", True, 106)])
def test_strix_gives_the_spec_type_for_every_tensor(tmp_path, preset, lean, file_type):
    src = MODELS / "qwen35moe_tiny.gguf"
    out = tmp_path / "out.gguf"
    quantize(src, out, preset, "--threads", 2)
    source_types = types_of(src)
    got = types_of(out)
    assert list(got) == list(source_types)  # same tensors, same order
    for name, t in got.items():
        assert t == strix_type(name, source_types[name], lean), name
    assert len([n for n in got if n.endswith("attn_qkv.weight")]) == 3  # the DeltaNet layers are there
    assert got["blk.4.attn_k.weight"] == DUAL  # MTP block

    before, after = inspect(src)["metadata"], inspect(out)["metadata"]
    assert after["general.file_type"] == {"type": "u32", "value": file_type}
    for key, value in before.items():
        if key != "general.file_type":
            assert after[key] == value, key


def test_strix_data_is_the_reference_quantization(tmp_path):
    src = MODELS / "qwen35moe_tiny.gguf"
    out = tmp_path / "out.gguf"
    quantize(src, out, "Q4_0_ROCMFP4_STRIX")
    for name, tid in [("blk.0.attn_qkv.weight", ref.ROCMFP4), ("blk.3.attn_v.weight", ref.ROCMFP4),
                      ("blk.1.ffn_down_exps.weight", ref.ROCMFP4_FAST), ("output.weight", ref.ROCMFP4_FAST)]:
        x = source_floats(src, name)
        assert tensor_bytes(out, name) == ref.rocm_quantize(tid, x).tobytes(), name
    # Kept tensors are copied byte for byte.
    for name in ["blk.0.ssm_conv1d.weight", "blk.0.ffn_gate_inp.weight", "output_norm.weight", "blk.2.ssm_a"]:
        assert tensor_bytes(out, name) == tensor_bytes(src, name), name
    # Q6_K token_embd (from BF16): close to the source through the package's dequantizer.
    x = source_floats(src, "token_embd.weight")
    q6 = np.frombuffer(tensor_bytes(out, "token_embd.weight"), dtype=np.uint8).reshape(x.shape[0], -1)
    y = gguf.quants.dequantize(q6, gguf.GGMLQuantizationType.Q6_K).reshape(x.shape)
    assert np.sqrt(np.mean((x - y) ** 2)) < 0.02 * np.sqrt(np.mean(x ** 2))


def test_eight_experts_force_the_attention_v_branch_to_q8_0(tmp_path):
    out = tmp_path / "out.gguf"
    quantize(MODELS / "qwen35moe_8experts.gguf", out, "Q4_0_ROCMFP4_STRIX")
    got = types_of(out)
    assert got["blk.3.attn_v.weight"] == "q8_0"
    assert got["blk.0.attn_qkv.weight"] == "q8_0"
    assert got["blk.3.attn_k.weight"] == DUAL


def test_threads_do_not_change_the_output(tmp_path):
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    quantize(MODELS / "qwen35moe_tiny.gguf", a, "Q4_0_ROCMFP4_STRIX", "--threads", 1)
    quantize(MODELS / "qwen35moe_tiny.gguf", b, "Q4_0_ROCMFP4_STRIX", "--threads", 2)
    assert a.read_bytes() == b.read_bytes()


def test_progress_and_summary(tmp_path):
    r = quantize(MODELS / "qwen35moe_tiny.gguf", tmp_path / "out.gguf", "Q4_0_ROCMFP4_STRIX")
    assert "done in" in r.stderr and "100%" in r.stderr
    table = {line.split()[0]: line.split()[1:] for line in r.stdout.splitlines() if line.strip()}
    assert table["type"] == ["tensors", "bytes", "bits/weight"]
    assert table["q4_0_rocmfp4"][0] == "7" and float(table["q4_0_rocmfp4"][-1]) == 4.5
    assert float(table["q4_0_rocmfp4_fast"][-1]) == 4.25
    assert float(table["q6_K"][-1]) == 6.5625
    assert "input" in table


# --- The other presets on a llama-like model ------------------------------------------------------------------


def use_more_bits(i: int, n: int) -> bool:
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def expected_llama(preset: str, name: str, n_layer: int = 12) -> str:
    if "norm" in name:
        return "f32"
    part = name.split(".")[-2] if name.startswith("blk.") else name.split(".")[0]
    layer = int(name.split(".")[1]) if name.startswith("blk.") else -1
    if preset == "Q4_0_ROCMFP4":
        return {"output": "q6_K", "token_embd": DUAL, "attn_v": "q5_K", "attn_output": "q5_K",
                "ffn_down": "q6_K" if 3 * layer < 2 * n_layer else "q5_K",
                "ffn_gate": "q5_K" if use_more_bits(layer, n_layer) else DUAL}.get(part, DUAL)
    if preset == "Q4_0_ROCMFP4_LEAN":
        return "q5_K" if part == "token_embd" else DUAL
    if preset == "Q4_0_ROCMFP4_COHERENT":
        return "q6_K" if part == "token_embd" else DUAL
    if preset == "Q4_0_ROCMFP4_FAST":
        return FAST
    if preset == "Q4_0_ROCMFP4_FAST_COHERENT":
        return "q6_K" if part == "token_embd" else FAST
    if preset == "Q4_0":
        return "q6_K" if part == "output" else "q4_0"
    if preset == "Q8_0":
        return "q8_0"
    if preset == "Q4_K_M":
        if part == "output":
            return "q6_K"
        return "q6_K" if part in ("attn_v", "ffn_down") and use_more_bits(layer, n_layer) else "q4_K"
    raise AssertionError(preset)


@pytest.mark.parametrize("preset,file_type", [
    ("Q4_0_ROCMFP4", 100), ("Q4_0_ROCMFP4_LEAN", 101), ("Q4_0_ROCMFP4_COHERENT", 102), ("Q4_0_ROCMFP4_FAST", 103),
    ("Q4_0_ROCMFP4_FAST_COHERENT", 104), ("Q4_0", 2), ("Q8_0", 7), ("Q4_K_M", 15)])
def test_presets_on_a_llama_model(tmp_path, preset, file_type):
    out = tmp_path / "out.gguf"
    quantize(MODELS / "llama_tiny.gguf", out, preset.lower() if preset == "Q4_K_M" else preset)
    for name, t in types_of(out).items():
        assert t == expected_llama(preset, name), name
    assert inspect(out)["metadata"]["general.file_type"]["value"] == file_type


def test_pure_gives_every_tensor_the_main_type(tmp_path):
    out = tmp_path / "out.gguf"
    quantize(MODELS / "llama_tiny.gguf", out, "Q4_0_ROCMFP4", "--pure")
    assert {t for n, t in types_of(out).items() if "norm" not in n} == {DUAL}


def test_tied_embeddings_take_the_output_rule(tmp_path):
    out = tmp_path / "out.gguf"
    quantize(MODELS / "llama_tied.gguf", out, "Q4_0_ROCMFP4")
    assert types_of(out)["token_embd.weight"] == "q6_K"
    quantize(MODELS / "llama_tied.gguf", out, "Q4_0_ROCMFP4_STRIX_LEAN")
    assert types_of(out)["token_embd.weight"] == "q5_K"


def test_plain_type_with_overrides(tmp_path):
    out = tmp_path / "out.gguf"
    quantize(MODELS / "llama_tiny.gguf", out, "q8_0", "--tensor-type", r"attn_(k|v)\.weight=q4_0_rocmfp4",
             "--tensor-type", "blk\\.1\\.attn_k=q6_K", "--token-embedding-type", "q6_K", "--output-tensor-type", "bf16")
    got = types_of(out)
    assert got["token_embd.weight"] == "q6_K" and got["output.weight"] == "bf16"
    assert got["blk.1.attn_k.weight"] == DUAL  # the first matching pattern wins
    assert got["blk.5.attn_v.weight"] == DUAL and got["blk.5.attn_q.weight"] == "q8_0"
    assert inspect(out)["metadata"]["general.file_type"]["value"] == 7


def test_shape_fallback(tmp_path):
    out = tmp_path / "out.gguf"
    quantize(MODELS / "odd_rows.gguf", out, "Q4_K_M")
    got = types_of(out)
    assert got["token_embd.weight"] == "f16" and got["output.weight"] == "f16"  # 48: not a multiple of 32
    assert got["blk.0.attn_q.weight"] == "f16"      # 100
    assert got["blk.0.ffn_down.weight"] == "q4_0"   # 288: a multiple of 32, not of 256
    assert got["blk.0.ffn_up.weight"] == "q4_K"


def test_requantizing_warns_and_copies_equal_types(tmp_path):
    first, second = tmp_path / "a.gguf", tmp_path / "b.gguf"
    quantize(MODELS / "qwen35moe_tiny.gguf", first, "Q4_0_ROCMFP4_STRIX")
    r = quantize(first, second, "Q4_0_ROCMFP4_STRIX")
    assert "warning" not in r.stderr
    doc_a, doc_b = inspect(first), inspect(second)
    assert [t["type"] for t in doc_a["tensors"]] == [t["type"] for t in doc_b["tensors"]]
    assert tensor_bytes(first, "blk.0.attn_qkv.weight") == tensor_bytes(second, "blk.0.attn_qkv.weight")
    r = quantize(first, tmp_path / "c.gguf", "Q8_0")
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "q4_0_rocmfp4" in warnings[0] and "dequantized" in warnings[0]


# --- Bad input: one line, no output file --------------------------------------------------------------------


def test_unknown_type_name(tmp_path):
    out = tmp_path / "out.gguf"
    r = quantize(MODELS / "llama_tiny.gguf", out, "q5_rocmfp4", ok=False)
    assert r.returncode == 2
    assert "unknown type or preset 'q5_rocmfp4'" in one_line_error(r)
    r = quantize(MODELS / "llama_tiny.gguf", out, "q8_0", "--tensor-type", "attn=q9_0", ok=False)
    assert "unknown tensor type 'q9_0'" in one_line_error(r)
    r = quantize(MODELS / "llama_tiny.gguf", out, "q8_0", "--tensor-type", "attn_(=q8_0", ok=False)
    assert "bad --tensor-type pattern 'attn_('" in one_line_error(r)
    r = quantize(MODELS / "llama_tiny.gguf", out, "iq2_xxs", ok=False)
    assert "unknown type or preset 'iq2_xxs'" in one_line_error(r)
    assert not out.exists()


def test_preset_on_a_file_with_nothing_to_quantize(tmp_path):
    out = tmp_path / "out.gguf"
    r = quantize(MODELS / "nothing_to_quantize.gguf", out, "Q4_0_ROCMFP4_STRIX", ok=False)
    assert r.returncode == 1
    assert "no quantizable tensors" in one_line_error(r)
    assert not out.exists()


def test_rows_that_are_not_a_multiple_of_32(tmp_path):
    out = tmp_path / "out.gguf"
    r = quantize(MODELS / "odd_rows.gguf", out, "Q4_0_ROCMFP4_STRIX", "--output-tensor-type", "q4_0_rocmfp4", ok=False)
    assert r.returncode == 1
    assert one_line_error(r) == ("ember-quantize: tensor 'output.weight': row length 48 is not a multiple of the "
                                 "q4_0_rocmfp4 block size 32")
    assert not out.exists()


def test_corrupt_rocmfp4_scale_byte_in_the_input(tmp_path):
    good, bad, out = tmp_path / "good.gguf", tmp_path / "bad.gguf", tmp_path / "out.gguf"
    quantize(MODELS / "qwen35moe_tiny.gguf", good, "Q4_0_ROCMFP4_STRIX")
    t = next(t for t in inspect(good)["tensors"] if t["name"] == "blk.1.attn_qkv.weight")
    row_bytes = t["shape"][0] // 32 * 18
    data = bytearray(good.read_bytes())
    data[t["file_offset"] + 3 * row_bytes + 5 * 18 + 17] = 0x80  # row 3, block 5, e[1]
    bad.write_bytes(bytes(data))
    r = quantize(bad, out, "Q8_0", ok=False)
    assert r.returncode == 1
    assert one_line_error(r) == (f"ember-quantize: {bad}: tensor 'blk.1.attn_qkv.weight' row 3: block 5: "
                                 "scale byte 0x80 > 0x7E")
    assert not out.exists() and not Path(str(out) + ".partial").exists()


def test_missing_input(tmp_path):
    r = quantize(tmp_path / "missing.gguf", tmp_path / "out.gguf", "Q8_0", ok=False)
    assert r.returncode == 1
    one_line_error(r)
