#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two Ember builds side by side on the full-shape STRIX file (tests/fixtures/make_synthetic_qwen35moe.py), in one call
# of the device tool: prefill pp512, decode tg128 and the verify curve k = 1..16 of each on CUDA (and Vulkan with
# VERIFY_BACKENDS="cuda vulkan"), then the per-kernel GPU profile (EMBER_GPU_PROFILE) of the new build for one
# decode step and for passes of 8, 9 and 16 tokens. The table says what a change to the verify and decode paths did.
#
# Carried (device tool `carry`): .gpurun with bin_base.tar.xz (the build before the change) and bin.tar.xz (after),
# each with ember-cli; libs.tar.xz and the gguf wheel (tests/hip/bench/run_h200.sh); .gl (the Vulkan loader .debs).
# Output under $OUT: base_<backend>.json, new_<backend>.json (ember-cli bench --json), profile_k<K>.txt.
#   VERIFY_DEADLINE: seconds after the start past which no further run starts (default 480); VERIFY_BUILDS: the builds
#   to run (default "base new"); VERIFY_REPS: repetitions of pp512 / tg128 (default 2); VERIFY_PROFILES: the token
#   counts to profile on CUDA (default "1 8 9 16"); VERIFY_VULKAN_PROFILES: the same on Vulkan (default "1 16",
#   EMBER_VULKAN_PROFILE, profile_vulkan_k<K>.txt).
set -u
out=${OUT:-/tmp/out}
work=/tmp/ember-verify
models=/tmp/models
mkdir -p "$out" "$work/base" "$work/bin" "$models"
here=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s)
deadline=$((start + ${VERIFY_DEADLINE:-480}))
left() { echo $((deadline - $(date +%s))); }

. "$here/unpack_gpurun.sh"
unpack_gpurun "$work"  # the new build in $work/bin
[ -f .gpurun/bin_base.tar.xz ] && untar .gpurun/bin_base.tar.xz "$work/base"
nvidia-smi --query-gpu=name --format=csv,noheader

strix=$models/strix.gguf
[ -f "$strix" ] || python3 "$here/../fixtures/make_synthetic_qwen35moe.py" "$strix" --scale full >"$out/generate.log" 2>&1
echo "file ready after $(($(date +%s) - start)) s"

for backend in ${VERIFY_BACKENDS:-cuda}; do
    for build in ${VERIFY_BUILDS:-base new}; do
        [ "$(left)" -gt 60 ] || break
        dir=$work/base; [ "$build" = new ] && dir=$work/bin
        timeout 150 "$dir/ember-cli" bench -m "$strix" --backend "$backend" --speculation off -p 512 -n 128 \
            -r "${VERIFY_REPS:-2}" --verify-curve 16 --json >"$out/${build}_$backend.json" 2>"$out/${build}_$backend.err"
        echo "$build $backend: exit $? after $(($(date +%s) - start)) s"
    done
done
for k in ${VERIFY_PROFILES:-1 8 9 16}; do
    [ "$(left)" -gt 30 ] || break
    n=0; [ "$k" = 1 ] && n=16
    EMBER_GPU_PROFILE=1 timeout 120 "$ember" bench -m "$strix" --backend cuda --speculation off -p "$k" \
        -n "$n" -r 1 >/dev/null 2>"$out/profile_k$k.txt"
done
for k in ${VERIFY_VULKAN_PROFILES:-1 16}; do
    [ "$(left)" -gt 30 ] || break
    n=0; [ "$k" = 1 ] && n=16
    EMBER_VULKAN_PROFILE=1 timeout 120 "$ember" bench -m "$strix" --backend vulkan --speculation off -p "$k" \
        -n "$n" -r 1 >/dev/null 2>"$out/profile_vulkan_k$k.txt"
done

python3 - "$out" <<'EOF'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
def load(name):
    try:
        return json.loads((out / name).read_text())
    except (OSError, ValueError):
        return None
for backend in ("cuda", "vulkan"):
    runs = {b: load(f"{b}_{backend}.json") for b in ("base", "new")}
    if not any(runs.values()):
        continue
    print(f"## {backend}")
    print("| figure | base | new | new / base |")
    print("|---|---:|---:|---:|")
    def row(label, get):
        vals = [get(runs[b]) if runs[b] else None for b in ("base", "new")]
        ratio = f"{vals[1] / vals[0]:.2f}" if all(vals) else ""
        print(f"| {label} | " + " | ".join("" if v is None else f"{v:.2f}" for v in vals) + f" | {ratio} |")
    row("pp512 tok/s", lambda r: r["prefill_tokens_per_second"]["mean"])
    row("tg128 tok/s", lambda r: r["decode_tokens_per_second"]["mean"])
    for k in range(1, 17):
        row(f"verify k={k} ÷ one step",
            lambda r, k=k: {c["tokens"]: c["relative_to_decode_step"] for c in r["verify_cost"]["curve"]}.get(k))
EOF
echo "all done after $(($(date +%s) - start)) s"
