#!/usr/bin/env bash
# Builds a free-threaded CPython (PEP 703, --disable-gil) once into a cache
# folder and prints its interpreter's path. No registry ships one, so the
# source comes from Debian's archive (trixie's python3.13 source package:
# CPython 3.13.5). Needs root for apt-get (the build dependencies and the
# deb-src entry); later runs reuse the cache.
set -euo pipefail

version=3.13.5
cache="${TETHER_FT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tether}"
prefix="$cache/cpython-$version-ft"
python="$prefix/bin/python3.13t"
if [ -x "$python" ] && "$python" -c 'import sys, ssl, zlib; sys.exit(sys._is_gil_enabled())' 2>/dev/null; then
  echo "$python"
  exit 0
fi

log() { printf '%s\n' "$*" >&2; }
export DEBIAN_FRONTEND=noninteractive
if ! grep -rqs '^deb-src .*trixie' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  log "adding a deb-src entry for trixie"
  echo "deb-src http://deb.debian.org/debian trixie main" > /etc/apt/sources.list.d/tether-trixie-src.list
fi
apt-get update -qq >&2
apt-get install -y -qq build-essential pkg-config libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev \
  libsqlite3-dev libreadline-dev libncurses-dev uuid-dev >&2

work="$cache/build-$version"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
log "fetching CPython $version's source from Debian's archive"
apt-get source -qq --download-only "python3.13=$version-*" >&2 2>/dev/null || apt-get source -qq --download-only python3.13 >&2
tar -xf python3.13_"$version".orig.tar.xz
src=$(find . -maxdepth 1 -type d -name 'Python-*' | head -n 1)
cd "$src"
log "configuring with --disable-gil into $prefix"
./configure --quiet --disable-gil --prefix="$prefix" --with-ensurepip=install >&2
log "building (minutes on two cores)"
make -s -j"$(nproc)" >&2
make -s install >&2
cd /
rm -rf "$work"
"$python" -c 'import sys; assert not sys._is_gil_enabled(), "the GIL is enabled"'
echo "$python"
