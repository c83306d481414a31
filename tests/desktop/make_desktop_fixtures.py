#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Scripted models for the desktop tests: tiny llama GGUFs whose greedy output is a known text, so that the app's
streaming, thinking, stop and recovery paths can be checked against exact expectations.

    make_desktop_fixtures.py OUT_DIR

OUT_DIR/scripted.gguf          answers with reasoning, then a short Markdown answer with a Python code block, then
                               ends (<|im_end|>)
OUT_DIR/scripted-endless.gguf  the same, but the answer never ends (a cycle of three words): for stop, context and
                               kill-during-write tests
OUT_DIR/scripted-plain.gguf    the finite model with a plain ChatML template (no thinking, no preserve_thinking)
OUT_DIR/expected.json          the reasoning and content each model produces, and token counts

How the script works: attention and feed-forward outputs are zero (attn_output and ffn_down are zero matrices), so
the residual stream after every layer is the current token's embedding. Each token of the script has a one-hot
embedding, and the output matrix maps that direction to the next token of the script with a large logit. The next
token therefore depends only on the current one, and the output is a fixed chain. The feed-forward layers are wide
(with zero output) only to give each token a realistic cost, so that a stop can land mid-answer.

The template opens "<think>\n" in the generation prompt when thinking is on (the prompt then ends in the token
"\n", which starts the reasoning chain) and writes "<think>\n\n</think>\n\n" when enable_thinking is false (the
prompt then ends in "\n\n", which starts the answer chain). With preserve_thinking, past reasoning is written back
exactly as it was generated, and the reasoning words are BPE-reachable tokens, so the next turn re-encodes them to
the same tokens and the session reuses them: the test checks this with Hugging Face `tokenizers` as reference.
"""
import json
import sys
from pathlib import Path

import numpy as np
import gguf
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fixtures"))
from make_model_fixtures import byte_symbols, finish_gguf  # noqa: E402  (GPT-2's byte-level alphabet)

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

THINKING_TEMPLATE = (
    "{%- for message in messages -%}"
    "{%- if message.role == 'assistant' -%}"
    "{{- '<|im_start|>assistant\\n' -}}"
    "{%- if preserve_thinking is defined and preserve_thinking and message.reasoning_content is defined "
    "and message.reasoning_content -%}"
    "{{- '<think>\\n' + message.reasoning_content + '</think>\\n\\n' -}}"
    "{%- endif -%}"
    "{{- message.content + '<|im_end|>\\n' -}}"
    "{%- else -%}"
    "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}"
    "{{- '<|im_start|>assistant\\n' -}}"
    "{%- if enable_thinking is defined and enable_thinking is false -%}"
    "{{- '<think>\\n\\n</think>\\n\\n' -}}"
    "{%- else -%}"
    "{{- '<think>\\n' -}}"
    "{%- endif -%}"
    "{%- endif -%}")

CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")

# The script as plain text pieces, one token each (turned into byte-level symbols by `symbols`).
REASONING_TEXT = ["Let", " me", " consider", " the", " request", ".</", "think", ">"]  # pre-tokenizer pieces
ANSWER_TEXT = ["Here", " is", " a", " small", " function", " that", " adds", " two", " numbers:", "\n\n```python\n",
               "def add(a, b):\n", "    return a + b\n", "```\n\n", "Call `add(2, 3)`", " to", " get", " **5**."]
CYCLE_TEXT = [" And", " more", " words."]

N_EMBD, N_HEAD, N_FF, N_LAYER, N_CTX = 128, 4, 1536, 4, 8192


def symbols(text: str) -> str:
    table = byte_symbols()
    return "".join(table[b] for b in text.encode("utf-8"))


REASONING = [symbols(t) for t in REASONING_TEXT]
ANSWER = [symbols(t) for t in ANSWER_TEXT]
CYCLE = [symbols(t) for t in CYCLE_TEXT]


def build_vocabulary():
    """Byte tokens, merge chains that make each reasoning piece one token, "ĊĊ", the answer tokens, specials."""
    tokens = byte_symbols()
    merges = []
    for piece in REASONING + ["ĊĊ"]:
        for end in range(2, len(piece) + 1):
            left, right, whole = piece[:end - 1], piece[end - 1], piece[:end]
            if whole not in tokens:
                tokens.append(whole)
                merges.append((left, right))
    for piece in ANSWER + CYCLE:
        assert piece not in tokens, f"answer token {piece!r} is not unique"
        tokens.append(piece)
    types = [1] * len(tokens)
    for s in SPECIALS:
        tokens.append(s)
        types.append(3)
    return tokens, types, merges


def hf_tokenizer(tokens, merges) -> Tokenizer:
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens) if t not in SPECIALS}, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    for s in SPECIALS:
        tok.add_tokens([AddedToken(s, special=True, normalized=False)])
    return tok


def chain(tokens, endless: bool) -> dict[int, int]:
    """successor[token id] for the scripted output."""
    ids = {t: i for i, t in enumerate(tokens)}
    succ = {}
    seq = ["Ċ"] + REASONING + ["ĊĊ"] + ANSWER
    for a, b in zip(seq, seq[1:]):
        assert ids[a] not in succ, f"{a!r} has two successors"
        succ[ids[a]] = ids[b]
    if endless:
        ring = [ANSWER[-1]] + CYCLE + [CYCLE[0]]
        for a, b in zip(ring, ring[1:]):
            succ[ids[a]] = ids[b]
    else:
        succ[ids[ANSWER[-1]]] = ids["<|im_end|>"]
    return succ


def write_model(path: Path, tokens, types, merges, endless: bool, template: str) -> None:
    rng = np.random.default_rng(11)
    n_vocab = len(tokens)
    succ = chain(tokens, endless)
    predecessors = sorted(succ)
    assert len(predecessors) <= N_EMBD
    direction = {tid: k for k, tid in enumerate(predecessors)}
    embd = rng.normal(0.0, 0.02, size=(n_vocab, N_EMBD))
    for tid, k in direction.items():
        embd[tid] = 0.0
        embd[tid, k] = 1.0
    out = np.zeros((n_vocab, N_EMBD))
    for tid, nxt in succ.items():
        out[nxt, direction[tid]] += 4.0  # rms-normalised one-hot is sqrt(128) ≈ 11.3: a logit of about 45

    head_dim = N_EMBD // N_HEAD
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("scripted " + path.stem)
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(N_LAYER)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(10000.0)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges([f"{a} {b}" for a, b in merges])
    w.add_bos_token_id(tokens.index("<|im_start|>"))
    w.add_eos_token_id(tokens.index("<|im_end|>"))
    w.add_add_bos_token(False)
    w.add_chat_template(template)

    f32 = lambda a: np.asarray(a, dtype=np.float32)  # noqa: E731
    w.add_tensor("token_embd.weight", f32(embd))
    w.add_tensor("output_norm.weight", f32(np.ones(N_EMBD)))
    w.add_tensor("output.weight", f32(out))
    for i in range(N_LAYER):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", f32(np.ones(N_EMBD)))
        for name in ("attn_q", "attn_k", "attn_v"):
            w.add_tensor(b + name + ".weight", f32(rng.normal(0, 0.05, size=(N_EMBD, N_EMBD))).astype(np.float16))
        w.add_tensor(b + "attn_output.weight", np.zeros((N_EMBD, N_EMBD), dtype=np.float16))
        w.add_tensor(b + "ffn_norm.weight", f32(np.ones(N_EMBD)))
        w.add_tensor(b + "ffn_gate.weight", f32(rng.normal(0, 0.05, size=(N_FF, N_EMBD))).astype(np.float16))
        w.add_tensor(b + "ffn_up.weight", f32(rng.normal(0, 0.05, size=(N_FF, N_EMBD))).astype(np.float16))
        w.add_tensor(b + "ffn_down.weight", np.zeros((N_EMBD, N_FF), dtype=np.float16))
    finish_gguf(w)


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    tokens, types, merges = build_vocabulary()

    # The reference tokenizer must give the prompt endings and the written-back reasoning the tokens the script
    # relies on; otherwise the fixture would test nothing.
    hf = hf_tokenizer(tokens, merges)
    ids = {t: i for i, t in enumerate(tokens)}
    assert hf.encode("<|im_start|>assistant\n<think>\n").ids[-1] == ids["Ċ"]
    assert hf.encode("<think>\n\n</think>\n\n").ids[-1] == ids["ĊĊ"]
    reasoning = "".join(REASONING_TEXT[:5]) + "."
    written_back = hf.encode("".join(REASONING_TEXT)).ids
    assert written_back == [ids[p] for p in REASONING], (written_back, [ids[p] for p in REASONING])

    write_model(out / "scripted.gguf", tokens, types, merges, endless=False, template=THINKING_TEMPLATE)
    write_model(out / "scripted-endless.gguf", tokens, types, merges, endless=True, template=THINKING_TEMPLATE)
    write_model(out / "scripted-plain.gguf", tokens, types, merges, endless=False, template=CHATML)
    expected = {
        "reasoning": reasoning,
        "answer": "".join(ANSWER_TEXT),
        "cycle": "".join(CYCLE_TEXT),
        "reasoning_tokens": len(REASONING),
        "answer_tokens": len(ANSWER),
        # Generated tokens of a thinking turn: reasoning pieces, "\n\n", the answer.
        "thinking_turn_tokens": len(REASONING) + 1 + len(ANSWER),
        "n_ctx_train": N_CTX,
    }
    (out / "expected.json").write_text(json.dumps(expected, indent=2))
    print(f"wrote desktop fixtures to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
