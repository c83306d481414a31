#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One call on the NVIDIA H200 machine (the device tool), with binaries built here by an EMBER_CUDA=ON,
# EMBER_VULKAN=ON build: the op suite and the GPU tests on the CUDA build of the HIP backend, then decode and
# prefill of the full-shape synthetic Qwen3.6-35B-A3B (ROCmFP4 STRIX and Q4_0) on it and on Vulkan.
# Carried: .carry/bin (backend_ops_test gpu_backend_test gpu_model_test gpu_bench), .carry/fixtures,
# .carry/whl (the gguf wheel), .gl (Vulkan loader .debs, as the device notes describe).
set -u
bin=.carry/bin
out=${OUT:-/tmp/out}
mkdir -p "$out"
export EMBER_FIXTURES=$PWD/.carry/fixtures
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
python3 -m pip install -q --no-index --no-deps --target /tmp/site .carry/whl/*.whl && export PYTHONPATH=/tmp/site
# Both 19 GB files are written while the tests run.
python3 tests/fixtures/make_synthetic_qwen35moe.py /tmp/strix.gguf --scale full >"$out/gen_strix.log" 2>&1 &
python3 tests/hip/bench/make_synthetic_q4_0.py /tmp/q4_0.gguf --scale full >"$out/gen_q4_0.log" 2>&1 &
for t in backend_ops_test gpu_backend_test gpu_model_test; do
  filter='*'
  [ "$t" = backend_ops_test ] && filter='*cuda*:*vulkan*'
  timeout 300 "$bin/$t" --gtest_filter="$filter" >"$out/$t.log" 2>&1
  echo "$t: exit $? $(grep -E '^\[  PASSED|^\[  FAILED|tests? ran' "$out/$t.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED|in place:' "$out/$t.log" | head -20
done
wait
tail -1 "$out/gen_strix.log" "$out/gen_q4_0.log"
# Weight bytes of one decode step (all but token_embd and the MTP block; 8 of 256 experts), from the plan.
declare -A step_bytes=([strix]=1.659e9 [q4_0]=1.734e9)
for model in strix q4_0; do
  for backend in cuda vulkan; do
    timeout 170 "$bin/gpu_bench" "/tmp/$model.gguf" "$backend" 512 64 "${step_bytes[$model]}" 2>&1 | tee -a "$out/bench.log"
  done
done
