#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A scripted tool-calling model for the server tests: a tiny llama GGUF whose greedy output is fixed text.

    make_server_fixtures.py OUT_DIR

OUT_DIR/scripted-tools.gguf   asked a question, it calls get_weather({"city": "Paris"}) in the JSON tool-call
                              form; given the tool's result, it answers "The weather in Paris is sunny."
OUT_DIR/expected.json         the call and the answer

The model works as make_desktop_fixtures.py explains (each token's one-hot embedding maps to its successor). Its
template renders the tools and past tool calls as Qwen's JSON form does, and its generation prompt after a tool
result ends in "\\n\\n" (one token) instead of "\\n": the two prompt endings start the two scripted chains.
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "desktop"))
import make_desktop_fixtures as desk  # noqa: E402  (the scripted-model writer and its vocabulary helpers)

TEMPLATE = (
    "{%- if tools -%}"
    "{{- '<|im_start|>system\\n# Tools\\n<tools>\\n' -}}"
    "{%- for tool in tools -%}{{- tool | tojson -}}{{- '\\n' -}}{%- endfor -%}"
    "{{- '</tools><|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- for message in messages -%}"
    "{%- if message.role == 'assistant' and message.tool_calls is defined and message.tool_calls -%}"
    "{{- '<|im_start|>assistant\\n' -}}"
    "{%- for call in message.tool_calls -%}"
    "{{- '<tool_call>\\n' + ({'name': call.function.name, 'arguments': call.function.arguments} | tojson) + "
    "'\\n</tool_call>' -}}"
    "{%- endfor -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- elif message.role == 'tool' -%}"
    "{{- '<|im_start|>user\\n<tool_response>\\n' + message.content + '\\n</tool_response><|im_end|>\\n' -}}"
    "{%- else -%}"
    "{{- '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}"
    "{%- if messages[-1].role == 'tool' -%}{{- '<|im_start|>assistant\\n\\n' -}}"
    "{%- else -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
    "{%- endif -%}")

CALL_TEXT = ["<tool_call>\n", "{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Paris\"}}\n", "</tool_call>"]
ANSWER_TEXT = ["The", " weather", " in", " Paris", " is", " sunny."]


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    call = [desk.symbols(t) for t in CALL_TEXT]
    answer = [desk.symbols(t) for t in ANSWER_TEXT]
    tokens = desk.byte_symbols()
    merges = [("Ċ", "Ċ")]
    tokens.append("ĊĊ")
    for piece in call + answer:
        assert piece not in tokens, piece
        tokens.append(piece)
    types = [1] * len(tokens)
    for s in desk.SPECIALS:
        tokens.append(s)
        types.append(3)

    ids = {t: i for i, t in enumerate(tokens)}
    hf = desk.hf_tokenizer(tokens, merges)
    assert hf.encode("<|im_start|>assistant\n").ids[-1] == ids["Ċ"]
    assert hf.encode("</tool_response><|im_end|>\n<|im_start|>assistant\n\n").ids[-1] == ids["ĊĊ"]

    def script(tokens_, endless):  # successor of each scripted token, replacing the desktop fixture's chain
        succ = {}
        for seq in (["Ċ"] + call + ["<|im_end|>"], ["ĊĊ"] + answer + ["<|im_end|>"]):
            for a, b in zip(seq, seq[1:]):
                succ[ids[a]] = ids[b]
        return succ

    desk.chain = script
    desk.write_model(out / "scripted-tools.gguf", tokens, types, merges, endless=False, template=TEMPLATE)
    expected = {"call": {"name": "get_weather", "arguments": {"city": "Paris"}}, "answer": "".join(ANSWER_TEXT)}
    (out / "expected.json").write_text(json.dumps(expected, indent=2))
    print(f"wrote server fixtures to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
