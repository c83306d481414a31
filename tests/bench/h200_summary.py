#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The summary of tests/bench/h200_bench.sh: reads OUT_DIR/devices_<backend>.json and bench_<model>_<backend>.json,
writes OUT_DIR/summary.json and summary.txt and prints the table.

    h200_summary.py OUT_DIR

Achieved fraction of bandwidth for decode = decode_weight_bytes_per_token * decode tokens/s / copy bandwidth (bytes
read + written per second by a copy kernel, measured in the same run). Two figures: against the copy kernel of the
same backend, and against the device's best copy (the larger of its GPU backends' copies: both backends run on the
one GPU, and a slow copy kernel of one of them would flatter its fraction). The CPU is held to its own copy."""
import json
import sys
from pathlib import Path


def load(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def main() -> int:
    out = Path(sys.argv[1])
    bandwidth = {}
    for f in sorted(out.glob("devices_*.json")):
        d = load(f)
        if d and "bandwidth" in d:
            bandwidth[f.stem.removeprefix("devices_")] = {"backend_name": d["bandwidth"]["backend"],
                                                          "bytes_per_second": d["bandwidth"]["bytes_per_second"]}
    gpu_best = max((v["bytes_per_second"] for k, v in bandwidth.items() if k != "cpu"), default=None)
    rows = []
    for model in ("strix", "q4_0"):
        for backend in ("cpu", "vulkan", "cuda", "hip"):
            f = out / f"bench_{model}_{backend}.json"
            if not f.exists():
                continue
            b = load(f)
            row = {"model": model, "backend": backend}
            if b is None:
                err = (out / f"bench_{model}_{backend}.err")
                row["error"] = err.read_text().strip().splitlines()[-1:] if err.exists() else "no output"
                rows.append(row)
                continue
            row.update({
                "backend_name": b["backend"],
                "n_prompt": b["n_prompt"], "n_gen": b["n_gen"], "repetitions": b["repetitions"],
                "load_seconds": b["load_seconds"],
                "prefill_tokens_per_second": b["prefill_tokens_per_second"]["mean"],
                "decode_tokens_per_second": b["decode_tokens_per_second"]["mean"],
                "decode_weight_bytes_per_token": b.get("decode_weight_bytes_per_token", 0),
                "weight_bytes": b["weight_bytes"],
            })
            bw = bandwidth.get(backend, {}).get("bytes_per_second")
            if bw and row["decode_weight_bytes_per_token"]:
                row["decode_bytes_per_second"] = row["decode_weight_bytes_per_token"] * row["decode_tokens_per_second"]
                row["copy_bandwidth_bytes_per_second"] = bw
                row["fraction_of_bandwidth"] = row["decode_bytes_per_second"] / bw
                device_bw = bw if backend == "cpu" else gpu_best
                row["device_copy_bandwidth_bytes_per_second"] = device_bw
                row["fraction_of_device_bandwidth"] = row["decode_bytes_per_second"] / device_bw
            rows.append(row)
    summary = {"bandwidth": bandwidth, "runs": rows}
    gpu = out / "gpu.csv"
    if gpu.exists():
        summary["gpu"] = gpu.read_text().strip()
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")

    lines = ["copy bandwidth (read + write): " + ", ".join(
        f"{k} {v['bytes_per_second'] / 1e9:.0f} GB/s" for k, v in bandwidth.items())]
    lines.append(f"{'model':6} {'backend':7} {'prefill tok/s':>13} {'decode tok/s':>12} {'GB/token':>8} "
                 f"{'decode GB/s':>11} {'of own copy':>11} {'of device':>9} {'load s':>7}  (p, n, r)")
    for r in rows:
        if "error" in r:
            lines.append(f"{r['model']:6} {r['backend']:7} FAILED: {r['error']}")
            continue
        frac, dev = r.get("fraction_of_bandwidth"), r.get("fraction_of_device_bandwidth")
        lines.append(f"{r['model']:6} {r['backend']:7} {r['prefill_tokens_per_second']:13.1f} "
                     f"{r['decode_tokens_per_second']:12.2f} {r['decode_weight_bytes_per_token'] / 1e9:8.3f} "
                     f"{r.get('decode_bytes_per_second', 0) / 1e9:11.1f} "
                     f"{(f'{100 * frac:.1f} %' if frac is not None else '-'):>11} "
                     f"{(f'{100 * dev:.1f} %' if dev is not None else '-'):>9} {r['load_seconds']:7.1f}"
                     f"  ({r['n_prompt']}, {r['n_gen']}, {r['repetitions']})")
    text = "\n".join(lines) + "\n"
    (out / "summary.txt").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
