#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The checks of an installed Ember, wherever it is installed (the .deb unpacked by installed_tree_test.sh, or a
# Debian root made by packaging/check_install.sh), run in a bare environment:
#   - ember-cli answers with the small model;
#   - ember draws the chat window offscreen with that model loaded (SHOTS/installed-chat.png), and the welcome page
#     of a first run without one (SHOTS/installed-welcome.png);
#   - a second `ember FILE.gguf` hands the file to the running ember, which records it in its library where it lies
#     and loads it.
# Each run is traced with strace: no path under a FORBIDDEN folder (the source tree, the build tree, the venv) may
# be touched, and no Python started.
# usage: installed_checks.sh BIN_DIR MODEL.gguf WORK_DIR SHOTS [FORBIDDEN...]
set -euo pipefail
bin=$1 model=$2 root=$3 shots=$4
shift 4
forbidden=("$@")
for tool in strace timeout; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (packaging/dev.sh installs it)"; exit 77; }
done
first=""
trap '[ -n "$first" ] && kill "$first" 2>/dev/null; wait' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$root/home" "$root/run" "$shots"
chmod 700 "$root/run"
cd "$root"  # relative paths must not resolve into the build tree (ctest starts tests there)

# A bare environment: nothing the build or the test runner sets (EMBER_*, LD_LIBRARY_PATH, QML paths) leaks in.
bare() {
  env -i PATH=/usr/bin:/bin HOME="$root/home" XDG_RUNTIME_DIR="$root/run" LANG=C.UTF-8 QT_QPA_PLATFORM=offscreen "$@"
}
traced() {
  local trace=$1
  shift
  bare strace -f -qq -e trace=%file,%process -o "$trace" "$@"
}
check_trace() {
  local trace=$1 dir hits
  for dir in "${forbidden[@]}"; do
    hits=$(grep -F "\"$dir" "$trace" | grep -E "\"$dir(/[^\"]*)?\"" | head -5 || true)
    [ -z "$hits" ] || fail "$trace: the installed program touched $dir:"$'\n'"$hits"
  done
  hits=$(grep -E 'exec[a-z]*\("[^"]*python' "$trace" | head -3 || true)
  [ -z "$hits" ] || fail "$trace: the installed program started Python:"$'\n'"$hits"
  echo "$(basename "$trace"): $(grep -c . "$trace") file and process calls; none started Python${forbidden:+ or touched ${forbidden[*]}}"
}

echo "== ember-cli --version, ember --version"
bare "$bin/ember-cli" --version
bare "$bin/ember" --version

echo "== ember-cli run with the small model"
answer=$(traced "$root/cli.trace" timeout 300 "$bin/ember-cli" run -m "$model" --chat --seed 1 -n 24 \
           -p "What is the capital of France? Answer in one word.")
echo "answer: $answer"
[ -n "$(echo "$answer" | tr -d '[:space:]')" ] || fail "ember-cli run gave no answer"
check_trace "$root/cli.trace"

echo "== ember draws the chat window with the model loaded"
out=$(traced "$root/app.trace" timeout 300 "$bin/ember" --data-dir "$root/data" --models-dir "$root/library" --offline \
        --screenshot "$root/installed-chat.png" "$model") || fail "ember --screenshot: $out"
echo "$out"
echo "$out" | grep -q "saved with $model loaded" || fail "the model did not load"
check_trace "$root/app.trace"
cp "$root/installed-chat.png" "$shots/"  # after the trace: SHOTS may lie in the build tree

echo "== the first run without a model: the welcome page"
out=$(bare timeout 120 "$bin/ember" --data-dir "$root/fresh" --models-dir "$root/library-fresh" --offline \
        --screenshot "$root/installed-welcome.png") || fail "ember --screenshot (no model): $out"
echo "$out"
echo "$out" | grep -q "saved, no model loaded" || fail "a model was loaded on a first run"
cp "$root/installed-welcome.png" "$shots/"

echo "== a second ember hands its file to the running one"
bare "$bin/ember" --data-dir "$root/shared" --models-dir "$root/library2" --offline --no-model >"$root/first.log" 2>&1 &
first=$!
for _ in $(seq 100); do
  compgen -G "$root/run/ember-*[0-9a-f]" >/dev/null && break
  kill -0 "$first" 2>/dev/null || fail "the first ember exited: $(cat "$root/first.log")"
  sleep 0.3
done
compgen -G "$root/run/ember-*[0-9a-f]" >/dev/null || fail "the first ember never listened in $root/run"
traced "$root/handoff.trace" timeout 30 "$bin/ember" --data-dir "$root/shared" --offline "$model" \
  || fail "the second ember did not hand its file over"
check_trace "$root/handoff.trace"
for _ in $(seq 200); do
  grep -qF "last=$model" "$root/shared/settings.ini" 2>/dev/null && grep -qF "\"$model\"" "$root/library2/library.json" 2>/dev/null && break
  sleep 0.3
done
grep -qF "last=$model" "$root/shared/settings.ini" || fail "the running ember did not load the handed-over model: $(cat "$root/first.log")"
grep -qF "\"$model\"" "$root/library2/library.json" || fail "the handed-over model is not in the library"
[ -z "$(find "$root/library2" -name '*.gguf')" ] || fail "the library copied the model instead of recording it in place"
echo "the running ember loaded $model and recorded it in its library in place"
