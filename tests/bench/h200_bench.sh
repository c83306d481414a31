#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU benchmarks of issues 10 (Vulkan) and 11 (HIP/CUDA) in one run on one machine: `ember-cli bench --json`
# prefill and decode tokens/s of the full-shape synthetic Qwen3.6-35B-A3B in ROCmFP4 STRIX and in Q4_0 on the CPU
# and on each GPU backend, the copy bandwidth of each (`ember-cli devices --bandwidth`), and the fraction of it that
# decode achieves (the weight bytes one decode token reads, from the backends' counters, times tokens/s, over the
# copy bandwidth). Prints a table last; writes every JSON, log and summary.json/summary.txt to OUT_DIR.
#
#   h200_bench.sh generate WORK_DIR            makes WORK_DIR/strix.gguf and WORK_DIR/q4_0.gguf (≈ 19 GB each, at once)
#   h200_bench.sh run BIN_DIR WORK_DIR OUT_DIR  benchmarks them with BIN_DIR/ember-cli
#   h200_bench.sh all BIN_DIR WORK_DIR OUT_DIR  both
#
# Environment: GPU_BACKENDS (default "cuda vulkan"), GPU_ARGS (default "-p 512 -n 128 -r 3"), CPU_ARGS (default
# "-p 64 -n 16 -r 1": a 19 GB model on the CPU is slow), BENCH_TIMEOUT (seconds per run, default 240),
# BENCH_DEADLINE (a time in seconds since the epoch after which no run goes on: a lease's end), SCALE (the files'
# scale, default full; mid and small for trying the script), PYTHON (default python3, with numpy and gguf).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${PYTHON:-python3}

generate() {
    local work=$1
    mkdir -p "$work"
    # Both at once: the generators are bound by random-number generation and writing, on different cores.
    "$python" "$root/tests/fixtures/make_synthetic_qwen35moe.py" "$work/strix.gguf.part" --scale "${SCALE:-full}" &
    local strix=$!
    "$python" "$root/tests/hip/bench/make_synthetic_q4_0.py" "$work/q4_0.gguf.part" --scale "${SCALE:-full}" &
    local q4_0=$!
    local failed=0
    wait "$strix" && mv "$work/strix.gguf.part" "$work/strix.gguf" || failed=1
    wait "$q4_0" && mv "$work/q4_0.gguf.part" "$work/q4_0.gguf" || failed=1
    return $failed
}

# Seconds a run may take: BENCH_TIMEOUT, or less when BENCH_DEADLINE is near.
budget() {
    local t=${BENCH_TIMEOUT:-240}
    if [ -n "${BENCH_DEADLINE:-}" ]; then
        local left=$((BENCH_DEADLINE - $(date +%s)))
        [ "$left" -lt "$t" ] && t=$left
    fi
    echo "$t"
}

run() {
    local bin=$1 work=$2 out=$3
    mkdir -p "$out"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv \
        >"$out/gpu.csv" 2>&1 || true
    for backend in ${GPU_BACKENDS:-cuda vulkan} cpu; do
        local size=2048
        [ "$backend" = cpu ] && size=1024
        echo "== devices --bandwidth --backend $backend"
        timeout 120 "$bin/ember-cli" devices --json --bandwidth --backend "$backend" --size "$size" \
            >"$out/devices_$backend.json" 2>"$out/devices_$backend.err"
        echo "   exit $? $(grep -o '"bytes_per_second": [0-9.e+]*' "$out/devices_$backend.json")"
    done
    # The GPU runs first, the slow CPU runs last.
    for backend in ${GPU_BACKENDS:-cuda vulkan} cpu; do
        for model in strix q4_0; do
            local args=${GPU_ARGS:--p 512 -n 128 -r 3}
            [ "$backend" = cpu ] && args=${CPU_ARGS:--p 64 -n 16 -r 1}
            local t
            t=$(budget)
            if [ "$t" -lt 10 ]; then
                echo "== bench $model on $backend: skipped, the deadline is near"
                continue
            fi
            echo "== bench $model on $backend ($args, at most $t s)"
            local start=$SECONDS
            # shellcheck disable=SC2086
            timeout "$t" "$bin/ember-cli" bench -m "$work/$model.gguf" --backend "$backend" --speculation off \
                $args --json >"$out/bench_${model}_$backend.json" 2>"$out/bench_${model}_$backend.err"
            echo "   exit $? after $((SECONDS - start)) s"
        done
    done
    "$python" "$here/h200_summary.py" "$out"
}

case "${1:-}" in
    generate) generate "$2" ;;
    run) run "$2" "$3" "$4" ;;
    all) generate "$3" && run "$2" "$3" "$4" ;;
    *) echo "usage: h200_bench.sh generate WORK_DIR | run BIN_DIR WORK_DIR OUT_DIR | all BIN_DIR WORK_DIR OUT_DIR" >&2
       exit 2 ;;
esac
