"""tether.dataclasses' private helpers and hooks that tvm_ffi code and
tests reach for: named tuples over fields, the enum state record, field
objects attached to native classes, and methods registered as type
methods."""

import itertools
from typing import List, Optional

import pytest

import tether
import tether.dataclasses as dc
from tether.core import Object, TypeSchema
from tether.dataclasses.common import _make_namedtuple

_counter = itertools.count()


def _key(name: str) -> str:
    return f"tests.dc_upstream.{name}_{next(_counter)}"


def test_make_namedtuple_converts_like_the_fields():
    @dc.py_class(_key("Rec"))
    class Rec(Object):
        count: int
        scale: float

    record = _make_namedtuple("RecFields", dc.fields(Rec))
    assert record.__bases__ == (tuple,)
    assert record._fields == ("count", "scale")
    value = record(2, 3)
    assert type(value.scale) is float and value == (2, 3.0)
    assert type(record._make([1, 4]).scale) is float
    assert type(value._replace(scale=5).scale) is float
    with pytest.raises(TypeError, match=r"RecFields\.scale:.*expected float"):
        record(1, "x")
    assert not dc.is_dataclass(record)


def test_make_namedtuple_keeps_a_cached_schema_and_the_field():
    f = dc.Field("scale", TypeSchema.from_annotation(float))
    record = _make_namedtuple("Cached", (f,))
    assert record.__annotations__ == {}
    assert type(record(2).scale) is float
    assert f.type is None


def test_decorators_carry_dataclass_transform_metadata():
    from tether.dataclasses.field import _field_converter

    for deco in (dc.py_class, dc.c_class):
        meta = deco.__dataclass_transform__
        assert meta["kwargs"]["converter"] is _field_converter
        assert dc.field in meta["field_specifiers"] and dc.Field in meta["field_specifiers"]


def test_forward_reference_waits_for_a_later_class():
    @dc.py_class(_key("Early"))
    class Early(Object):
        value: int
        ref: "Optional[Late]"  # noqa: F821 - defined below

    assert "__tvm_ffi_type_info__" not in Early.__dict__

    @dc.py_class(_key("Late"))
    class Late(Object):
        value: int

    assert "__tvm_ffi_type_info__" in Early.__dict__
    late = Late(value=2)
    obj = Early(value=1, ref=late)
    assert obj.ref is late and obj.ref.value == 2


def test_mutual_references_in_one_scope():
    @dc.py_class(_key("Left"))
    class Left(Object):
        rights: "List[Right]"  # noqa: F821

    @dc.py_class(_key("Right"))
    class Right(Object):
        left: "Optional[Left]" = None

    r = Right()
    assert Left(rights=[r]).rights[0] is r


def test_unresolvable_annotations_fail_at_instantiation_listing_each():
    ns = {"__name__": "tests.dc_upstream.broken", "py_class": dc.py_class, "Object": Object}
    exec(f"@py_class({_key('Broken')!r})\nclass Broken(Object):\n    a: 'NeverDefined'\n    b: 'len(1)'\n", ns)
    with pytest.raises(TypeError, match="Cannot instantiate Broken: unresolved forward references") as e:
        ns["Broken"]()
    assert "a: NeverDefined" in str(e.value) and "b: len(1)" in str(e.value)


def test_c_class_fields_are_attached_to_type_fields():
    from tether.dataclasses.c_class import _attach_field_objects
    from tether.testing import TestIntPair

    info = TestIntPair.__tvm_ffi_type_info__
    assert [tf.dataclass_field.name for tf in info.fields] == ["a", "b"]
    assert all(tf.dataclass_field.type is int for tf in info.fields)
    saved = [tf.dataclass_field for tf in info.fields]
    try:
        _attach_field_objects(type("Bare", (), {}), info)
        assert all(isinstance(tf.dataclass_field, dc.Field) and tf.dataclass_field.type is None
                   for tf in info.fields)
    finally:
        for tf, f in zip(info.fields, saved):
            tf.dataclass_field = f


def test_enum_state_is_the_types_ffi_enum_attribute():
    from tether.dataclasses.enum import ENUM_STATE_ATTR

    class Flag(dc.Enum, type_key=_key("Flag")):
        OFF = dc.auto()
        ON = dc.auto()

    state = tether.core._lookup_type_attr(Flag.__tvm_ffi_type_info__.type_index, ENUM_STATE_ATTR)
    assert isinstance(state, dc.EnumState)
    assert {f.name for f in dc.fields(state)} == {"entries", "indexes", "attrs"}
    assert list(state.entries) == [Flag.OFF, Flag.ON]
    assert state.indexes[0].same_as(Flag.OFF) and state.indexes["ON"].same_as(Flag.ON)
    label = Flag.def_attr("label")
    label[Flag.ON] = "on"
    assert state.attrs["label"][Flag.ON] == "on"


def test_marked_methods_become_type_methods():
    @dc.py_class(_key("Node"))
    class Node(Object):
        x: int

        @tether.method
        def label(self, prefix: str) -> str:
            return f"{prefix}{self.x}"

        @tether.method
        @staticmethod
        def constant() -> int:
            return 42

        def helper(self) -> int:
            return self.x

        @tether.method
        def __ffi_repr__(self, fn_repr) -> str:  # a type-attribute name: not a method
            return "r"

    methods = {m.name: m for m in Node.__tvm_ffi_type_info__.methods}
    assert set(methods) == {"label", "constant"}
    assert methods["label"].is_static is False and methods["label"].func(Node(x=7), "N") == "N7"
    assert methods["constant"].is_static is True and methods["constant"].func() == 42
    assert methods["label"].metadata["type_schema"]["type"] == "Callable"
    assert Node(x=5).label("v") == "v5"


def test_method_refuses_classmethods_and_non_callables():
    with pytest.raises(TypeError, match="@classmethod is not supported"):
        tether.method(classmethod(lambda cls: 0))
    with pytest.raises(TypeError, match="expected a callable"):
        tether.method(42)

    def maker(cls):
        return 0

    maker.__ffi_method__ = True
    with pytest.raises(TypeError, match="wrapped by @classmethod"):
        @dc.py_class(_key("Bad"))
        class Bad(Object):
            x: int
            make = classmethod(maker)


def test_listed_class_values_become_type_attributes():
    from typing import ClassVar, Tuple

    @dc.py_class(_key("Meta"))
    class Meta(Object):
        __ffi_type_attr_names__ = ("__custom_metadata__",)
        __custom_metadata__: ClassVar[Tuple[str, int]] = ("test", 1)
        x: int

    info = Meta.__tvm_ffi_type_info__
    assert [f.name for f in info.fields] == ["x"]
    assert "__custom_metadata__" not in [m.name for m in info.methods]
    assert tuple(tether.core._lookup_type_attr(info.type_index, "__custom_metadata__")) == ("test", 1)


def test_py_class_type_fields_carry_their_field_records():
    @dc.py_class(_key("Rec2"))
    class Rec2(Object):
        a: int
        b: str = dc.field(default="x", repr=False)

    info = Rec2.__tvm_ffi_type_info__
    assert [tf.dataclass_field for tf in info.fields] == list(dc.fields(Rec2))
