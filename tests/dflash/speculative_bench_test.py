# SPDX-License-Identifier: MIT
"""ember-cli bench on drafted files: the speculative section of --json (its fields, the same tokens as plain
decoding, the acceptance the constructed pairs guarantee), the verify-cost curve, and the CLI's speculation
options. Speed itself is measured by running the benchmark, not asserted here."""
import json
import os
import subprocess
from pathlib import Path

import pytest

BIN = Path(os.environ["EMBER_BIN"])
FIXTURES = Path(os.environ["EMBER_FIXTURES"]) / "dflash"


def bench(model, *extra):
    run = subprocess.run([BIN / "ember-cli", "bench", "-m", str(model), "-p", "16", "-n", "48", "-r", "1", "-t", "2",
                          "--json", *extra], check=True, capture_output=True, text=True)
    return json.loads(run.stdout)


@pytest.mark.parametrize("name, acceptance", [("wide-echo-agree-drafted.gguf", 1.0),
                                              ("wide-echo-never-drafted.gguf", 0.0),
                                              ("echo-agree-drafted.gguf", 1.0)])
def test_bench_reports_speculation(name, acceptance):
    out = bench(FIXTURES / name, "--draft-length", "4")
    spec = out["speculation"]
    assert spec["method"] == "dflash" and spec["draft_length"] == 4
    assert spec["identical_output"] is True
    assert spec["acceptance_rate"] == acceptance
    assert spec["draft_steps"] > 0 and spec["drafted_tokens"] <= 4 * spec["draft_steps"]
    # Every step drafts 4 tokens but the last, which max_tokens may shorten.
    assert spec["mean_accepted_length"] > 4.0 if acceptance == 1.0 else spec["mean_accepted_length"] == 1.0
    assert spec["speedup"] > 0 and spec["plain_decode_tokens_per_second"]["mean"] > 0


def test_adaptive_length_and_no_speculation():
    assert bench(FIXTURES / "echo-never-drafted.gguf")["speculation"]["draft_length"] == "adaptive"
    assert "speculation" not in bench(FIXTURES / "echo-never-drafted.gguf", "--speculation", "off")
    assert "speculation" not in bench(FIXTURES / "qwen3-f32.gguf")


def test_a_separate_draft_file():
    out = bench(FIXTURES / "wide-echo-qwen3.gguf", "--draft-file", str(FIXTURES / "draft-wide-echo-agree.gguf"),
                "--draft-length", "3")
    assert out["speculation"]["acceptance_rate"] == 1.0 and out["speculation"]["identical_output"] is True


def test_verify_cost_curve():
    out = bench(FIXTURES / "qwen35moe-drafted.gguf", "--verify-curve", "6", "--speculation", "off")
    curve = out["verify_cost"]["curve"]
    assert [p["tokens"] for p in curve] == list(range(1, 7))
    assert all(p["seconds"] > 0 and p["relative_to_decode_step"] > 0 for p in curve)


def test_bad_speculation_option_is_one_line():
    run = subprocess.run([BIN / "ember-cli", "bench", "-m", str(FIXTURES / "qwen3-f32.gguf"), "--speculation", "fast"],
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert "speculation must be auto, off, mtp or dflash, not 'fast'" in run.stderr
    assert run.stderr.strip().count("\n") == 0
