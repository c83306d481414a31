#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Ember against the seed's llama.cpp fork (the peer, ../shared/peers/rocmfpx) on one H200, in one call of the device
# tool, on the same two full-shape files (tests/fixtures/make_synthetic_qwen35moe.py and
# tests/hip/bench/make_synthetic_q4_0.py): prefill pp512, decode tg128, decode at a depth of 4096 and the verify
# curve k = 1..16, the fork on CUDA (llama-bench -ngl 99 -fa 1), Ember on CUDA and Vulkan; prints one table of
# ratios (peer_summary.py) with Ember's per-step overhead (step time - weight bytes / copy bandwidth).
#
# Carried (device tool `carry`): .peer (the fork's source tarball, copied from ../shared/peers/rocmfpx), .gpurun
# (bin.tar.xz with ember-cli, libs.tar.xz, the gguf wheel: see tests/hip/bench/run_h200.sh) and .gl (the Vulkan loader).
#   PEER_DEADLINE: seconds after the start past which no further run starts (default 540); a whole run takes
#   ≈ 9 minutes (fork build 5, Ember 2.5, fork 1). PEER_WAIT_FOR: see below.
set -u
start=$(date +%s)
deadline=$((start + ${PEER_DEADLINE:-540}))
out=${OUT:-/tmp/out}
work=/tmp/ember-peer
models=/tmp/models
mkdir -p "$out" "$work/bin" "$work/res" "$models"
here=$(cd "$(dirname "$0")" && pwd)
left() { echo $((deadline - $(date +%s))); }

. "$here/unpack_gpurun.sh"
unpack_gpurun "$work"

# The fork builds (≈ 5 minutes on 16 cores) while the files are generated.
(
    mkdir -p /tmp/fk && tar -C /tmp/fk -xJf .peer/rocmfpx-*.tar.xz && cd /tmp/fk/fork &&
        cmake -B b -G Ninja -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
            -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_WEBUI=OFF &&
        cmake --build b -j16 --target llama-bench
) >"$work/res/peer_build.log" 2>&1 &
peer_build=$!

[ -f $models/strix.gguf ] && [ -f $models/q4_0.gguf ] || SCALE=full bash "$here/h200_bench.sh" generate $models \
    >"$work/res/generate.log" 2>&1
echo "files ready after $(($(date +%s) - start)) s"
# Nothing is timed while the fork compiles: a busy host slows the GPU backends' recording (Vulkan decode lost a
# quarter of its speed next to the build in the first run of this script).
wait "$peer_build"
echo "peer build: exit $? after $(($(date +%s) - start)) s"
# PEER_WAIT_FOR: a path whose appearance the timed runs wait for (e.g. the GPU suites, run beside the fork's build).
while [ -n "${PEER_WAIT_FOR:-}" ] && [ ! -e "$PEER_WAIT_FOR" ]; do sleep 2; done
tail -3 "$work/res/peer_build.log"

for backend in cuda vulkan; do
    timeout 60 "$ember" devices --json --bandwidth --backend "$backend" --size 2048 >"$work/res/copy_$backend.json" 2>&1
done
for model in strix q4_0; do
    for backend in cuda vulkan; do
        [ "$(left)" -gt 60 ] || break
        timeout 200 "$ember" bench -m $models/$model.gguf --backend "$backend" --speculation off -p 512 -n 128 -r 3 \
            --verify-curve 16 --json >"$work/res/ember_${model}_$backend.json" 2>"$work/res/ember_${model}_$backend.err"
        timeout 200 "$ember" bench -m $models/$model.gguf --backend "$backend" --speculation off -p 4096 -n 128 -r 1 \
            --json >"$work/res/ember_${model}_${backend}_d4096.json" 2>>"$work/res/ember_${model}_$backend.err"
        echo "ember $model $backend done after $(($(date +%s) - start)) s"
    done
done

bench=/tmp/fk/fork/b/bin/llama-bench
if [ -x "$bench" ]; then
    for model in strix q4_0; do
        [ "$(left)" -gt 40 ] || break
        # -d 0,512: the fork's decode also at the depth where Ember's bench decodes (after its 512-token prompt).
        timeout "$(left)" "$bench" -m $models/$model.gguf -p 512 -n 128 -d 0,512 -r 3 -ngl 99 -fa 1 -o json \
            >"$work/res/peer_${model}.json" 2>"$work/res/peer_${model}.err"
        timeout "$(left)" "$bench" -m $models/$model.gguf -p 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 -n 0 -r 5 -ngl 99 \
            -fa 1 -o json >"$work/res/peer_${model}_verify.json" 2>>"$work/res/peer_${model}.err"
        [ "$(left)" -gt 40 ] || break
        timeout "$(left)" "$bench" -m $models/$model.gguf -p 0 -n 128 -d 4096 -r 2 -ngl 99 -fa 1 -o json \
            >"$work/res/peer_${model}_d4096.json" 2>>"$work/res/peer_${model}.err"
        echo "peer $model done after $(($(date +%s) - start)) s"
    done
fi
python3 "$here/peer_summary.py" "$work/res" | tee "$out/peer_table.txt"
tar -C "$work" -czf "$out/peer_results.tar.gz" res
echo "done after $(($(date +%s) - start)) s"
