# tether — build, demo and test entry points.
#
#   make demo       build the core and the Python package, run both demos
#   make test       build everything and run every test suite
#   make sanitize   Rust suites under ASan/TSan (nightly), Python suite under valgrind

CARGO  ?= cargo
CC     ?= cc
TARGET := $(CURDIR)/target
LIBDIR := $(TARGET)/debug
VENV   := $(CURDIR)/.venv
PY     := $(VENV)/bin/python
PYTHON ?= python3

.PHONY: all build demo test test-rust test-c test-symbols test-upstream-cpp test-python python sanitize clean

all: build

build:
	$(CARGO) build --workspace --all-targets

demo: build python
	$(CARGO) run -q -p tether-core --example demo
	$(PY) python/examples/demo.py

test: test-rust test-c test-symbols test-upstream-cpp test-python

# A repo-local virtualenv with the build and test tools, then the package
# built from source (the core library is built by the extension's build.rs).
# apache-tvm-ffi is the peer under test: its headers compile the upstream
# conformance tests and its library shares a process with tether in the
# coexistence tests. tether itself never depends on it.
PEER   := apache-tvm-ffi==0.1.15.post2
VENV_STAMP := $(VENV)/.tether-test-deps

$(VENV_STAMP): Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "maturin>=1.7,<2" pytest "$(PEER)"
	touch $@

python: $(VENV_STAMP)
	PATH="$(VENV)/bin:$$PATH" $(PY) -m pip install --quiet --no-build-isolation --force-reinstall --no-deps ./python

test-python: python
	cd tests/python && $(PY) -m pytest -q

test-rust:
	$(CARGO) test --workspace

# The C test includes only our c_api.h and links the shared library.
test-c: build
	mkdir -p $(TARGET)/ctest
	$(CC) -std=c11 -Wall -Wextra -Werror -I$(CURDIR)/cpp/include tests/c/abi_test.c \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/ctest/abi_test
	$(TARGET)/ctest/abi_test

test-symbols: build
	tests/c/check_symbols.sh $(LIBDIR)/libtether_core.so

# C++ compiled against the peer's own headers but linked against tether's
# library only: where tether's ABI semantics differ from upstream, the
# headers' inline code fails here.
PEER_INCLUDE = $$($(PY) -c 'import importlib.util as u, os; \
    print(os.path.join(u.find_spec("tvm_ffi").submodule_search_locations[0], "include"))')

test-upstream-cpp: build $(VENV_STAMP)
	mkdir -p $(TARGET)/upstream_cpp
	$(CXX) -std=c++17 -Wall -Wextra -Werror -I"$(PEER_INCLUDE)" tests/upstream_cpp/static_types_test.cc \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/upstream_cpp/static_types_test
	$(TARGET)/upstream_cpp/static_types_test
	$(CXX) -std=c++17 -Wall -Wextra -Werror -I"$(PEER_INCLUDE)" tests/upstream_cpp/containers_test.cc \
	    -L$(LIBDIR) -ltether_core -Wl,-rpath,$(LIBDIR) -o $(TARGET)/upstream_cpp/containers_test
	$(TARGET)/upstream_cpp/containers_test

# AddressSanitizer (with LeakSanitizer) over every Rust test, and
# ThreadSanitizer over the multi-threaded tests. TSan needs an instrumented
# std (-Zbuild-std), hence nightly's rust-src.
sanitize:
	rustup component add rust-src --toolchain nightly
	RUSTFLAGS="-Zsanitizer=address" $(CARGO) +nightly test --workspace --tests \
	    --target x86_64-unknown-linux-gnu --target-dir $(TARGET)/asan
	RUSTFLAGS="-Zsanitizer=thread" $(CARGO) +nightly test -Zbuild-std -p tether-core \
	    --test objects_and_values --target x86_64-unknown-linux-gnu --target-dir $(TARGET)/tsan
	$(MAKE) python
	cd tests/python && PYTHONMALLOC=malloc valgrind --quiet --error-exitcode=99 \
	    --suppressions=$(CURDIR)/tests/python/valgrind-python.supp $(PY) -m pytest -q -p no:cacheprovider

clean:
	$(CARGO) clean
