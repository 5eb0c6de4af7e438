"""tether.Module as tvm_ffi's Module: the same snippets against libraries
built from one source for each runtime (parity.py), then what is tether's
own: deep binding, kept-alive modules, tied results, the system library."""

import ctypes
import gc
import os
import subprocess
import sys

import pytest

import tether
from parity import assert_same_records
from plugins import build_kernel_for

HERE = os.path.dirname(os.path.abspath(__file__))
FUNCS = os.path.join(HERE, "native", "module_funcs.cc")
HELPER = os.path.join(HERE, "native", "module_helper.cc")
METADATA = ["-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1"]


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    out = tmp_path_factory.mktemp("module_api")
    built = {}
    for runtime in ("tether", "tvm_ffi"):
        built[runtime] = (build_kernel_for(runtime, FUNCS, out / f"libfuncs_{runtime}.so", METADATA),
                          build_kernel_for(runtime, HELPER, out / f"libhelper_{runtime}.so"))
    return built


SCENARIOS = r'''
import ctypes, os
funcs, helper = sys.argv[2:4] if sys.argv[1] == "tether" else sys.argv[4:6]
M = tvm_ffi.Module
m = tvm_ffi.load_module(funcs)
run("repr kind", lambda: [repr(m), m.kind, isinstance(m, M), type(m).__name__])
run("calls", lambda: [m.add(1, 2), m["greet"]("you"), m(21), m.get_function("add")(3, 4)])
run("pair", lambda: show(m.pair(1, "x")))
run("attr cached", lambda: m.add is m.add)
run("missing attr", lambda: m.nope)
run("missing item", lambda: m["nope"])
run("missing get", lambda: m.get_function("nope"))
run("non-str item", lambda: m[1])
run("implements", lambda: [m.implements_function("add"), m.implements_function("nope"), m.implements_function("main")])
run("doc", lambda: [m.get_function_doc("add"), m.get_function_doc("greet"), m.get_function_doc("nope")])
run("metadata", lambda: [m.get_function_metadata("add"), m.get_function_metadata("greet"), m.get_function_metadata("nope")])
run("source", lambda: m.inspect_source())
run("write", lambda: m.write_to_file("/tmp/never-written.so"))
run("formats", lambda: show(m.get_write_formats()))
run("property mask", lambda: [m.get_property_mask(), m.is_runnable(), m.is_binary_serializable(), m.is_compilation_exportable()])
run("mask enum", lambda: [(e.name, int(e)) for e in tvm_ffi.module.ModulePropertyMask])
run("entry name", lambda: M.entry_name)
run("ctor", lambda: M())
h = tvm_ffi.load_module(helper)
run("no imports", lambda: [len(m.imports), m.implements_function("negate", True)])
run("import", lambda: m.import_module(h))
run("imports", lambda: [len(m.imports), m.imports[0].same_as(h), m.implements_function("negate", True),
                        m.implements_function("negate")])
run("query imports", lambda: m.get_function("negate", True)(5))
run("query imports kw", lambda: m.get_function("negate", query_imports=True)(6))
run("no query", lambda: m.get_function("negate"))
run("cycle", lambda: h.import_module(m))
run("self cycle", lambda: m.import_module(m))
run("clear imports", lambda: [m.clear_imports(), len(m.imports), m.implements_function("negate", True)])
run("again", lambda: [tvm_ffi.load_module(funcs).add(2, 2), tvm_ffi.load_module(funcs, keep_module_alive=False).add(1, 1)])
s = tvm_ffi.system_lib()
run("system lib", lambda: [repr(s), s.kind, isinstance(s, M)])
# (Loading the library registered syslib_add_one with the system library;
# tvm_ffi finds it from here on. tether finds it through ffi.SystemLib when
# the core has it, and through the process's global symbols otherwise, so
# the comparison starts once the library is global.)
ctypes.CDLL(funcs, mode=ctypes.RTLD_GLOBAL)
run("system lib found", lambda: tvm_ffi.system_lib().get_function("syslib_add_one")(41))
run("system lib prefix", lambda: [tvm_ffi.system_lib("syslib_")["add_one"](1), tvm_ffi.system_lib("syslib_").add_one(2)])
run("system lib prefix fallback", lambda: tvm_ffi.system_lib("other_")["syslib_add_one"](3))
run("system lib implements", lambda: [tvm_ffi.system_lib("syslib_").implements_function("add_one"),
                                      tvm_ffi.system_lib().implements_function("nothing_here")])
'''


def test_module_api_matches_tvm_ffi(libraries):
    (ours, our_helper), (theirs, their_helper) = libraries["tether"], libraries["tvm_ffi"]
    assert_same_records(SCENARIOS, ours, our_helper, theirs, their_helper)


def test_load_module_results_are_tied(libraries):
    m = tether.load_module(libraries["tether"][0])
    echo = tether.get_global_func("testing.echo")
    x = tether.convert([1])
    pair = m.pair(x, "s")
    assert pair[0] is x
    assert echo(pair) is pair
    assert isinstance(m, tether.Module) and m.get_function("add") is m.get_function("add")


@pytest.mark.skipif(os.environ.get("TETHER_UNDER_ASAN") == "1",
                    reason="checks the default RTLD_DEEPBIND, which the ASan runtime refuses to dlopen with "
                           "(make test-asan turns it off with TETHER_LOAD_DEEPBIND=0)")
def test_load_module_keeps_deep_binding(libraries, monkeypatch):
    opened = []
    real = ctypes.CDLL

    def recording(path, mode=0, *args, **kwargs):
        opened.append((path, mode))
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(ctypes, "CDLL", recording)
    path = libraries["tether"][0]
    tether.load_module(path)
    tether.load_module(path, deep_bind=False)
    deep = getattr(os, "RTLD_DEEPBIND", 0)
    modes = [mode for p, mode in opened if p == path]
    assert len(modes) == 2
    assert modes[0] & deep == deep and modes[1] & deep == 0
    assert all(mode & ctypes.RTLD_GLOBAL == 0 or ctypes.RTLD_GLOBAL == 0 for mode in modes)


def test_load_module_path_like_and_missing(libraries, tmp_path):
    import pathlib

    m = tether.load_module(pathlib.Path(libraries["tether"][0]))
    assert m.add(20, 22) == 42
    with pytest.raises(FileNotFoundError):
        tether.load_module(tmp_path / "missing.so")


def test_module_of_another_runtime_next_to_tvm_ffi(libraries, tmp_path):
    # With tvm_ffi loaded globally first, a tether-linked library still runs
    # on tether's core through the Module API (deep binding).
    script = f"""
import tvm_ffi
import tether
m = tether.load_module({libraries["tether"][0]!r})
x = tether.convert([1])
assert m.pair(x, 2)[0] is x
assert m.get_function_doc("add") == "Add two integers."
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_module_wrappers_survive_collection(libraries):
    m = tether.load_module(libraries["tether"][0])
    f = m.add
    del m
    gc.collect()
    assert f(1, 1) == 2


def test_load_module_dispatches_other_formats_to_their_registered_loader(tmp_path):
    # Apache TVM registers loaders for `.ll`, `.bc`, ...: a file of such a
    # format is never opened as a shared library.
    source = tmp_path / "kernels.tethertext"
    source.write_text("not an ELF file")
    seen = []

    def loader(path, fmt):
        seen.append((path, fmt))
        return tether.system_lib()

    tether.register_global_func("ffi.Module.load_from_file.tethertext", loader, override=True)
    try:
        mod = tether.load_module(str(source))
        assert seen == [(str(source), "tethertext")]
        assert isinstance(mod, tether.Module)
    finally:
        tether.registry.remove_global_func("ffi.Module.load_from_file.tethertext")


def test_load_module_names_a_suffix_no_loader_is_registered_for(tmp_path):
    source = tmp_path / "kernels.nosuchformat"
    source.write_text("; LLVM IR would be here")
    with pytest.raises(RuntimeError, match=r"Loader for `\.nosuchformat` files is not registered"):
        tether.load_module(str(source))
