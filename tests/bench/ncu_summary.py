#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# ncu_summary.py CSV STEPS [first]: Nsight Compute's --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum
# export of a run, summed per kernel over the last STEPS steps' worth of launches (with `first`: the first STEPS, e.g.
# the prompt's pass alone): calls, microseconds per step, share of the step, mean microseconds per call and DRAM read
# GB/s. The kernels' total is the step's GPU busy time.
import csv
import sys
from collections import OrderedDict


def read(path):
    rows = OrderedDict()  # (id) -> {name, time_ns, bytes}
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]
    for r in csv.DictReader(lines):
        key = r["ID"]
        entry = rows.setdefault(key, {"name": r["Kernel Name"], "ns": 0.0, "bytes": 0.0})
        value = float(r["Metric Value"].replace(",", "") or 0)
        unit = r.get("Metric Unit", "")
        if r["Metric Name"] == "gpu__time_duration.sum":
            entry["ns"] = value * {"nsecond": 1, "usecond": 1e3, "msecond": 1e6}.get(unit, 1)
        elif r["Metric Name"] == "dram__bytes_read.sum":
            entry["bytes"] = value * {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}.get(unit, 1)
    return list(rows.values())


def short(name):
    # Plain function names, or demangled ones (--print-kernel-base demangled: template arguments kept).
    name = name.replace("(anonymous namespace)::", "").split("(")[0]
    return name.replace("void ", "").replace("ember::gpu_kernels::", "")


def main():
    kernels, steps = read(sys.argv[1]), int(sys.argv[2])
    from_start = len(sys.argv) > 3 and sys.argv[3] == "first"
    if not kernels:
        sys.exit(f"{sys.argv[1]}: no kernel times in the export (did ncu fail? its stderr says why)")
    # A step starts with the embedding rows' kernel (else with the run's first kernel).
    first = next((k["name"] for k in kernels if "get_rows" in k["name"]), kernels[0]["name"])
    starts = [i for i, k in enumerate(kernels) if k["name"] == first]
    if len(starts) <= steps:
        tail = kernels
    elif from_start:
        tail = kernels[: starts[steps]]
    else:
        tail = kernels[starts[-steps]:]
    per = OrderedDict()
    for k in tail:
        e = per.setdefault(short(k["name"]), [0, 0.0, 0.0])
        e[0] += 1
        e[1] += k["ns"]
        e[2] += k["bytes"]
    total = sum(e[1] for e in per.values())
    print(f"{len(tail)} launches over {steps} steps, {total / steps / 1e3:.1f} us of kernel time per step "
          f"({len(tail) / steps:.0f} launches per step, each starting with {short(first)})")
    print(f"{'kernel':60} {'calls/step':>10} {'us/step':>9} {'share':>6} {'us/call':>8} {'GB/s':>7}")
    for name, (calls, ns, b) in sorted(per.items(), key=lambda x: -x[1][1]):
        print(f"{name[:60]:60} {calls / steps:10.1f} {ns / steps / 1e3:9.1f} {100 * ns / total:5.1f}% "
              f"{ns / calls / 1e3:8.2f} {b / ns if ns else 0:7.0f}")


if __name__ == "__main__":
    main()
