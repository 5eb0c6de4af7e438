# tether — build, demo and test entry points.
#
#   make demo   build the core and run the demo
#   make test   build everything and run every test suite
#   make sanitize   run the Rust suites under AddressSanitizer (nightly)

CARGO  ?= cargo
CC     ?= cc
TARGET := $(CURDIR)/target
LIBDIR := $(TARGET)/debug

.PHONY: all build demo test test-rust test-c test-symbols sanitize clean

all: build

build:
	$(CARGO) build --workspace --all-targets

demo: build
	$(CARGO) run -q -p tether-core --example demo

test: test-rust test-c test-symbols

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

# AddressSanitizer (with LeakSanitizer) over every Rust test, and
# ThreadSanitizer over the multi-threaded tests. TSan needs an instrumented
# std (-Zbuild-std), hence nightly's rust-src.
sanitize:
	rustup component add rust-src --toolchain nightly
	RUSTFLAGS="-Zsanitizer=address" $(CARGO) +nightly test --workspace --tests \
	    --target x86_64-unknown-linux-gnu --target-dir $(TARGET)/asan
	RUSTFLAGS="-Zsanitizer=thread" $(CARGO) +nightly test -Zbuild-std -p tether-core \
	    --test objects_and_values --target x86_64-unknown-linux-gnu --target-dir $(TARGET)/tsan

clean:
	$(CARGO) clean
