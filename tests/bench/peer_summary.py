# SPDX-License-Identifier: MIT
"""The table of peer_h200.sh: Ember (CUDA, Vulkan) against the seed's llama.cpp fork (CUDA) on the same files.

  peer_summary.py RESULTS_DIR
RESULTS_DIR holds ember_<file>_<backend>[_d4096].json (ember-cli bench --json), peer_<file>[_verify|_d4096].json
(llama-bench -o json) and copy_<backend>.json (ember-cli devices --bandwidth --json).
"""
import json
import sys
from pathlib import Path

FILES = ("strix", "q4_0")
BACKENDS = ("cuda", "vulkan")


def load(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def peer_rate(rows, n_prompt, n_gen, depth=0):
    for r in rows or []:
        if r.get("n_prompt") == n_prompt and r.get("n_gen") == n_gen and r.get("n_depth", 0) == depth:
            return r["avg_ts"]
    return None


def peer_decode(rows):
    """The fork's tg128 at the depth where Ember's bench decodes (after its 512-token prompt); depth 0 for runs
    older than the -d 0,512 of peer_h200.sh."""
    return peer_rate(rows, 0, 128, 512) or peer_rate(rows, 0, 128)


def peer_verify(rows):
    """ms of a k-token batch / ms of one token, k = 1..16."""
    ns = {r["n_prompt"]: r["avg_ns"] for r in rows or [] if r.get("n_gen") == 0}
    return {k: ns[k] / ns[1] for k in sorted(ns)} if 1 in ns else {}


def mean(figure):
    return figure["mean"] if figure else None


def fmt(x, digits=1):
    return "—" if x is None else f"{x:.{digits}f}"


def ratio(a, b):
    return "—" if a is None or b is None or b == 0 else f"{a / b:.2f}×"


def main():
    res = Path(sys.argv[1])
    copy = {}
    for b in BACKENDS:
        d = load(res / f"copy_{b}.json")
        if d and "bandwidth" in d:
            copy[b] = d["bandwidth"].get("bytes_per_second")
    lines = ["| file | figure | fork CUDA | Ember CUDA | ratio | Ember Vulkan | ratio |", "|---|---|---:|---:|---:|---:|---:|"]
    overhead = []
    for f in FILES:
        peer = load(res / f"peer_{f}.json")
        peer_d = load(res / f"peer_{f}_d4096.json")
        peer_v = peer_verify(load(res / f"peer_{f}_verify.json"))
        ember = {b: load(res / f"ember_{f}_{b}.json") for b in BACKENDS}
        ember_d = {b: load(res / f"ember_{f}_{b}_d4096.json") for b in BACKENDS}
        rows = [
            ("pp512 tok/s", peer_rate(peer, 512, 0),
             {b: mean(ember[b]["prefill_tokens_per_second"]) if ember[b] else None for b in BACKENDS}),
            ("tg128 tok/s (depth 512)", peer_decode(peer),
             {b: mean(ember[b]["decode_tokens_per_second"]) if ember[b] else None for b in BACKENDS}),
            ("tg128 at depth 4096", peer_rate(peer_d, 0, 128, 4096),
             {b: mean(ember_d[b]["decode_tokens_per_second"]) if ember_d[b] else None for b in BACKENDS}),
            ("pp4096 tok/s (Ember)", None,
             {b: mean(ember_d[b]["prefill_tokens_per_second"]) if ember_d[b] else None for b in BACKENDS}),
        ]
        for name, p, e in rows:
            lines.append(f"| {f} | {name} | {fmt(p)} | {fmt(e['cuda'])} | {ratio(e['cuda'], p)} | "
                         f"{fmt(e['vulkan'])} | {ratio(e['vulkan'], p)} |")
        curves = {b: {c["tokens"]: c["relative_to_decode_step"] for c in ember[b]["verify_cost"]["curve"]}
                  if ember[b] and "verify_cost" in ember[b] else {} for b in BACKENDS}
        for k in (2, 4, 6, 8, 9, 12, 16):
            p = peer_v.get(k)
            lines.append(f"| {f} | verify k={k} (÷ one step) | {fmt(p, 2)} | {fmt(curves['cuda'].get(k), 2)} | | "
                         f"{fmt(curves['vulkan'].get(k), 2)} | |")
        for b in BACKENDS:
            e = ember[b]
            if not e or not copy.get(b) or not mean(e["decode_tokens_per_second"]):
                continue
            step_ms = 1000.0 / mean(e["decode_tokens_per_second"])
            bytes_ms = 1000.0 * e["decode_weight_bytes_per_token"] / copy[b]
            strix_ms = 1000.0 * e["decode_weight_bytes_per_token"] / 212e9
            peer_tg = peer_decode(peer)
            line = (f"{f} {b}: step {step_ms:.2f} ms, bytes at copy bandwidth {bytes_ms:.2f} ms, overhead "
                    f"{step_ms - bytes_ms:.2f} ms; projected Strix Halo decode (bytes / 212 GB/s + overhead): "
                    f"{1000.0 / (strix_ms + step_ms - bytes_ms):.1f} tok/s")
            if peer_tg:
                peer_step = 1000.0 / peer_tg
                line += (f"; fork step {peer_step:.2f} ms, overhead {peer_step - bytes_ms:.2f} ms, projected "
                         f"{1000.0 / (strix_ms + peer_step - bytes_ms):.1f} tok/s")
            overhead.append(line)
    print("\n".join(lines))
    print()
    print("\n".join(overhead))


if __name__ == "__main__":
    main()
