#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every GPU suite in one call of the device tool (about 3 minutes): the op suite on Vulkan and CUDA (with the backend
# contract's planted mistakes), gpu_backend_test, gpu_model_test, gpu_logits_test and gpu_speculative_test on both
# backends against the CPU, and the logits of an image prompt against the numpy reference on CUDA and Vulkan
# (tests/cli/cli_vision_test.py). The fixtures are generated there. Carried (device tool `carry`): .gpurun
# (bin.tar.xz with ember-cli and the five test binaries of one EMBER_CUDA=ON EMBER_VULKAN=ON build, libs.tar.xz, the
# gguf wheel: see tests/hip/bench/run_h200.sh) and .gl (the Vulkan loader .debs). Logs in $OUT/testlogs.tar.gz.
set -u
out=${OUT:-/tmp/out}; work=/tmp/ember-d; logs=$out; mkdir -p "$work/bin" "$work/fixtures"
t0=$(date +%s)
. tests/bench/unpack_gpurun.sh
unpack_gpurun "$work"
export EMBER_FIXTURES=$work/fixtures
bin=$work/bin
nvidia-smi --query-gpu=name --format=csv,noheader
( for s in model:dense qwen35moe:qwen35moe dflash:dflash; do python3 tests/fixtures/make_${s%%:*}_fixtures.py "$work/fixtures/${s##*:}" >/dev/null 2>&1; echo "fixtures ${s##*:} $?"; done ) > "$logs/fixtures.txt" 2>&1 &
fx=$!
g() { local label=$1 name=$2 limit=$3 filter=$4; timeout "$limit" "$bin/$name" --gtest_filter="$filter" >"$logs/$label.log" 2>&1; local rc=$?
  echo "$label: exit $rc, $(grep -cE '^\[       OK \]' "$logs/$label.log") passed, $(grep -cE '^\[  FAILED  \] .*\(' "$logs/$label.log") failed, $(grep -cE '^\[  SKIPPED \]' "$logs/$label.log") skipped"
  grep -E '^\[  FAILED  \] .*\(' "$logs/$label.log" | head -10; }
( g ops_vulkan backend_ops_test 250 '*vulkan*:*Contract*' ) > "$logs/laneA.txt" &
a=$!
( g ops_cuda backend_ops_test 200 '*cuda*'; g gpu_backend gpu_backend_test 100 '*' ) > "$logs/laneB.txt" &
b=$!
wait $fx; cat "$logs/fixtures.txt"
( g gpu_model gpu_model_test 100 '*'; g spec gpu_speculative_test 280 '*' ) > "$logs/laneC.txt" &
c=$!
g logits gpu_logits_test 300 '*' > "$logs/laneD.txt"
wait $a $b $c; cat "$logs"/lane*.txt
python3 tests/fixtures/make_vision_fixtures.py "$work/fixtures/vision" >/dev/null 2>&1; echo "vision fixtures $?"
EMBER_BIN=$bin EMBER_IMAGE_BACKENDS=cuda,vulkan timeout 120 python3 -m pytest -q -p no:cacheprovider tests/cli/cli_vision_test.py -k image_prompt 2>&1 | tail -4
tar -czf "$out/testlogs.tar.gz" -C "$logs" ops_vulkan.log ops_cuda.log gpu_backend.log gpu_model.log spec.log logits.log; rm -f "$logs"/*.log
echo "all done after $(($(date +%s) - t0)) s"
