#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The speculative-decoding benchmark of the closing notes, in one run (a quiet machine gives steady figures):
#   tests/bench/speculative_bench.sh BIN_DIR OUT_DIR [THREADS]
# BIN_DIR holds ember-cli; python3 with numpy and gguf must be importable. Writes OUT_DIR/*.json and prints a
# summary: (1) the wide echo pairs (a draft that always agrees, one that never does) with fixed and adaptive draft
# lengths; (2) the mid-size synthetic qwen35moe with its MTP head: plain vs adaptive speculation and the cost of
# verifying 1..16 tokens in one pass relative to one decode step.
set -euo pipefail
bin=$1
out=$2
threads=${3:-$(nproc)}
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/fixtures"
python3 "$here/tests/fixtures/make_dflash_fixtures.py" "$out/fixtures" >/dev/null
[ -f "$out/mid.gguf" ] || python3 "$here/tests/fixtures/make_synthetic_qwen35moe.py" "$out/mid.gguf" --scale mid >/dev/null
bench() { "$bin/ember-cli" bench -t "$threads" --json "$@"; }
for pair in agree never; do
  for length in 4 7 0; do
    bench -m "$out/fixtures/wide-echo-$pair-drafted.gguf" -p 64 -n 256 -r 5 --draft-length $length \
      >"$out/wide-$pair-$length.json"
  done
done
# Adaptive drafting over a long answer with a draft that never agrees: the probes' whole cost.
bench -m "$out/fixtures/wide-echo-never-drafted.gguf" -p 64 -n 880 -r 7 >"$out/wide-never-long.json"
bench -m "$out/mid.gguf" -p 128 -n 256 -r 3 --verify-curve 16 >"$out/mid-mtp.json"
python3 - "$out" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
for f in sorted(out.glob("wide-*.json")) + [out / "mid-mtp.json"]:  # noqa
    d = json.loads(f.read_text())
    s = d.get("speculation", {})
    print(f"{f.stem:16s} plain {s['plain_decode_tokens_per_second']['mean']:8.1f} tok/s  speculative "
          f"{s['speculative_decode_tokens_per_second']['mean']:8.1f}  x{s['speedup']:.3f}  accepted "
          f"{100 * s['acceptance_rate']:5.1f} %  {s['mean_accepted_length']:.2f} tokens/step  same tokens: "
          f"{s['identical_output']}")
curve = json.loads((out / "mid-mtp.json").read_text())["verify_cost"]["curve"]
print("verify cost (x one decode step): " + "  ".join(f"{p['tokens']}:{p['relative_to_decode_step']:.2f}" for p in curve))
PY
