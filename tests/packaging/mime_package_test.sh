#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shared-mime-info package: well-formed XML (xmllint), accepted by update-mime-database, and compiled into the
# glob *.gguf and the magic "GGUF" at offset 0 for application/x-gguf.
set -euo pipefail
package=$1
for tool in xmllint update-mime-database; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (packaging/dev.sh installs it)"; exit 77; }
done
xmllint --noout "$package"
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
mime=$data/mime
mkdir -p "$mime/packages"
cp "$package" "$mime/packages/org.ember.Ember.xml"
# update-mime-database warns (and still succeeds) on unknown elements: a warning fails the test.
warnings=$(XDG_DATA_HOME=$data XDG_DATA_DIRS=$data update-mime-database "$mime" 2>&1 >/dev/null)
if [ -n "$warnings" ]; then echo "update-mime-database: $warnings"; exit 1; fi
grep -qx '50:application/x-gguf:\*\.gguf' "$mime/globs2" || { echo "globs2 lacks *.gguf:"; cat "$mime/globs2"; exit 1; }
# magic: "[50:application/x-gguf]" then ">0=" + a 2-byte big-endian length (4) + "GGUF".
python3 - "$mime/magic" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
want = b"[50:application/x-gguf]\n>0=\x00\x04GGUF"
sys.exit(0 if want in data else f"magic lacks GGUF at offset 0: {data!r}")
PY
echo "application/x-gguf: *.gguf and GGUF at offset 0"
