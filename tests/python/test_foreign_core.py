"""tether reaches only its own core, whatever else the process loaded.

A process often already holds another library exporting the same
``TVMFFI*`` names (another TVM-FFI runtime). Each scenario here runs in a
fresh interpreter, since which library the dynamic loader binds to depends
on what was loaded before: a stand-in library whose ``TVMFFI*`` functions
all abort, and the real ``tvm_ffi`` peer, each loaded before and after
``import tether``. In every order tying, ``py_class``, the containers and a
plugin loaded by ``tether.load_module`` must work against tether's core, and
the other runtime must keep working too.
"""

import os
import subprocess
import sys
import textwrap

import pytest

from plugins import build_plugin, build_rust_plugin, build_shared

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORTED = os.path.join(HERE, "..", "c", "exported_symbols.txt")

# What every scenario checks once both libraries are loaded: tether works
# end to end against its own core, and the plugin it loads registers with it.
TETHER_WORKS = textwrap.dedent('''
    import gc
    import typing
    import tether
    import tether.dataclasses as dc
    from tether.dataclasses import py_class

    @py_class("foreign.Inner")
    class Inner(dc.Object):
        v: int = 0

    @py_class("foreign.Outer")
    class Outer(dc.Object):
        x: Inner
        anything: typing.Any = None

    a = Outer(Inner(3))
    assert a.x is a.x
    assert a.x.v == 3
    echo = tether.get_global_func("testing.echo")
    x = a.x
    assert echo(x) is x
    first = id(x)
    del x
    gc.collect()
    assert id(a.x) == first, "wrapper id not stable across drop and re-fetch"

    arr = tether.Array([1, "two", a])
    assert len(arr) == 3 and arr[0] == 1 and arr[1] == "two" and arr[2] is a
    lst = tether.List([1])
    lst.append(a)
    assert len(lst) == 2 and lst[1] is a
    m = tether.Map({"k": a, "n": 2})
    assert m["k"] is a and m["n"] == 2 and len(m) == 2

    plugin = tether.load_module(PLUGIN)
    made = tether.get_global_func("plugin.make_name", allow_missing=True)
    assert made is not None, "the plugin's global did not reach tether's registry"
    assert made() == "made by the C plugin through the registry"
    assert plugin.keep_and_return(a) is a
    thing = tether.get_global_func("plugin.make_thing")(5)
    assert thing.type_key == "plugin.Thing" and echo(thing) is thing
''')

# The real peer keeps working next to tether.
TVM_FFI_WORKS = textwrap.dedent('''
    assert list(tvm_ffi.convert([1, 2])) == [1, 2]
    assert len(tvm_ffi.get_global_func("ffi.Array")(1, 2, 3)) == 3
''')


# Each scenario runs without TETHER_LOAD_DEEPBIND, so the library is opened
# as tether opens it by default: with RTLD_DEEPBIND.
scenario = pytest.mark.skipif(
    os.environ.get("TETHER_UNDER_ASAN") == "1",
    reason="the scenario loads with tether's default RTLD_DEEPBIND, which the ASan runtime refuses to dlopen "
           "with (make test-asan turns deep binding off with TETHER_LOAD_DEEPBIND=0)")


def run_scenario(script: str, cwd, keep_deep_binding_switch: bool = False) -> None:
    """Run ``script`` in a fresh interpreter; fail with its output unless it
    printed the final marker (an abort in a stand-in shows up here). The
    interpreter gets no ``TETHER_LOAD_DEEPBIND`` unless
    ``keep_deep_binding_switch``."""
    env = {k: v for k, v in os.environ.items() if keep_deep_binding_switch or k != "TETHER_LOAD_DEEPBIND"}
    proc = subprocess.run([sys.executable, "-c", script + "\nprint('SCENARIO-OK')\n"], cwd=str(cwd),
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0 and "SCENARIO-OK" in proc.stdout, (
        f"scenario failed (exit {proc.returncode})\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    return build_plugin(tmp_path_factory.mktemp("foreign_plugin"))


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory):
    """A library exporting every ``TVMFFI*`` name of the C ABI, each of which
    reports itself and aborts: any call that reaches it is a binding bug."""
    with open(EXPORTED) as f:
        names = [n.strip() for n in f if n.strip().startswith("TVMFFI")]
    body = ["#include <stdio.h>", "#include <stdlib.h>",
            "static void die(const char* name) {",
            '  fprintf(stderr, "stand-in %s called: bound to the wrong core\\n", name);',
            "  abort();", "}"]
    body += [f'void {n}(void) {{ die("{n}"); }}' for n in names]
    out = tmp_path_factory.mktemp("stand_in")
    src = out / "stand_in.c"
    src.write_text("\n".join(body) + "\n")
    return build_shared(src, out / "libstand_in.so", link_core=False)


@scenario
@pytest.mark.parametrize("order", ["stand_in_first", "tether_first"])
def test_tether_ignores_a_global_stand_in(order, stand_in, plugin_path, tmp_path):
    load_stand_in = f"import ctypes\nctypes.CDLL({stand_in!r}, mode=ctypes.RTLD_GLOBAL)\n"
    script = f"PLUGIN = {plugin_path!r}\n"
    if order == "stand_in_first":
        script += load_stand_in + "import tether\n"
    else:
        script += "import tether\n" + load_stand_in
    run_scenario(script + TETHER_WORKS, tmp_path)


def test_tether_sys_users_need_no_deep_binding(stand_in, tmp_path_factory, tmp_path):
    # A Rust library using tether-sys imports only the core's table, so it
    # reaches tether's core even loaded without deep binding next to a
    # global stand-in.
    rust_plugin = build_rust_plugin(tmp_path_factory)
    script = textwrap.dedent(f"""
        import ctypes
        ctypes.CDLL({stand_in!r}, mode=ctypes.RTLD_GLOBAL)
        import tether
        m = tether.load_module({rust_plugin!r}, deep_bind=False)
        counter = m.make_counter(5)
        assert counter.type_key == "rust_plugin.Counter"
        assert m.counter_value(counter) == 5
        assert tether.get_global_func("testing.echo")(counter) is counter
    """)
    # The switch is kept: the core's loader, opening the library again,
    # follows TETHER_LOAD_DEEPBIND, not load_module's deep_bind argument
    # (unset, it asks for RTLD_DEEPBIND, which the ASan runtime refuses).
    run_scenario(script, tmp_path, keep_deep_binding_switch=True)


@pytest.fixture(scope="module")
def tvm_ffi_importable(tmp_path_factory):
    proc = subprocess.run([sys.executable, "-c", "import tvm_ffi"], capture_output=True, text=True, timeout=120,
                          cwd=str(tmp_path_factory.mktemp("tvm_ffi_probe")))
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        pytest.skip(f"the peer apache-tvm-ffi (tvm_ffi) cannot be imported here: {last}")


@scenario
@pytest.mark.parametrize("order", ["tvm_ffi_first", "tether_first"])
def test_tether_and_tvm_ffi_side_by_side(order, tvm_ffi_importable, plugin_path, tmp_path):
    script = f"PLUGIN = {plugin_path!r}\n"
    script += "import tvm_ffi\nimport tether\n" if order == "tvm_ffi_first" else "import tether\nimport tvm_ffi\n"
    run_scenario(script + TVM_FFI_WORKS + TETHER_WORKS + TVM_FFI_WORKS, tmp_path)


@scenario
def test_plugin_loaded_before_tvm_ffi_leaves_it_alone(tvm_ffi_importable, plugin_path, tmp_path):
    # load_module keeps the plugin (and so libtether_core) out of the global
    # scope: tvm_ffi, imported afterwards, must still bind to its own library.
    script = f"PLUGIN = {plugin_path!r}\n" + TETHER_WORKS + "import tvm_ffi\n" + TVM_FFI_WORKS
    run_scenario(script, tmp_path)


def test_deep_binding_can_be_turned_off(monkeypatch):
    from tether.module import Module

    deep = getattr(os, "RTLD_DEEPBIND", 0)
    assert Module._dlopen_mode(False) & deep == 0
    monkeypatch.setenv("TETHER_LOAD_DEEPBIND", "0")
    assert Module._dlopen_mode(None) & deep == 0
    monkeypatch.setenv("TETHER_LOAD_DEEPBIND", "1")
    assert Module._dlopen_mode(None) & deep == deep
    assert Module._dlopen_mode(True) & deep == deep
