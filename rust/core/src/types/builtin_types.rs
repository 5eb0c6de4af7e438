//! The types and type attribute columns every process starts with: the
//! POD type keys, the object types with fixed indices, and the columns
//! TVM-FFI's runtime creates when it loads. The type registry installs them
//! when it is first touched.

use crate::abi::type_index as ti;

/// Object types with fixed indices, all direct children of `ffi.Object`.
pub(crate) const STATIC_OBJECT_TYPES: &[(&str, i32)] = &[
    ("ffi.String", ti::kTVMFFIStr),
    ("ffi.Bytes", ti::kTVMFFIBytes),
    ("ffi.Error", ti::kTVMFFIError),
    ("ffi.Function", ti::kTVMFFIFunction),
    ("ffi.Shape", ti::kTVMFFIShape),
    ("ffi.Tensor", ti::kTVMFFITensor),
    ("ffi.Array", ti::kTVMFFIArray),
    ("ffi.Map", ti::kTVMFFIMap),
    ("ffi.Module", ti::kTVMFFIModule),
    ("ffi.OpaquePyObject", ti::kTVMFFIOpaquePyObject),
    ("ffi.List", ti::kTVMFFIList),
    ("ffi.Dict", ti::kTVMFFIDict),
    ("ffi.VisitInterrupt", ti::kTVMFFIVisitInterrupt),
    ("ffi.BigInt", ti::kTVMFFIBigInt),
];

/// Type attribute columns TVM-FFI's runtime creates when it loads
/// (`refl::EnsureTypeAttrColumn` or a first registration), so that
/// `TVMFFIGetTypeAttrColumn` finds them before any type sets a value.
pub const STARTUP_ATTR_COLUMNS: &[&str] = &[
    "__s_visit__",
    "__s_equal__",
    "__s_hash__",
    "__s_mutate__",
    "__s_maybe_inplace_mutate__",
    "__any_hash__",
    "__any_equal__",
    "__ffi_repr__",
    "__ffi_hash__",
    "__ffi_eq__",
    "__ffi_compare__",
    "__data_to_json__",
    "__data_from_json__",
    "__ffi_init__",
    "__ffi_new__",
    "__ffi_shallow_copy__",
    "__ffi_convert__",
    "__ffi_type_final__",
    "__ffi_enum__",
];

/// Names of the POD type indices (TVM-FFI's static type keys).
pub(crate) fn pod_type_key(index: i32) -> Option<&'static str> {
    Some(match index {
        ti::kTVMFFIAny => "Any",
        ti::kTVMFFINone => "None",
        ti::kTVMFFIInt => "int",
        ti::kTVMFFIBool => "bool",
        ti::kTVMFFIFloat => "float",
        ti::kTVMFFIOpaquePtr => "void*",
        ti::kTVMFFIDataType => "DataType",
        ti::kTVMFFIDevice => "Device",
        ti::kTVMFFIDLTensorPtr => "DLTensor*",
        ti::kTVMFFIRawStr => "const char*",
        ti::kTVMFFIByteArrayPtr => "TVMFFIByteArray*",
        ti::kTVMFFIObjectRValueRef => "ObjectRValueRef",
        ti::kTVMFFISmallStr => "ffi.SmallStr",
        ti::kTVMFFISmallBytes => "ffi.SmallBytes",
        ti::kTVMFFIUnchanged => "ffi.Unchanged",
        _ => return None,
    })
}
