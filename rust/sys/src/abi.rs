//! The raw data layouts of TVM-FFI's C ABI.
//!
//! Every struct here is `#[repr(C)]` and laid out byte for byte like its
//! TVM-FFI counterpart, so objects built by code compiled against TVM-FFI's
//! headers and objects built here are interchangeable. The compile-time
//! assertions at the bottom pin the sizes and offsets; the C test in
//! `tests/c` checks the same numbers from the C side.


use std::ffi::{c_char, c_int, c_void};

/// Untyped handle to an object (`TVMFFIObjectHandle`).
pub type TVMFFIObjectHandle = *mut c_void;

/// Version triple reported by `TVMFFIGetVersion`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TVMFFIVersion {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

/// Bit set in `TVMFFIObject::__padding` by objects allocated through the
/// allocator registry: a `TVMFFIObjectAllocHeader` precedes the body.
pub const MARKER_REGISTRY_ALLOCATED: u32 = 1;

/// The ABI version this core implements.
pub const VERSION: TVMFFIVersion = TVMFFIVersion { major: 0, minor: 1, patch: 16 };

/// Type indices fixed by the ABI. POD values live below
/// [`kTVMFFIStaticObjectBegin`]; objects at or above it.
pub mod type_index {
    pub const kTVMFFIAny: i32 = -1;
    pub const kTVMFFINone: i32 = 0;
    pub const kTVMFFIInt: i32 = 1;
    pub const kTVMFFIBool: i32 = 2;
    pub const kTVMFFIFloat: i32 = 3;
    pub const kTVMFFIOpaquePtr: i32 = 4;
    pub const kTVMFFIDataType: i32 = 5;
    pub const kTVMFFIDevice: i32 = 6;
    pub const kTVMFFIDLTensorPtr: i32 = 7;
    pub const kTVMFFIRawStr: i32 = 8;
    pub const kTVMFFIByteArrayPtr: i32 = 9;
    pub const kTVMFFIObjectRValueRef: i32 = 10;
    pub const kTVMFFISmallStr: i32 = 11;
    pub const kTVMFFISmallBytes: i32 = 12;
    pub const kTVMFFIUnchanged: i32 = 13;
    pub const kTVMFFIStaticObjectBegin: i32 = 64;
    pub const kTVMFFIObject: i32 = 64;
    pub const kTVMFFIStr: i32 = 65;
    pub const kTVMFFIBytes: i32 = 66;
    pub const kTVMFFIError: i32 = 67;
    pub const kTVMFFIFunction: i32 = 68;
    pub const kTVMFFIShape: i32 = 69;
    pub const kTVMFFITensor: i32 = 70;
    pub const kTVMFFIArray: i32 = 71;
    pub const kTVMFFIMap: i32 = 72;
    pub const kTVMFFIModule: i32 = 73;
    pub const kTVMFFIOpaquePyObject: i32 = 74;
    pub const kTVMFFIList: i32 = 75;
    pub const kTVMFFIDict: i32 = 76;
    pub const kTVMFFIVisitInterrupt: i32 = 77;
    pub const kTVMFFIBigInt: i32 = 78;
    pub const kTVMFFIStaticObjectEnd: i32 = 79;
    pub const kTVMFFIDynObjectBegin: i32 = 128;
}

/// Flags passed to an object's deleter.
pub const kTVMFFIObjectDeleterFlagBitMaskStrong: c_int = 1 << 0;
pub const kTVMFFIObjectDeleterFlagBitMaskWeak: c_int = 1 << 1;
pub const kTVMFFIObjectDeleterFlagBitMaskBoth: c_int =
    kTVMFFIObjectDeleterFlagBitMaskStrong | kTVMFFIObjectDeleterFlagBitMaskWeak;

/// Field flags of `TVMFFIFieldInfo::flags`.
pub mod field_flag {
    pub const kWritable: i64 = 1 << 0;
    pub const kHasDefault: i64 = 1 << 1;
    pub const kIsStaticMethod: i64 = 1 << 2;
    pub const kSEqHashIgnore: i64 = 1 << 3;
    pub const kSEqHashDefPattern: i64 = 1 << 4;
    pub const kDefaultFromFactory: i64 = 1 << 5;
    pub const kReprOff: i64 = 1 << 6;
    pub const kCompareOff: i64 = 1 << 7;
    pub const kHashOff: i64 = 1 << 8;
    pub const kInitOff: i64 = 1 << 9;
    pub const kKwOnly: i64 = 1 << 10;
    pub const kSetterIsFunctionObj: i64 = 1 << 11;
    pub const kSEqHashDefSimple: i64 = 1 << 12;
}

/// The header every object starts with.
///
/// `combined_ref_count` holds the strong count in its low 32 bits and the
/// weak count in its high 32 bits; a live object's weak count includes one
/// for "strong references exist".
#[repr(C)]
pub struct TVMFFIObject {
    pub combined_ref_count: u64,
    pub type_index: i32,
    /// Zeroed by upstream constructors; tether sets
    /// [`MARKER_REGISTRY_ALLOCATED`] here.
    pub __padding: u32,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut c_void, flags: c_int)>,
}

/// DLPack's data type triple.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

/// DLPack's device pair.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DLDevice {
    pub device_type: i32,
    pub device_id: i32,
}

/// The 8-byte payload of an Any.
#[repr(C)]
#[derive(Clone, Copy)]
pub union TVMFFIAnyValue {
    pub v_int64: i64,
    pub v_float64: f64,
    pub v_ptr: *mut c_void,
    pub v_c_str: *const c_char,
    pub v_obj: *mut TVMFFIObject,
    pub v_dtype: DLDataType,
    pub v_device: DLDevice,
    pub v_bytes: [u8; 8],
    pub v_uint64: u64,
}

/// A tagged value: POD, small string/bytes, or object handle.
///
/// Used both as a non-owning view (`AnyView`) and as an owning value
/// (`Any`); [`crate::any::Any`] is the owning Rust type over it.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TVMFFIAny {
    pub type_index: i32,
    /// `zero_padding` for most values, `small_str_len` for small str/bytes.
    pub small_str_len: u32,
    pub value: TVMFFIAnyValue,
}

impl TVMFFIAny {
    /// The None value.
    pub const NONE: TVMFFIAny = TVMFFIAny {
        type_index: type_index::kTVMFFINone,
        small_str_len: 0,
        value: TVMFFIAnyValue { v_int64: 0 },
    };
}

impl Default for TVMFFIAny {
    fn default() -> Self {
        Self::NONE
    }
}

/// A borrowed byte range (not NUL-terminated in general).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TVMFFIByteArray {
    pub data: *const c_char,
    pub size: usize,
}

impl TVMFFIByteArray {
    pub const EMPTY: TVMFFIByteArray = TVMFFIByteArray { data: std::ptr::null(), size: 0 };

    /// Borrow a Rust byte slice.
    pub fn from_slice(s: &[u8]) -> Self {
        TVMFFIByteArray { data: s.as_ptr() as *const c_char, size: s.len() }
    }
}

/// Shape cell: follows the object header of a Shape.
#[repr(C)]
pub struct TVMFFIShapeCell {
    pub data: *const i64,
    pub size: usize,
}

/// Sequence cell: follows the object header of an Array or List.
#[repr(C)]
pub struct TVMFFISeqCell {
    pub data: *mut c_void,
    pub size: i64,
    pub capacity: i64,
    pub data_deleter: Option<unsafe extern "C" fn(*mut c_void)>,
}

/// Error cell: follows the object header of an Error.
#[repr(C)]
pub struct TVMFFIErrorCell {
    pub kind: TVMFFIByteArray,
    pub message: TVMFFIByteArray,
    pub backtrace: TVMFFIByteArray,
    pub update_backtrace: Option<
        unsafe extern "C" fn(self_: TVMFFIObjectHandle, backtrace: *const TVMFFIByteArray, update_mode: i32),
    >,
    pub cause_chain: TVMFFIObjectHandle,
    pub extra_context: TVMFFIObjectHandle,
}

pub const kTVMFFIBacktraceUpdateModeReplace: i32 = 0;
pub const kTVMFFIBacktraceUpdateModeAppend: i32 = 1;

/// The packed calling convention: 0 on success, nonzero with the raised
/// error set on failure.
pub type TVMFFISafeCallType = unsafe extern "C" fn(
    handle: *mut c_void,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int;

/// Function cell: follows the object header of a Function.
#[repr(C)]
pub struct TVMFFIFunctionCell {
    pub safe_call: Option<TVMFFISafeCallType>,
    pub cpp_call: *mut c_void,
}

/// Opaque cell: follows the object header of an opaque object.
#[repr(C)]
pub struct TVMFFIOpaqueObjectCell {
    pub handle: *mut c_void,
}

/// Sits immediately before every object body allocated through the
/// allocator registry; reclaims the whole block.
#[repr(C)]
pub struct TVMFFIObjectAllocHeader {
    pub delete_space: Option<unsafe extern "C" fn(ptr: *mut c_void)>,
}

/// The process-wide allocator entry.
#[repr(C)]
pub struct TVMFFICustomAllocator {
    pub allocate: Option<
        unsafe extern "C" fn(size: usize, alignment: usize, type_index: i32, context: *mut c_void) -> *mut c_void,
    >,
    pub context: *mut c_void,
}

pub type TVMFFIFieldGetter = unsafe extern "C" fn(field: *mut c_void, result: *mut TVMFFIAny) -> c_int;
pub type TVMFFIFieldSetter = unsafe extern "C" fn(field: *mut c_void, value: *const TVMFFIAny) -> c_int;
pub type TVMFFIObjectCreator = unsafe extern "C" fn(result: *mut TVMFFIObjectHandle) -> c_int;

/// Reflection record of one field.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TVMFFIFieldInfo {
    pub name: TVMFFIByteArray,
    pub doc: TVMFFIByteArray,
    pub metadata: TVMFFIByteArray,
    pub flags: i64,
    pub size: i64,
    pub alignment: i64,
    pub offset: i64,
    pub getter: Option<TVMFFIFieldGetter>,
    /// A `TVMFFIFieldSetter`, or a Function handle when
    /// `kSetterIsFunctionObj` is set.
    pub setter: *mut c_void,
    pub default_value_or_factory: TVMFFIAny,
    pub field_static_type_index: i32,
}

/// Reflection record of one method.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct TVMFFIMethodInfo {
    pub name: TVMFFIByteArray,
    pub doc: TVMFFIByteArray,
    pub metadata: TVMFFIByteArray,
    pub flags: i64,
    pub method: TVMFFIAny,
}

/// Extra per-type information.
#[repr(C)]
pub struct TVMFFITypeMetadata {
    pub doc: TVMFFIByteArray,
    pub creator: Option<TVMFFIObjectCreator>,
    pub total_size: i32,
    pub structural_eq_hash_kind: i32,
}

/// One attribute across all types, indexed by `type_index - begin_index`.
#[repr(C)]
pub struct TVMFFITypeAttrColumn {
    pub data: *const TVMFFIAny,
    pub size: i32,
    pub begin_index: i32,
}

/// Runtime type information.
#[repr(C)]
pub struct TVMFFITypeInfo {
    pub type_index: i32,
    pub type_depth: i32,
    pub type_key: TVMFFIByteArray,
    /// `type_ancestors[d]` is the ancestor at depth `d`, for `d < type_depth`.
    pub type_ancestors: *const *const TVMFFITypeInfo,
    pub type_key_hash: u64,
    pub num_fields: i32,
    pub num_methods: i32,
    pub fields: *const TVMFFIFieldInfo,
    pub methods: *const TVMFFIMethodInfo,
    pub metadata: *const TVMFFITypeMetadata,
}

// Layout pins (64-bit targets, the ones the project supports).
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<TVMFFIObject>() == 24);
    assert!(offset_of!(TVMFFIObject, type_index) == 8);
    assert!(offset_of!(TVMFFIObject, __padding) == 12);
    assert!(offset_of!(TVMFFIObject, deleter) == 16);
    assert!(size_of::<TVMFFIAny>() == 16);
    assert!(align_of::<TVMFFIAny>() == 8);
    assert!(offset_of!(TVMFFIAny, small_str_len) == 4);
    assert!(offset_of!(TVMFFIAny, value) == 8);
    assert!(size_of::<TVMFFIByteArray>() == 16);
    assert!(size_of::<TVMFFIShapeCell>() == 16);
    assert!(size_of::<TVMFFISeqCell>() == 32);
    assert!(size_of::<TVMFFIErrorCell>() == 72);
    assert!(offset_of!(TVMFFIErrorCell, update_backtrace) == 48);
    assert!(offset_of!(TVMFFIErrorCell, cause_chain) == 56);
    assert!(size_of::<TVMFFIFunctionCell>() == 16);
    assert!(size_of::<TVMFFIOpaqueObjectCell>() == 8);
    assert!(size_of::<TVMFFIObjectAllocHeader>() == 8);
    assert!(size_of::<TVMFFICustomAllocator>() == 16);
    assert!(size_of::<TVMFFIFieldInfo>() == 120);
    assert!(offset_of!(TVMFFIFieldInfo, flags) == 48);
    assert!(offset_of!(TVMFFIFieldInfo, getter) == 80);
    assert!(offset_of!(TVMFFIFieldInfo, default_value_or_factory) == 96);
    assert!(offset_of!(TVMFFIFieldInfo, field_static_type_index) == 112);
    assert!(size_of::<TVMFFIMethodInfo>() == 72);
    assert!(offset_of!(TVMFFIMethodInfo, method) == 56);
    assert!(size_of::<TVMFFITypeMetadata>() == 32);
    assert!(size_of::<TVMFFITypeAttrColumn>() == 16);
    assert!(size_of::<TVMFFITypeInfo>() == 72);
    assert!(offset_of!(TVMFFITypeInfo, type_key) == 8);
    assert!(offset_of!(TVMFFITypeInfo, type_ancestors) == 24);
    assert!(offset_of!(TVMFFITypeInfo, type_key_hash) == 32);
    assert!(offset_of!(TVMFFITypeInfo, num_fields) == 40);
    assert!(offset_of!(TVMFFITypeInfo, fields) == 48);
    assert!(offset_of!(TVMFFITypeInfo, metadata) == 64);
};
