#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# lintian on the .deb: fails on any error; warnings are printed for the record (each one is explained in
# packaging/README.md).
set -euo pipefail
build=$1
command -v lintian >/dev/null || { echo "SKIP: lintian is not installed (packaging/dev.sh installs it)"; exit 77; }
deb=$(ls "$build"/ember_*_amd64.deb)
lintian --fail-on error --display-level '>=warning' --info "$deb"
