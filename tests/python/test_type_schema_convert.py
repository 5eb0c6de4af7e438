"""TypeSchema: fixed-length tuple types, the converter's acceptance rules
and messages (as tvm_ffi words them), and the schema record's JSON and
rendering details (fallback, named groups, retained type keys)."""

import ctypes
import typing
from numbers import Integral

import pytest

import tether
from tether.core import CAny, TypeSchema, _to_py_class_value

A = TypeSchema.from_annotation


def value(schema: TypeSchema, v):
    return _to_py_class_value(schema.convert(v))


def test_tuple_annotations_build_fixed_length_schemas():
    assert A(tuple[int, str]) == TypeSchema("tuple", (TypeSchema("int"), TypeSchema("str")))
    assert A(tuple[int, ...]) == TypeSchema("Array", (TypeSchema("int"),))
    bare = A(tuple)
    assert bare.args is None and repr(bare) == "tuple"
    empty = A(tuple[()])
    assert empty.args == () and repr(empty) == "tuple[()]"
    assert empty.to_json() == {"type": "tuple", "args": []}


def test_tuple_converts_elements_and_checks_length():
    out = value(A(tuple[int, float]), [True, 2])
    assert isinstance(out, tether.Array) and tuple(out) == (1, 2.0)
    arr = tether.Array([1, 2.5])
    assert value(A(tuple[int, float]), arr).same_as(arr)  # nothing to convert: the same Array
    with pytest.raises(TypeError, match=r"expected tuple of length 2, got list of length 3"):
        A(tuple[int, str]).check_value([1, "a", 2])
    with pytest.raises(TypeError, match=r"element \[0\].*element \[1\].*expected int, got str"):
        A(tuple[tuple[int, ...], str]).check_value(([1, "x"], "s"))
    with pytest.raises(TypeError, match="expected tuple, got ffi.Map"):
        A(tuple[int]).check_value(tether.Map({"a": 1}))
    with pytest.raises(TypeError, match="length 0"):
        A(tuple[()]).check_value([1])
    assert list(value(A(tuple), tether.List([1, 2]))) == [1, 2]


def test_annotation_arity_errors():
    with pytest.raises(TypeError, match="list takes at most 1 type argument"):
        A(list[int, str])  # type: ignore[misc]
    with pytest.raises(TypeError, match="dict requires 0 or 2 type arguments"):
        A(dict[str])  # type: ignore[misc]
    with pytest.raises(TypeError, match="Array requires 1 type argument"):
        A(tether.Array[int, str])
    with pytest.raises(TypeError, match="not registered"):
        A(tether.core.CObject)


def test_special_values_by_string_and_protocol():
    dev = value(A(tether.Device), "cuda:1")
    assert isinstance(dev, tether.Device) and dev == tether.device("cuda", 1)
    for bad in ("llvm", "not_a_device"):
        with pytest.raises(TypeError, match="invalid device string"):
            A(tether.Device).convert(bad)
    with pytest.raises(TypeError, match="expected Device, got int"):
        A(tether.Device).check_value(42)
    dt = value(A(tether.core.DataType), "float32")
    assert isinstance(dt, tether.dtype) and str(dt) == "float32"
    with pytest.raises(TypeError, match="invalid dtype string"):
        A(tether.core.DataType).convert("no_such_dtype_xyz")
    null = value(A(ctypes.c_void_p), None)
    assert isinstance(null, ctypes.c_void_p) and null.value is None
    with pytest.raises(TypeError, match="expected ctypes.c_void_p, got int"):
        A(ctypes.c_void_p).check_value(42)


def test_protocol_failures_are_type_errors():
    class BadObject:
        def __tvm_ffi_object__(self):
            raise RuntimeError("broken")

    with pytest.raises(TypeError, match=r"__tvm_ffi_object__\(\) failed for .*BadObject"):
        A(typing.Any).check_value(BadObject())

    class SelfValue:
        def __tvm_ffi_value__(self):
            return self

    with pytest.raises(TypeError, match="failed to convert Any from .*SelfValue"):
        A(typing.Any).convert(SelfValue())

    class BadInt:
        def __int__(self):
            raise OverflowError("too big")

    Integral.register(BadInt)
    with pytest.raises(TypeError, match=r"int\(\) failed for .*BadInt: too big"):
        A(int).convert(BadInt())


def test_object_schemas_take_opaque_values_and_ffi_convert():
    class Custom:
        pass

    A(tether.Object).check_value(Custom())
    with pytest.raises(TypeError, match="expected testing.TestIntPair, got .*Custom"):
        A(tether.testing.TestIntPair).check_value(Custom())
    shape = value(TypeSchema("ffi.Shape"), tether.List([1, 2, 3]))
    assert isinstance(shape, tether.Shape) and tuple(shape) == (1, 2, 3)
    with pytest.raises(TypeError) as info:
        TypeSchema("ffi.Shape").convert([1, "x"])
    assert "expected ffi.Shape, got list\n  __ffi_convert__ failed:\n    " in str(info.value)


def test_mappings_accept_either_kind():
    out = value(A(tether.Map[str, int]), tether.Dict({"a": True}))
    assert isinstance(out, tether.Map) and dict(out) == {"a": 1}
    d = tether.Dict({"a": 1})
    assert value(A(dict), d).same_as(d)


def test_cany_repr_and_device_class_override():
    assert repr(A(int).convert(42)) == "CAny(int=42)"
    assert repr(A(bool).convert(True)) == "CAny(bool=True)"
    assert repr(A(None).convert(None)) == "CAny(None)"
    assert repr(A(list[int]).convert([1])).startswith("CAny(object, type_index=")

    class MyDevice(tether.Device):
        pass

    old = tether.core._CLASS_DEVICE
    dev = old("cpu", 0)
    tether.core._set_class_device(MyDevice)
    try:
        assert isinstance(value(A(tether.Device), dev), MyDevice)
    finally:
        tether.core._set_class_device(old)
    assert isinstance(CAny(1), CAny)


def test_schema_record_fallback_named_args_and_type_key():
    payload = TypeSchema("custom.Payload", fallback=TypeSchema("int"))
    fn = TypeSchema("Callable", named_args={"return": (A(tuple[int, str]),), "params": (payload,)})
    schema = TypeSchema("custom.Wrapper", named_args={"members": (fn,), "empty": ()})
    assert TypeSchema.from_json_obj(schema.to_json()) == schema
    assert fn.input_repr() == "Callable[[int], tuple[int, str]]"
    big = TypeSchema.from_json_str('{"type":"ffi.BigInt"}')
    assert (big.origin, big.type_key, big.to_json()) == ("int", "ffi.BigInt", {"type": "ffi.BigInt"})
    assert big == TypeSchema("int")
    assert TypeSchema.from_json_obj({"type": "int", "args": 42}).args == ()
    with pytest.raises(TypeError):
        TypeSchema.from_json_obj({"type": "int", "named_args": {"m": {"type": "str"}}})
    rendered = TypeSchema("Dict", (TypeSchema("str"), TypeSchema("List", (TypeSchema("int"),))))
    in_map = {"Dict": "Mapping", "List": "Sequence"}
    assert rendered.input_repr(lambda n: in_map.get(n, n)) == "Mapping[str, Sequence[int]]"
