# tether — build, demo and test entry points.
#
#   make demo       build the core and the Python package, run both demos
#   make test       build everything and run every test suite
#   make sanitize   Rust suites under ASan/TSan (nightly), Python suite under valgrind
#   make fuzz       libFuzzer targets (cargo-fuzz, nightly), FUZZ_SECONDS each
#   make test-asan  Python suite over an ASan/UBSan build of the core
#   make test-freethreaded / test-tsan   the free-threaded CPython build, plain and under TSan
#   make test-pythons  the Python suite on each supported CPython (3.10-3.15 and 3.14t)
#   make lint       Bazel and Nix front doors: buildifier, Starlark consistency, cargo-bazel, workflow, flake evaluation

CARGO  ?= cargo
CC     ?= cc
TARGET := $(CURDIR)/target
LIBDIR := $(TARGET)/debug
VENV   := $(CURDIR)/.venv
PY     := $(VENV)/bin/python
PYTHON ?= python3

.PHONY: all build demo lint lint-buildifier lint-starlark lint-bazel lint-workflow lint-nix lint-entry-points lint-layers lint-layers-core test test-rust test-c test-symbols \
	test-conformance-cpp test-upstream-cpp test-upstream-py test-tvm test-cmake test-upstream-tensor test-upstream-modules test-cpp test-cxx-bridge cpp-toolchains test-python test-freethreaded test-pythons test-tsan \
	python sanitize fuzz test-asan clean bench bench-quick bench-tvm wheel test-clients docs docs-check

all: build

# The cxx bridge is built by its own Cargo invocation (see Cargo.toml).
CARGO_WORKSPACE := --workspace --exclude tether-cxx-bridge

build:
	$(CARGO) build $(CARGO_WORKSPACE) --all-targets

demo: build python
	$(CARGO) run -q -p tether-core --example demo
	$(PY) python/examples/demo.py

test: lint test-rust test-c test-symbols test-conformance-cpp test-cpp test-python test-cmake bench-quick

# A repo-local virtualenv with the build and test tools, then the package
# built from source (the core library is built by the extension's build.rs).
# apache-tvm-ffi is the peer under test: its headers compile the upstream
# conformance tests and its library shares a process with tether in the
# coexistence tests. tether itself never depends on it.
PEER   := apache-tvm-ffi==0.1.15.post2
VENV_STAMP := $(VENV)/.tether-test-deps

$(VENV_STAMP): Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "maturin>=1.16,<2" pytest nanobind mypy numpy matplotlib ninja cmake "$(PEER)"
	touch $@

python: $(VENV_STAMP)
	PATH="$(VENV)/bin:$$PATH" $(PY) -m pip install --quiet --no-build-isolation --force-reinstall --no-deps ./python

test-python: python
	cd tests/python && $(PY) -m pytest -q

# tether as apache-tvm-ffi's CMake package (find_package(tvm_ffi)): the
# quickstart and python_packaging examples of the pinned sdist (extracted
# at run time, sha256-checked, never copied here) built unmodified and run
# with tether serving as tvm_ffi, and tests/cmake/consumer. Builds under
# $(TARGET)/cmake_examples; its venv gets scikit-build-core from the index
# once. tools/cmake_examples/run.py --help.
test-cmake: python
	$(PY) tools/cmake_examples/run.py --cache $(TARGET)/upstream --work $(TARGET)/cmake_examples

# Clients of apache-tvm-ffi published on PyPI (xgrammar, flashinfer-python,
# jax-tvm-ffi, torch-c-dlpack-ext; orcjit and tirx listed with why they
# cannot run here): their published wheels installed into two environments
# under $(TARGET)/clients, one with the peer and one with tether serving as
# tvm_ffi, their own tests fetched from their pinned, sha256-checked sdists
# at run time (never copied here) and run one file per process on both;
# prints the table. Optional, not in `make test` (it downloads PyTorch and
# JAX). tools/clients/run.py --help.
test-clients: $(VENV_STAMP)
	$(PY) tools/clients/run.py --work $(TARGET)/clients

test-rust: test-cxx-bridge
	$(CARGO) test $(CARGO_WORKSPACE)

# Rust calling C++ written with tether's headers through cxx, on the
# Cargo-built shared core; then the generator Bazel's genrule runs
# (examples/cxxbridge_gen.rs), its output compiled against the headers.
BRIDGE_GEN := $(TARGET)/cxx_bridge_gen

test-cxx-bridge: build
	TETHER_CORE_LIB_DIR=$(LIBDIR) $(CARGO) test -p tether-cxx-bridge
	mkdir -p $(BRIDGE_GEN)/include/rust
	ln -sfn $(CURDIR)/rust/cxx_bridge $(BRIDGE_GEN)/include/tether-cxx-bridge
	TETHER_CORE_LIB_DIR=$(LIBDIR) $(CARGO) run -q -p tether-cxx-bridge --example cxxbridge_gen -- \
	    rust/cxx_bridge/src/lib.rs $(BRIDGE_GEN)/lib.rs.h $(BRIDGE_GEN)/lib.rs.cc $(BRIDGE_GEN)/include/rust/cxx.h
	$(CXX) -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I$(BRIDGE_GEN)/include -I$(CURDIR)/cpp/include \
	    $(BRIDGE_GEN)/lib.rs.cc rust/cxx_bridge/src/bridge.cc

# The testing library (rust/testing: the testing.* globals and test types)
# for programs whose tests call those globals: it registers them when
# loaded, and they reference none of its symbols, hence --no-as-needed.
TESTING_LIB := -Wl,--no-as-needed -ltether_testing -Wl,--as-needed

# The C test includes only our c_api.h and links the shared library (and,
# where testing.* globals are called, the testing library beside it).
test-c: build
	mkdir -p $(TARGET)/ctest
	$(CC) -std=c11 -Wall -Wextra -Werror -I$(CURDIR)/cpp/include tests/c/abi_test.c \
	    -L$(LIBDIR) $(TESTING_LIB) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/ctest/abi_test
	$(TARGET)/ctest/abi_test
	$(CC) -std=c11 -Wall -Wextra -Werror -I$(CURDIR)/cpp/include tests/c/dlpack_test.c \
	    -L$(LIBDIR) $(TESTING_LIB) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/ctest/dlpack_test
	$(TARGET)/ctest/dlpack_test
	$(CC) -std=c11 -Wall -Wextra -Werror -I$(CURDIR)/cpp/include tests/c/surface_test.c \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/ctest/surface_test
	$(TARGET)/ctest/surface_test
	$(CC) -std=c11 -Wall -Wextra -Werror -I$(CURDIR)/cpp/include tests/c/type_index_test.c \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/ctest/type_index_test
	$(TARGET)/ctest/type_index_test

test-symbols: build
	tests/c/check_symbols.sh $(LIBDIR)/libtether_core.so

# C++ compiled against the peer's own headers but linked against tether's
# library only: where tether's ABI semantics differ from upstream, the
# headers' inline code fails here.
PEER_INCLUDE = $$($(PY) -c 'import importlib.util as u, os; \
    print(os.path.join(u.find_spec("tvm_ffi").submodule_search_locations[0], "include"))')
# The peer's library folder: tests/c/compare_type_attrs loads its
# libtvm_ffi beside libtether_core (both private to the program) and
# compares the type-attribute columns and reflection of the core's types.
PEER_LIB = $$($(PY) -c 'import importlib.util as u, os; \
    print(os.path.join(u.find_spec("tvm_ffi").submodule_search_locations[0], "lib"))')

test-conformance-cpp: build $(VENV_STAMP)
	mkdir -p $(TARGET)/upstream_cpp
	$(CXX) -std=c++17 -Wall -Wextra -Werror -I"$(PEER_INCLUDE)" tests/upstream_cpp/static_types_test.cc \
	    -L$(LIBDIR) $(TESTING_LIB) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/upstream_cpp/static_types_test
	$(TARGET)/upstream_cpp/static_types_test
	$(CXX) -std=c++17 -Wall -Wextra -Werror -I"$(PEER_INCLUDE)" tests/upstream_cpp/containers_test.cc \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/upstream_cpp/containers_test
	$(TARGET)/upstream_cpp/containers_test
	$(CXX) -std=c++17 -Wall -Wextra -Werror -I"$(PEER_INCLUDE)" tests/upstream_cpp/library_surface_test.cc \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/upstream_cpp/library_surface_test
	$(TARGET)/upstream_cpp/library_surface_test
	$(CXX) -std=c++17 -Wall -Wextra -Werror -I"$(PEER_INCLUDE)" tests/upstream_cpp/type_ranges_test.cc \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/upstream_cpp/type_ranges_test
	$(TARGET)/upstream_cpp/type_ranges_test
	$(CXX) -std=c++17 -Wall -Wextra -Werror -I"$(PEER_INCLUDE)" tests/upstream_cpp/enum_test.cc \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/upstream_cpp/enum_test
	$(TARGET)/upstream_cpp/enum_test
	$(CC) -std=c11 -Wall -Wextra -Werror -I$(CURDIR)/cpp/include tests/c/compare_type_attrs.c -ldl \
	    -o $(TARGET)/upstream_cpp/compare_type_attrs
	$(TARGET)/upstream_cpp/compare_type_attrs $(LIBDIR)/libtether_core.so "$(PEER_LIB)/libtvm_ffi.so"
	$(MAKE) --no-print-directory test-upstream-tensor test-upstream-modules

# apache-tvm-ffi's own gtest suite (tests/cpp of its sdist, downloaded at
# run time, sha256-checked, never copied here) built against the peer's
# headers and run test by test against tether and against the peer: prints
# a table of pass/fail/crash counts, and fails when the run cannot be set
# up or a test passing on the peer fails or crashes on tether (--check).
# Run by .ci/run; installs Debian's libgtest-dev
# with apt-get when missing (as root). tools/upstream_cpp/run.py --help.
test-upstream-cpp: build $(VENV_STAMP)
	$(PY) tools/upstream_cpp/run.py --core-lib-dir $(LIBDIR) --out $(TARGET)/upstream_cpp_suite --check

# apache-tvm-ffi's own Python tests (tests/python of its sdist, downloaded
# at run time, sha256-checked, never copied here), each file in its own
# process, against tether serving as tvm_ffi and against the peer itself:
# prints pass/fail/skip/crash counts side by side, and fails when tether
# fails a test the peer passes (or crashes where it does not) that
# tools/upstream_py/deliberate.txt does not list with its reason. Run by
# .ci/run. tools/upstream_py/run_upstream_tests.py --help.
test-upstream-py: python
	$(PY) tools/upstream_py/run_upstream_tests.py --cache $(TARGET)/upstream --check

# A real client: Apache TVM 0.27 (pip-installed --no-deps with its runtime
# requirements into a venv under $(TARGET)/tvm-client) runs eight steps --
# import, TVMScript and te builds run on NumPy data, print/parse, structural
# equality and hashing, a Relax model on the VM, export_library/load_module,
# JSON round trip -- each in its own process, on .venv's interpreter with
# tether serving as tvm_ffi and with the peer: prints a table side by side.
# Optional, not part of `make test`. tools/tvm_client/run_steps.py --help.
test-tvm: python
	$(PY) tools/tvm_client/run_steps.py --dir $(TARGET)/tvm-client

# The same client timed side by side (tools/tvm_client/bench.py): import
# time and peak RSS, the error round trips, TVMScript, te and Relax builds,
# each in fresh processes, the two libraries alternated. Optional.
bench-tvm: python
	$(PY) tools/tvm_client/bench.py --dir $(TARGET)/tvm-client --out $(TARGET)/bench-tvm \
	    $(if $(TVM_TESTS),--tvm-tests $(TVM_TESTS))

# The add_one kernel library (a plugin tether's Python side loads too) and
# the tensor conformance test that dlopens it. The headers' export macro
# leaves a parameter unused, hence -Wno-unused-parameter for the kernel.
UPSTREAM_KERNEL := $(TARGET)/upstream_cpp/libadd_one.so

$(UPSTREAM_KERNEL): tests/upstream_cpp/kernels/add_one.cc build $(VENV_STAMP)
	mkdir -p $(TARGET)/upstream_cpp
	$(CXX) -std=c++17 -Wall -Wextra -Werror -Wno-unused-parameter -fPIC -shared -I"$(PEER_INCLUDE)" \
	    tests/upstream_cpp/kernels/add_one.cc -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $@

test-upstream-tensor: build $(VENV_STAMP) $(UPSTREAM_KERNEL)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -I"$(PEER_INCLUDE)" tests/upstream_cpp/tensor_test.cc \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -ldl -o $(TARGET)/upstream_cpp/tensor_test
	$(TARGET)/upstream_cpp/tensor_test $(UPSTREAM_KERNEL)

# tether's own header-only C++ layer (cpp/include/tether): the doctest unit
# tests built and run with the host g++ and clang++ (-Wall -Wextra -Werror),
# the interoperability test (a library built with the peer's headers and
# the test built with tether's, in one process on libtether_core), and
# compile-only checks with the aarch64 Linux and x86_64 Windows (MinGW-w64,
# posix threads) cross compilers. Missing compilers and doctest come from
# Debian (as root).
CPP_PACKAGES := doctest-dev clang g++-aarch64-linux-gnu g++-mingw-w64-x86-64
CPP_TOOLS := /usr/include/doctest/doctest.h /usr/bin/clang++ /usr/bin/aarch64-linux-gnu-g++ \
    /usr/bin/x86_64-w64-mingw32-g++-posix
CPP_OUT := $(TARGET)/cpp
CPP_FLAGS := -std=c++17 -Wall -Wextra -Werror -I$(CURDIR)/cpp/include
# <tether/nanobind.h> is checked warning-free with both compilers too.
NANOBIND_FLAGS = -I"$$($(PY) -c 'import nanobind; print(nanobind.include_dir())')" \
    -I"$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"

cpp-toolchains:
	@for f in $(CPP_TOOLS); do test -e $$f || missing=1; done; \
	if [ -n "$$missing" ]; then apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CPP_PACKAGES); fi

test-cpp: build cpp-toolchains $(VENV_STAMP)
	mkdir -p $(CPP_OUT)/doctest-include
	ln -sfn /usr/include/doctest $(CPP_OUT)/doctest-include/doctest
	for cxx in g++ clang++; do \
	    $$cxx $(CPP_FLAGS) tests/cpp/layer_test.cc -L$(LIBDIR) $(TESTING_LIB) -ltether_core -Wl,-rpath,$(LIBDIR) \
	        -o $(CPP_OUT)/layer_test_$$cxx && $(CPP_OUT)/layer_test_$$cxx || exit 1; \
	done
	$(CXX) -std=c++17 -Wall -Wextra -Werror -fPIC -shared -I"$(PEER_INCLUDE)" tests/cpp/interop/upstream_side.cc \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(CPP_OUT)/libinterop_upstream.so
	$(CXX) $(CPP_FLAGS) tests/cpp/interop_test.cc -Wl,--no-as-needed -L$(CPP_OUT) -linterop_upstream \
	    -Wl,--as-needed -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR):$(CPP_OUT) -o $(CPP_OUT)/interop_test
	$(CPP_OUT)/interop_test
	$(CXX) -std=c++17 -Wall -Wextra -Werror -I"$(PEER_INCLUDE)" tests/cpp/upstream_tensor_layout_test.cc \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(CPP_OUT)/upstream_tensor_layout_test
	$(CPP_OUT)/upstream_tensor_layout_test
	for cxx in aarch64-linux-gnu-g++ x86_64-w64-mingw32-g++-posix; do \
	    for src in tests/cpp/layer_test.cc tests/cpp/interop_test.cc tests/python/native/cpp_plugin.cc; do \
	        $$cxx $(CPP_FLAGS) -I$(CPP_OUT)/doctest-include -fsyntax-only $$src || exit 1; \
	    done; \
	done
	clang++ $(CPP_FLAGS) -fsyntax-only tests/python/native/cpp_plugin.cc
	g++ $(CPP_FLAGS) -fsyntax-only tests/python/native/cpp_plugin.cc
	for cxx in g++ clang++; do \
	    $$cxx $(CPP_FLAGS) $(NANOBIND_FLAGS) -fsyntax-only tests/python/native/nb_plugin.cc || exit 1; \
	done
# Modules: a library written the TVM-FFI way (with its docstring and
# metadata symbols) and the test that loads it, subclasses ModuleObj and
# uses imports, the system library and context symbols. The headers' module
# and export macros leave parameters unused, hence -Wno-unused-parameter.
MODULE_LIB := $(TARGET)/upstream_cpp/libmodule_lib.so

$(MODULE_LIB): tests/upstream_cpp/modules/module_lib.cc build $(VENV_STAMP)
	mkdir -p $(TARGET)/upstream_cpp
	$(CXX) -std=c++17 -Wall -Wextra -Werror -Wno-unused-parameter -DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1 \
	    -fPIC -shared -I"$(PEER_INCLUDE)" tests/upstream_cpp/modules/module_lib.cc \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $@

test-upstream-modules: build $(VENV_STAMP) $(MODULE_LIB)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -Wno-unused-parameter -I"$(PEER_INCLUDE)" tests/upstream_cpp/modules_test.cc \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/upstream_cpp/modules_test
	$(TARGET)/upstream_cpp/modules_test $(MODULE_LIB)

# The benchmark against the peer (bench/run.py): `bench` for the README's
# figures, `bench-quick` (seconds) keeps the harness working in `make test`
# and asserts nothing about speed.
bench: python
	$(PY) bench/run.py --out $(TARGET)/bench

bench-quick: python
	$(PY) bench/run.py --quick --out $(TARGET)/bench-quick

# AddressSanitizer (with LeakSanitizer) over every Rust test, and
# ThreadSanitizer over the multi-threaded tests. TSan needs an instrumented
# std (-Zbuild-std), hence nightly's rust-src.
sanitize:
	rustup component add rust-src --toolchain nightly
	RUSTFLAGS="-Zsanitizer=address" $(CARGO) +nightly test $(CARGO_WORKSPACE) --tests \
	    --target x86_64-unknown-linux-gnu --target-dir $(TARGET)/asan
	RUSTFLAGS="-Zsanitizer=thread" $(CARGO) +nightly test -Zbuild-std -p tether-core \
	    --test objects_and_values --test py_class_fields --target x86_64-unknown-linux-gnu --target-dir $(TARGET)/tsan
	RUSTFLAGS="-Zsanitizer=thread" $(CARGO) +nightly test -Zbuild-std -p tether-core \
	    --lib --target x86_64-unknown-linux-gnu --target-dir $(TARGET)/tsan -- field_lock
	$(MAKE) python
	cd tests/python && PYTHONMALLOC=malloc valgrind --quiet --error-exitcode=99 \
	    --suppressions=$(CURDIR)/tests/python/valgrind-python.supp $(PY) -m pytest -q -p no:cacheprovider

# libFuzzer targets (rust/fuzz, a workspace of its own) for the core's
# parsers and graph algorithms: JSON text, JSON graphs, structural equal/hash
# on deep and cyclic values, the structural fast paths against the walk on
# generated object graphs, DLPack import, BigInt text and bytes, the
# library-binary module tree, data type strings. Each runs FUZZ_SECONDS from
# its seed corpus (rust/fuzz/corpus/<target>, read only; new inputs go to
# target/fuzz/corpus/<target>, crashes to target/fuzz/artifacts/<target>/);
# any crash, leak or failed assertion fails the target (every target runs;
# the failed ones are listed at the end). Not part of `test`.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := json_text json_graph structural structural_fast_path dlpack_import big_int library_bin dtype_text
FUZZ := $(CARGO) +nightly fuzz

fuzz:
	command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	$(FUZZ) build --fuzz-dir rust/fuzz -O -a --target-dir $(TARGET)/fuzz
	failed=; for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(TARGET)/fuzz/corpus/$$t $(TARGET)/fuzz/artifacts/$$t; \
	    $(FUZZ) run --fuzz-dir rust/fuzz -O -a --target-dir $(TARGET)/fuzz $$t \
	        $(TARGET)/fuzz/corpus/$$t rust/fuzz/corpus/$$t -- \
	        -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(TARGET)/fuzz/artifacts/$$t/ \
	        || failed="$$failed $$t"; \
	done; \
	test -z "$$failed" || { echo "fuzz targets that failed:$$failed"; exit 1; }

# The Python suite over an AddressSanitizer build of the core, the testing
# library and the extension `_ffi` (nightly -Zsanitizer=address; their C
# and C++ files compiled by clang with -fsanitize=address,undefined), all
# built from one copy of the working tree in target/asan/src (the
# extension's build script writes the libraries it links into its source
# package folder, which must not be the checkout's: a later `make python`
# would ship them), and put with that package folder over a copy of the
# installed package in target/asan/site, which PYTHONPATH puts first. The
# check after the build fails when a library is not instrumented. The
# installed libtvm_ffi.so stays: it is a filter library whose placeholders
# bear the core's symbol names (nothing in it runs), which ASan's
# one-definition check would report against the core's own definitions.
# CPython is not instrumented, so clang's shared ASan runtime (which
# carries UBSan's handlers) is preloaded.
# detect_leaks=0: CPython keeps interned objects and arenas alive at exit by
# design, and LeakSanitizer would report those, not tether's memory (the
# Rust suites under `make sanitize` and the fuzz targets check leaks).
# TETHER_LOAD_DEEPBIND=0: the ASan runtime refuses dlopen with RTLD_DEEPBIND
# (a deep-bound library would take malloc from libc, past ASan's), which
# tether's module loader uses by default. Without deep binding a library the
# suite builds against tether's core binds its TVMFFI* calls to the first
# global definition, and once a test imports the peer apache-tvm-ffi its
# libtvm_ffi.so is global (RTLD_GLOBAL) for the rest of the process: the
# library's globals and errors then go to the peer's core. So each test
# file runs in a process of its own (a file that loads such libraries does
# not import the peer in-process; plugins.py finds the peer's headers
# without importing it), and LD_BIND_NOW=1 binds a library's calls when it
# is loaded rather than at first call, after a later test of the same file
# may have imported the peer. TETHER_UNDER_ASAN=1 tells the tests; under it
# the tests of tether's default deep binding skip, saying why: five
# test_foreign_core.py scenarios (a fresh interpreter loading as tether does
# by default) and test_module_api.py::test_load_module_keeps_deep_binding.
# Build tools the tests run (cargo for the Rust plugin) run without the
# preload, which rustc crashes under. Last full run, the extension
# instrumented: 775 tests, 1 failed (test_tether_alone.py starts a child
# without the TETHER_* environment, so deep binding is back on there), 0
# errors, 10 skipped (those six, three that need PyTorch, and the idle
# threads' resident-memory bound, which ASan's quarantine hides), 21 minutes
# on a shared machine; no sanitizer report.
# symbolize=0: a test subprocess that dies leaves its llvm-symbolizer
# holding the output pipe the test waits on, which hangs the suite; reports
# carry module+offset (llvm-symbolizer --obj=... afterwards). ASAN_TESTS
# picks files or test ids, each run in its own process (default: every
# tests/python/test_*.py). The totals are summed from each run's JUnit
# XML in target/asan/junit.
ASAN_RT    ?= $(shell clang -print-file-name=libclang_rt.asan-x86_64.so)
ASAN_DIR   := $(TARGET)/asan
ASAN_SITE  := $(ASAN_DIR)/site
ASAN_TESTS ?= $(notdir $(wildcard tests/python/test_*.py))
ASAN_ENV   := PYTHONPATH=$(ASAN_SITE) LD_PRELOAD=$(ASAN_RT) LD_BIND_NOW=1 TETHER_UNDER_ASAN=1 \
              TETHER_LOAD_DEEPBIND=0 ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:symbolize=0 \
              UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

ASAN_SRC   := $(ASAN_DIR)/src
ASAN_LIBS  := $(ASAN_DIR)/x86_64-unknown-linux-gnu/release
ASAN_BUILD := CC=clang CXX=clang++ CFLAGS="-fsanitize=address,undefined" CXXFLAGS="-fsanitize=address,undefined" \
              RUSTFLAGS="-Zsanitizer=address" $(CARGO) +nightly build --release --lib --target x86_64-unknown-linux-gnu

test-asan: $(VENV_STAMP)
	test -d $(VENV)/lib/python*/site-packages/tether || $(MAKE) python
	rm -rf $(ASAN_SRC) && mkdir -p $(ASAN_SRC)/target
	git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - | tar -xf - -C $(ASAN_SRC)
	ln -s $(TARGET)/upstream $(ASAN_SRC)/target/upstream
	cd $(ASAN_SRC) && $(ASAN_BUILD) -p tether-core -p tether-testing --target-dir $(ASAN_DIR)
	cd $(ASAN_SRC) && TETHER_CORE_LIB_DIR=$(ASAN_LIBS) PYO3_PYTHON=$(PY) \
	    $(ASAN_BUILD) --manifest-path python/Cargo.toml --target-dir $(ASAN_DIR)/ext
	rm -rf $(ASAN_SITE) $(ASAN_DIR)/junit && mkdir -p $(ASAN_SITE) $(ASAN_DIR)/junit
	cp -r $$($(PY) -c 'import os, tether; print(os.path.dirname(tether.__file__))') $(ASAN_SITE)/tether
	tar -C $(ASAN_SRC)/python/tether --exclude=libtvm_ffi.so -cf - . | tar -xf - -C $(ASAN_SITE)/tether
	cp $(ASAN_DIR)/ext/x86_64-unknown-linux-gnu/release/lib_ffi.so \
	    $(ASAN_SITE)/tether/_ffi$$($(PY) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	for lib in $(ASAN_SITE)/tether/_ffi*.so $(ASAN_SITE)/tether/libtether_core.so $(ASAN_SITE)/tether/libtether_testing.so; do \
	    nm -D --undefined-only $$lib | grep -q ' __asan_report_load8$$' || { echo "$$lib is not instrumented"; exit 1; }; \
	done
	cd tests/python && failed=; n=0; for t in $(ASAN_TESTS); do \
	    n=$$((n + 1)); \
	    $(ASAN_ENV) $(PY) -m pytest -q -p no:cacheprovider --junitxml=$(ASAN_DIR)/junit/$$n.xml $$t \
	        || failed="$$failed $$t"; \
	done; \
	$(PY) -c 'import glob, sys, xml.etree.ElementTree as ET; \
	    s = [ET.parse(f).getroot().find("testsuite") for f in glob.glob(sys.argv[1] + "/*.xml")]; \
	    t = {k: sum(int(x.get(k)) for x in s) for k in ("tests", "failures", "errors", "skipped")}; \
	    print("test-asan: {tests} tests, {failures} failed, {errors} errors, {skipped} skipped".format(**t))' \
	    $(ASAN_DIR)/junit; \
	test -z "$$failed" || { echo "test-asan: failed in$$failed"; exit 1; }

# Bazel and Nix's package set cannot be downloaded where tether is built, so
# their files are checked without them: buildifier (npm, repo-local
# node_modules/) formats and lints every Starlark file; check.py evaluates
# MODULE.bazel and the BUILD files with stub rules (labels, attributes, every
# source in a target); nix-instantiate (Debian's nix-bin) parses flake.nix and
# evaluates its outputs against stub inputs, and copied_sets.py checks that
# what each flake check copies holds every file its files refer to and that
# its Python environment has every module the suites importorskip.
BUILDIFIER := $(CURDIR)/node_modules/.bin/buildifier
LINT_STAMP := $(VENV)/.tether-lint-deps
STARLARK_FILES = $$(git ls-files --cached --others --exclude-standard '*.bazel' '*.bzl' 'BUILD' | grep -v '^node_modules/')

lint: lint-buildifier lint-starlark lint-bazel lint-workflow lint-nix lint-entry-points lint-layers lint-layers-core

# The sources Bazel alone would run, built and run here too: the consumer
# example against the Cargo-built core (its @tether//:tvm_ffi half against
# the peer's copy of the same release's headers, which Bazel fetches from the
# sdist; -isystem as they are third-party), and the per-file py_test runner
# on a suite (from another directory, as under Bazel).
lint-entry-points: build python
	mkdir -p $(TARGET)/bazel_consumer
	$(CXX) -std=c++17 -Wall -Wextra -Werror -I$(CURDIR)/cpp/include examples/bazel_consumer/echo_client.cc \
	    examples/bazel_consumer/echo_client_test.cc -L$(LIBDIR) $(TESTING_LIB) -ltether_core -Wl,-rpath,$(LIBDIR) \
	    -o $(TARGET)/bazel_consumer/echo_client_test
	$(TARGET)/bazel_consumer/echo_client_test
	$(CXX) -std=c++17 -Wall -Wextra -Werror -isystem "$(PEER_INCLUDE)" examples/bazel_consumer/shape_registry.cc \
	    examples/bazel_consumer/shape_registry_test.cc -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) \
	    -o $(TARGET)/bazel_consumer/shape_registry_test
	$(TARGET)/bazel_consumer/shape_registry_test
	cd $(TARGET) && $(PY) $(CURDIR)/tools/bazel/pytest_main.py $(CURDIR)/tests/python/test_api.py

# The documentation site (docs/, Sphinx + MyST, pinned in
# docs/requirements.txt and installed into .venv): every code block of its
# pages and README.md's Python examples run first (tests/docs), then the
# site builds with warnings as errors into $(TARGET)/docs, with the crates'
# rustdoc copied in under rustdoc/. `make docs-check` opens it in headless
# Chromium (Debian's package, installed when missing, as root) and fails on
# a broken internal link, a missing image or a console error; screenshots
# go to $(TARGET)/docs-check (tools/docs/check_site.py).
DOCS_STAMP := $(VENV)/.tether-docs-deps

$(DOCS_STAMP): docs/requirements.txt $(VENV_STAMP)
	$(PY) -m pip install --quiet -r docs/requirements.txt
	touch $@

docs: build python $(DOCS_STAMP)
	cd tests/docs && $(PY) -m pytest -q -p no:cacheprovider
	$(CARGO) doc --no-deps -p tether-core -p tether-sys -p tether-testing
	rm -rf $(TARGET)/docs
	$(PY) -m sphinx -W --keep-going -q -b html docs $(TARGET)/docs
	$(PY) tools/docs/rustdoc_into_site.py $(TARGET)/doc $(TARGET)/docs/rustdoc

docs-check: docs
	command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	$(PY) tools/docs/check_site.py $(TARGET)/docs $(TARGET)/docs-check

# Layering, in `lint`: import-linter's contracts (tools/layering/importlinter.ini)
# hold python/tether to one direction, down to core, with no import circle
# (bare_package_imports.py checks the imports of the bare package, which
# those contracts must ignore, name only _ffi and modules);
# tether-layering (tools/layering, syn-parsed paths) holds every Rust crate
# layers.txt lists (rust/core, rust/testing, rust/sys, rust/cxx_bridge,
# rust/fuzz, the extension's python/src, the checker itself) to the layer
# order written there and fails on any import circle across files or
# across folders (each taken whole), naming file and line.
# `make lint-layers-core` runs the check on rust/core alone.
IMPORT_LINTER_STAMP := $(VENV)/.tether-import-linter

$(IMPORT_LINTER_STAMP): $(VENV_STAMP)
	$(PY) -m pip install --quiet "import-linter==2.17"
	touch $@

lint-layers: $(IMPORT_LINTER_STAMP)
	cd python && $(VENV)/bin/lint-imports --no-cache --config ../tools/layering/importlinter.ini
	$(PY) tools/layering/bare_package_imports.py python/tether
	$(CARGO) run -q -p tether-layering -- tools/layering/layers.txt .

lint-layers-core:
	$(CARGO) run -q -p tether-layering -- tools/layering/layers.txt . rust/core/src

$(BUILDIFIER): package.json package-lock.json
	npm ci --prefix $(CURDIR) --no-audit --no-fund --ignore-scripts
	touch $@

lint-buildifier: $(BUILDIFIER)
	$(BUILDIFIER) --mode=check --lint=warn $(STARLARK_FILES)

$(LINT_STAMP): $(VENV_STAMP)
	$(PY) -m pip install --quiet "starlark-pyo3==2026.1.3" "PyYAML==6.0.4"
	touch $@

lint-starlark: $(LINT_STAMP)
	$(PY) tools/starlark_check/check.py
	$(PY) -m pytest -q -p no:cacheprovider tools/starlark_check/test_check.py tools/starlark_check/test_surface.py

# crate_universe's generator, cargo-bazel, run as Bazel's first run would on
# every crate hub of MODULE.bazel, on the real manifests and lock files
# (tools/bazel/crate_universe.py). It is built once from crates.io into
# target/ (crate_universe 0.17.0, the version rules_rust 0.69.0 carries);
# a failed build fails the target. UPDATE_LOCKS=1 remakes the from_specs
# hubs' lock files (tools/bazel/*.Cargo.lock) from Cargo's.
CARGO_BAZEL_VERSION := 0.17.0
CARGO_BAZEL := $(TARGET)/cargo-bazel/$(CARGO_BAZEL_VERSION)/bin/cargo-bazel

$(CARGO_BAZEL):
	$(CARGO) install --quiet --locked cargo-bazel --version $(CARGO_BAZEL_VERSION) \
	    --root $(TARGET)/cargo-bazel/$(CARGO_BAZEL_VERSION) --target-dir $(TARGET)/cargo-bazel/build

lint-bazel: $(LINT_STAMP) $(CARGO_BAZEL)
	$(PY) tools/bazel/crate_universe.py --cargo-bazel $(CARGO_BAZEL) --out $(TARGET)/crate_universe \
	    $(if $(UPDATE_LOCKS),--update-locks)
	CARGO_BAZEL=$(CARGO_BAZEL) $(PY) -m pytest -q -p no:cacheprovider tools/bazel/test_crate_universe.py

# The GitHub workflow's steps as each runner system runs them (shells, MSYS
# path conversion, Bazel's output root on Windows).
lint-workflow: $(LINT_STAMP)
	$(PY) tools/workflow_check/check_shells.py
	$(PY) -m pytest -q -p no:cacheprovider tools/workflow_check/test_check_shells.py

# Evaluation only: NIX_REMOTE=dummy:// keeps nix-instantiate off the Nix
# daemon's socket, which Debian's nix-bin opens to root and nix-users only,
# so the target runs as any user. Without nix-instantiate it is installed
# as root, and fails otherwise.
lint-nix: export NIX_REMOTE = dummy://
lint-nix: $(VENV_STAMP)
	command -v nix-instantiate >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nix-bin; } || \
	    { echo "lint-nix: nix-instantiate missing (install Debian's nix-bin as root)"; exit 1; }
	nix-instantiate --parse flake.nix >/dev/null
	nix-instantiate --eval --strict --readonly-mode tools/nix_check/eval.nix
	$(PY) tools/nix_check/copied_sets.py
	$(PY) -m pytest -q -p no:cacheprovider tools/nix_check/test_copied_sets.py

clean:
	$(CARGO) clean

# Free-threaded CPython (PEP 703): builds CPython 3.14 with --disable-gil
# (pyo3 supports free-threaded builds from 3.14 on) once into a cache folder
# from Debian's source package (tools/pythons/build_cpython.sh, needs root
# for apt-get), builds tether against it in its own venv, runs the Python
# suites (tests needing apache-tvm-ffi skip where it has no wheel for the
# build) and the 16-thread stress test. Separate from `make test`.
FT_VENV := $(TARGET)/venv-freethreaded-3.14
FT_PY   := $(FT_VENV)/bin/python

test-freethreaded:
	test -x $(FT_PY) || $$(tools/pythons/build_cpython.sh 3.14 --freethreaded) -m venv $(FT_VENV)
	$(FT_PY) -m pip install --quiet --upgrade --prefer-binary "maturin>=1.16,<2" pytest numpy
	PATH="$(FT_VENV)/bin:$$PATH" $(FT_PY) -m pip install --quiet --no-build-isolation --force-reinstall --no-deps ./python
	$(FT_PY) -c 'import sys; assert not sys._is_gil_enabled(), "the GIL is enabled"'
	cd tests/python && $(FT_PY) -m pytest -q -p no:cacheprovider
	cd tests/python && $(FT_PY) ../freethreaded/stress.py

# Every supported CPython (tools/pythons/run.py): 3.10-3.13 found on PATH or
# under pyenv, 3.14, 3.14t and 3.15 built once
# from Debian's source packages (tools/pythons/build_cpython.sh, needs root
# for apt-get); on each, in its own venv under $(TARGET)/pythons, the Python
# suite (its tying files counted apart) and, on free-threaded builds, the
# stress test; prints one row per version and fails when any version is
# missing or fails. PYTHONS picks the versions. Separate from `make test`.
PYTHONS ?= 3.10,3.11,3.12,3.13,3.14,3.14t,3.15

test-pythons:
	$(PYTHON) tools/pythons/run.py --versions $(PYTHONS) --out $(TARGET)/pythons

# ThreadSanitizer over the free-threaded build (tools/freethreaded/test_tsan.sh):
# CPython 3.13 built with --disable-gil --with-thread-sanitizer (clang) once
# into the cache (build_python.sh --tsan, needs root for apt-get), tether's
# core and extension built instrumented by nightly Rust with std rebuilt
# (-Zsanitizer=thread -Zbuild-std) into target/tsan, then the stress test and
# the threaded Python suites. Fails when a suite fails or when a TSan report
# involves tether's code (tools/freethreaded/tsan_reports.py; reports inside
# CPython are suppressed by tests/freethreaded/tsan.supp, each entry saying
# why). Separate from `make test`.
test-tsan:
	tools/freethreaded/test_tsan.sh

# manylinux_2_28 wheels built here without Docker (cargo-zigbuild and maturin
# with Zig, from the package index), checked by auditwheel, then installed
# into a fresh virtualenv that runs part of the Python suite; one wheel per
# interpreter (WHEEL_PYTHONS, this venv's by default) into target/wheels.
WHEEL_PYTHONS ?= $(PY)
wheel: $(VENV_STAMP)
	$(PY) tools/wheel/build_wheel.py $(foreach p,$(WHEEL_PYTHONS),--python $(p))
