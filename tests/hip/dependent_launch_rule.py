#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The rule that makes CUDA's programmatic dependent launches safe (kernels/hip/kernel_launch.cuh): every kernel of
kernels/hip is launched through launch_kernel (no <<< >>> launch in a .cu file), and every __global__ function calls
gpu::join_prior_grid() before its first return. A grid that ended without joining could end before the grid before it,
and the one after it would read that grid's outputs unfinished.

  dependent_launch_rule.py KERNELS_DIR        exit 1 with one line per breach
"""
import re
import sys
from pathlib import Path


def closing(text, i, pair):
    """The index of the bracket that closes the one at text[i] (pair: "()" or "{}")."""
    depth = 0
    while True:
        depth += {pair[0]: 1, pair[1]: -1}.get(text[i], 0)
        if depth == 0:
            return i
        i += 1


def bodies(text):
    """(name, body) of every __global__ function."""
    for m in re.finditer(r"__global__\s", text):
        params = text.index("(", text.index(" ", m.end()) if "__launch_bounds__" not in text[m.end():m.end() + 40]
                            else text.index(")", m.end()) + 1)
        name = text[:params].split()[-1]
        start = text.index("{", closing(text, params, "()"))
        yield name, text[start + 1:closing(text, start, "{}")]


def main():
    breaches = []
    for path in sorted(Path(sys.argv[1]).glob("*.cu")):
        text = path.read_text()
        for n, line in enumerate(text.splitlines(), 1):
            if "<<<" in line:
                breaches.append(f"{path.name}:{n}: a kernel launched with <<< >>>, not launch_kernel")
        for name, body in bodies(text):
            join = body.find("gpu::join_prior_grid();")
            ret = re.search(r"\breturn\b", body)
            if join < 0:
                breaches.append(f"{path.name}: {name} never calls gpu::join_prior_grid()")
            elif ret and ret.start() < join:
                breaches.append(f"{path.name}: {name} may return before gpu::join_prior_grid()")
    for b in breaches:
        print(b)
    print(f"{len(breaches)} breaches of the dependent-launch rule")
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
