#!/usr/bin/env bash
# Checks that the core shared library exports every C ABI function listed in
# exported_symbols.txt. Usage: check_symbols.sh path/to/libtether_core.so
set -euo pipefail
lib=$1
here=$(cd "$(dirname "$0")" && pwd)
exported=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u)
missing=0
total=0
while read -r sym; do
  [ -z "$sym" ] && continue
  total=$((total + 1))
  if ! grep -qx "$sym" <<<"$exported"; then
    echo "missing export: $sym" >&2
    missing=$((missing + 1))
  fi
done <"$here/exported_symbols.txt"
echo "symbols: $((total - missing)) passed, $missing failed"
[ "$missing" -eq 0 ]
