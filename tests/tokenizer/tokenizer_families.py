# SPDX-License-Identifier: MIT
"""The Hugging Face `tokenizers` pipeline each tokenizer.ggml.pre name stands for, built as the model family's
tokenizer.json defines it (pre_tokenizer, NFC normalizer, BPE ignore_merges), or as its tokenizer code does where
the family ships tiktoken files (a tiktoken piece that is a token is taken whole: ignore_merges)."""
from tokenizers import Regex, pre_tokenizers

GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
         r"|\s+(?!\S)|\s+")
QWEN35 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")
O200K = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
TEKKEN = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
          r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
          r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# tokenization_kimi.py's pat_str, its eight parts joined by '|'.
KIMI_K2 = "|".join([
    r"[\p{Han}]+",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"\s*[\r\n]+",
    r"\s+(?!\S)",
    r"\s+",
])
SEED_CODER = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+"
              r"|\s+(?!\S)|\s+")
BLOOM = r" ?[^(\s|[.,!?…。，、।۔،])]+"
# Chameleon's Splits before its ByteLevel (with regex).
CHAMELEON = [r"<sentinel:[0-9]+>", r"(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\t\n]|    |  )", r"\p{N}",
             r"[\p{P}!-/:-@\[-`{-~]"]
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

# Names converters give a tokenizer.json whose pipeline is that of another name.
SAME_PIPELINE = {
    "llama3": "llama-bpe", "llama-v3": "llama-bpe",
    "phi-2": "gpt-2", "jais": "gpt-2",
    "olmo": "mpt",
    "smaug-bpe": "dbrx", "chatglm-bpe": "dbrx", "glm4": "dbrx",
    "deepseek-r1-qwen": "qwen2",
    "hunyuan": "stablelm2",
    "starcoder": "smollm", "refact": "smollm", "codeshell": "smollm", "exaone": "smollm", "minerva-7b": "smollm",
    "gpt-oss": "gpt-4o", "llama4": "gpt-4o",
    "poro-chat": "bloom", "gpt3-finnish": "bloom",
}
FAMILIES = ["gpt-2", "mpt", "llama-bpe", "dbrx", "qwen2", "stablelm2", "qwen35", "smollm", "command-r", "gpt-4o",
            "tekken", "kimi-k2", "seed-coder", "bloom", "viking", "chameleon", "deepseek-llm", "deepseek-coder",
            "falcon"]
NAMES = FAMILIES + sorted(SAME_PIPELINE)
NFC_FAMILIES = {"mpt", "qwen2", "stablelm2", "command-r"}
IGNORE_MERGES_FAMILIES = {"llama-bpe", "stablelm2", "gpt-4o", "tekken", "kimi-k2"}


def family(name: str) -> str:
    return SAME_PIPELINE.get(name, name)


def _split(pattern: str) -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False)


def _byte_level(use_regex: bool) -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=use_regex)


def _split_then_byte_level(*patterns: str) -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.Sequence([_split(p) for p in patterns] + [_byte_level(False)])


def pre_tokenizer(name: str) -> pre_tokenizers.PreTokenizer:
    """The pre-tokenizer of the model a tokenizer.ggml.pre value stands for, ByteLevel included."""
    seq = pre_tokenizers.Sequence
    digits = pre_tokenizers.Digits(individual_digits=True)
    pipelines = {
        "gpt-2": lambda: _byte_level(True),
        "mpt": lambda: _byte_level(True),
        "llama-bpe": lambda: _split_then_byte_level(LLAMA3),
        "dbrx": lambda: _split_then_byte_level(LLAMA3),
        "qwen2": lambda: _split_then_byte_level(QWEN2),
        "stablelm2": lambda: _split_then_byte_level(QWEN2),
        "qwen35": lambda: _split_then_byte_level(QWEN35),
        "smollm": lambda: seq([digits, _byte_level(True)]),
        "command-r": lambda: seq([digits, _byte_level(True)]),
        "gpt-4o": lambda: _split_then_byte_level(O200K),
        "tekken": lambda: _split_then_byte_level(TEKKEN),
        "kimi-k2": lambda: _split_then_byte_level(KIMI_K2),
        "seed-coder": lambda: _split_then_byte_level(SEED_CODER),
        "bloom": lambda: _split_then_byte_level(BLOOM),
        "viking": lambda: seq([_split(BLOOM), digits, _byte_level(False)]),
        "chameleon": lambda: seq([_split(p) for p in CHAMELEON] + [_byte_level(True)]),
        "deepseek-llm": lambda: _split_then_byte_level(*DEEPSEEK_LLM),
        "deepseek-coder": lambda: _split_then_byte_level(*DEEPSEEK_CODER),
        "falcon": lambda: seq([pre_tokenizers.Punctuation("contiguous"), _byte_level(True),
                               pre_tokenizers.Digits(individual_digits=False), _split("[0-9][0-9][0-9]")]),
    }
    return pipelines[family(name)]()
