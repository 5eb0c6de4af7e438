"""Two-step registration of Python-defined classes
(``core._register_py_class`` then ``TypeInfo._register_fields``, and
``core._rollback_py_class``): the type exists before its fields (so
mutually referring classes can name each other), fields take TVM-FFI's
native layout (one-byte bools, tail padding reused by a subclass), writes
convert through the field's schema, and a native C++ type can be a parent.
"""

import itertools

import pytest

import tether
from tether import core
from tether.core import MISSING, TypeSchema
from tether.dataclasses import Field
from tether._dunder import _install_dataclass_dunders
from tether.registry import _add_class_attrs
from tether.testing import TestObjectBase

_keys = itertools.count()


def _key(name: str) -> str:
    return f"tests.py_class_registration.{name}_{next(_keys)}"


def _allocate(name: str, parent: type = core.Object):
    parent_info = core._type_cls_to_type_info(parent)
    cls = type(name, (parent,), {"__slots__": ()})
    return cls, core._register_py_class(parent_info, _key(name), cls)


def _finish(cls: type, info, fields: list) -> type:
    info._register_fields(fields)
    cls.__tvm_ffi_type_info__ = info
    _add_class_attrs(cls, info)
    _install_dataclass_dunders(cls, init=True, repr=True, eq=True, order=False, unsafe_hash=False)
    return cls


def test_allocation_comes_before_fields():
    cls, info = _allocate("Pending")
    parent_info = core._type_cls_to_type_info(core.Object)
    assert info.fields is None and info.methods == []
    assert info.parent_type_info is parent_info
    assert info.type_ancestors[-1] == parent_info.type_index
    assert core._lookup_or_register_type_info_from_type_key(info.type_key) is info
    _finish(cls, info, [Field(name="x", _ty_schema=TypeSchema("int"))])
    assert [f.name for f in info.fields] == ["x"]
    assert cls(x=3).x == 3
    with pytest.raises(AssertionError, match="already called"):
        info._register_fields([])


def test_duplicate_key_is_refused_and_rollback_frees_it():
    parent_info = core._type_cls_to_type_info(core.Object)
    key = _key("Dup")
    first = type("First", (core.Object,), {"__slots__": ()})
    info = core._register_py_class(parent_info, key, first)
    with pytest.raises(ValueError, match="already registered"):
        core._register_py_class(parent_info, key, type("Second", (core.Object,), {"__slots__": ()}))
    core._rollback_py_class(info)
    retry = type("Retry", (core.Object,), {"__slots__": ()})
    again = core._register_py_class(parent_info, key, retry)
    assert again.type_index == info.type_index  # the core's index is kept
    _finish(retry, again, [Field(name="v", _ty_schema=TypeSchema("str"))])
    assert retry(v="hi").v == "hi"


def test_bools_pack_and_subclasses_reuse_tail_padding():
    parent, pinfo = _allocate("BoolParent")
    _finish(parent, pinfo, [Field(name="a", _ty_schema=TypeSchema("bool")),
                            Field(name="b", _ty_schema=TypeSchema("bool"))])
    assert [f.offset for f in pinfo.fields] == [24, 25]
    assert pinfo.total_size == 32
    child, cinfo = _allocate("BoolChild", parent)
    _finish(child, cinfo, [Field(name="c", _ty_schema=TypeSchema("bool")),
                           Field(name="n", _ty_schema=TypeSchema("int"))])
    assert [f.offset for f in cinfo.fields] == [26, 32]
    obj = child(a=True, b=False, c=True, n=7)
    assert (obj.a, obj.b, obj.c, obj.n) == (True, False, True, 7)
    obj.b = True
    assert (obj.a, obj.b, obj.c) == (True, True, True)


def test_writes_convert_through_the_schema():
    cls, info = _allocate("Typed")
    _finish(cls, info, [Field(name="f", _ty_schema=TypeSchema("float")),
                        Field(name="o", _ty_schema=TypeSchema("Optional", (TypeSchema("int"),)), default=None)])
    obj = cls(f=1)
    assert obj.f == 1.0 and isinstance(obj.f, float)
    with pytest.raises(TypeError):
        obj.f = "not a float"
    assert obj.f == 1.0  # a refused write leaves the old value
    obj.o = 5
    assert obj.o == 5
    obj.o = None
    assert obj.o is None
    with pytest.raises(TypeError):
        cls(f="x")


def test_mutual_references_resolve_after_allocation():
    foo, foo_info = _allocate("Foo")
    bar, bar_info = _allocate("Bar")
    foo_ref = TypeSchema("Optional", (TypeSchema(foo_info.type_key, origin_type_index=foo_info.type_index),))
    bar_ref = TypeSchema("Optional", (TypeSchema(bar_info.type_key, origin_type_index=bar_info.type_index),))
    _finish(foo, foo_info, [Field(name="bar", _ty_schema=bar_ref, default=None)])
    _finish(bar, bar_info, [Field(name="foo", _ty_schema=foo_ref, default=None)])
    f = foo()
    b = bar(foo=f)
    f.bar = b
    assert f.bar.foo is f
    with pytest.raises(TypeError):
        f.bar = f


def test_native_parent_fields_come_first():
    cls, info = _allocate("NativeChild", TestObjectBase)
    _finish(cls, info, [Field(name="extra", _ty_schema=TypeSchema("int"))])
    parent_end = max(f.offset + f.size for f in core._type_cls_to_type_info(TestObjectBase).fields)
    assert info.fields[0].offset >= parent_end
    obj = cls(v_i64=1, v_f64=2.0, v_str="s", extra=4)
    assert (obj.v_i64, obj.v_f64, obj.v_str, obj.extra) == (1, 2.0, "s", 4)
    assert isinstance(obj, TestObjectBase)


def test_register_fields_refuses_a_pending_parent():
    parent, pinfo = _allocate("LateParent")
    child, cinfo = _allocate("EarlyChild", parent)
    with pytest.raises(TypeError, match="not registered yet"):
        cinfo._register_fields([Field(name="x", _ty_schema=TypeSchema("int"))])
    assert cinfo.fields is None
    _finish(parent, pinfo, [Field(name="p", _ty_schema=TypeSchema("int"))])
    _finish(child, cinfo, [Field(name="x", _ty_schema=TypeSchema("int"))])
    assert child(p=1, x=2).x == 2


def test_core_missing_means_no_default():
    cls, info = _allocate("NoDefault")
    _finish(cls, info, [Field(name="x", _ty_schema=TypeSchema("int"), default=MISSING)])
    with pytest.raises(TypeError):
        cls()
    assert tether.core.MISSING is MISSING


# ---- the decorator over the two steps ---------------------------------------

from typing import Any  # noqa: E402

import tether.dataclasses as dc  # noqa: E402


class _Marker:
    """An extension's marker annotation (no field)."""


def test_fields_resolved_hooks_see_schemas_before_registration():
    seen = []

    @dc.py_class(_key("HookBase"))
    class HookBase(dc.Object):
        __ffi_field_markers__ = (_Marker,)

        def __ffi_hook__(type_info: Any, own_fields: Any) -> None:
            assert not type_info.fields  # the fields reach the core afterwards
            for f in own_fields:
                if "unit" in f.extra_kwargs:
                    f.metadata["unit"] = f.extra_kwargs.pop("unit")
            seen.append((type_info.type_cls.__name__, [str(f._ty_schema) for f in own_fields],
                         type_info._decorator_args["field_markers"]))

        __ffi_hook__.__ffi_on_fields_resolved__ = True

    @dc.py_class(_key("HookChild"))
    class HookChild(HookBase):
        a: int
        boundary: _Marker
        b: float = dc.field(default=0.0, unit="m")

    assert seen[0] == ("HookBase", [], ())
    assert seen[1] == ("HookChild", ["int", "float"], ((_Marker, HookChild, "boundary", 1),))
    assert [f.name for f in dc.fields(HookChild)] == ["a", "b"]
    assert dc.fields(HookChild)[1].metadata == {"unit": "m"}
    assert HookChild(1).b == 0.0
    with pytest.raises(TypeError, match="unrecognized field options: unit"):
        @dc.py_class(_key("NoHook"))
        class NoHook(dc.Object):
            x: int = dc.field(unit="m")


def test_parent_hooks_are_copied_unless_the_body_defines_them():
    @dc.py_class(_key("EqParent"))
    class Parent(dc.Object):
        value: int

        def __s_equal__(self, other: Any, compare: Any) -> bool:
            return self.value % 2 == other.value % 2

        def __s_hash__(self, seed: int, hash_value: Any) -> int:
            return self.value % 2

    @dc.py_class(_key("EqChild"))
    class Child(Parent):
        extra: int = 0

    @dc.py_class(_key("EqNone"))
    class NoHooks(Parent):
        __s_equal__ = None

    child_index = core._type_cls_to_type_info(Child).type_index
    assert core._lookup_type_attr(child_index, "__s_equal__") is not None
    assert tether.structural_equal(Child(1, 2), Child(3, 4))
    assert tether.structural_hash(Child(1)) == tether.structural_hash(Child(3))
    assert core._lookup_type_attr(core._type_cls_to_type_info(NoHooks).type_index, "__s_equal__") is None


def test_a_py_class_extends_a_native_type_and_its_methods_work():
    @dc.py_class(_key("NativeExt"))
    class Ext(TestObjectBase):
        extra: bool = False

    obj = Ext(v_i64=1, v_f64=2.0, v_str="s", extra=True)
    assert obj.add_i64(5) == 6  # a native method reads the native part
    assert (obj.v_str, obj.extra) == ("s", True)
    info = core._type_cls_to_type_info(Ext)
    assert info.fields[0].offset >= max(f.offset + f.size for f in info.parent_type_info.fields)


def test_init_false_class_keeps_a_raw_ffi_init():
    @dc.py_class(_key("RawInit"), init=False)
    class Raw(dc.Object):
        self: int

    value = dc.Object.__new__(Raw)
    Raw.__ffi_init__(value, self=7)
    assert value.self == 7


def test_field_errors_nest_under_the_constructor_with_indented_lines():
    cls, info = _allocate("ShapeField")
    _finish(cls, info, [Field(name="shape", _ty_schema=TypeSchema("ffi.Shape"))])
    with pytest.raises(TypeError) as err:
        cls(shape=[1, "x"])
    message = str(err.value)
    assert ".__ffi_init__() field 'shape':\n  expected ffi.Shape, got ffi.Array\n    __ffi_convert__ failed:\n" in message


def test_an_int_beyond_a_float_field_is_a_type_error():
    @dc.py_class(_key("FloatField"))
    class Box(dc.Object):
        x: float = 0.0

    assert Box(2**70).x == float(2**70)
    box = Box(1.0)
    with pytest.raises(TypeError, match="expected float, got an int too large to convert to float"):
        box.x = 10**400
    assert box.x == 1.0


def test_one_missing_sentinel():
    assert dc.field().default is core.MISSING
    assert Field().default_factory is core.MISSING
    assert not Field().has_default()


def test_native_field_defaults_are_shown():
    from tether.testing import _TestCxxClassDerived, _TestCxxClassBase

    derived = {f.name: f for f in core._type_cls_to_type_info(_TestCxxClassDerived).fields}
    assert derived["v_f32"].c_default == pytest.approx(8.0)
    assert derived["v_f32"].c_default_factory is MISSING
    assert derived["v_f64"].c_default is MISSING
    assert {f.name: f.default for f in dc.fields(_TestCxxClassDerived)}["v_f32"] == pytest.approx(8.0)
    for f in core._type_cls_to_type_info(_TestCxxClassBase).fields:
        assert (f.c_default, f.c_default_factory) == (MISSING, MISSING)
    cls, info = _allocate("PyDefaults")
    _finish(cls, info, [Field(name="n", _ty_schema=TypeSchema("int"), default=3),
                        Field(name="l", _ty_schema=TypeSchema("Any"), default_factory=list)])
    assert (info.fields[0].c_default, info.fields[1].c_default_factory) == (3, list)


def test_c_class_records_share_the_reflected_schema():
    from tether.testing import _TestCxxClassBase

    for tf in core._type_cls_to_type_info(_TestCxxClassBase).fields:
        assert tf.dataclass_field._ty_schema is tf.ty
        assert tf.c_structural_eq is None
    cls, info = _allocate("Structural")
    _finish(cls, info, [Field(name="a", _ty_schema=TypeSchema("int"), structural_eq="ignore")])
    assert core.TypeField(tether._ffi.type_info(info.type_index)["field_details"][0]).c_structural_eq == "ignore"


def test_c_class_instances_construct_in_place_through_ffi_init():
    from tether.testing import _TestCxxAutoInit, _TestCxxClassDerived, _TestCxxClassDerivedDerived

    obj = _TestCxxAutoInit.__new__(_TestCxxAutoInit)
    obj.__ffi_init__(a=1, c=3)
    assert (obj.a, obj.b, obj.c, obj.d) == (1, 42, 3, 99)
    other = _TestCxxClassDerivedDerived.__new__(_TestCxxClassDerivedDerived)
    with pytest.raises(TypeError, match="not supported"):
        _TestCxxClassDerived.__ffi_init__(other, 1, 2, 3.0)


def test_field_properties_expose_fset_like_property():
    @dc.py_class(_key("Frozen"), frozen=True)
    class Frozen(dc.Object):
        x: int

    @dc.py_class(_key("Mutable"))
    class Mutable(dc.Object):
        x: int

    assert Frozen.__dict__["x"].fset is None
    setter = Mutable.__dict__["x"].fset
    obj = Mutable(1)
    setter(obj, 2)
    assert obj.x == 2
