#!/usr/bin/env bash
# Checks that the core shared library exports every C ABI function listed in
# exported_symbols.txt (including the API table entry point), and on ELF that
# it was linked with -Bsymbolic, so its references to its own TVMFFI*
# functions cannot be captured by another library exporting the same names,
# and that its SONAME is libtether_core.so.
# Usage: check_symbols.sh path/to/libtether_core.so
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
# Everything the peer library (apache-tvm-ffi) exports as a function, C and
# C++ names alike, so a library built against its headers links to the core
# instead; peer_exports_missing.txt names the known gaps, and is checked to
# be exactly the gaps.
known_missing=$({ grep -v '^#' "$here/peer_exports_missing.txt" || true; } | awk '{print $1}')
while read -r sym; do
  [ -z "$sym" ] && continue
  total=$((total + 1))
  exported_here=0
  grep -qx "$sym" <<<"$exported" && exported_here=1
  listed_missing=0
  grep -qx "$sym" <<<"$known_missing" && listed_missing=1
  if [ $exported_here -eq 0 ] && [ $listed_missing -eq 0 ]; then
    echo "missing export of the peer library: $sym" >&2
    missing=$((missing + 1))
  elif [ $exported_here -eq 1 ] && [ $listed_missing -eq 1 ]; then
    echo "exported but listed in peer_exports_missing.txt: $sym" >&2
    missing=$((missing + 1))
  fi
done < <(grep -v '^#' "$here/peer_exports.txt")
# -Bsymbolic sets DT_SYMBOLIC, shown by readelf as the SYMBOLIC flag (in
# DT_FLAGS) or as its own SYMBOLIC entry, depending on the linker.
total=$((total + 1))
if ! readelf -d "$lib" | grep -qw SYMBOLIC; then
  echo "not linked with -Bsymbolic: no SYMBOLIC in the dynamic section of $lib" >&2
  missing=$((missing + 1))
fi
# The effect itself: no dynamic relocation of the library still names one of
# its own TVMFFI* symbols (without -Bsymbolic, the API table's entries and
# the core's calls to itself go through such relocations and would bind to
# whichever library the global scope offers first).
total=$((total + 1))
if own=$(readelf -rW "$lib" | awk '$5 ~ /^TVMFFI/ {print $5}' | sort -u | grep .); then
  echo "relocations against the library's own symbols (interposable):" $own >&2
  missing=$((missing + 1))
fi
# The SONAME, which a program linked against the library records as the
# name it needs (instead of the path it was linked from).
total=$((total + 1))
if ! readelf -d "$lib" | grep -q '(SONAME).*\[libtether_core\.so\]'; then
  echo "no SONAME libtether_core.so in the dynamic section of $lib" >&2
  missing=$((missing + 1))
fi
echo "symbols: $((total - missing)) passed, $missing failed"
[ "$missing" -eq 0 ]
