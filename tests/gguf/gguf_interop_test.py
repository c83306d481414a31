# SPDX-License-Identifier: MIT
"""Ember's GGUF reader and writer against the `gguf` package (the independent reference).

Environment: EMBER_BIN (build/bin), EMBER_GGUF_FIXTURES (output of tests/fixtures/make_gguf_fixtures.py).
"""
import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import gguf
from gguf import GGUFValueType as VT

BIN = Path(os.environ["EMBER_BIN"])
FIXTURES = Path(os.environ["EMBER_GGUF_FIXTURES"])
VALID = sorted((FIXTURES / "valid").glob("*.gguf"))
CORRUPT = json.loads((FIXTURES / "corrupt" / "EXPECTED.json").read_text())

TYPE_NAMES = {VT.UINT8: "u8", VT.INT8: "i8", VT.UINT16: "u16", VT.INT16: "i16", VT.UINT32: "u32",
              VT.INT32: "i32", VT.FLOAT32: "f32", VT.BOOL: "bool", VT.STRING: "string", VT.ARRAY: "array",
              VT.UINT64: "u64", VT.INT64: "i64", VT.FLOAT64: "f64"}


def inspect_json(path: Path) -> dict:
    out = subprocess.run([BIN / "ember-gguf", "inspect", "--json", str(path)], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def flatten(v):
    if isinstance(v, list):
        return [x for item in v for x in flatten(item)]
    return [v]


def same_number(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b and type(a) is type(b)


def reader_fields(reader: gguf.GGUFReader) -> dict:
    return {k: f for k, f in reader.fields.items() if not k.startswith("GGUF.")}


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_inspect_json_lists_exactly_what_the_gguf_package_reads(path):
    doc = inspect_json(path)
    reader = gguf.GGUFReader(path)
    fields = reader_fields(reader)

    assert list(doc["metadata"].keys()) == list(fields.keys())
    for key, field in fields.items():
        entry = doc["metadata"][key]
        expected_type = TYPE_NAMES[field.types[0]]
        if field.types[0] == VT.ARRAY:
            expected_type = f"array[{TYPE_NAMES[field.types[1]]}]"
        assert entry["type"] == expected_type, key
        expected = field.contents()
        got = entry["value"]
        if field.types[0] == VT.ARRAY and field.types[1] == VT.ARRAY:
            got = flatten(got)  # the package flattens nested arrays
        if isinstance(expected, list):
            assert len(got) == len(expected), key
            assert all(same_number(a, b) if not isinstance(a, str) else a == b for a, b in zip(got, expected)), key
        elif isinstance(expected, str):
            assert got == expected, key
        else:
            assert same_number(got, expected), key

    assert doc["version"] == fields_version(reader)
    assert doc["data_offset"] == reader.data_offset
    assert [t["name"] for t in doc["tensors"]] == [t.name for t in reader.tensors]
    for t, rt in zip(doc["tensors"], reader.tensors):
        assert t["type_id"] == int(rt.tensor_type), t["name"]
        assert t["type"].lower() == rt.tensor_type.name.lower(), t["name"]
        assert t["shape"] == [int(d) for d in rt.shape], t["name"]
        assert t["file_offset"] == rt.data_offset, t["name"]
        assert t["offset"] == rt.data_offset - reader.data_offset, t["name"]
        assert t["bytes"] == rt.n_bytes, t["name"]


def fields_version(reader: gguf.GGUFReader) -> int:
    return int(reader.fields["GGUF.version"].parts[-1][0])


def test_nested_arrays_keep_their_structure():
    doc = inspect_json(FIXTURES / "valid" / "rich.gguf")
    assert doc["metadata"]["test.nested"] == {"type": "array[array]", "value": [[1, 2, 3], [4], [5, 6]]}
    assert doc["metadata"]["test.nested_strings"]["value"] == [["a", "b"], ["c"]]


def assert_same_gguf(a: Path, b: Path) -> None:
    ra, rb = gguf.GGUFReader(a), gguf.GGUFReader(b)
    fa, fb = reader_fields(ra), reader_fields(rb)
    assert list(fa) == list(fb)
    for key in fa:
        assert fa[key].types == fb[key].types, key
        assert [bytes(p) for p in fa[key].parts] == [bytes(p) for p in fb[key].parts], key
    assert [t.name for t in ra.tensors] == [t.name for t in rb.tensors]
    for ta, tb in zip(ra.tensors, rb.tensors):
        assert ta.tensor_type == tb.tensor_type and list(ta.shape) == list(tb.shape), ta.name
        assert np.array_equal(np.asarray(ta.data).view(np.uint8), np.asarray(tb.data).view(np.uint8)), ta.name


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_ember_writes_what_the_gguf_package_reads_back_identically(path, tmp_path):
    copy = tmp_path / "copy.gguf"
    subprocess.run([BIN / "gguf_copy", str(path), str(copy)], check=True)
    assert_same_gguf(path, copy)
    if fields_version(gguf.GGUFReader(path)) == 3:
        # Same keys, same order, same padding: the two writers agree to the byte.
        assert copy.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_gguf_package_rewrites_an_ember_file_and_ember_reads_it_identically(path, tmp_path):
    """Ember writes, the package reads and writes the content again with its own writer, Ember reads that."""
    ember_file = tmp_path / "ember.gguf"
    subprocess.run([BIN / "gguf_copy", str(path), str(ember_file)], check=True)
    ember_doc = inspect_json(ember_file)
    reader = gguf.GGUFReader(ember_file)
    fields = reader_fields(reader)
    rewritten = tmp_path / "rewritten.gguf"
    w = gguf.GGUFWriter(str(rewritten), fields["general.architecture"].contents())
    for key, field in fields.items():
        if key == "general.architecture":
            continue
        if key == "general.alignment":
            w.add_custom_alignment(field.contents())
            continue
        value = field.contents()
        if field.types[0] == VT.ARRAY and field.types[1] == VT.ARRAY:
            value = ember_doc["metadata"][key]["value"]  # the package's reader flattens nested arrays
        sub_type = field.types[1] if field.types[0] == VT.ARRAY else None
        w.add_key_value(key, value, field.types[0], sub_type=sub_type)
    for t in reader.tensors:
        data = np.asarray(t.data)
        w.add_tensor(t.name, data, raw_dtype=t.tensor_type if data.dtype == np.uint8 else None)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    a, b = ember_doc, inspect_json(rewritten)
    for doc in (a, b):
        doc.pop("file")
    assert a == b


def test_registry_matches_gguf_package_sizes():
    out = subprocess.run([BIN / "ember-gguf", "types", "--json"], check=True, capture_output=True, text=True).stdout
    ember = {t["id"]: t for t in json.loads(out)}
    for qtype, (block, nbytes) in gguf.GGML_QUANT_SIZES.items():
        assert int(qtype) in ember, qtype.name
        assert (ember[int(qtype)]["block_size"], ember[int(qtype)]["block_bytes"]) == (block, nbytes), qtype.name
        assert ember[int(qtype)]["name"].lower() == qtype.name.lower()
    rocm = {100: (32, 18), 101: (32, 17), 102: (32, 26), 103: (32, 33), 104: (32, 14)}  # rocmfp4.md §1
    for tid, size in rocm.items():
        assert (ember[tid]["block_size"], ember[tid]["block_bytes"]) == size


@pytest.mark.parametrize("name", sorted(CORRUPT), ids=str)
def test_validate_reports_one_line_for_each_corrupt_file(name):
    path = FIXTURES / "corrupt" / name
    result = subprocess.run([BIN / "ember-gguf", "validate", str(path)], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"{path}: ")
    assert CORRUPT[name] in lines[0]


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_validate_accepts_valid_files(path):
    result = subprocess.run([BIN / "ember-gguf", "validate", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{path}: ok")


def test_text_report_summarizes_long_arrays():
    out = subprocess.run([BIN / "ember-gguf", "inspect", str(FIXTURES / "valid" / "rich.gguf")], check=True,
                         capture_output=True, text=True).stdout
    assert "… 1000 items]" in out
    assert "q8_0_weight" in out and "totals by type" in out and "capabilities" in out


def test_capabilities_in_json():
    caps = {p.name: inspect_json(p)["capabilities"] for p in VALID}
    assert caps["mtp.gguf"]["mtp_head"] and caps["mtp.gguf"]["mtp_layers"] == 1
    assert not caps["mtp_missing.gguf"]["mtp_head"] and caps["mtp_missing.gguf"]["mtp_layers"] == 1
    assert caps["dflash.gguf"]["dflash_draft"] and caps["dflash.gguf"]["dflash_tensors"] == 2
    assert caps["mmproj.gguf"]["vision_projector"] and caps["mmproj.gguf"]["architecture"] == "clip"
    assert caps["metadata_only.gguf"]["chat_template"]
    assert not any([caps["rich.gguf"]["mtp_head"], caps["rich.gguf"]["dflash_draft"],
                    caps["rich.gguf"]["vision_projector"]])


def test_text_report_escapes_what_would_act_on_a_terminal(tmp_path):
    # Issue 20: keys, string values and tensor names reached the terminal raw, escape sequences included.
    path = tmp_path / "escapes.gguf"
    w = gguf.GGUFWriter(str(path), "llama\x1b]0;owned\x07")
    w.add_string("evil.\x1b[2Jkey", "value \x1b[31mred\x1b[0m \x9b1m c1 \x7f del")
    w.add_array("evil.list", ["a\x1bb", "ok"])
    w.add_tensor("blk.\x1b[1mbold", np.zeros(4, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    out = subprocess.run([BIN / "ember-gguf", "inspect", str(path)], check=True, capture_output=True).stdout
    text = out.decode("utf-8")
    assert not any(ord(c) < 0x20 and c != "\n" or 0x7F <= ord(c) <= 0x9F for c in text), repr(text)
    assert "evil.\\x1b[2Jkey" in text
    assert "value \\x1b[31mred\\x1b[0m \\u009b1m c1 \\x7f del" in text
    assert '"a\\x1bb"' in text
    assert "blk.\\x1b[1mbold" in text
    assert "llama\\x1b]0;owned\\x07" in text


def tokenizer_file(path: Path, model: str | None, pre: str | None) -> Path:
    w = gguf.GGUFWriter(str(path), "llama")
    if model is not None:
        w.add_tokenizer_model(model)
    if pre is not None:
        w.add_tokenizer_pre(pre)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.mark.parametrize("model,pre,line,known", [
    ("gpt2", "qwen2", "pre-tokenizer          qwen2 (Ember knows it)", True),
    ("gpt2", "kimi-k2", "pre-tokenizer          kimi-k2 (Ember knows it)", True),
    ("gpt2", "grok-2", "pre-tokenizer          grok-2 (Ember does not know it)", False),
    ("gpt2", None, "pre-tokenizer          (missing: Ember needs one for byte-level BPE)", False),
    ("llama", "default", "pre-tokenizer          default (not used by this tokenizer model)", False),
    ("gpt2", "x\x1b[2Jy", "pre-tokenizer          x\\x1b[2Jy (Ember does not know it)", False),
])
def test_inspect_says_which_pre_tokenizer_a_file_uses_and_whether_ember_knows_it(tmp_path, model, pre, line, known):
    path = tokenizer_file(tmp_path / "tok.gguf", model, pre)
    out = subprocess.run([BIN / "ember-gguf", "inspect", str(path)], check=True, capture_output=True,
                         text=True).stdout
    assert f"  tokenizer              {model}\n" in out
    assert f"  {line}\n" in out
    caps = inspect_json(path)["capabilities"]
    assert caps["tokenizer_model"] == model and caps["tokenizer_model_known"]
    assert caps["pre_tokenizer"] == pre and caps["pre_tokenizer_known"] == known


def test_inspect_without_a_tokenizer(tmp_path):
    path = tokenizer_file(tmp_path / "none.gguf", None, None)
    out = subprocess.run([BIN / "ember-gguf", "inspect", str(path)], check=True, capture_output=True,
                         text=True).stdout
    assert "  tokenizer              (none)\n" in out and "pre-tokenizer" not in out
    caps = inspect_json(path)["capabilities"]
    assert caps["tokenizer_model"] is None and caps["pre_tokenizer"] is None
    path = tokenizer_file(tmp_path / "bert.gguf", "bert", None)
    out = subprocess.run([BIN / "ember-gguf", "inspect", str(path)], check=True, capture_output=True,
                         text=True).stdout
    assert "  tokenizer              bert (Ember does not know it)\n" in out
    assert not inspect_json(path)["capabilities"]["tokenizer_model_known"]
