"""``tether-stubgen`` writes ``.pyi`` stubs from the type-schema metadata
the C++ layer records: the stubs for the C++ test plugin are stable (a
golden file) and let ``mypy --strict`` check code using the plugin."""

import os
import shutil
import subprocess
import sys

import pytest

import tether

from plugins import build_cpp_plugin

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    return build_cpp_plugin(tmp_path_factory.mktemp("stubgen_plugin"))


@pytest.fixture(scope="module")
def stub_dir(plugin_path, tmp_path_factory):
    # A fresh interpreter: only the plugin is registered under its prefix.
    out = tmp_path_factory.mktemp("stubs")
    r = subprocess.run([sys.executable, "-m", "tether.stubgen", "cpp_plugin", "--load", plugin_path, "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(out / "cpp_plugin.pyi")]
    return out


METADATA_CHECK = """
import json, sys
import tether
tether.load_module(sys.argv[1])
md = tether.get_global_func_metadata("cpp_plugin.sum_x")
assert json.loads(md["type_schema"]) == {
    "type": "ffi.Function",
    "named_args": {"return": [{"type": "int"}],
                   "params": [{"type": "ffi.Array", "args": [{"type": "cpp_plugin.Point"}]}]}}, md
info = tether._ffi.type_info(tether._ffi.type_key_to_index("cpp_plugin.Point"))
fields = {f["name"]: json.loads(f["metadata"]) for f in info["field_details"]}
assert fields["label"] == {"type_schema": '{"type":"ffi.String"}'}, fields
methods = {m["name"]: json.loads(json.loads(m["metadata"])["type_schema"]) for m in info["method_details"]}
assert methods["shift"]["named_args"]["params"] == [{"type": "cpp_plugin.Point"}, {"type": "int"}], methods
"""


def test_cpp_layer_records_type_schemas(plugin_path):
    # A fresh interpreter: a second copy of the plugin in this process
    # would register its globals twice (test_cpp_layer loads one).
    r = subprocess.run([sys.executable, "-c", METADATA_CHECK, plugin_path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]


def test_stubs_match_the_golden_file(stub_dir):
    with open(stub_dir / "cpp_plugin.pyi", encoding="utf-8") as f:
        text = f.read()
    with open(os.path.join(GOLDEN, "cpp_plugin.pyi"), encoding="utf-8") as f:
        assert text == f.read()
    compile(text, "cpp_plugin.pyi", "exec")  # valid Python syntax


def _mypy(stub_dir, source, tmp_path):
    pytest.importorskip("mypy", reason="mypy is a test dependency (make installs it)")
    env = dict(os.environ, MYPYPATH=str(stub_dir))
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir",
                           str(tmp_path / "mypy_cache"), source], capture_output=True, text=True, env=env,
                          cwd=str(tmp_path))


def test_usage_passes_mypy_strict(stub_dir, tmp_path):
    r = _mypy(stub_dir, os.path.join(GOLDEN, "cpp_plugin_usage.py"), tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_catches_misuse_through_the_stubs(stub_dir, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import cpp_plugin\n"
                   "p = cpp_plugin.make_point(1, 2, 'a', None)\n"
                   "p.x = 3\n"                      # read-only field
                   "s: str = p.norm2()\n"           # returns int
                   "cpp_plugin.sum_x(1)\n")         # needs points
    r = _mypy(stub_dir, str(bad), tmp_path)
    assert r.returncode == 1
    assert 'bad.py:3: error: Property "x" defined in "Point" is read-only' in r.stdout
    assert "bad.py:4: error: Incompatible types in assignment" in r.stdout
    assert 'bad.py:5: error: Argument 1 to "sum_x" has incompatible type "int"' in r.stdout


def test_nested_prefixes_become_packages(tmp_path):
    from tether import stubgen

    tether.register_global_func("stubgen_demo.sub.twice", lambda x: x * 2)
    tether.register_global_func("stubgen_demo.top", lambda: None)
    files = stubgen.generate("stubgen_demo")
    assert sorted(files) == [os.path.join("stubgen_demo", "__init__.pyi"), os.path.join("stubgen_demo", "sub.pyi")]
    # Python callables carry no schema: their stubs say Any.
    assert "def twice(*args: Any) -> Any: ..." in files[os.path.join("stubgen_demo", "sub.pyi")]
    assert "from typing import Any" in files[os.path.join("stubgen_demo", "sub.pyi")]


def test_console_script_is_installed():
    script = shutil.which("tether-stubgen", path=os.path.dirname(sys.executable))
    assert script is not None
    r = subprocess.run([script, "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "MODULE_OR_PREFIX" in r.stdout.upper()
