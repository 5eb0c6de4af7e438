"""tether alone is enough to build against TVM-FFI's C++ headers: the
package carries the headers of the apache-tvm-ffi release it implements
(with that release's LICENSE and NOTICE), so ``load_inline`` of code that
includes ``<tvm/ffi/function.h>`` works in an interpreter where no
apache-tvm-ffi is importable, and the bundled copy is preferred to an
installed one."""

import os
import shutil
import subprocess
import sys
import textwrap

from tether import config, libinfo


def test_the_package_carries_upstreams_headers_and_licenses():
    include = libinfo._bundled_tvm_ffi_includedir()
    assert include == os.path.join(libinfo.package_dir(), "include"), \
        "the package was built without TVM-FFI's headers (python/build.rs bundles them from the sdist)"
    for rel in (("tvm", "ffi", "c_api.h"), ("tvm", "ffi", "function.h"), ("tvm", "ffi", "extra", "module.h"),
                ("dlpack", "dlpack.h")):
        assert os.path.isfile(os.path.join(include, *rel)), rel
    licenses = os.path.join(libinfo.package_dir(), "licenses", "apache-tvm-ffi")
    assert "Apache License" in open(os.path.join(licenses, "LICENSE")).read()
    assert os.path.isfile(os.path.join(licenses, "NOTICE"))
    # Preferred to the peer installed beside it in this test environment.
    assert config.tvm_ffi_includedir() == include


CHILD = textwrap.dedent(r"""
    import importlib.machinery, sys
    assert importlib.machinery.PathFinder.find_spec("tvm_ffi") is None, "apache-tvm-ffi is importable"
    import tether
    mod = tether.cpp.load_inline(
        "alone_add", build_directory=sys.argv[1],
        cpp_sources='''
    #include <tvm/ffi/function.h>
    #include <tvm/ffi/container/array.h>
    int64_t add_all(tvm::ffi::Array<int64_t> xs) { int64_t s = 0; for (int64_t x : xs) s += x; return s; }
    ''', functions=["add_all"])
    print(mod.add_all(tether.Array([1, 2, 39])))
""")


def test_load_inline_with_tvm_ffi_headers_and_no_apache_tvm_ffi(tmp_path):
    # An interpreter that sees tether and nothing else of site-packages.
    site = tmp_path / "site"
    site.mkdir()
    os.symlink(libinfo.package_dir(), site / "tether")
    # Nothing that would point tether at other headers or serve tvm_ffi;
    # the rest (e.g. TETHER_LOAD_DEEPBIND under sanitizers) stays.
    dropped = ("TETHER_TVM_FFI_INCLUDE_DIR", "TETHER_PROVIDE_TVM_FFI", "PYTHONPATH", "PYTHONHOME")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PYTHONPATH"] = str(site)
    # The build tool (ninja) of the test environment, as a user's PATH has it.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    assert shutil.which("ninja", path=env["PATH"]), "ninja is part of the test environment (make test installs it)"
    done = subprocess.run([sys.executable, "-S", "-c", CHILD, str(tmp_path / "build")], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "42"
