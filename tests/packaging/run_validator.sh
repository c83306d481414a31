#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs a validator (desktop-file-validate, appstreamcli, ...) on a file; exit 77 (ctest: skipped) when the
# validator is not installed. The validator's own exit status decides.
set -euo pipefail
if ! command -v "$1" >/dev/null; then
  echo "SKIP: $1 is not installed (packaging/dev.sh installs it)"
  exit 77
fi
exec "$@"
