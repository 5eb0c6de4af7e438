#!/usr/bin/env bash
# Builds CPython SERIES (3.14, 3.15, …) from Debian's source package
# python$SERIES once into a cache folder and prints its interpreter's path;
# --freethreaded builds the free-threaded variant (--disable-gil,
# python${SERIES}t). No registry ships these interpreters for this machine;
# Debian carries the sources: python3.14 and python3.15 in forky (testing)
# and sid (unstable). The archive's source indices are read with a private
# apt configuration (the system's sources are left alone); the newest
# version whose files the archive serves is built. Needs root for apt-get
# (the build dependencies); later runs reuse the cache.
#
# Exit status 3: no suite of the archive serves the source package.
set -euo pipefail

usage() { echo "usage: $0 SERIES [--freethreaded]   (SERIES as 3.14)" >&2; exit 2; }
[ $# -ge 1 ] || usage
series=$1; shift
[[ "$series" =~ ^3\.[0-9]+$ ]] || usage
ft=0
for arg in "$@"; do
  case "$arg" in
    --freethreaded) ft=1 ;;
    *) usage ;;
  esac
done

cache="${TETHER_PYTHONS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tether}"
variant=gil
suffix=""
[ "$ft" = 1 ] && { variant=ft; suffix=t; }
log() { printf '%s\n' "$*" >&2; }

is_built() {
  "$1" -c '
import sys, ssl, sysconfig, zlib
want_ft = sys.argv[1] == "1"
ft = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
sys.exit(ft != want_ft or "%d.%d" % sys.version_info[:2] != sys.argv[2])' "$ft" "$series" 2>/dev/null
}
for python in "$cache"/cpython-"$series".*-"$variant"/bin/python"$series$suffix"; do
  if [ -x "$python" ] && is_built "$python"; then
    echo "$python"
    exit 0
  fi
done

# The archive's source indices, read into a private apt state folder.
apt_dir="$cache/apt-sources"
mkdir -p "$apt_dir/lists/partial"
: > "$apt_dir/sources.list"
for suite in trixie forky sid experimental; do
  echo "deb-src http://deb.debian.org/debian $suite main" >> "$apt_dir/sources.list"
done
apt_opts=(-o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$apt_dir/lists"
  -o APT::Sandbox::User=root)
export DEBIAN_FRONTEND=noninteractive
apt-get "${apt_opts[@]}" update -qq >&2
mapfile -t versions < <(apt-cache "${apt_opts[@]}" showsrc "python$series" 2>/dev/null \
  | awk '$1 == "Version:" {print $2}' | sort -rV | uniq)
if [ ${#versions[@]} -eq 0 ]; then
  log "no suite of Debian's archive has the source package python$series"
  exit 3
fi

work="$cache/build-$series-$variant"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
fetched=""
for v in "${versions[@]}"; do
  log "fetching python$series $v's source from Debian's archive"
  if apt-get "${apt_opts[@]}" source -qq --download-only "python$series=$v" >&2 2>/dev/null; then
    fetched=$v
    break
  fi
  log "  the archive does not serve python$series $v's files"
done
if [ -z "$fetched" ]; then
  log "Debian's archive lists python$series (${versions[*]}) but serves none of its files"
  exit 3
fi
upstream=${fetched%%-*}
upstream=${upstream%%+*}
prefix="$cache/cpython-$upstream-$variant"
python="$prefix/bin/python$series$suffix"

packages=(build-essential pkg-config libssl-dev zlib1g-dev libffi-dev libbz2-dev liblzma-dev
  libsqlite3-dev libreadline-dev libncurses-dev uuid-dev)
apt-get update -qq >&2
apt-get install -y -qq "${packages[@]}" >&2

tar -xf "python${series}_${upstream}".orig.tar.*
src=$(find . -maxdepth 1 -type d -name 'Python-*' | head -n 1)
cd "$src"
flags=(--prefix="$prefix" --with-ensurepip=install)
[ "$ft" = 1 ] && flags+=(--disable-gil)
log "configuring CPython $upstream (${flags[*]})"
./configure --quiet "${flags[@]}" >&2
log "building (minutes on two cores)"
make -s -j"$(nproc)" >&2
make -s install >&2
cd /
rm -rf "$work"
is_built "$python" || { log "the interpreter at $python is not the expected build"; exit 1; }
echo "$python"
