# SPDX-License-Identifier: MIT
"""ember-cli tokenize: its output formats, flags and errors, with ids checked against Hugging Face `tokenizers`
and the ggml-vocab reference ids.

Environment: EMBER_BIN, EMBER_FIXTURES (make_tokenizer_fixtures.py output under tokenizer/), EMBER_SHARED_DATA.
"""
import json
import subprocess
import sys
from pathlib import Path

import gguf
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from hf_reference import BIN, FIXTURES, VOCAB, hf_bpe, read_bpe_files  # noqa: E402
from make_tokenizer_fixtures import QWEN_ADDED  # noqa: E402

GGML = VOCAB / "ggml-vocab"


def tokenize(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([str(BIN / "ember-cli"), "tokenize", *args], capture_output=True, text=True,
                            encoding="utf-8", errors="surrogateescape")
    if check:
        assert result.returncode == 0, result.stderr
    return result


def test_json_output_matches_hugging_face_with_special_tokens_parsed():
    tokens, merges = read_bpe_files(VOCAB / "qwen2.5-qwen3")
    reference = hf_bpe(tokens, merges, "qwen2", [(len(tokens) + i, t, s) for i, (t, s) in enumerate(QWEN_ADDED)])
    prompt = "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nWie geht's? 你好 🦙<|im_end|>\n"
    out = tokenize("-m", str(FIXTURES / "qwen2.gguf"), "--text", prompt, "--json").stdout
    assert out == json.dumps({"ids": reference.encode(prompt).ids}) + "\n"
    assert json.loads(out)["ids"][0] == 151644


def test_no_parse_special_keeps_special_token_text_plain():
    text = "<|im_start|>user"
    ids = json.loads(tokenize("-m", str(FIXTURES / "qwen2.gguf"), "--text", text, "--json",
                              "--no-parse-special").stdout)["ids"]
    tokens, merges = read_bpe_files(VOCAB / "qwen2.5-qwen3")
    assert ids == hf_bpe(tokens, merges, "qwen2").encode(text).ids


def test_no_special_adds_no_bos():
    # llama-spm adds BOS (add_bos_token true); its .out holds the ids without it ("Hello world" is text 12).
    texts = (GGML / "ggml-vocab-llama-spm.gguf.inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    expected = [[int(x) for x in line.split()]
                for line in (GGML / "ggml-vocab-llama-spm.gguf.out").read_text().split("\n")]
    i = texts.index("Hello world")
    model = str(GGML / "ggml-vocab-llama-spm.gguf")
    assert json.loads(tokenize("-m", model, "--text", texts[i], "--json").stdout)["ids"] == [1] + expected[i]
    assert json.loads(tokenize("-m", model, "--text", texts[i], "--json", "--no-special").stdout)["ids"] == expected[i]


def test_plain_output_lists_ids_and_quoted_pieces():
    out = tokenize("-m", str(GGML / "ggml-vocab-gpt-2.gguf"), "--text", "Hello world\n\tit's").stdout
    assert out == "15496\t'Hello'\n995\t' world'\n198\t'\\n'\n197\t'\\t'\n270\t'it'\n338\t'\\'s'\n"
    # A token that is part of a UTF-8 sequence shows its bytes escaped; control tokens show their text.
    out = tokenize("-m", str(FIXTURES / "qwen2.gguf"), "--text", " 🦙<|im_end|>").stdout
    assert out == "11162\t' \\xf0\\x9f'\n99\t'\\xa6'\n247\t'\\x99'\n151645\t'<|im_end|>'\n"


def test_file_input_is_read_byte_for_byte(tmp_path):
    text = "line one\r\nline two\n\n  tabs\there\nünïcödé 日本語\n"
    path = tmp_path / "input.txt"
    path.write_bytes(text.encode("utf-8") + b"\xff\xfe tail")
    model = str(FIXTURES / "qwen2.gguf")
    from_file = json.loads(tokenize("-m", model, "--file", str(path), "--json").stdout)["ids"]
    from_text = json.loads(tokenize("-m", model, "--text", text, "--json").stdout)["ids"]
    assert from_file[:len(from_text)] == from_text
    assert len(from_file) > len(from_text)


@pytest.mark.parametrize("args", [[], ["-m"], ["--text", "x"], ["-m", "f.gguf"], ["-m", "f.gguf", "--text", "a",
                                  "--file", "b"], ["-m", "f.gguf", "--text", "a", "--bogus"]])
def test_usage_errors_exit_with_2(args):
    result = tokenize(*args, check=False)
    assert result.returncode == 2
    assert "usage: ember-cli tokenize" in result.stderr
    assert result.stdout == ""


def test_bad_files_give_one_line_errors(tmp_path):
    missing = tmp_path / "missing.gguf"
    result = tokenize("-m", str(missing), "--text", "a", check=False)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and str(missing) in result.stderr

    no_tokenizer = tmp_path / "weights-only.gguf"
    w = gguf.GGUFWriter(str(no_tokenizer), "llama")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    result = tokenize("-m", str(no_tokenizer), "--text", "a", check=False)
    assert result.returncode == 1
    assert result.stderr == f"{no_tokenizer}: tokenizer: missing key 'tokenizer.ggml.model'\n"

    result = tokenize("-m", str(FIXTURES / "qwen2.gguf"), "--file", str(tmp_path / "nope.txt"), check=False)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "nope.txt" in result.stderr
