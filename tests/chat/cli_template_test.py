# SPDX-License-Identifier: MIT
"""ember-cli template: prints the rendered prompt exactly (no added newline) for every template and conversation
of shared/data/templates (the golden files), with a model's embedded template and tokens (-m), a template file
(--template), and clear one-line errors with exit codes 1 (bad input) and 2 (usage)."""
import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest

TEMPLATES = Path(os.environ["EMBER_SHARED_DATA"]) / "templates"
CLI = Path(os.environ["EMBER_BIN"]) / "ember-cli"
FIXTURES = Path(os.environ["EMBER_FIXTURES"]) / "chat"
CONVERSATIONS = json.loads((TEMPLATES / "conversations.json").read_text(encoding="utf-8"))
NOW = ["--now", "2025-01-15T12:00:00"]  # render_golden.py's pinned clock

_spec = importlib.util.spec_from_file_location("render_golden", TEMPLATES / "render_golden.py")
render_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(render_golden)


def run(*args):
    return subprocess.run([str(CLI), "template", *map(str, args)], capture_output=True)


def expected_errors():
    errors = {}
    for line in (TEMPLATES / "golden" / "ERRORS.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            template, conversation, tag, message = line.split("\t", 3)
            errors[(template, conversation, tag)] = message.split(": ", 1)[1]
    return errors


@pytest.fixture(scope="module")
def conversation_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("conversations")
    files = {}
    for conv in CONVERSATIONS:
        files[conv["name"]] = folder / f"{conv['name']}.json"
        files[conv["name"]].write_text(json.dumps(conv, ensure_ascii=False), encoding="utf-8")
    return files


@pytest.mark.parametrize("template", sorted(p.stem for p in TEMPLATES.glob("*.jinja")))
def test_every_golden_through_the_cli(template, conversation_files):
    tokens = render_golden.SPECIAL_TOKENS.get(template, {})
    errors = expected_errors()
    for conv in CONVERSATIONS:
        for gen in (True, False):
            tag = "gen" if gen else "nogen"
            args = ["--messages", conversation_files[conv["name"]], "--template", TEMPLATES / f"{template}.jinja", *NOW]
            if tokens.get("bos_token"):
                args += ["--bos-token", tokens["bos_token"]]
            if tokens.get("eos_token"):
                args += ["--eos-token", tokens["eos_token"]]
            if not gen:
                args.append("--no-generation-prompt")
            proc = run(*args)
            key = (template, conv["name"], tag)
            if key in errors:
                stderr = proc.stderr.decode("utf-8")
                assert proc.returncode == 1 and proc.stdout == b"", key
                assert errors[key] in stderr and stderr.count("\n") == 1, (key, stderr)
                continue
            assert proc.returncode == 0, (key, proc.stderr.decode())
            assert proc.stdout == (TEMPLATES / "golden" / f"{template}__{conv['name']}__{tag}.txt").read_bytes(), key


def test_model_template_and_tokens(tmp_path):
    conv = tmp_path / "c.json"
    conv.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "wörld"}]))
    model = FIXTURES / "with_template.gguf"
    assert run("-m", model, "--messages", conv).stdout == "<s>[user]hi[assistant]wörld[assistant]".encode()
    # No generation prompt: this template then appends eos_token.
    assert run("-m", model, "--messages", conv, "--no-generation-prompt").stdout == "<s>[user]hi[assistant]wörld<|im_end|>".encode()
    # Given tokens override the model's.
    out = run("-m", model, "--messages", conv, "--bos-token", "BOS", "--eos-token", "EOS", "--no-generation-prompt").stdout
    assert out == "BOS[user]hi[assistant]wörldEOS".encode()
    # A template file replaces the model's template; bos/eos still come from the model.
    tmpl = tmp_path / "t.jinja"
    tmpl.write_text("{{ bos_token }}|{{ messages|length }}|{{ eos_token }}")
    assert run("-m", model, "--messages", conv, "--template", tmpl).stdout == b"<s>|2|<|im_end|>"


def test_model_with_a_real_template(conversation_files):
    proc = run("-m", FIXTURES / "qwen3.6.gguf", "--messages", conversation_files["tool_call_roundtrip"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (TEMPLATES / "golden" / "qwen3.6__tool_call_roundtrip__gen.txt").read_bytes()


def test_conversation_forms_and_undefined_tokens(tmp_path):
    tmpl = tmp_path / "t.jinja"
    tmpl.write_text("{{ bos_token is defined }} {{ eos_token is defined }} {{ messages[0].content }} {{ tools is none }} "
                    "{{ enable_thinking }}\n")
    array = tmp_path / "a.json"
    array.write_text(json.dumps([{"role": "user", "content": "x"}]))
    obj = tmp_path / "o.json"
    obj.write_text(json.dumps({"messages": [{"role": "user", "content": "y"}], "tools": [{"type": "function"}],
                               "kwargs": {"enable_thinking": False}}))
    # No -m and no token options: bos/eos are undefined. The template's single trailing newline is dropped, as
    # jinja2 does, and nothing is added.
    assert run("--template", tmpl, "--messages", array).stdout == b"False False x True "
    assert run("--template", tmpl, "--messages", obj).stdout == b"False False y False False"


@pytest.mark.parametrize("args, code, message", [
    (["--template", "{tmpl}"], 2, "--messages is required"),
    (["--messages", "{conv}"], 2, "give --template FILE or -m MODEL"),
    (["--messages", "{conv}", "--template", "{tmpl}", "--bogus"], 2, "unknown argument '--bogus'"),
    (["--messages", "{conv}", "--template"], 1, "--template needs a value"),
    (["--messages", "{missing}", "--template", "{tmpl}"], 1, "cannot open file"),
    (["--messages", "{bad_json}", "--template", "{tmpl}"], 1, "not valid JSON"),
    (["--messages", "{conv}", "-m", "{no_template}"], 1, "no tokenizer.chat_template"),
    (["--messages", "{conv}", "-m", "{bad_eos}"], 1, "eos_token_id = 99 is outside the 7 tokens"),
    (["--messages", "{conv}", "--template", "{syntax}"], 1, "syntax.jinja:2:4: unexpected 'endfor'"),
    (["--messages", "{conv}", "--template", "{raises}"], 1, "raises.jinja: no assistant allowed"),
    (["--messages", "{conv}", "--template", "{tmpl}", "--now", "2025-13-01"], 1, "--now: not a valid date"),
])
def test_errors(tmp_path, args, code, message):
    files = {"tmpl": tmp_path / "t.jinja", "conv": tmp_path / "c.json", "missing": tmp_path / "none.json",
             "bad_json": tmp_path / "bad.json", "no_template": FIXTURES / "without_template.gguf",
             "bad_eos": FIXTURES / "bad_eos.gguf", "syntax": tmp_path / "syntax.jinja", "raises": tmp_path / "raises.jinja"}
    files["tmpl"].write_text("{{ messages|length }}")
    files["conv"].write_text(json.dumps([{"role": "assistant", "content": "a"}]))
    files["bad_json"].write_text("[{")
    files["syntax"].write_text("ok\n{% endfor %}")
    files["raises"].write_text("{% if messages[0].role == 'assistant' %}{{ raise_exception('no assistant allowed') }}{% endif %}")
    proc = run(*[a.format(**files) for a in args])
    stderr = proc.stderr.decode("utf-8")
    assert proc.returncode == code, stderr
    assert message in stderr
    assert proc.stdout == b""
    if code == 1:
        assert stderr.count("\n") == 1, stderr
