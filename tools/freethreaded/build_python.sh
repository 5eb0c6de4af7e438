#!/usr/bin/env bash
# Builds a free-threaded CPython (PEP 703, --disable-gil) once into a cache
# folder and prints its interpreter's path. No registry ships one, so the
# source comes from Debian's archive (trixie's python3.13 source package:
# CPython 3.13.5). Needs root for apt-get (the build dependencies and the
# deb-src entry); later runs reuse the cache.
#
# --tsan (or TETHER_FT_TSAN=1) builds the ThreadSanitizer variant instead,
# into its own prefix (cpython-$version-ft-tsan): clang with
# --with-thread-sanitizer, as CPython's own CI builds it. The TSan runtime is
# then linked statically into the interpreter, and every instrumented shared
# library loaded later (tether's extension and core) uses that one runtime.
set -euo pipefail

tsan=${TETHER_FT_TSAN:-0}
for arg in "$@"; do
  case "$arg" in
    --tsan) tsan=1 ;;
    *) echo "usage: $0 [--tsan]" >&2; exit 2 ;;
  esac
done

version=3.13.5
cache="${TETHER_FT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tether}"
variant=ft
[ "$tsan" = 1 ] && variant=ft-tsan
prefix="$cache/cpython-$version-$variant"
python="$prefix/bin/python3.13t"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# A TSan interpreter exits with 66 when it reports anything; CPython's
# own start-up is not what is checked here.
check_env=()
[ "$tsan" = 1 ] && check_env=(env TSAN_OPTIONS="exitcode=0 report_bugs=0")
is_built() {
  "${check_env[@]}" "$python" -c '
import sys, ssl, sysconfig, zlib
tsan = "--with-thread-sanitizer" in sysconfig.get_config_var("CONFIG_ARGS")
sys.exit(sys._is_gil_enabled() or tsan != (sys.argv[1] == "1"))' "$tsan" 2>/dev/null
}
if [ -x "$python" ] && is_built; then
  echo "$python"
  exit 0
fi

log() { printf '%s\n' "$*" >&2; }
export DEBIAN_FRONTEND=noninteractive
if ! grep -rqs '^deb-src .*trixie' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  log "adding a deb-src entry for trixie"
  echo "deb-src http://deb.debian.org/debian trixie main" > /etc/apt/sources.list.d/tether-trixie-src.list
fi
packages=(build-essential pkg-config libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev
  libsqlite3-dev libreadline-dev libncurses-dev uuid-dev)
# clang for the TSan build, llvm for llvm-symbolizer (TSan's stacks).
[ "$tsan" = 1 ] && packages+=(clang llvm)
apt-get update -qq >&2
apt-get install -y -qq "${packages[@]}" >&2

work="$cache/build-$version-$variant"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
log "fetching CPython $version's source from Debian's archive"
apt-get source -qq --download-only "python3.13=$version-*" >&2 2>/dev/null || apt-get source -qq --download-only python3.13 >&2
tar -xf python3.13_"$version".orig.tar.xz
src=$(find . -maxdepth 1 -type d -name 'Python-*' | head -n 1)
cd "$src"
if [ "$tsan" = 1 ]; then
  # Code instrumented by a newer LLVM (Rust nightly's) calls
  # __tsan_memcpy/__tsan_memmove/__tsan_memset, which the TSan runtime of
  # older clangs (Debian bookworm's clang 14) lacks; the interpreter
  # exports them (LINKFORSHARED keeps -export-dynamic) as calls to the
  # runtime's intercepted memcpy/memmove/memset, which is what newer
  # runtimes do.
  clang -O2 -fPIC -c "$here/tsan_memintrinsics.c" -o tsan_memintrinsics.o
  # CPython's own build runs the new interpreter (freezing, ensurepip,
  # compileall); its reports about CPython itself must not stop the build.
  export TSAN_OPTIONS="exitcode=0 report_bugs=0"
  log "configuring with --disable-gil --with-thread-sanitizer (clang) into $prefix"
  ./configure --quiet CC=clang CXX=clang++ --disable-gil --with-thread-sanitizer --prefix="$prefix" \
    --with-ensurepip=install >&2
  make_vars=(LINKFORSHARED="-Xlinker -export-dynamic $PWD/tsan_memintrinsics.o")
else
  log "configuring with --disable-gil into $prefix"
  ./configure --quiet --disable-gil --prefix="$prefix" --with-ensurepip=install >&2
  make_vars=()
fi
log "building (minutes on two cores; the TSan variant takes longer)"
make -s -j"$(nproc)" "${make_vars[@]}" >&2
make -s install "${make_vars[@]}" >&2
if [ "$tsan" = 1 ]; then
  # Kept beside the interpreter: suppressions for CPython's own known
  # reports, as its CI uses them.
  if [ -f Tools/tsan/suppressions_free_threading.txt ]; then
    mkdir -p "$prefix/share/tether"
    cp Tools/tsan/suppressions_free_threading.txt "$prefix/share/tether/cpython_tsan_suppressions.txt"
  fi
fi
cd /
rm -rf "$work"
is_built || { log "the interpreter at $python is not the expected build"; exit 1; }
echo "$python"
