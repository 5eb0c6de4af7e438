"""Enums on the core's native types: tether.dataclasses.Enum/IntEnum/
StrEnum/EnumState are the classes of ffi.Enum/ffi.IntEnum/ffi.StrEnum/
ffi.EnumState; Python-declared enums are subtypes whose variants live in an
EnumState registered as the type's __ffi_enum__ attribute; JSON graphs name
variants by canonical index; deep copies share them; the core prints them
as <type key>.<name>; and the stub generators name Enum from the runtime
package and mirror natively declared enum types in Rust."""

from __future__ import annotations

import copy
import itertools
import json
import textwrap

import pytest

import tether
from tether import core
from tether.dataclasses import Enum, EnumState, IntEnum, StrEnum, auto, entry, py_class
from tether.serialization import from_json_graph_str, to_json_graph_str

_counter = itertools.count()


def _key(name: str) -> str:
    return f"tests.enum_native.{name}.{next(_counter)}"


def _index(key: str) -> int:
    return core._object_type_key_to_index(key)


def test_bases_are_the_native_types():
    for cls, key in ((Enum, "ffi.Enum"), (IntEnum, "ffi.IntEnum"), (StrEnum, "ffi.StrEnum"),
                     (EnumState, "ffi.EnumState")):
        assert cls.__tvm_ffi_type_info__.type_key == key
        assert cls.__tvm_ffi_type_info__.type_index == _index(key)
    fields = {f.name: (f.offset, f.size) for f in Enum.__tvm_ffi_type_info__.fields}
    assert fields == {"_int_index": (24, 8), "_str_index": (32, 16)}
    # A fresh state has empty containers of its own.
    a, b = EnumState(), EnumState()
    assert len(a.entries) == 0 and len(a.indexes) == 0 and len(a.attrs) == 0
    assert not a.entries.same_as(b.entries)


def test_python_enum_is_a_native_subtype_with_registered_state():
    class Color(Enum, type_key=_key("Color")):
        RED = auto()
        GREEN = entry()

    info = Color.__tvm_ffi_type_info__
    assert _index("ffi.Enum") in info.type_ancestors
    state = core._lookup_type_attr(info.type_index, "__ffi_enum__")
    assert isinstance(state, EnumState)
    assert [v._str_index for v in state.entries] == ["RED", "GREEN"]
    assert state.indexes[1].same_as(Color.GREEN) and state.indexes["RED"].same_as(Color.RED)
    assert repr(Color.GREEN) == f"{info.type_key}.GREEN"
    assert tether.structural_equal(Color.RED, Color.RED)
    assert not tether.structural_equal(Color.RED, copy.copy(Color.RED))


def test_payload_value_is_the_native_alias_field():
    class Level(IntEnum, type_key=_key("Level")):
        LOW = -3

    class Op(StrEnum, type_key=_key("Op")):
        ADD = "+"

    assert Level.LOW.value == -3 == Level.LOW._int_index
    assert Op.ADD.value == "+" == Op.ADD._str_index
    with pytest.raises(AttributeError):
        Level.LOW.value = 4
    assert Level(-3).same_as(Level.LOW) and Op("+").same_as(Op.ADD)
    with pytest.raises(ValueError):
        Level(5)


def test_json_graph_names_variants_by_canonical_index():
    class Status(Enum, type_key=_key("Status")):
        READY = auto()

    class Prio(IntEnum, type_key=_key("Prio")):
        HIGH = 1 << 62

    @py_class(_key("Task"))
    class Task(tether.Object):
        status: Status
        prio: Prio

    task = Task(status=Status.READY, prio=1 << 62)
    text = to_json_graph_str(task)
    nodes = json.loads(text)["nodes"]
    datas = {n["type"]: n.get("data") for n in nodes}
    assert datas[Status.__tvm_ffi_type_info__.type_key] == "READY"
    assert datas[Prio.__tvm_ffi_type_info__.type_key] == 1 << 62
    back = from_json_graph_str(text)
    assert back.status.same_as(Status.READY) and back.prio.same_as(Prio.HIGH)
    forged = json.dumps({"root_index": 0, "nodes": [{"type": Status.__tvm_ffi_type_info__.type_key, "data": "GONE"}]})
    with pytest.raises(ValueError, match="has no instance with index GONE"):
        from_json_graph_str(forged)


def test_deep_copies_share_variants():
    class Mode(StrEnum, type_key=_key("Mode")):
        FAST = "fast"

    items = tether.convert([Mode.FAST, [Mode.FAST]])
    copied = copy.deepcopy(items)
    assert not copied.same_as(items)
    assert copied[0].same_as(Mode.FAST) and copied[1][0].same_as(Mode.FAST)
    assert tether.get_global_func("ffi.DeepCopy")(Mode.FAST).same_as(Mode.FAST)


def test_native_enum_type_binds_its_native_variants_and_attrs():
    from typing import ClassVar

    class Variant(Enum, type_key="testing.TestEnumVariant"):
        Alpha: ClassVar["Variant"]

    assert Variant.Alpha.same_as(tether.get_global_func("testing.enum_variant_get")("Alpha"))
    assert Variant.def_attr("code")[Variant.Alpha] == 10
    with pytest.raises(RuntimeError, match="string index 'Gamma'"):
        class Wrong(Enum, type_key="testing.TestEnumVariant"):
            Gamma: ClassVar["Wrong"]


def _stub_file(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def test_stubs_import_enum_from_the_runtime_package(tmp_path):
    from tether.stub import cli
    from tether.stub.python_generator import consts as PC

    body = """
        # tvm-ffi-stubgen(begin): import-section
        # tvm-ffi-stubgen(end)

        # tvm-ffi-stubgen(begin): global/testing
        # tvm-ffi-stubgen(end)
        """
    own = _stub_file(tmp_path, "own.py", body)
    assert cli.main([str(own)]) == 0
    text = own.read_text()
    assert "    def enum_variant_get(_0: str, /) -> Enum: ..." in text
    assert "    from tether.dataclasses import Enum\n" in text
    served = _stub_file(tmp_path, "served.py", body)
    try:
        assert cli.main(["--runtime-package", "tvm_ffi", str(served)]) == 0
    finally:
        PC.set_runtime_package(None)
    assert "    from tvm_ffi.dataclasses import Enum\n" in served.read_text()


def test_rust_stubs_mirror_native_enum_types(tmp_path):
    from tether.stub import cli

    (tmp_path / "Cargo.toml").write_text('[package]\nname = "demo"\nversion = "0.1.0"\n')
    (tmp_path / "src").mkdir()
    lib = _stub_file(tmp_path / "src", "lib.rs", """
        // tvm-ffi-stubgen(begin): import-section
        // tvm-ffi-stubgen(end)

        // tvm-ffi-stubgen(begin): object/testing.TestEnumVariant
        // tvm-ffi-stubgen(end)

        // tvm-ffi-stubgen(begin): object/testing.TestCxxIntEnum
        // tvm-ffi-stubgen(end)
        """)
    assert cli.main(["--target", "rust", str(lib)]) == 0
    text = lib.read_text()
    assert "pub struct TestEnumVariantObj {\n    base: FfiEnumObj,\n}" in text
    assert "pub struct TestCxxIntEnumObj {\n    base: FfiIntEnumObj,\n}" in text
    # The builtin ancestors are mirrored once each, in the import section.
    assert text.count("struct FfiEnumObj {") == 1 and text.count("struct FfiIntEnumObj {") == 1
    assert text.index("struct FfiIntEnumObj") < text.index("object/testing.TestEnumVariant")
