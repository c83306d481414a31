#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two builds of ember-cli side by side in one call of the device tool, on the full-shape STRIX file: prefill pp512,
# decode tg128 and the verify curve k = 1..16 on CUDA and Vulkan, the two builds alternating run by run (so that a
# clock or thermal drift lands on both), then a per-kernel CUDA profile of decode, of a 512-token
# prefill and of a 16-token batch (a verify pass's kernels) for each (EMBER_GPU_PROFILE=1).
# Carried (device tool `carry`): .gpurun (bin.tar.xz: the build under test; bin_base.tar.xz: the build to compare
# with; libs.tar.xz and the gguf wheel: see tests/hip/bench/run_h200.sh) and .gl (the Vulkan loader .debs).
# AB_ROUNDS: alternations per backend (default 2). AB_NCU=1 adds Nsight Compute's per-kernel times and DRAM bytes of
# decode steps, a 512-token prefill and a 16-token pass for each build (ncu_summary.py), AB_NCU=new for the new build
# only.
# AB_BACKENDS: the backends to time (default "cuda vulkan"). AB_PROFILES=0 leaves out the EMBER_GPU_PROFILE runs.
# AB_OFF: environment settings that turn paths of the new build off (e.g. "EMBER_GPU_DEPENDENT_LAUNCHES=0
# EMBER_GPU_JOINED_LAUNCHES=0"): each round then also times the new build with them, labelled "off".
# Everything lands in $OUT: ab.txt (one line per run) and the JSON and profile of each run.
set -u
out=${OUT:-/tmp/out}
work=/tmp/ember-ab
models=/tmp/models
mkdir -p "$out" "$work/base" "$models"
here=$(cd "$(dirname "$0")" && pwd)
t0=$(date +%s)

. "$here/unpack_gpurun.sh"
unpack_gpurun "$work"
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpurun/bin_base.tar.xz \
    "$work/base"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee "$out/ab.txt"
[ -f $models/strix.gguf ] || python3 tests/fixtures/make_synthetic_qwen35moe.py $models/strix.gguf --scale full \
    >"$out/generate.log" 2>&1
echo "file ready after $(($(date +%s) - t0)) s" | tee -a "$out/ab.txt"

# One bench run of build LABEL (base or new) on BACKEND: its tokens/s and verify curve on one line.
run() {
    local label=$1 backend=$2 n=$3 cli=$work/bin/ember-cli settings=
    [ "$label" = base ] && cli=$work/base/ember-cli
    [ "$label" = off ] && settings=${AB_OFF:-}
    local json=$out/${label}_${backend}_$n.json
    env $settings timeout 200 "$cli" bench -m $models/strix.gguf --backend "$backend" --speculation off -p 512 -n 128 -r 2 \
        --verify-curve 16 --json >"$json" 2>"$out/${label}_${backend}_$n.err"
    python3 - "$json" "$label" "$backend" <<'PY' | tee -a "$out/ab.txt"
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(sys.argv[2], sys.argv[3], "no result:", e); sys.exit()
curve = (r.get("verify_cost") or {}).get("curve") or []
ratios = " ".join(f"{c['relative_to_decode_step']:.2f}" for c in curve if c["tokens"] in (2, 4, 6, 8, 9, 12, 16))
print(f"{sys.argv[2]:5} {sys.argv[3]:7} pp512 {r['prefill_tokens_per_second']['mean']:8.1f}  tg128 "
      f"{r['decode_tokens_per_second']['mean']:7.1f}  verify k=2,4,6,8,9,12,16: {ratios}")
PY
}
# AB_WAIT_FOR: a path whose appearance the benchmarks wait for (another job on the GPU, e.g. the suites, running
# beside the file's generation must end before anything is timed).
while [ -n "${AB_WAIT_FOR:-}" ] && [ ! -e "$AB_WAIT_FOR" ]; do sleep 2; done
echo "benchmarks start after $(($(date +%s) - t0)) s" | tee -a "$out/ab.txt"
for backend in ${AB_BACKENDS:-cuda vulkan}; do
    for n in $(seq 1 "${AB_ROUNDS:-2}"); do
        run base $backend $n
        run new $backend $n
        [ -n "${AB_OFF:-}" ] && run off $backend $n
    done
done
for label in $([ "${AB_PROFILES:-1}" = 0 ] || echo base new); do
    cli=$work/bin/ember-cli
    [ "$label" = base ] && cli=$work/base/ember-cli
    EMBER_GPU_PROFILE=1 timeout 120 "$cli" bench -m $models/strix.gguf --backend cuda --speculation off -p 1 -n 16 \
        -r 1 >"$out/profile_$label.txt" 2>&1
    EMBER_GPU_PROFILE=1 timeout 120 "$cli" bench -m $models/strix.gguf --backend cuda --speculation off -p 512 -n 1 \
        -r 1 >"$out/profile_prefill_$label.txt" 2>&1
    # A 16-token prompt: the batched kernels of a verify pass of 16 tokens.
    EMBER_GPU_PROFILE=1 timeout 120 "$cli" bench -m $models/strix.gguf --backend cuda --speculation off -p 16 -n 1 \
        -r 1 >"$out/profile_batch16_$label.txt" 2>&1
done
if [ "${AB_NCU:-0}" != 0 ] && command -v ncu >/dev/null; then
    labels="base new"
    [ "$AB_NCU" = new ] && labels=new
    for label in $labels; do
        cli=$work/bin/ember-cli
        [ "$label" = base ] && cli=$work/base/ember-cli
        # A one-token prefill and 4 decode steps; the summary takes the last 3 steps.
        timeout 300 ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum \
            "$cli" bench -m $models/strix.gguf --backend cuda --speculation off -p 1 -n 4 -r 1 \
            >"$out/ncu_$label.csv" 2>"$out/ncu_$label.err"
        python3 "$here/ncu_summary.py" "$out/ncu_$label.csv" 3 >"$out/ncu_$label.txt" 2>&1
        head -30 "$out/ncu_$label.txt"
        # A 512-token prefill and one decode step, kernels named with their template arguments.
        timeout 300 ncu --clock-control none --csv --print-kernel-base demangled \
            --metrics gpu__time_duration.sum,dram__bytes_read.sum "$cli" bench -m $models/strix.gguf --backend cuda \
            --speculation off -p 512 -n 1 -r 1 >"$out/ncu_prefill_$label.csv" 2>"$out/ncu_prefill_$label.err"
        python3 "$here/ncu_summary.py" "$out/ncu_prefill_$label.csv" 2 >"$out/ncu_prefill_$label.txt" 2>&1
        head -30 "$out/ncu_prefill_$label.txt"
        # A 16-token prompt's pass alone: the kernels of a verify pass of 16.
        timeout 200 ncu --clock-control none --csv --print-kernel-base demangled \
            --metrics gpu__time_duration.sum,dram__bytes_read.sum "$cli" bench -m $models/strix.gguf --backend cuda \
            --speculation off -p 16 -n 1 -r 1 >"$out/ncu_batch16_$label.csv" 2>"$out/ncu_batch16_$label.err"
        python3 "$here/ncu_summary.py" "$out/ncu_batch16_$label.csv" 1 first >"$out/ncu_batch16_$label.txt" 2>&1
        head -20 "$out/ncu_batch16_$label.txt"
    done
fi
echo "all done after $(($(date +%s) - t0)) s" | tee -a "$out/ab.txt"
