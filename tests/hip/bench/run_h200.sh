#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole GPU evidence of issues 10 (Vulkan) and 11 (CUDA build of the HIP backend) in one call on the NVIDIA
# H200 machine (the device tool), with binaries built here by one EMBER_CUDA=ON + EMBER_VULKAN=ON build:
#   1. the two ≈ 19 GB full-shape files are generated in the background (tests/bench/h200_bench.sh generate);
#   2. meanwhile, in four lanes: the op suite on Vulkan and CUDA, gpu_backend_test and gpu_model_test (CUDA);
#      gpu_logits_test (Vulkan and CUDA against the CPU backend); gpu_speculative_test on Vulkan; on CUDA;
#   3. the benchmarks (tests/bench/h200_bench.sh run), until DEADLINE seconds after the start;
#   4. a per-shader GPU profile of Vulkan decode (EMBER_VULKAN_PROFILE=1) on the STRIX file;
#   5. the host's time recording vs waiting in Vulkan decode, and a per-shader profile of a 512-token prefill;
#   6. Vulkan prefill with the tiled kernels instead of cooperative matrices (EMBER_VULKAN_COOPERATIVE_MATRIX=0);
#   before the benchmarks: the backend "auto" on the STRIX file, whole on the GPU and capped to 8 GB (host experts).
# Carried (device tool `carry`): .gpurun (bin.tar.xz: ember-cli and the test binaries; fixtures.tar.xz: the test
# fixtures; libs.tar.xz: Debian 12's libicuuc/libicudata 72, libpcre2-8 and libcpp-httplib 0.11 with what it links
# (libssl/libcrypto 3, libz, libbrotli*), which the binaries need and the device image may lack; the gguf wheel) and
# .gl (the Vulkan loader .debs, as the device notes describe).
# Everything lands in $OUT: summary.txt / summary.json (benchmarks), tests.txt (per-test counts), logs.tar.gz.
set -u
start=$(date +%s)
deadline=$((start + ${DEADLINE:-540}))
carry=.gpurun
out=${OUT:-/tmp/out}
work=/tmp/ember-h200
logs=$work/logs
mkdir -p "$out" "$logs" "$work/bin"
pack() { tar -C "$work" -czf "$out/logs.tar.gz" logs 2>/dev/null; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv
df -h /tmp | tail -1
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$icd" ] && export VK_DRIVER_FILES=$icd
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$carry"/*.whl && export PYTHONPATH=/tmp/site
untar() { python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2"; }
untar "$carry/bin.tar.xz" "$work/bin"
untar "$carry/fixtures.tar.xz" "$work"
untar "$carry/libs.tar.xz" "$work"
for l in "$work"/libs/*; do ldconfig -p | grep -q " $(basename "$l") " && rm -f "$l"; done  # the system's own first
export LD_LIBRARY_PATH=$work/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export EMBER_FIXTURES=$work/fixtures
bin=$work/bin

SCALE=${SCALE:-full} bash tests/bench/h200_bench.sh generate /tmp/models >"$logs/generate.log" 2>&1 &
generator=$!

"$bin/ember-cli" devices >"$logs/devices.log" 2>&1
cat "$logs/devices.log"

# One gtest binary (log LABEL.log): runs it under a timeout and prints its counts.
gtest() {
    local label=$1 name=$2 limit=$3 filter=$4
    local log=$logs/$label.log
    timeout "$limit" "$bin/$name" --gtest_filter="$filter" >"$log" 2>&1
    local rc=$?
    local passed failed skipped
    passed=$(grep -cE '^\[       OK \] .* \([0-9]+ ms\)$' "$log")
    failed=$(grep -cE '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$log")
    skipped=$(grep -cE '^\[  SKIPPED \] .* \([0-9]+ ms\)$' "$log")
    echo "$label: $name --gtest_filter=$filter: exit $rc, $passed passed, $failed failed, $skipped skipped" |
        tee -a "$logs/tests.txt"
    grep -E '^\[  FAILED  \] .* \([0-9]+ ms\)$' "$log" | head -20 | tee -a "$logs/tests.txt"
}

# Four lanes at once (the GPU runs the processes side by side; their speed does not matter here).
(
    gtest device_choice device_choice_test 30 '*'
    timeout 120 python3 tests/backend/backend_coverage.py check "$bin/backend_ops_test" cpu,vulkan,cuda \
        >"$logs/coverage.log" 2>&1
    echo "op suite on every backend: exit $?" | tee -a "$logs/tests.txt"
    gtest ops_vulkan backend_ops_test 150 '*vulkan*'
    gtest coopmat vk_coopmat_test 60 '*'
    gtest ops_cuda backend_ops_test 100 '*cuda*'
    gtest gpu_backend gpu_backend_test 60 '*'
    gtest gpu_model gpu_model_test 90 '*'
) &
lane_a=$!
gtest logits gpu_logits_test 240 '*' &
lane_b=$!
gtest speculative_vulkan gpu_speculative_test 240 '*vulkan*' &
lane_c=$!
gtest speculative_cuda gpu_speculative_test 240 '*cuda*' &
lane_d=$!
wait "$lane_a" "$lane_b" "$lane_c" "$lane_d"
cp "$logs/tests.txt" "$out/tests.txt"
grep -h '^\[ figures' "$logs"/logits.log "$logs"/speculative_*.log >"$out/figures.txt"
pack
echo "tests done after $(($(date +%s) - start)) s"

# The files take a few minutes; past the point where no benchmark could finish, give up on them.
while kill -0 "$generator" 2>/dev/null && [ "$(date +%s)" -lt $((deadline - 90)) ]; do sleep 2; done
if kill -0 "$generator" 2>/dev/null; then
    echo "generate: still running after $(($(date +%s) - start)) s; stopped, no benchmarks"
    pkill -P "$generator"; kill "$generator"
fi
wait "$generator"
echo "generate: exit $? after $(($(date +%s) - start)) s"
tail -2 "$logs/generate.log"
ls -la /tmp/models
# The backend "auto" (issue 16): with no --backend the GPU is chosen (info says where and why, run prints the device
# after the answer); with the GPU capped to 8 GB the MoE experts stay in host memory and run on the CPU. Decode of
# both placements side by side.
if [ -f /tmp/models/strix.gguf ]; then
    "$bin/ember-cli" devices | tail -2 | tee "$out/auto_device.txt"
    "$bin/ember-cli" info /tmp/models/strix.gguf 2>&1 | tail -3 | tee -a "$out/auto_device.txt"
    timeout 120 "$bin/ember-cli" run -m /tmp/models/strix.gguf -p "The capital of France is" -n 16 \
        --speculation off 2>&1 | tail -3 | tee -a "$out/auto_device.txt"
    for cap in none 8G; do
        gpu_memory=()
        [ "$cap" != none ] && gpu_memory=(--gpu-memory "$cap")
        timeout 240 "$bin/ember-cli" bench -m /tmp/models/strix.gguf --speculation off -p 512 -n 64 -r 2 --json \
            "${gpu_memory[@]}" >"$out/auto_bench_$cap.json" 2>"$logs/auto_bench_$cap.err"
        echo "auto bench, GPU memory cap $cap: exit $?" | tee -a "$out/auto_device.txt"
        python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["device"]["placement"], d["device"]["reason"]); print("prefill", d["prefill_tokens_per_second"], "decode", d["decode_tokens_per_second"])' \
            "$out/auto_bench_$cap.json" 2>&1 | tee -a "$out/auto_device.txt"
    done
fi
BENCH_DEADLINE=$((deadline - 15)) bash tests/bench/h200_bench.sh run "$bin" /tmp/models "$work/bench" 2>&1 |
    tee "$logs/bench.log"
cp "$work/bench/summary.txt" "$work/bench/summary.json" "$out/" 2>/dev/null
# 4. Where Vulkan decode spends its GPU time: GPU time per shader (EMBER_VULKAN_PROFILE) over 64 decode steps.
if [ -f /tmp/models/strix.gguf ] && [ "$(date +%s)" -lt $((deadline - 40)) ]; then
    EMBER_VULKAN_PROFILE=1 timeout $((deadline - $(date +%s) - 5)) "$bin/ember-cli" bench -m /tmp/models/strix.gguf \
        --backend vulkan -p 8 -n 64 -r 1 --speculation off >"$out/vulkan_decode_profile.txt" 2>&1
    head -40 "$out/vulkan_decode_profile.txt"
fi
# 5. Whether the host or the GPU limits Vulkan decode (host time recording vs waiting), and where a 512-token
#    prefill spends its GPU time.
if [ -f /tmp/models/strix.gguf ] && [ "$(date +%s)" -lt $((deadline - 30)) ]; then
    EMBER_VULKAN_PROFILE=host timeout $((deadline - $(date +%s) - 5)) "$bin/ember-cli" bench -m /tmp/models/strix.gguf \
        --backend vulkan -p 8 -n 64 -r 1 --speculation off 2>&1 | grep -E 'host times|decode' >>"$out/vulkan_extra.txt"
    cat "$out/vulkan_extra.txt"
fi
if [ -f /tmp/models/strix.gguf ] && [ "$(date +%s)" -lt $((deadline - 30)) ]; then
    EMBER_VULKAN_PROFILE=1 timeout $((deadline - $(date +%s) - 5)) "$bin/ember-cli" bench -m /tmp/models/strix.gguf \
        --backend vulkan -p 512 -n 1 -r 1 --speculation off >"$out/vulkan_prefill_profile.txt" 2>&1
    head -30 "$out/vulkan_prefill_profile.txt"
fi
# 6. Prefill on cooperative matrices (the benchmarks above) against the tiled kernels they replace.
if [ -f /tmp/models/strix.gguf ] && [ "$(date +%s)" -lt $((deadline - 30)) ]; then
    EMBER_VULKAN_COOPERATIVE_MATRIX=0 timeout $((deadline - $(date +%s) - 5)) "$bin/ember-cli" bench \
        -m /tmp/models/strix.gguf --backend vulkan -p 512 -n 16 -r 2 --speculation off 2>&1 |
        tee -a "$out/vulkan_extra.txt"
fi
cp -r "$work/bench" "$logs/"
pack
echo "done after $(($(date +%s) - start)) s"
