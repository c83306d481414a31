#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the chat tests' fixtures, with the `gguf` package as the independent GGUF writer.

    make_chat_fixtures.py OUT_DIR TEMPLATES_DIR

OUT_DIR/special_tokens.json        bos/eos per template, taken from TEMPLATES_DIR/render_golden.py (the golden setup)
OUT_DIR/with_template.gguf         tokenizer.chat_template using bos/eos, and tokens with bos/eos ids set
OUT_DIR/qwen3.6.gguf               the real Qwen3.6 template embedded, as a model file carries it
OUT_DIR/without_template.gguf      tokens but no chat template
OUT_DIR/bad_eos.gguf               an eos id outside the token list
OUT_DIR/jinja_seeds/               the templates of jinja_cases.json, one file each (fuzzer seeds)
OUT_DIR/hostile_seeds/             small GGUFs carrying the hostile templates of hostile_template_test.py (GGUF
                                   fuzzer seeds)
"""
import importlib.util
import json
import sys
from pathlib import Path

import gguf

TOKENS = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "hello", "wörld"]

BOS_EOS_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
    "{% if add_generation_prompt %}[assistant]{% else %}{{ eos_token }}{% endif %}"
)


def write_model(path: Path, template: str | None, eos_id: int = 4) -> None:
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tokenizer_model("gpt2")
    w.add_token_list(TOKENS)
    w.add_bos_token_id(1)
    w.add_eos_token_id(eos_id)
    if template is not None:
        w.add_chat_template(template)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main() -> int:
    out, templates = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    spec = importlib.util.spec_from_file_location("render_golden", templates / "render_golden.py")
    render_golden = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(render_golden)
    (out / "special_tokens.json").write_text(json.dumps(render_golden.SPECIAL_TOKENS, ensure_ascii=False, indent=1),
                                             encoding="utf-8")
    write_model(out / "with_template.gguf", BOS_EOS_TEMPLATE)
    write_model(out / "qwen3.6.gguf", (templates / "qwen3.6.jinja").read_text(encoding="utf-8"))
    write_model(out / "without_template.gguf", None)
    write_model(out / "bad_eos.gguf", BOS_EOS_TEMPLATE, eos_id=99)
    seeds = out / "jinja_seeds"
    seeds.mkdir(exist_ok=True)
    cases = json.loads((Path(__file__).parent / "jinja_cases.json").read_text(encoding="utf-8"))["cases"]
    for case in cases:
        (seeds / f"{case['name']}.jinja").write_text(case["template"], encoding="utf-8")
    hostile_spec = importlib.util.spec_from_file_location("hostile", Path(__file__).parent / "hostile_templates.py")
    hostile = importlib.util.module_from_spec(hostile_spec)
    hostile_spec.loader.exec_module(hostile)
    (out / "hostile_seeds").mkdir(exist_ok=True)
    for name, (template, _) in hostile.HOSTILE.items():
        write_model(out / "hostile_seeds" / f"{name}.gguf", template)
        (seeds / f"hostile_{name}.jinja").write_text(template, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
