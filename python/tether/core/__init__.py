"""tether.core: the bottom of the Python API, one concept per module and
every name where tvm_ffi's ``core`` keeps it (``tether.core.TypeSchema`` is
``tvm_ffi.core.TypeSchema``).

Rooms, bottom up (each imports only those above it in this list):

* ``builtin_table`` — the core's builtin functions, looked up once;
* ``object`` — ``Object``, the class registry, ``register_object``;
* ``string`` — ``String``/``Bytes`` that keep their FFI object;
* ``function`` — ``Function``, global functions, ``convert``;
* ``error`` — ``Error`` and the kind <-> exception class tables;
* ``converter`` — the conversion protocols of other Python objects;
* ``dtype``, ``device``, ``tensor`` — DLPack values and tensors;
* ``type_info``, ``type_converter``, ``type_schema`` — reflection, declared
  types and the converters that check values against them;
* ``sentinels`` — ``MISSING``/``KWARGS``, the values crossing into constructors;
* ``any_value`` — ``CAny``, one owned FFI value;
* ``registration`` — wrapper classes registered by type index;
* ``dltensor_test_wrapper`` — a Tensor behind DLPack's C exchange table, for tests;
* ``side_table`` — the post-collection sweep of headerless objects' entries.

Higher modules register into this package (``_set_class_dtype``,
``_WITH_APPEND_BACKTRACE``); nothing here imports them.
"""

from __future__ import annotations

from .. import _ffi
from . import builtin_table as _builtin_table
from .builtin_table import _builtin, _get_global
from .object import (
    CContainerBase, CObject, Object, ObjectConvertible, ObjectRValueRef, OpaquePyObject, _CLASS_OBJECT,
    _ObjectSlotsMeta, _class_for_index, _fallback_class, _lookup_type_attr, _new_object,
    _object_type_key_to_index, _register_class, _register_type_attr, _set_class_object, _type_key, object_repr,
    register_object,
)
from .string import Bytes, PyNativeObject, String
from .function import (
    Function, _convert_to_ffi_func, _convert_to_opaque_object, _get_global_func, _register_global_func, convert,
    convert_func, get_global_func, register_global_func,
)
from .error import (
    ERROR_NAME_TO_TYPE, ERROR_TYPE_TO_NAME, Error, _TRACEBACK_TO_BACKTRACE_STR, _WITH_APPEND_BACKTRACE,
    _convert_to_ffi_error,
)
from . import error as _error_room, converter as _converter
from .converter import _OPAQUE_PTR_HANDLERS  # noqa: F401

_builtin_table.load()
_ffi.set_hooks(_error_room._py_error_of, _error_room._kind_of, _converter._value_from_protocol)
from . import side_table as _side_table  # noqa: E402,F401  (installs the post-collection sweep)

from .dtype import (  # noqa: E402
    _CLASS_DTYPE, DataType, _convert_numpy_dtype_to_ffi_dtype, _convert_torch_dtype_to_ffi_dtype,
    _create_cdtype_from_tuple, _set_class_dtype,
)
from .device import _CLASS_DEVICE, DLDeviceType, Device, _create_device_from_tuple, _set_class_device  # noqa: E402
from .tensor import (  # noqa: E402
    _CLASS_TENSOR, Tensor, _env_get_current_stream, _env_set_current_stream, _make_strides_from_shape,
    _set_class_tensor, _shape_obj_get_py_tuple, from_dlpack,
)
from .type_info import (  # noqa: E402
    TypeField, TypeInfo, TypeMethod, _lookup_or_register_type_info_from_type_key, _type_cls_to_type_info,
    _type_index_to_type_info,
)
from .type_converter import _build_converter, _ConvertError, _TypeConverter  # noqa: E402
from .type_schema import (  # noqa: E402
    _ORIGIN_NATIVE_LAYOUT, _ORIGIN_TO_TYPE_INDEX, _ORIGIN_TYPE_INDEX_STRUCTURAL, _ORIGIN_TYPE_INDEX_UNKNOWN,
    _RETAINED_TYPE_KEYS, _TYPE_INDEX_TO_ORIGIN, _TYPE_INDEX_TO_RETAINED_TYPE_KEY, _TYPE_SCHEMA_ORIGIN_CONVERTER,
    TypeSchema,
)
from .sentinels import KWARGS, MISSING  # noqa: E402
from .any_value import CAny, _to_py_class_value  # noqa: E402
from .registration import _register_object_by_index, _set_type_cls, _print_debug_info  # noqa: E402
from .dltensor_test_wrapper import DLTensorTestWrapper  # noqa: E402
from .py_class_registration import _register_fields, _register_py_class, _rollback_py_class  # noqa: E402

# A field's reflected accessor: one native descriptor reads and writes the
# field in place (tvm_ffi's name for its property class).
FFIProperty = _ffi.FieldDescriptor

# Optional frameworks the conversions recognise, when the process has them
# already (tether does not import them on its own).
import sys as _sys  # noqa: E402

torch = _sys.modules.get("torch")
try:
    import ml_dtypes  # noqa: F401
except ImportError:
    ml_dtypes = None
cuda_driver = _sys.modules.get("cuda.bindings.driver")

__all__ = [
    "Object", "CObject", "CContainerBase", "Function", "Error", "String", "Bytes", "PyNativeObject",
    "ObjectConvertible", "ObjectRValueRef", "OpaquePyObject", "DataType", "DLDeviceType", "Device", "Tensor",
    "TypeInfo", "TypeField", "TypeMethod", "TypeSchema", "ERROR_NAME_TO_TYPE", "ERROR_TYPE_TO_NAME",
    "CAny", "KWARGS", "MISSING", "convert", "convert_func", "from_dlpack", "get_global_func", "register_global_func",
    "register_object", "object_repr",
]
