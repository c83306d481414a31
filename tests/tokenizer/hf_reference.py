# SPDX-License-Identifier: MIT
"""Hugging Face `tokenizers` BPE tokenizers equivalent to a GGUF's (the pipelines of each tokenizer.ggml.pre name are
in tokenizer_families.py), and a runner for Ember's tokenizer_probe."""
import json
import os
import subprocess
import unicodedata
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers

from make_model_fixtures import byte_symbols  # the importing tests put tests/fixtures on sys.path
from tokenizer_families import IGNORE_MERGES_FAMILIES, NFC_FAMILIES, family, pre_tokenizer

BIN = Path(os.environ["EMBER_BIN"])
FIXTURES = Path(os.environ["EMBER_FIXTURES"]) / "tokenizer"
SHARED = Path(os.environ.get("EMBER_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
VOCAB = SHARED / "vocab"


def bytes_to_unicode() -> dict[int, str]:
    return dict(enumerate(byte_symbols()))


UNICODE_TO_BYTE = {c: b for b, c in bytes_to_unicode().items()}


def byte_level_piece_to_bytes(piece: str) -> bytes:
    return bytes(UNICODE_TO_BYTE[c] for c in piece)


def hf_pieces(pre: pre_tokenizers.PreTokenizer, text: str) -> list[bytes]:
    """The pieces as raw bytes (every preset ends its pipeline in byte-level form)."""
    return [byte_level_piece_to_bytes(p) for p, _ in pre.pre_tokenize_str(text)]


def hf_bpe(tokens: list[str], merges: list[tuple[str, str]], pre: str,
           added: list[tuple[int, str, bool]] = ()) -> Tokenizer:
    """A byte-level BPE tokenizer as the model's tokenizer.json defines it. `added`: (id, text, special), either
    already in `tokens` or numbered on from its end."""
    vocab = {t: i for i, t in enumerate(tokens)}
    model = models.BPE(vocab=vocab, merges=merges, ignore_merges=family(pre) in IGNORE_MERGES_FAMILIES)
    tok = Tokenizer(model)
    if family(pre) in NFC_FAMILIES:
        tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizer(pre)
    tok.decoder = decoders.ByteLevel()
    for i, text, special in sorted(added):
        assert tok.add_tokens([AddedToken(text, special=special, normalized=False)]) == 1
        assert tok.token_to_id(text) == i, (text, i, tok.token_to_id(text))
    return tok


def read_bpe_files(folder: Path) -> tuple[list[str], list[tuple[str, str]]]:
    vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    tokens = [None] * len(vocab)
    for text, i in vocab.items():
        tokens[i] = text
    merges = []
    for line in (folder / "merges.txt").read_text(encoding="utf-8").split("\n"):
        if line and not line.startswith("#version"):
            a, b = line.split(" ")
            merges.append((a, b))
    return tokens, merges


def run_probe(args: list[str], requests: list[dict]) -> list[dict]:
    """Ember's tokenizer over JSON-lines requests in one process (see tokenizer_probe.cpp)."""
    payload = "".join(json.dumps(r) + "\n" for r in requests)
    result = subprocess.run([str(BIN / "tokenizer_probe"), *args], input=payload, capture_output=True, text=True,
                            encoding="utf-8", check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("\n")[:-1]  # not splitlines(): U+2028 and U+0085 inside strings are no breaks
    assert len(lines) == len(requests)
    return [json.loads(line) for line in lines]


def ember_encode(model: Path, texts: list[str], add_special=False, parse_special=False, special=False) -> list[dict]:
    return run_probe([str(model)], [{"text": t, "add_special": add_special, "parse_special": parse_special,
                                     "special": special} for t in texts])


def ember_pieces(pre: str, texts: list[str]) -> list[list[bytes]]:
    results = run_probe(["--pre", pre], [{"text": t} for t in texts])
    out = []
    for text, r in zip(texts, results):
        raw = text.encode("utf-8")
        out.append([raw[o:o + n] for o, n in r["pieces"]])
    return out


def first_difference(texts, ours, theirs):
    for text, a, b in zip(texts, ours, theirs):
        if a != b:
            i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            return f"text {text[:80]!r}: first difference at {i}: ember {a[i:i + 6]} hf {b[i:i + 6]}"
    return None


def count_differences(ours, theirs):
    return sum(a != b for a, b in zip(ours, theirs))


def split_off_old_nfc(texts: list[str]) -> tuple[list[str], list[str]]:
    """(texts, the rest): Hugging Face's NFC normalizer has old Unicode data: it does not reorder a few combining
    marks added in recent versions, as NFC (Python's, ICU's and so Ember's) does. Those are for the round trip."""
    nfc = normalizers.NFC()
    old_nfc = [t for t in texts if nfc.normalize_str(t) != unicodedata.normalize("NFC", t)]
    assert len(old_nfc) <= 10, old_nfc
    return [t for t in texts if t not in old_nfc], old_nfc
