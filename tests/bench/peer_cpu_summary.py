# SPDX-License-Identifier: MIT
"""The table of peer_cpu.sh: Ember against the seed's llama.cpp fork on this machine's CPU, runs alternating.

  peer_cpu_summary.py RESULTS_DIR THREADS
RESULTS_DIR holds ember_<model>_<round>.json (ember-cli bench --json) and peer_<model>_<round>.json (llama-bench -o
json); each figure is given as min / median / max over the rounds, and the ratio is Ember's median over the fork's.
Both decode after the prompt: Ember's bench does, and the fork's decode is its run at the prompt's depth.
"""
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def load(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def collect(res):
    """{(model, engine, figure): [tokens per second per round]}"""
    figures = defaultdict(list)
    for path in sorted(res.glob("*.json")):
        engine, model, _ = path.stem.rsplit("_", 2) if path.stem.count("_") >= 2 else (None, None, None)
        data = load(path)
        if data is None or engine not in ("ember", "peer"):
            continue
        if engine == "ember":
            figures[(model, engine, "prefill")] += data["prefill_tokens_per_second"]["runs"]
            figures[(model, engine, "decode")] += data["decode_tokens_per_second"]["runs"]
        else:
            # Like Ember's: prefill from an empty context, decode after the prompt (its depth: the deepest run).
            depth = max(row.get("n_depth", 0) for row in data) if data else 0
            for row in data:
                if row.get("n_gen") == 0 and row.get("n_depth", 0) == 0:
                    figures[(model, engine, "prefill")].append(row["avg_ts"])
                elif row.get("n_gen", 0) > 0 and row.get("n_depth", 0) == depth:
                    figures[(model, engine, "decode")].append(row["avg_ts"])
    return figures


def spread(values):
    if not values:
        return "—", None
    m = statistics.median(values)
    return f"{min(values):.1f} / **{m:.1f}** / {max(values):.1f}", m


def main():
    res, threads = Path(sys.argv[1]), sys.argv[2]
    figures = collect(res)
    models = sorted({k[0] for k in figures}, key=lambda m: ("smollm2", "gemma3", "strix").index(m)
                    if m in ("smollm2", "gemma3", "strix") else 9)
    print(f"CPU, {threads} threads, tokens/s (min / median / max over the rounds)")
    print("| file | figure | fork | Ember | Ember ÷ fork |")
    print("|---|---|---:|---:|---:|")
    for model in models:
        for figure in ("prefill", "decode"):
            peer_text, peer = spread(figures.get((model, "peer", figure), []))
            ember_text, ember = spread(figures.get((model, "ember", figure), []))
            ratio = f"{ember / peer:.2f}×" if peer and ember else "—"
            print(f"| {model} | {figure} | {peer_text} | {ember_text} | {ratio} |")


if __name__ == "__main__":
    main()
