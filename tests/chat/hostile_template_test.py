# SPDX-License-Identifier: MIT
"""Hostile templates and messages files (the outside fault run of issue 20): through `ember-cli template`, and
embedded in a tiny model's GGUF through `ember-cli run --chat`, each under a 1 GB address-space limit. Every one
ends with one clear line on stderr and exit status 1: never a signal (std::bad_alloc or std::length_error used to
abort), never more memory than the limit."""
import importlib.util
import json
import os
import resource
import subprocess
from pathlib import Path

import pytest

BIN = Path(os.environ["EMBER_BIN"])
MEMORY_LIMIT = 1 << 30



def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HERE = Path(__file__).resolve().parent
make_model_fixtures = load("make_model_fixtures", HERE.parent / "fixtures" / "make_model_fixtures.py")
HOSTILE = load("hostile_templates", HERE / "hostile_templates.py").HOSTILE


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(tool, *args):
    return subprocess.run([str(BIN / tool), *map(str, args)], capture_output=True, preexec_fn=limit_memory,
                          timeout=120)


def expect_one_line_error(proc, message):
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 1, f"exit {proc.returncode} (a negative value is a signal): {stderr[-2000:]}"
    assert stderr.count("\n") == 1 and stderr.endswith("\n"), stderr[-2000:]
    assert message in stderr, stderr


@pytest.fixture(scope="module")
def conversation(tmp_path_factory):
    path = tmp_path_factory.mktemp("conv") / "c.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    return path


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_template_file(name, tmp_path, conversation):
    template, message = HOSTILE[name]
    path = tmp_path / f"{name}.jinja"
    path.write_text(template, encoding="utf-8")
    expect_one_line_error(run("ember-cli", "template", "--template", path, "--messages", conversation), message)


def test_many_assignments_render_in_time(tmp_path, conversation):
    path = tmp_path / "sets.jinja"
    path.write_text("".join(f"{{% set v{i} = {i} %}}" for i in range(120000)) + "{{ v0 + v119999 }}")
    proc = run("ember-cli", "template", "--template", path, "--messages", conversation)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"119999"


def nested(depth, leaf='"x"'):
    return "[" * depth + leaf + "]" * depth


DEEP_MESSAGES = {
    "deep_array": (nested(100000), "nested deeper than the limit of 257 levels"),
    "deep_content": ('{"messages": [{"role": "user", "content": ' + nested(100000) + "}]}", "nested deeper"),
    "deep_tools": ('{"messages": [], "tools": ' + nested(100000) + "}", "nested deeper"),
    "deep_kwargs": ('{"messages": [], "kwargs": {"x": ' + nested(100000) + "}}", "nested deeper"),
    "deep_object": ('{"messages": [{"content": ' + '{"a": ' * 100000 + "1" + "}" * 100000 + "}]}", "nested deeper"),
    "huge_content": (json.dumps([{"role": "user", "content": "x" * (20 << 20)}]), "limit of 16777216 bytes"),
}


@pytest.mark.parametrize("name", sorted(DEEP_MESSAGES))  # by name: the texts are too long for a test id
def test_messages_file(name, tmp_path):
    text, message = DEEP_MESSAGES[name]
    conv = tmp_path / f"{name}.json"
    conv.write_text(text)
    template = tmp_path / "t.jinja"
    template.write_text("{% for m in messages %}{{ m.content }}{% endfor %}{{ tools }}")
    expect_one_line_error(run("ember-cli", "template", "--template", template, "--messages", conv), message)


@pytest.fixture(scope="module")
def hostile_models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile_models")
    models = {}
    for name in ("replace", "range_2_64", "padding", "recursion", "many_big_strings"):
        models[name] = folder / f"{name}.gguf"
        make_model_fixtures.write_model(models[name], "llama", "f32", template=HOSTILE[name][0])
    return models


@pytest.mark.parametrize("name", ["replace", "range_2_64", "padding", "recursion", "many_big_strings"])
def test_embedded_template_through_run(name, hostile_models, conversation):
    model = hostile_models[name]
    # The file itself is sound: validate passes it (the template is valid Jinja; only rendering it blows up).
    assert run("ember-gguf", "validate", model).returncode == 0
    message = HOSTILE[name][1]
    proc = run("ember-cli", "run", "-m", model, "-p", "hi", "--chat", "-n", "2", "--threads", "2", "--backend", "cpu")
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 1, f"exit {proc.returncode} (a negative value is a signal): {stderr[-2000:]}"
    assert message in stderr.splitlines()[-1], stderr
    expect_one_line_error(run("ember-cli", "template", "-m", model, "--messages", conversation), message)


def test_validate_warns_about_a_template_that_cannot_be_parsed(tmp_path):
    # validate checks the file format and stays lenient about templates (a hostile one is valid Jinja), but one
    # that does not even parse is worth a warning; run then fails with the parse error, never an abort.
    model = tmp_path / "unparsable.gguf"
    make_model_fixtures.write_model(model, "llama", "f32", template="{% for m in messages %}{{ m.content }")
    proc = run("ember-gguf", "validate", model)
    assert proc.returncode == 0, proc.stderr
    assert b": ok (GGUF v3" in proc.stdout
    assert b"warning: the chat template cannot be used: tokenizer.chat_template:1:" in proc.stdout
    proc = run("ember-cli", "run", "-m", model, "-p", "hi", "--chat", "-n", "2", "--threads", "2", "--backend", "cpu")
    assert proc.returncode == 1 and b"tokenizer.chat_template" in proc.stderr.splitlines()[-1], proc.stderr
