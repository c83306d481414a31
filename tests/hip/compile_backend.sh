#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Compiles the HIP/CUDA backend in its own build folder so that neither variant can rot in a CPU-only CI:
#   compile_backend.sh hip  SOURCE_DIR BUILD_DIR VENV   hipcc for gfx1030 (Debian 12's ROCm 5.2); must work
#   compile_backend.sh cuda SOURCE_DIR BUILD_DIR VENV   nvcc for sm_90 + PTX; exits 77 (SKIP) without nvcc
# It builds the kernels, the backend and the GPU test binaries (op suite included), not the whole app.
set -euo pipefail
variant=$1 src=$2 build=$3 venv=$4
case "$variant" in
  hip)
    if ! command -v hipcc >/dev/null; then
      echo "FAIL: hipcc not found (packaging/dev.sh installs Debian's hipcc and libamdhip64-dev)" >&2
      exit 1
    fi
    options=(-DEMBER_HIP=ON -DEMBER_HIP_TARGETS=gfx1030)
    ;;
  cuda)
    nvcc=$(command -v nvcc || true)
    [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
    if [ -z "$nvcc" ]; then
      echo "SKIP: nvcc not found; the CUDA variant of the HIP backend is not compiled on this machine"
      exit 77
    fi
    options=(-DEMBER_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc")
    ;;
  *) echo "usage: compile_backend.sh hip|cuda SOURCE_DIR BUILD_DIR VENV" >&2; exit 2 ;;
esac
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_VENV="$venv" -DEMBER_FUZZ=OFF \
      -DEMBER_APP=OFF -DEMBER_VULKAN=OFF "${options[@]}" >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
cmake --build "$build" --target ember_backend backend_ops_test gpu_backend_test gpu_model_test
echo "compiled the $variant variant of the HIP/CUDA backend in $build"
