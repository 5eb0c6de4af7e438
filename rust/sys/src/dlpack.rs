//! DLPack 1.x data layouts, as TVM-FFI's C ABI uses them.
//!
//! `DLDataType` and `DLDevice` live in [`crate::abi`] (they are also Any
//! payloads) and are re-exported here. Everything is `#[repr(C)]` and laid
//! out byte for byte like `dlpack/dlpack.h` (version 1.3, the one shipped
//! with apache-tvm-ffi); the assertions at the bottom pin sizes and offsets
//! and `tests/c/abi_test.c` checks the same numbers from C.

use std::ffi::{c_char, c_int, c_void};

pub use crate::abi::{DLDataType, DLDevice};

/// The DLPack version this core produces in versioned managed tensors.
pub const DLPACK_MAJOR_VERSION: u32 = 1;
pub const DLPACK_MINOR_VERSION: u32 = 3;

/// `DLPackVersion`: the version a versioned managed tensor was made with.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DLPackVersion {
    pub major: u32,
    pub minor: u32,
}

/// Device types (`DLDeviceType`), as `DLDevice::device_type` holds them.
pub mod device_type {
    pub const kDLCPU: i32 = 1;
    pub const kDLCUDA: i32 = 2;
    pub const kDLCUDAHost: i32 = 3;
    pub const kDLOpenCL: i32 = 4;
    pub const kDLVulkan: i32 = 7;
    pub const kDLMetal: i32 = 8;
    pub const kDLVPI: i32 = 9;
    pub const kDLROCM: i32 = 10;
    pub const kDLROCMHost: i32 = 11;
    pub const kDLExtDev: i32 = 12;
    pub const kDLCUDAManaged: i32 = 13;
    pub const kDLOneAPI: i32 = 14;
    pub const kDLWebGPU: i32 = 15;
    pub const kDLHexagon: i32 = 16;
    pub const kDLMAIA: i32 = 17;
    pub const kDLTrn: i32 = 18;

    /// Every device type DLPack 1.3 defines.
    pub const ALL: [i32; 16] = [
        kDLCPU, kDLCUDA, kDLCUDAHost, kDLOpenCL, kDLVulkan, kDLMetal, kDLVPI, kDLROCM, kDLROCMHost, kDLExtDev,
        kDLCUDAManaged, kDLOneAPI, kDLWebGPU, kDLHexagon, kDLMAIA, kDLTrn,
    ];
}

/// Type codes (`DLDataTypeCode`), as `DLDataType::code` holds them.
pub mod dtype_code {
    pub const kDLInt: u8 = 0;
    pub const kDLUInt: u8 = 1;
    pub const kDLFloat: u8 = 2;
    pub const kDLOpaqueHandle: u8 = 3;
    pub const kDLBfloat: u8 = 4;
    pub const kDLComplex: u8 = 5;
    pub const kDLBool: u8 = 6;
    pub const kDLFloat8_e3m4: u8 = 7;
    pub const kDLFloat8_e4m3: u8 = 8;
    pub const kDLFloat8_e4m3b11fnuz: u8 = 9;
    pub const kDLFloat8_e4m3fn: u8 = 10;
    pub const kDLFloat8_e4m3fnuz: u8 = 11;
    pub const kDLFloat8_e5m2: u8 = 12;
    pub const kDLFloat8_e5m2fnuz: u8 = 13;
    pub const kDLFloat8_e8m0fnu: u8 = 14;
    pub const kDLFloat6_e2m3fn: u8 = 15;
    pub const kDLFloat6_e3m2fn: u8 = 16;
    pub const kDLFloat4_e2m1fn: u8 = 17;
    /// TVM-FFI's first code for custom (registered) types.
    pub const kDLExtCustomBegin: u8 = 129;
}

/// `DLTensor`: a borrowed n-dimensional view. `strides == NULL` means
/// compact row-major; `shape`/`strides` hold `ndim` entries.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

/// `DLManagedTensor` (pre-1.0): a tensor plus the deleter its consumer
/// calls once when done with it.
#[repr(C)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensor)>,
}

/// Bits of `DLManagedTensorVersioned::flags`.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: u64 = 1 << 2;

/// `DLManagedTensorVersioned` (1.x): versioned, with flags.
#[repr(C)]
pub struct DLManagedTensorVersioned {
    pub version: DLPackVersion,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(self_: *mut DLManagedTensorVersioned)>,
    pub flags: u64,
    pub dl_tensor: DLTensor,
}

/// `SetError` callback handed to a [`DLPackManagedTensorAllocator`].
pub type DLPackSetError = unsafe extern "C" fn(error_ctx: *mut c_void, kind: *const c_char, message: *const c_char);

/// `DLPackManagedTensorAllocator`: allocates a tensor like `prototype`
/// (dtype, ndim, shape, device), 0 on success; on failure reports through
/// `set_error(error_ctx, kind, message)` and returns nonzero.
pub type DLPackManagedTensorAllocator = Option<DLPackManagedTensorAllocatorFn>;

/// The function a non-NULL [`DLPackManagedTensorAllocator`] points to.
pub type DLPackManagedTensorAllocatorFn = unsafe extern "C" fn(
    prototype: *mut DLTensor,
    out: *mut *mut DLManagedTensorVersioned,
    error_ctx: *mut c_void,
    set_error: Option<DLPackSetError>,
) -> c_int;

/// `TVMFFIStreamHandle`: an opaque device stream.
pub type TVMFFIStreamHandle = *mut c_void;

#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<DLPackVersion>() == 8);
    assert!(size_of::<DLDevice>() == 8);
    assert!(size_of::<DLDataType>() == 4);
    assert!(size_of::<DLTensor>() == 48);
    assert!(align_of::<DLTensor>() == 8);
    assert!(offset_of!(DLTensor, device) == 8);
    assert!(offset_of!(DLTensor, ndim) == 16);
    assert!(offset_of!(DLTensor, dtype) == 20);
    assert!(offset_of!(DLTensor, shape) == 24);
    assert!(offset_of!(DLTensor, strides) == 32);
    assert!(offset_of!(DLTensor, byte_offset) == 40);
    assert!(size_of::<DLManagedTensor>() == 64);
    assert!(offset_of!(DLManagedTensor, manager_ctx) == 48);
    assert!(offset_of!(DLManagedTensor, deleter) == 56);
    assert!(size_of::<DLManagedTensorVersioned>() == 80);
    assert!(offset_of!(DLManagedTensorVersioned, manager_ctx) == 8);
    assert!(offset_of!(DLManagedTensorVersioned, deleter) == 16);
    assert!(offset_of!(DLManagedTensorVersioned, flags) == 24);
    assert!(offset_of!(DLManagedTensorVersioned, dl_tensor) == 32);
};
