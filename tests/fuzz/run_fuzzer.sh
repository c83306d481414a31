#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs a libFuzzer binary for a fixed time on a corpus seeded from the given directories.
#   run_fuzzer.sh FUZZER CORPUS_DIR SECONDS SEED_DIR...
set -euo pipefail
fuzzer=$1 corpus=$2 seconds=$3
shift 3
mkdir -p "$corpus" "$corpus.artifacts"
for seeds in "$@"; do
  # -size -1024k: under 1 MiB (find rounds sizes up to whole units, so -size -1M matched only empty files).
  [ -d "$seeds" ] && find "$seeds" -maxdepth 1 -type f -size -1024k -exec cp -n {} "$corpus/" \;
done
# A dictionary beside this script named after the fuzzer (jinja_fuzzer.dict) steers mutations to known hazards.
dict=$(dirname "$0")/$(basename "$fuzzer").dict
dict_option=()
[ -f "$dict" ] && dict_option=(-dict="$dict")
# -malloc_limit_mb: no input may make the code under test allocate much (inputs are at most 64 KiB).
exec "$fuzzer" "$corpus" "${dict_option[@]}" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
  -rss_limit_mb=2048 -malloc_limit_mb=64 -artifact_prefix="$corpus.artifacts/" -print_final_stats=1 2>&1 | tail -n 25
