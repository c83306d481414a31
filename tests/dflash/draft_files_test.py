# SPDX-License-Identifier: MIT
"""`ember-gguf merge-draft / split-draft / inspect` on the DFlash fixtures (tests/fixtures/make_dflash_fixtures.py),
checked with the `gguf` package:
- merge-draft writes exactly the drafted file that the fixture generator writes in Python from drafted-gguf.md §2
  (keys, types, values and order; tensor names, types, shapes and bytes; aligned offsets), for both tiny targets;
- split-draft gives back the standalone draft and the bare target, identical to the inputs;
- every bad drafted file, and every standalone draft merge-draft must refuse, gives its one-line error;
- merging into a drafted file is refused unless --replace; inspect shows the draft and its problems."""
import filecmp
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import gguf

BIN = Path(os.environ["EMBER_BIN"])
FIXTURES = Path(os.environ["EMBER_FIXTURES"]) / "dflash"
MANIFEST = json.loads((FIXTURES / "MANIFEST.json").read_text())
BAD = json.loads((FIXTURES / "bad" / "EXPECTED.json").read_text())
BAD_MERGE = json.loads((FIXTURES / "bad_merge" / "EXPECTED.json").read_text())
WARN = json.loads((FIXTURES / "warn" / "EXPECTED.json").read_text())


def ember_gguf(*args, expect=0):
    result = subprocess.run([str(BIN / "ember-gguf"), *map(str, args)], capture_output=True, text=True)
    assert result.returncode == expect, result.stderr
    return result


def contents(path: Path):
    """(metadata [(key, types, value)], tensors [(name, type, shape, offset % alignment, bytes)]) as the gguf
    package reads them."""
    reader = gguf.GGUFReader(path)
    fields = []
    for key, f in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        value = f.contents()
        fields.append((key, [int(t) for t in f.types], value))
    alignment = int(reader.fields["general.alignment"].contents()) if "general.alignment" in reader.fields else 32
    tensors = [(t.name, int(t.tensor_type), [int(d) for d in t.shape], t.data_offset % alignment,
                bytes(reader.data[t.data_offset:t.data_offset + t.n_bytes])) for t in reader.tensors]
    return fields, tensors


def assert_same_file(got: Path, want: Path):
    got_fields, got_tensors = contents(got)
    want_fields, want_tensors = contents(want)
    assert [f[0] for f in got_fields] == [f[0] for f in want_fields]
    for g, w in zip(got_fields, want_fields):
        assert g == w, g[0]
    assert [t[:4] for t in got_tensors] == [t[:4] for t in want_tensors]
    for g, w in zip(got_tensors, want_tensors):
        assert g[4] == w[4], f"tensor {g[0]}: bytes differ"
    assert filecmp.cmp(got, want, shallow=False), "same content, but the files differ in layout"


@pytest.mark.parametrize("name", MANIFEST)
def test_merge_writes_the_drafted_file_of_the_spec(name, tmp_path):
    entry = MANIFEST[name]
    out = tmp_path / name
    result = ember_gguf("merge-draft", FIXTURES / entry["target"], FIXTURES / entry["draft"], "-o", out)
    assert result.stdout.startswith(f"wrote {out}: drafted GGUF")
    assert not list(tmp_path.glob("*.partial"))
    assert_same_file(out, FIXTURES / name)
    _, tensors = contents(out)
    assert all(t[3] == 0 for t in tensors), "every tensor aligned"
    ember_gguf("validate", out)


@pytest.mark.parametrize("name", MANIFEST)
def test_split_gives_back_the_inputs(name, tmp_path):
    entry = MANIFEST[name]
    merged = tmp_path / "merged.gguf"
    ember_gguf("merge-draft", FIXTURES / entry["target"], FIXTURES / entry["draft"], "-o", merged)
    result = ember_gguf("split-draft", merged, "-o", tmp_path / "draft.gguf", "--target-out", tmp_path / "target.gguf")
    assert "standalone DFlash draft" in result.stdout
    assert_same_file(tmp_path / "draft.gguf", FIXTURES / entry["draft"])
    assert_same_file(tmp_path / "target.gguf", FIXTURES / entry["target"])


def test_split_without_target_out_writes_only_the_draft(tmp_path):
    ember_gguf("split-draft", FIXTURES / "qwen35moe-drafted.gguf", "-o", tmp_path / "d.gguf")
    assert [p.name for p in tmp_path.iterdir()] == ["d.gguf"]
    assert_same_file(tmp_path / "d.gguf", FIXTURES / "draft-qwen35moe.gguf")


def test_draft_tensors_are_prefixed_and_keep_their_type():
    reader = gguf.GGUFReader(FIXTURES / "qwen3-b16-drafted.gguf")
    draft = gguf.GGUFReader(FIXTURES / "draft-qwen3-b16.gguf")
    names = [t.name for t in reader.tensors]
    assert names[-len(draft.tensors):] == ["dflash." + t.name for t in draft.tensors]
    assert {int(t.tensor_type) for t in reader.tensors if t.name.startswith("dflash.")} == {0, 8}  # f32, q8_0
    assert not any(n.startswith(("dflash.token_embd", "dflash.output.")) for n in names)
    fields = reader.fields
    assert fields["dflash.embedded"].contents() is True
    mask = draft.fields["tokenizer.ggml.mask_token_id"].contents()
    assert fields["dflash.mask_token_id"].contents() == fields["tokenizer.ggml.mask_token_id"].contents() == mask
    assert fields["dflash.mask_token_id"].types == [gguf.GGUFValueType.UINT32]


@pytest.mark.parametrize("name", BAD)
def test_bad_drafted_files_are_rejected_with_one_line(name, tmp_path):
    path = FIXTURES / "bad" / name
    result = ember_gguf("split-draft", path, "-o", tmp_path / "out.gguf", expect=1)
    assert result.stderr == f"{path}: {BAD[name]}\n"
    assert not list(tmp_path.iterdir())
    draft = json.loads(ember_gguf("inspect", "--json", path).stdout)["capabilities"]["dflash"]
    assert draft["valid"] is False and draft["error"] == BAD[name]  # the document names the file once
    assert f"invalid: {path}: {BAD[name]}" in ember_gguf("inspect", path).stdout


@pytest.mark.parametrize("name", BAD_MERGE)
def test_merge_refuses_bad_drafts(name, tmp_path):
    path = FIXTURES / "bad_merge" / name
    target = FIXTURES / BAD_MERGE[name]["target"]
    result = ember_gguf("merge-draft", target, path, "-o", tmp_path / "out.gguf", expect=1)
    assert result.stderr == f"{path}: {BAD_MERGE[name]['error']}\n"
    assert not list(tmp_path.iterdir())


def test_merge_checks_the_draft_against_the_target(tmp_path):
    # The qwen35moe draft taps layer 7; the dense target has 2 layers (and another vocabulary).
    draft = FIXTURES / "draft-qwen35moe.gguf"
    result = ember_gguf("merge-draft", FIXTURES / "qwen3-f32.gguf", draft, "-o", tmp_path / "x.gguf", expect=1)
    assert result.stderr == f"{draft}: the draft's vocabulary has 273 tokens, the target's has 269\n"


def test_merging_into_a_drafted_file_needs_replace(tmp_path):
    drafted = FIXTURES / "qwen3-drafted.gguf"
    other = FIXTURES / "draft-qwen3-b16.gguf"
    result = ember_gguf("merge-draft", drafted, other, "-o", tmp_path / "x.gguf", expect=1)
    assert result.stderr == f"{drafted}: already carries a DFlash draft (use --replace to replace it)\n"
    ember_gguf("merge-draft", drafted, other, "-o", tmp_path / "replaced.gguf", "--replace")
    ember_gguf("merge-draft", FIXTURES / "qwen3-f32.gguf", other, "-o", tmp_path / "fresh.gguf")
    assert_same_file(tmp_path / "replaced.gguf", tmp_path / "fresh.gguf")


def test_merge_refuses_leftover_draft_keys_without_replace(tmp_path):
    source = gguf.GGUFReader(FIXTURES / "qwen3-f32.gguf")
    target = tmp_path / "leftover.gguf"
    w = gguf.GGUFWriter(str(target), source.fields["general.architecture"].contents())
    for key, f in source.fields.items():
        if not key.startswith("GGUF.") and key != "general.architecture":
            w.add_key_value(key, f.contents(), f.types[0], f.types[1] if len(f.types) > 1 else None)
    w.add_uint32("dflash.block_size", 8)  # a leftover key: not drafted (no marker, no dflash.fc.weight)
    for t in source.tensors:
        w.add_tensor(t.name, np.asarray(t.data))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    draft = FIXTURES / "draft-qwen3.gguf"
    result = ember_gguf("merge-draft", target, draft, "-o", tmp_path / "x.gguf", expect=1)
    assert result.stderr == f"{target}: has dflash.* keys or tensors but no draft marker (use --replace to drop them)\n"
    ember_gguf("merge-draft", target, draft, "-o", tmp_path / "x.gguf", "--replace")
    assert_same_file(tmp_path / "x.gguf", FIXTURES / "qwen3-drafted.gguf")


def test_split_refuses_a_plain_target_and_merge_a_draft_as_target(tmp_path):
    target = FIXTURES / "qwen3-f32.gguf"
    result = ember_gguf("split-draft", target, "-o", tmp_path / "x.gguf", expect=1)
    assert result.stderr == f"{target}: is not a drafted GGUF (no dflash.embedded marker and no dflash.fc.weight)\n"
    draft = FIXTURES / "draft-qwen3.gguf"
    result = ember_gguf("merge-draft", draft, draft, "-o", tmp_path / "x.gguf", expect=1)
    assert result.stderr == f"{draft}: is a standalone DFlash draft, not a target model\n"


@pytest.mark.parametrize("name", WARN)
def test_warning_cases_split_with_a_warning(name, tmp_path):
    path = FIXTURES / "warn" / name
    result = ember_gguf("split-draft", path, "-o", tmp_path / "d.gguf")
    assert result.stderr.startswith(f"warning: {path}: ") and WARN[name]["warning"] in result.stderr
    mask = gguf.GGUFReader(tmp_path / "d.gguf").fields["tokenizer.ggml.mask_token_id"].contents()
    assert mask == WARN[name]["mask"]


def test_inspect_shows_the_draft():
    path = FIXTURES / "qwen35moe-b16-drafted.gguf"
    caps = json.loads(ember_gguf("inspect", "--json", path).stdout)["capabilities"]
    assert caps["dflash_draft"] and caps["dflash_embedded_marker"]
    draft = caps["dflash"]
    assert draft == {"standalone": False, "valid": True, "layers": 2, "embedding_length": 64, "head_count": 4,
                     "head_count_kv": 1, "head_dim": 16, "feed_forward_length": 64, "target_layers": [2, 5, 8],
                     "block_size": 16, "mask_token_id": 268}
    text = ember_gguf("inspect", path).stdout
    assert "2 layers, target_layers [2, 5, 8], block size 16, mask token 268\n    valid" in text


def test_inspect_shows_a_standalone_draft():
    path = FIXTURES / "draft-qwen3.gguf"
    draft = json.loads(ember_gguf("inspect", "--json", path).stdout)["capabilities"]["dflash"]
    assert draft["standalone"] and draft["valid"]
    assert (draft["layers"], draft["target_layers"], draft["block_size"], draft["mask_token_id"]) == (2, [1, 2], 8, 266)
    assert "standalone DFlash draft yes" in ember_gguf("inspect", path).stdout
    plain = json.loads(ember_gguf("inspect", "--json", FIXTURES / "qwen3-f32.gguf").stdout)["capabilities"]
    assert "dflash" not in plain


def test_usage_errors(tmp_path):
    assert "needs -o" in ember_gguf("merge-draft", "a.gguf", "b.gguf", expect=2).stderr
    assert "needs a TARGET and a DRAFT" in ember_gguf("merge-draft", "a.gguf", "-o", "x", expect=2).stderr
    assert "unknown option" in ember_gguf("split-draft", "a.gguf", "-o", "x", "--bogus", expect=2).stderr
    assert "needs a file" in ember_gguf("split-draft", "a.gguf", "-o", expect=2).stderr
    missing = tmp_path / "missing.gguf"
    assert str(missing) in ember_gguf("split-draft", missing, "-o", tmp_path / "x.gguf", expect=1).stderr
    assert "merge-draft" in ember_gguf("--help").stdout


def test_merged_data_is_the_draft_data():
    """The drafted file's draft tensors dequantize to the standalone draft's values (gguf package)."""
    drafted = gguf.GGUFReader(FIXTURES / "qwen35moe-b16-drafted.gguf")
    draft = gguf.GGUFReader(FIXTURES / "draft-qwen35moe-b16.gguf")
    by_name = {t.name: t for t in drafted.tensors}
    for t in draft.tensors:
        d = by_name["dflash." + t.name]
        a = gguf.quants.dequantize(np.asarray(t.data), t.tensor_type)
        b = gguf.quants.dequantize(np.asarray(d.data), d.tensor_type)
        assert np.array_equal(a, b), t.name
