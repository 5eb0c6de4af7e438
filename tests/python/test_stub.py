"""``tether.stub``: the ``tvm-ffi-stubgen`` protocol (``tether-stub``) filling
marked blocks of Python and Rust files from the registry. In-process runs
over tether's own registry and the conftest types; the C++ test plugin (with
type schemas) in a fresh interpreter; one C++ source built for both runtimes
and both commands' outputs compared; bad inputs."""

import json
import subprocess
import sys
import textwrap

import pytest

from tether.stub import cli, consts, file_utils, layout
from tether.stub.generator import generator_names, get_generator
from tether.stub.rust_generator.directives import Directives
from tether.stub.utils import Options

from plugins import build_cpp_plugin, build_kernel_for

B, E = "# tvm-ffi-stubgen(begin):", "# tvm-ffi-stubgen(end)"
RB, RE = "// tvm-ffi-stubgen(begin):", "// tvm-ffi-stubgen(end)"


def write(path, text):
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def crate(tmp_path, body):
    """A Cargo crate whose src/lib.rs holds ``body``."""
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "demo"\nversion = "0.1.0"\n')
    (tmp_path / "src").mkdir()
    return write(tmp_path / "src" / "lib.rs", body)


def run_cli(*args):
    """The command in a fresh interpreter: (exit status, stdout, stderr)."""
    r = subprocess.run([sys.executable, "-m", "tether.stub.cli", *map(str, args)], capture_output=True, text=True,
                       timeout=300)
    return r.returncode, r.stdout, r.stderr


# --- in process: tether's registry and the conftest types ---------------------------


def test_python_blocks_for_globals_and_types(tmp_path, capsys):
    f = write(tmp_path / "api.py", f'''
        """demo"""
        {B} import-section
        {E}

        {B} global/testing
        {E}

        class Base:
            {B} object/tests.Base
            {E}

        class Leaf(Base):
            {B} object/tests.Leaf
            {E}

        __all__ = [
            {B} __all__
            {E}
        ]
        ''')
    assert cli.main([str(f)]) == 0
    text = f.read_text()
    # the global block binds the prefix at import time and types each function
    assert '_FFI_INIT_FUNC("testing", __name__)' in text
    assert "from tether import init_ffi_api as _FFI_INIT_FUNC" in text
    assert "    def echo(*args: Any) -> Any: ..." in text  # no recorded schema: anything in, anything out
    assert "    def apply_n(*args: Any) -> Any: ..." in text
    # object blocks: own fields, and the initializer over the whole chain (defaults as `= ...`)
    assert "    a: int\n" in text
    assert "        def __init__(self, a: int = ..., b: int = ..., c: int = ...) -> None: ..." in text
    assert "    c: int\n" in text and "    b: int\n" not in text
    # imports only what is used, under TYPE_CHECKING, and __all__ lists functions and classes
    # (the testing library's typed globals name containers, tensors and its TestIntPair)
    assert "if TYPE_CHECKING:\n    from collections.abc import" in text
    assert "    from tether.testing import TestIntPair\n    from typing import Any, Callable\n" in text
    assert '    "Base",\n    "Leaf",\n' in text and '    "echo",\n' in text
    compile(text, "api.py", "exec")
    # a second run changes nothing
    before = text
    assert cli.main([str(f)]) == 0
    assert f.read_text() == before


def test_runtime_package_option_names_tvm_ffi(tmp_path):
    # Code built with the tvm_ffi CMake package is written for TVM-FFI: its
    # generated stubs import the runtime as tvm_ffi, not as tether.
    from tether.stub.python_generator import consts as PC
    f = write(tmp_path / "api.py", f'''
        {B} import-section
        {E}

        {B} global/testing
        {E}
        ''')
    try:
        assert cli.main(["--runtime-package", "tvm_ffi", str(f)]) == 0
    finally:
        PC.set_runtime_package(None)
    text = f.read_text()
    assert "from tvm_ffi import init_ffi_api as _FFI_INIT_FUNC" in text
    assert "from tvm_ffi.testing import TestIntPair" in text
    assert "tether" not in text
    with pytest.raises(SystemExit):
        cli.main(["--runtime-package", "numpy", str(f)])
    with pytest.raises(ValueError, match="runtime package"):
        PC.set_runtime_package("numpy")


def test_prefix_directive_rolls_out_one_block_per_type(tmp_path):
    f = write(tmp_path / "tests_api.py", """
        # tvm-ffi-stubgen(prefix): tests
        # tvm-ffi-stubgen(skip): tests.Holder
        """)
    assert cli.main([str(f)]) == 0
    text = f.read_text()
    keys = [line.split("object/")[1] for line in text.splitlines() if "object/" in line]
    # Other test modules may register more tests.* types first: the shared
    # conftest types must be there, in order (parents first), and nothing else
    # than tests.* types (the skipped tests.Holder among them) may be.
    expected = ["tests.Base", "tests.BaseHolder", "tests.Inner", "tests.Mid", "tests.Leaf"]
    assert [k for k in keys if k in expected] == expected
    assert all(k.startswith("tests.") and k != "tests.Holder" for k in keys)
    assert f"{B} import-section" in text
    assert "item: Base" in text and "def __init__(self, a: int = ..., b: int = ...) -> None: ..." in text


def test_ty_map_and_import_object_directives(tmp_path):
    f = write(tmp_path / "m.py", f"""
        # tvm-ffi-stubgen(ty-map): tests.Inner -> mypkg.nodes.Inner
        # tvm-ffi-stubgen(import-object): mypkg.helpers.tool;True;_tool
        {B} import-section
        {E}
        {B} object/tests.Holder
        {E}
        """)
    assert cli.main([str(f)]) == 0
    text = f.read_text()
    assert "    from mypkg.helpers import tool as _tool" in text
    assert "    from mypkg.nodes import Inner" in text
    assert "x: Inner\n" in text


def test_check_reports_stale_files_without_writing(tmp_path, capsys):
    f = write(tmp_path / "m.py", f"""
        {B} object/tests.Mid
        {E}
        """)
    assert cli.main(["--check", str(f)]) == 1
    assert "[Stale]" in capsys.readouterr().out
    assert "b: int" not in f.read_text()  # --check writes nothing
    assert cli.main([str(f)]) == 0
    assert cli.main(["--check", str(f)]) == 0
    f.write_text(f.read_text().replace("b: int", "b: str"))
    assert cli.main(["--check", str(f)]) == 1


def test_skip_file_and_unmarked_files_are_left_alone(tmp_path):
    skipped = write(tmp_path / "a.py", f"""
        # tvm-ffi-stubgen(skip-file)
        {B} object/tests.Mid
        {E}
        """)
    plain = write(tmp_path / "b.py", "x = 1\n")
    before = skipped.read_text(), plain.read_text()
    assert cli.main([str(tmp_path)]) == 0
    assert (skipped.read_text(), plain.read_text()) == before


def test_rust_target_for_a_python_defined_type(tmp_path):
    lib = crate(tmp_path, f"""
        {RB} import-section
        {RE}

        {RB} object/tests.Base
        {RE}

        {RB} object/tests.Mid
        {RE}
        """)
    assert cli.main(["--target", "rust", str(lib)]) == 0
    text = lib.read_text()
    assert '#[type_key = "tests.Base"]\npub struct BaseObj {\n    base: Object,\n    pub a: i64,\n}' in text
    assert "assert!(::core::mem::size_of::<BaseObj>() == 32);" in text
    assert "pub struct MidObj {\n    base: BaseObj,\n    pub b: i64,\n}" in text
    assert "pub fn new(a: i64, b: i64) -> Self {\n        let base = BaseObj::new(a);" in text
    assert "tvm_ffi::impl_object_upcast!(Mid => Base);" in text
    assert "use tvm_ffi::ObjectArc;" in text and "use std::ops::Deref;" in text


def test_rust_opaque_directive_reads_fields_through_getters(tmp_path):
    lib = crate(tmp_path, f"""
        {RB} import-section
        {RE}
        // tvm-ffi-stubgen(opaque): tests.Base
        // tvm-ffi-stubgen(enum): tests.Base.a -> Level(i64) {{ Low=0, High=1 }}

        {RB} object/tests.Base
        {RE}
        """)
    assert cli.main(["--target", "rust", str(lib)]) == 0
    text = lib.read_text()
    assert "/// Opaque: vetoed by directive although the layout is reproducible." in text
    assert "pub struct Level(i64);" in text and "    pub const High: Self = Self(1);" in text
    assert ('    pub fn a(&self) -> Result<Level> {\n'
            '        let raw: i64 = FieldGetter::new(Self::type_index(), "a")?.get(self)?;') in text


def test_rust_block_needing_an_unprovided_parent_fails(tmp_path, capsys):
    lib = crate(tmp_path, f"""
        {RB} object/tests.Mid
        {RE}
        """)
    assert cli.main(["--target", "rust", str(lib)]) == 2
    assert "depends on `tests.Base`, which this run does not ask for" in capsys.readouterr().out


def test_coverage_report(tmp_path):
    out = tmp_path / "coverage.json"
    assert cli.main(["--coverage-out", str(out)]) == 0
    report = json.loads(out.read_text())
    base = report["tests.Base"]
    assert base["verdict"] == "complete" and base["own_bytes"] == [24, 32]
    assert base["fields"] == [{"name": "a", "offset": 24, "size": 8, "alignment": 8}]
    assert report["tests.Leaf"]["ancestors"] == ["ffi.Object", "tests.Base", "tests.Mid"]


def test_layout_rules():
    from tether.stub.utils import NamedTypeSchema, ObjectInfo
    from tether.core import TypeSchema

    def field(name, offset, size, align):
        return NamedTypeSchema(name, TypeSchema("int"), size=size, alignment=align, offset=offset)

    root = ObjectInfo(fields=[], methods=[], type_key="r.Root", total_size=24)
    padded = ObjectInfo(fields=[field("a", 24, 4, 4), field("b", 32, 8, 8)], methods=[], type_key="r.P",
                        parent_type_key="r.Root", ancestors=["r.Root"], total_size=40)
    holed = ObjectInfo(fields=[field("a", 32, 8, 8)], methods=[], type_key="r.H", parent_type_key="r.Root",
                       ancestors=["r.Root"], total_size=40)
    child = ObjectInfo(fields=[], methods=[], type_key="r.C", parent_type_key="r.H", ancestors=["r.Root", "r.H"],
                       total_size=40)
    v = layout.classify({"r.Root": root, "r.P": padded, "r.H": holed, "r.C": child})
    assert v["r.P"].is_complete and v["r.P"].detail == "reflected fields fill [24, 40) exactly (alignment padding [28, 32))"
    assert (v["r.H"].reason, v["r.H"].detail) == (
        "uncovered-bytes", "bytes [24, 32) of [24, 40) are not accounted for by reflected fields")
    assert (v["r.C"].reason, v["r.C"].detail) == ("parent-opaque", "parent 'r.H' is opaque (uncovered-bytes)")
    with pytest.raises(KeyError, match="Ancestor 'r.Root' is not among the types to classify"):
        layout.classify({"r.P": padded})


# --- bad inputs ----------------------------------------------------------------------------


def test_missing_path_fails_with_a_message(tmp_path, capsys):
    assert cli.main([str(tmp_path / "nope.py")]) == 2
    assert f'[Failed] File "{tmp_path / "nope.py"}": no such file or directory' in capsys.readouterr().out


def test_unregistered_type_fails_and_unknown_prefix_is_reported(tmp_path, capsys):
    f = write(tmp_path / "m.py", f"""
        {B} global/no_such_prefix
        {E}
        {B} object/no_such.Type
        {E}
        """)
    before = f.read_text()
    assert cli.main([str(f)]) == 2
    out = capsys.readouterr().out
    assert "`object/no_such.Type` (line 3): the type is no longer registered; delete the block" in out
    assert "No registered global function under prefix `no_such_prefix`" in out
    assert f.read_text() == before


@pytest.mark.parametrize("text, message", [
    (f"{B} object/tests.Base\n{B} object/tests.Mid\n{E}\n", "Nested stub not permitted at line 2"),
    (f"{E}\n", "Unmatched `# tvm-ffi-stubgen(end)` found at line 1"),
    (f"{B} object/tests.Base\n", "Unclosed stub block at end of file"),
    (f"{B} nonsense\n{E}\n", "Unknown stub type `nonsense` at line 1"),
])
def test_malformed_markers(tmp_path, text, message):
    path = tmp_path / "m.py"
    path.write_text(text)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        file_utils.FileInfo.from_file(path)


def test_bad_directives_fail_the_file(tmp_path, capsys):
    f = write(tmp_path / "m.py", "# tvm-ffi-stubgen(frobnicate): x\n")
    assert cli.main([str(f)]) == 2
    assert "Unknown directive `frobnicate` at line 1" in capsys.readouterr().out
    g = write(tmp_path / "n.py", "# tvm-ffi-stubgen(ty-map): no arrow here\n")
    assert cli.main([str(g)]) == 2
    assert "Invalid ty_map format at line 1. Example: `A.B -> C.D`" in capsys.readouterr().out
    with pytest.raises(ValueError, match=r"Invalid `enum` directive at line 3"):
        Directives().add("enum", "a.b -> Kind(i7)", 3)


def test_usage_errors(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--init-pypkg", "x", str(tmp_path)])
    assert exc.value.code == 2
    assert "--init-pypkg, --init-lib, and --init-prefix must be provided together" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main(["--check", "--init-pypkg", "p", "--init-lib", "l", "--init-prefix", "x", str(tmp_path)])
    assert exc.value.code == 2 and "--check cannot be combined" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main(["--target", "go", str(tmp_path)])
    assert exc.value.code == 2 and "invalid choice: 'go'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli.main([])
    assert exc.value.code == 1 and "usage: tether-stub" in capsys.readouterr().out
    with pytest.raises(ValueError, match="Unknown stubgen generator: 'go'. Known generators: python, rust"):
        get_generator("go")
    assert generator_names() == ["python", "rust"]


# --- the C++ test plugin: recorded type schemas --------------------------------------------


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    return build_cpp_plugin(tmp_path_factory.mktemp("stub_plugin"))


def test_typed_signatures_from_a_plugin(plugin_path, tmp_path):
    f = write(tmp_path / "api.py", f"""
        {B} import-section
        {E}
        {B} global/cpp_plugin
        {E}
        class Point:
            {B} object/cpp_plugin.Point
            {E}
        """)
    code, out, err = run_cli("--dlls", plugin_path, f)
    assert code == 0, out + err
    text = f.read_text()
    assert "    def make_point(_0: int, _1: int, _2: str, _3: Object, /) -> Point: ..." in text
    assert "    def sum_x(_0: Sequence[Point], /) -> int: ..." in text
    assert "    def fail(_0: str, _1: str, /) -> int: ..." in text
    assert "    x: int\n    y: int\n    label: str\n" in text
    assert "        def shift(self, _1: int, /) -> None: ..." in text
    assert "        def __ffi_init__(self, _0: int, _1: int, _2: str, /) -> None: ..." in text
    assert "    from collections.abc import Sequence\n    from tether import Object\n" in text


def test_rust_binding_of_a_plugin_type(plugin_path, tmp_path):
    lib = crate(tmp_path, f"""
        {RB} import-section
        {RE}

        {RB} object/cpp_plugin.Point
        {RE}
        """)
    code, out, err = run_cli("--target", "rust", "--dlls", plugin_path, lib)
    assert code == 0, out + err
    text = lib.read_text()
    assert "/// Complete: reflected fields fill [24, 64) exactly." in text
    assert "    pub label: String,\n    pub child: ObjectRef,\n" in text
    assert "    pub fn new(x: i64, y: i64, label: impl Into<String>, child: impl Into<ObjectRef>) -> Self {" in text
    assert "use tvm_ffi::object::ObjectRef;" in text and "use tvm_ffi::String;" in text
    # a second run is up to date
    assert run_cli("--check", "--target", "rust", "--dlls", plugin_path, lib)[0] == 0


# --- one C++ source, both runtimes, both commands --------------------------------------------

DEMO_SOURCE = r"""
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

namespace ffi = tvm::ffi;
namespace refl = tvm::ffi::reflection;

class GadgetObj : public ffi::Object {
 public:
  int64_t serial = 0;
  double weight = 1.0;
  ffi::String tag;
  ffi::Optional<int64_t> slot;
  int64_t Scaled(int64_t k) const { return serial * k; }
  static constexpr bool _type_mutable = true;
  static constexpr uint32_t _type_child_slots = 1;
  TVM_FFI_DECLARE_OBJECT_INFO("stubdemo.Gadget", GadgetObj, ffi::Object);
};

class WidgetObj : public GadgetObj {
 public:
  ffi::Array<int64_t> sizes;
  ffi::Map<ffi::String, double> scores;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stubdemo.Widget", WidgetObj, GadgetObj);
};

class Gadget : public ffi::ObjectRef {
 public:
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(Gadget, ffi::ObjectRef, GadgetObj);
};

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::ObjectDef<GadgetObj>()
      .def_rw("serial", &GadgetObj::serial, "serial number")
      .def_ro("weight", &GadgetObj::weight, refl::default_value(1.0))
      .def_rw("tag", &GadgetObj::tag, refl::default_value(ffi::String("t")), refl::kw_only(true))
      .def_rw("slot", &GadgetObj::slot)
      .def("scaled", &GadgetObj::Scaled, "serial times k");
  refl::ObjectDef<WidgetObj>().def_rw("sizes", &WidgetObj::sizes).def_rw("scores", &WidgetObj::scores);
  refl::GlobalDef()
      .def("stubdemo.scale", [](int64_t x, double f) { return static_cast<double>(x) * f; })
      .def("stubdemo.first", [](ffi::Array<ffi::String> xs) -> ffi::Optional<ffi::String> {
        if (xs.empty()) return std::nullopt;
        return xs[0];
      })
      .def("stubdemo.serial_of", [](Gadget g) -> int64_t { return g->serial; })
      .def("stubdemo.tally", [](ffi::Map<ffi::String, int64_t> m) -> ffi::Array<int64_t> {
        ffi::Array<int64_t> out;
        for (auto kv : m) out.push_back(kv.second);
        return out;
      });
}
"""

DEMO_PY = f'''
"""demo"""
{B} import-section
{E}

{B} global/stubdemo
{E}

class Gadget:
    {B} object/stubdemo.Gadget
    {E}

class Widget(Gadget):
    {B} object/stubdemo.Widget
    {E}

__all__ = [
    {B} __all__
    {E}
]
'''

DEMO_RS = f"""
{RB} import-section
{RE}
// tvm-ffi-stubgen(enum): stubdemo.Gadget.serial -> Serial(i64) {{ A=1 }}

{RB} object/stubdemo.Gadget
{RE}

{RB} object/stubdemo.Widget
{RE}
"""


@pytest.fixture(scope="module")
def demo_libraries(tmp_path_factory):
    out = tmp_path_factory.mktemp("stubdemo")
    source = out / "stubdemo.cc"
    source.write_text(DEMO_SOURCE)
    return {runtime: build_kernel_for(runtime, str(source), out / f"libstubdemo_{runtime}.so")
            for runtime in ("tether", "tvm_ffi")}


def _tree(root):
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_output_as_tvm_ffi_stubgen(demo_libraries, tmp_path):
    """Marked Python and Rust files, and ``--init`` scaffolding: tvm_ffi's
    command on its runtime and tether's on tether give the same text (the
    Python runtime module named ``tether`` instead of ``tvm_ffi``)."""
    trees = {}
    for runtime, module in (("tvm_ffi", "tvm_ffi.stub.cli"), ("tether", "tether.stub.cli")):
        root = tmp_path / runtime
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "api.py").write_text(DEMO_PY.lstrip("\n"))
        (root / "pkg" / "rolled.py").write_text("# tvm-ffi-stubgen(prefix): stubdemo\n")
        (root / "crate" / "src").mkdir(parents=True)
        (root / "crate" / "Cargo.toml").write_text('[package]\nname = "demo"\nversion = "0.1.0"\n')
        (root / "crate" / "src" / "lib.rs").write_text(DEMO_RS.lstrip("\n"))
        (root / "init").mkdir()
        lib = demo_libraries[runtime]
        for args in (["--dlls", lib, root / "pkg"],
                     ["--target", "rust", "--dlls", lib, root / "crate"],
                     ["--dlls", lib, "--init-pypkg", "demo-pkg", "--init-lib", "demo_shared",
                      "--init-prefix", "stubdemo", root / "init"]):
            r = subprocess.run([sys.executable, "-m", module, *map(str, args)], capture_output=True, text=True,
                               timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
        trees[runtime] = _tree(root)
    expected = {name: text.replace("tvm_ffi import", "tether import").replace("tvm_ffi.", "tether.")
                if name.endswith(".py") else text for name, text in trees["tvm_ffi"].items()}
    assert sorted(trees["tether"]) == sorted(expected)
    for name in expected:
        assert trees["tether"][name] == expected[name], name
    assert "def first(_0: Sequence[str], /) -> str | None: ..." in trees["tether"]["pkg/api.py"]
    assert "pub struct WidgetObj {\n    base: GadgetObj," in trees["tether"]["crate/src/lib.rs"]


def test_module_surface_matches_tvm_ffi_stub():
    """Every name the modules of tvm_ffi.stub define (or import from each
    other) exists in tether.stub's module of the same name, of the same kind."""
    import importlib
    import inspect

    names = ["", ".cli", ".consts", ".file_utils", ".generator", ".layout", ".lib_state", ".utils",
             ".python_generator", ".python_generator.codegen", ".python_generator.consts",
             ".python_generator.generator", ".python_generator.utils", ".rust_generator",
             ".rust_generator.codegen", ".rust_generator.consts", ".rust_generator.directives",
             ".rust_generator.generator", ".rust_generator.utils"]

    def kind(v):
        if inspect.ismodule(v):
            return "module"
        if inspect.isclass(v):
            return "class"
        return "callable" if callable(v) else "value"

    third_party = {"annotations", "TYPE_CHECKING", "Any", "Callable", "Literal", "TypeAlias", "Protocol",
                   "Collection", "Generator", "Iterable", "Iterator", "Mapping", "StringIO", "defaultdict", "Path"}
    for name in names:
        theirs = importlib.import_module("tvm_ffi.stub" + name)
        ours = importlib.import_module("tether.stub" + name)
        for attr, value in vars(theirs).items():
            if attr in third_party or (attr.startswith("__") and attr != "__main__"):
                continue
            if inspect.ismodule(value) and value.__name__ in getattr(sys, "stdlib_module_names", ()):
                continue
            assert hasattr(ours, attr), f"tether.stub{name} lacks {attr}"
            assert kind(getattr(ours, attr)) == kind(value), f"tether.stub{name}.{attr}"


def test_marker_syntax_and_options_defaults():
    assert consts.PYTHON_SYNTAX.begin == "# tvm-ffi-stubgen(begin):"
    assert consts.RUST_SYNTAX.end == "// tvm-ffi-stubgen(end)"
    assert consts.PYTHON_SYNTAX.directive("ty-map") == "# tvm-ffi-stubgen(ty-map):"
    assert consts.RUST_SYNTAX.skip_file == "// tvm-ffi-stubgen(skip-file)"
    opt = Options()
    assert (opt.indent, opt.target, opt.dry_run, opt.check, opt.coverage_out) == (4, "python", False, False, None)

