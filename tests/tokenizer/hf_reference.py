# SPDX-License-Identifier: MIT
"""Hugging Face `tokenizers` pipelines equivalent to each tokenizer.ggml.pre preset, built from the public
tokenizer.json definitions of those models, and a runner for Ember's tokenizer_probe."""
import json
import os
import subprocess
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

BIN = Path(os.environ["EMBER_BIN"])
FIXTURES = Path(os.environ["EMBER_FIXTURES"]) / "tokenizer"
SHARED = Path(os.environ.get("EMBER_SHARED_DATA", Path(__file__).resolve().parents[3] / "shared" / "data"))
VOCAB = SHARED / "vocab"

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
         r"|\s+(?!\S)|\s+")
QWEN35 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
DEEPSEEK_CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+"
DEEPSEEK_LLM = [
    "[\r\n]",
    "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373"
    "\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f"
    "\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77"
    "\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d"
    "\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4"
    "\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139"
    "\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d"
    "\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a"
    "\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2"
    "\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+",
    "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+",
    "\\s+$",
    DEEPSEEK_CJK,
    "\\p{N}+",
]
DEEPSEEK_CODER = ["[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", DEEPSEEK_CJK, "\\p{N}"]


def _split(pattern: str) -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False)


def _byte_level(use_regex: bool) -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=use_regex)


def pre_tokenizer(name: str) -> pre_tokenizers.PreTokenizer:
    """The pre-tokenizer of the model a tokenizer.ggml.pre value stands for, ByteLevel included."""
    seq = pre_tokenizers.Sequence
    if name == "gpt-2":
        return _byte_level(True)
    if name in ("llama-bpe", "llama3"):
        return seq([_split(LLAMA3), _byte_level(False)])
    if name == "qwen2":
        return seq([_split(QWEN2), _byte_level(False)])
    if name == "qwen35":
        return seq([_split(QWEN35), _byte_level(False)])
    if name == "smollm":
        return seq([pre_tokenizers.Digits(individual_digits=True), _byte_level(True)])
    if name == "deepseek-llm":
        return seq([_split(p) for p in DEEPSEEK_LLM] + [_byte_level(False)])
    if name == "deepseek-coder":
        return seq([_split(p) for p in DEEPSEEK_CODER] + [_byte_level(False)])
    if name == "falcon":
        return seq([pre_tokenizers.Punctuation("contiguous"), _byte_level(True),
                    pre_tokenizers.Digits(individual_digits=False), _split("[0-9][0-9][0-9]")])
    raise KeyError(name)


NFC_PRESETS = {"qwen2"}
IGNORE_MERGES_PRESETS = {"llama-bpe", "llama3"}


def bytes_to_unicode() -> dict[int, str]:
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, n = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + n)
            n += 1
    return table


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
    model = models.BPE(vocab=vocab, merges=merges, ignore_merges=pre in IGNORE_MERGES_PRESETS)
    tok = Tokenizer(model)
    if pre in NFC_PRESETS:
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
