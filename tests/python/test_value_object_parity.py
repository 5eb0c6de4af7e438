"""Values and objects as tvm_ffi presents them: opaque objects from
``convert``, handle-less Errors, exceptions crossing as call arguments,
object identity helpers, fallback classes' names, field docs, the core's
sentinels, MLIR packed entry points, DLPack protocols and the typed
arguments of native functions that take another container kind or text."""

import pickle
import sys

import pytest

import tether
from tether import core


class Payload:
    pass


def test_convert_gives_an_opaque_object_whose_payload_is_the_object():
    p = Payload()
    before = sys.getrefcount(p)
    opaque = tether.convert(p)
    assert isinstance(opaque, core.OpaquePyObject)
    assert opaque.pyobject() is p
    assert sys.getrefcount(p) == before + 1
    assert tether.get_global_func("testing.echo")(opaque) is p  # a call gives the object itself
    assert core._convert_to_opaque_object(p).pyobject() is p
    del opaque
    assert sys.getrefcount(p) == before
    with pytest.raises(TypeError, match="expected ffi.OpaquePyObject"):
        tether._ffi.opaque_payload(tether.Array([]))


def test_error_new_has_no_handle_and_pickles_as_such():
    bare = core.Error.__new__(core.Error)
    assert bare.__chandle__() == 0
    restored = pickle.loads(pickle.dumps(bare))
    assert isinstance(restored, core.Error) and restored.__chandle__() == 0
    made = core.Error("ValueError", "boom", "")
    assert (made.kind, made.message) == ("ValueError", "boom") and made.__chandle__() != 0
    again = pickle.loads(pickle.dumps(made))
    assert (again.kind, again.message) == ("ValueError", "boom")


def test_exception_as_argument_carries_its_traceback():
    echo = tether.get_global_func("testing.echo")

    def raise_native_error():
        tether.get_global_func("testing.test_raise_error")("ValueError", "error XYZ")

    try:
        raise_native_error()
    except ValueError as e:
        assert "raise_native_error" in echo(e).backtrace
        assert "raise_native_error" in tether.convert(e).backtrace


def test_identity_helpers_and_fallback_class_names():
    x, y = tether.testing.TestIntPair(1, 2), tether.testing.TestIntPair(1, 2)
    assert x.id_ == x.__chandle__() != 0 and x.id_ != y.id_
    assert x.is_(x) and not x.is_(y) and not x.is_(None)
    obj = tether.get_global_func("testing.make_unregistered_object")()
    cls = type(obj)
    assert (cls.__name__, cls.__module__, cls.__qualname__) == (
        "TestUnregisteredObject", "testing", "testing.TestUnregisteredObject")
    assert "Auto-generated fallback class" in cls.__doc__


def test_field_docs_and_value_class_type_infos():
    assert tether.testing.TestIntPair.a.__doc__ == "Field `a`"
    assert tether.testing.TestObjectBase.v_i64.__doc__ == "i64 field"
    assert tether.testing.TestObjectBase.v_f64.__doc__ is None
    for cls, key, parent in ((core.DataType, "DataType", None), (tether.Device, "Device", None),
                             (core.String, "ffi.String", tether.Object), (core.Bytes, "ffi.Bytes", tether.Object)):
        info = core._type_cls_to_type_info(cls)
        assert (info.type_key, info.type_cls) == (key, cls)
        assert (info.parent_type_info.type_cls if info.parent_type_info else None) is parent


def test_sentinels_print_as_upstream():
    assert repr(core.MISSING) == str(core.MISSING) == "<MISSING>"
    assert repr(core.KWARGS) == "<KWARGS>"
    assert core.MISSING.same_as(tether.get_global_func("ffi.GetInvalidObject")())


def test_mlir_packed_entry_point_becomes_a_function():
    symbol = tether.get_global_func("testing.get_mlir_add_one_c_symbol")()
    f = tether.Function.__from_mlir_packed_safe_call__(symbol)
    assert (f(1), f(2)) == (2, 3)
    with pytest.raises(TypeError):
        f(None)
    keep = [1, 2, 3]
    before = sys.getrefcount(keep)
    f = tether.Function.__from_mlir_packed_safe_call__(symbol, keep_alive_object=keep)
    assert f(5) == 6 and sys.getrefcount(keep) == before + 1
    f = None
    assert sys.getrefcount(keep) == before
    with pytest.raises(ValueError, match="NULL"):
        tether.Function.__from_mlir_packed_safe_call__(0)


def test_dlpack_data_type_and_device_protocols_cross_as_values():
    echo = tether.get_global_func("testing.echo")
    f32 = tether.dtype("float32")

    class DataTypeLike:
        def __dlpack_data_type__(self):
            return (f32.type_code, f32.bits, f32.lanes)

    class DeviceLike:
        def __dlpack_device__(self):
            return (2, 1)

    assert echo(DataTypeLike()) == f32 and tether.convert(DataTypeLike()) == f32
    assert echo(DeviceLike()) == tether.device("cuda", 1)


def test_convert_func_checks_tensor_cls():
    with pytest.raises(TypeError, match="__dlpack_c_exchange_api__"):
        tether.convert_func(lambda x: x, tensor_cls=object)


def test_typed_arguments_take_the_other_container_kind_and_device_text():
    arr = tether.get_global_func("testing.schema_id_arr_int")(tether.List([10, 20]))
    assert isinstance(arr, tether.Array) and list(arr) == [10, 20]
    m = tether.get_global_func("testing.schema_id_map_str_int")(tether.Dict({"a": 1}))
    assert isinstance(m, tether.Map) and dict(m) == {"a": 1}
    with pytest.raises(TypeError, match="Expected `Array<int>`"):
        tether.get_global_func("testing.schema_id_arr_int")(tether.List(["x"]))
    dev = tether.get_global_func("testing.schema_id_device")
    assert dev("cuda:1") == tether.device("cuda", 1) and dev("cpu") == tether.device("cpu", 0)
    with pytest.raises(TypeError, match="Expected `Device`"):
        dev("llvm")


def test_map_of_a_non_mapping_is_an_attribute_error():
    with pytest.raises(AttributeError):
        tether.Map(1)
    with pytest.raises(TypeError):
        tether.Array(1)


def test_dltensor_test_wrapper_hands_over_through_the_exchange_table(monkeypatch):
    np = pytest.importorskip("numpy")
    from tether.core import dltensor_test_wrapper as room

    exports = []
    library = room._core_library
    monkeypatch.setattr(room, "_core_library", lambda: exports.append(1) or library())
    wrapper = core.DLTensorTestWrapper(tether.from_dlpack(np.arange(4, dtype="int32")))
    out = tether.get_global_func("testing.echo")(wrapper)
    assert isinstance(out, tether.Tensor) and out.shape == (4,)
    assert exports == [1]  # the table's entry exported it, not __dlpack__
    with pytest.raises(TypeError, match="wraps a Tensor"):
        core.DLTensorTestWrapper([1, 2])
