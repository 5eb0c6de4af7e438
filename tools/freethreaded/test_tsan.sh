#!/usr/bin/env bash
# tether's free-threaded build under ThreadSanitizer (`make test-tsan`).
#
# 1. A free-threaded CPython built with --with-thread-sanitizer, once, into
#    the cache (build_python.sh --tsan).
# 2. tether's core library and extension built instrumented with Rust
#    nightly (-Zsanitizer=thread, with std rebuilt instrumented: an
#    uninstrumented std's synchronisation is invisible to TSan, which then
#    reports races it orders), their C and C++ files with clang
#    -fsanitize=thread, into a venv made from that interpreter.
# 3. The 16-thread stress test and the threaded Python suites, every process
#    logging its reports to one folder; tsan_reports.py then counts them and
#    fails when one involves tether's code. Known reports inside CPython
#    itself are suppressed (tests/freethreaded/tsan.supp, each entry with its
#    reason); any other report that does not involve tether is listed but
#    does not fail the run.
#
# Environment: TETHER_TSAN_DIR (default target/tsan: cargo output, venv,
# logs), TETHER_TSAN_STRESS_SECONDS (default 20), TETHER_TSAN_SUITES (the
# suites, relative to tests/python).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${TETHER_TSAN_DIR:-$root/target/tsan}
venv=$out/venv
vpy=$venv/bin/python
logs=$out/logs
triple=x86_64-unknown-linux-gnu
suites=${TETHER_TSAN_SUITES:-"test_tying.py test_tying_beyond_upstream.py test_tying_edges.py test_tying_headerless.py \
  test_function_threads.py test_dict_threads.py test_hostile.py test_structural_threads.py test_release_threads.py"}
log() { printf '== %s\n' "$*" >&2; }

# While building and installing, the interpreter's reports about CPython
# itself (pip, maturin's and pyo3's configuration probes) are not wanted,
# and its exit status must not turn into TSan's 66.
export TSAN_OPTIONS="exitcode=0 report_bugs=0"

log "the TSan interpreter (built once into the cache)"
python=$("$root/tools/freethreaded/build_python.sh" --tsan)
test -x "$vpy" || "$python" -m venv "$venv"
"$vpy" -m pip install --quiet --upgrade "maturin>=1.16,<2" pytest

log "tether's core and extension, instrumented"
# Nightly once (not updated here, so the instrumentation does not change
# from run to run), with the standard library's sources for -Zbuild-std.
rustup run nightly rustc --version >/dev/null 2>&1 || rustup toolchain install nightly --profile minimal >&2
rustup component add rust-src --toolchain nightly >&2
export RUSTUP_TOOLCHAIN=nightly
export RUSTFLAGS="-Zsanitizer=thread"
export CC=clang CXX=clang++
export CFLAGS="-fsanitize=thread" CXXFLAGS="-fsanitize=thread"
# Line tables: TSan's stacks name files and lines.
export CARGO_PROFILE_RELEASE_DEBUG=line-tables-only
export CARGO_TARGET_DIR=$out/cargo
cargo build -Zbuild-std --release -p tether-core -p tether-testing --lib --target "$triple" --manifest-path "$root/Cargo.toml"
core_dir=$CARGO_TARGET_DIR/$triple/release
rm -rf "$out/wheels"
# The extension's build script copies the core and the testing library it
# links into the package folder of the source tree (python/tether/), which
# every build of the package shares: put back what was there once the
# instrumented wheel is built, so a later `make python` or `make
# test-freethreaded`, whose cached build script will not copy again, does
# not ship the instrumented libraries.
libs="libtether_core.so libtether_testing.so"
for l in $libs; do
  rm -f "$out/$l.saved"
  test -f "$root/python/tether/$l" && cp -p "$root/python/tether/$l" "$out/$l.saved"
done
restore_core() {
  for l in $libs; do
    if test -f "$out/$l.saved"; then mv -f "$out/$l.saved" "$root/python/tether/$l"; else rm -f "$root/python/tether/$l"; fi
  done
}
trap restore_core EXIT
# The instrumented libraries go in explicitly: the build script, when cargo
# has it cached, copies nothing, and the folder may hold another build's.
for l in $libs; do cp -f "$core_dir/$l" "$root/python/tether/$l"; done
# The extension links the core built above (TETHER_CORE_LIB_DIR) instead of
# building its own: python/build.rs builds that one without these flags.
TETHER_CORE_LIB_DIR=$core_dir PATH="$venv/bin:$PATH" "$venv/bin/maturin" build --quiet --release --auditwheel skip \
  -m "$root/python/Cargo.toml" --target "$triple" -Zbuild-std -i "$vpy" --out "$out/wheels"
"$vpy" -m pip install --quiet --force-reinstall --no-deps "$out"/wheels/tether-*.whl
restore_core
trap - EXIT
unset RUSTUP_TOOLCHAIN RUSTFLAGS CC CXX CFLAGS CXXFLAGS CARGO_PROFILE_RELEASE_DEBUG CARGO_TARGET_DIR

pkg=$("$vpy" -c 'import os, tether; print(os.path.dirname(tether.__file__))')
for lib in "$pkg"/_ffi*.so "$pkg"/libtether_core.so "$pkg"/libtether_testing.so; do
  nm -D --undefined-only "$lib" | grep ' __tsan_func_entry$' >/dev/null || { log "$lib is not instrumented"; exit 1; }
done
"$vpy" -c 'import sys, tether; assert not sys._is_gil_enabled(), "importing tether enabled the GIL"'

log "the stress test and the threaded suites under TSan"
rm -rf "$logs"
mkdir -p "$logs"
# exitcode=0: the suites' own status is what fails them; the reports are
# judged below.
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 history_size=4 exitcode=0 print_suppressions=1 \
suppressions=$root/tests/freethreaded/tsan.supp log_path=$logs/tsan"
# TSan refuses (and ends the process on) dlopen with RTLD_DEEPBIND, which
# load_module uses by default on Linux; the suites load their plugins
# without it (no other TVM-FFI runtime is in these processes).
export TETHER_LOAD_DEEPBIND=0
status=0
(cd "$root/tests/python" && TETHER_STRESS_SECONDS=${TETHER_TSAN_STRESS_SECONDS:-20} "$vpy" ../freethreaded/stress.py) || status=1
# shellcheck disable=SC2086 # the suites are a word list
(cd "$root/tests/python" && "$vpy" -m pytest -q -p no:cacheprovider $suites) || status=1

log "TSan's reports"
TSAN_OPTIONS="exitcode=0 report_bugs=0" "$vpy" "$root/tools/freethreaded/tsan_reports.py" "$logs" || status=1
exit "$status"
