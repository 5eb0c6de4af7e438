"""Module extension fetching apache-tvm-ffi's published C++ headers.

`@tether//:tvm_ffi` gives TVM-style C++ (`#include <tvm/ffi/...>`) the
headers of the apache-tvm-ffi release tether implements, with tether's core
library behind them. The headers are never copied into this repository:
this extension downloads the release's source distribution from PyPI
(sha256-pinned) and `tvm_ffi_headers.BUILD.bazel` exposes its `include/`
and bundled `3rdparty/dlpack/include` as `@tvm_ffi_headers//:headers`.
"""

load("@bazel_tools//tools/build_defs/repo:http.bzl", "http_archive")

# The release tether's ABI and the headers' inline code agree with.
TVM_FFI_VERSION = "0.1.15.post2"

# https://pypi.org/project/apache-tvm-ffi/0.1.15.post2/#files, the sdist.
TVM_FFI_SDIST_URL = "https://files.pythonhosted.org/packages/a8/8f/2fcd88ce2f43dd2c1945c6613356a9bc1f5fdbe6e37080d34d2b980ad9f6/apache_tvm_ffi-0.1.15.post2.tar.gz"
TVM_FFI_SDIST_SHA256 = "909be9ef5af07726aa9afd38a3111abc4d86cfd5927ebedfa9166232ce7d287b"

def _tvm_ffi_impl(module_ctx):
    http_archive(
        name = "tvm_ffi_headers",
        build_file = Label("//bazel:tvm_ffi_headers.BUILD.bazel"),
        sha256 = TVM_FFI_SDIST_SHA256,
        strip_prefix = "apache_tvm_ffi-" + TVM_FFI_VERSION,
        urls = [TVM_FFI_SDIST_URL],
    )

    # The download depends on nothing but the pins above.
    return module_ctx.extension_metadata(reproducible = True)

tvm_ffi = module_extension(
    implementation = _tvm_ffi_impl,
    doc = "Makes @tvm_ffi_headers: apache-tvm-ffi's C++ and DLPack headers from its pinned PyPI sdist.",
)
