#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds BUILD/ember_<version>_amd64.deb with CPack from the built tree (what `packaging/dev.sh package` does after
# building), replacing older ones so that the tests after it find exactly one, and prints its name and sizes.
set -euo pipefail
build=$1
rm -f "$build"/ember_*_amd64.deb
(cd "$build" && cpack -G DEB --config CPackConfig.cmake >cpack.log 2>&1) || { cat "$build/cpack.log"; exit 1; }
deb=$(ls "$build"/ember_*_amd64.deb)
# The version is written at build time: a package made from binaries older than the last commit says so.
built=$("$build/bin/ember-cli" --version | cut -d' ' -f2)
[ "$built" = "$(dpkg-deb -f "$deb" Version)" ] \
  || { echo "$deb: the programs say version $built; build again before packaging"; exit 1; }
echo "$deb: $(stat -c %s "$deb") bytes, Installed-Size $(dpkg-deb -f "$deb" Installed-Size) KiB"
dpkg-deb -f "$deb" Version Depends
