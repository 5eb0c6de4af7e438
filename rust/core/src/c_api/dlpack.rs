//! The exported C functions for tensors, DLPack, data type strings and
//! the execution environment (`c_api.h`'s DLPack and dtype sections and
//! `extra/c_env_api.h`), with TVM-FFI's names, signatures and semantics.
//!
//! The module contract of [`super`] applies: pointers are NULL (reported)
//! or valid, handles are live objects the caller holds a reference on.
//! `TVMFFITensorFromDLPack*` take ownership of the managed tensor only on
//! success; on failure the caller still owns it and no deleter has run.

use std::ffi::c_int;
use std::ptr::NonNull;

use super::checked_args::{bytes, handle, non_null, out_ptr};
use super::guard::guard;
use crate::abi::*;
use crate::values::any::Any;
use crate::values::error::Error;
use crate::tensor::{dtype, env, Tensor};
use crate::types::type_registry;
use tether_sys::dlpack::{
    DLManagedTensor, DLManagedTensorVersioned, DLPackManagedTensorAllocator, DLTensor, TVMFFIStreamHandle,
};

fn tensor_handle(h: TVMFFIObjectHandle, func: &str) -> Result<Tensor, Error> {
    let p = handle(h, func)?;
    // SAFETY: a live object per the module contract.
    let index = unsafe { (*p.as_ptr()).type_index };
    if index != type_index::kTVMFFITensor {
        return Err(Error::type_error(format!("{func}: expected ffi.Tensor, got {}", type_registry::type_key_of(index))));
    }
    // SAFETY: as above.
    unsafe { Tensor::from_raw_borrowed(p) }
}

fn managed<T>(p: *mut T, func: &str) -> Result<NonNull<T>, Error> {
    NonNull::new(p).ok_or_else(|| Error::value_error(format!("{func}: managed tensor is NULL")))
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFITensorFromDLPack(
    from: *mut DLManagedTensor,
    require_alignment: i32,
    require_contiguous: i32,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    const F: &str = "TVMFFITensorFromDLPack";
    guard(F, || {
        let out = out_ptr(out, F)?;
        let m = managed(from, F)?;
        // SAFETY: a managed tensor the caller owns (module contract).
        let t = unsafe { Tensor::from_dlpack(m, require_alignment, require_contiguous != 0)? };
        *out = t.into_object().into_raw() as TVMFFIObjectHandle;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFITensorFromDLPackVersioned(
    from: *mut DLManagedTensorVersioned,
    require_alignment: i32,
    require_contiguous: i32,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    const F: &str = "TVMFFITensorFromDLPackVersioned";
    guard(F, || {
        let out = out_ptr(out, F)?;
        let m = managed(from, F)?;
        // SAFETY: as in `TVMFFITensorFromDLPack`.
        let t = unsafe { Tensor::from_dlpack_versioned(m, require_alignment, require_contiguous != 0)? };
        *out = t.into_object().into_raw() as TVMFFIObjectHandle;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFITensorToDLPack(from: TVMFFIObjectHandle, out: *mut *mut DLManagedTensor) -> c_int {
    const F: &str = "TVMFFITensorToDLPack";
    guard(F, || {
        let out = out_ptr(out, F)?;
        *out = tensor_handle(from, F)?.to_dlpack();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFITensorToDLPackVersioned(
    from: TVMFFIObjectHandle,
    out: *mut *mut DLManagedTensorVersioned,
) -> c_int {
    const F: &str = "TVMFFITensorToDLPackVersioned";
    guard(F, || {
        let out = out_ptr(out, F)?;
        *out = tensor_handle(from, F)?.to_dlpack_versioned();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFITensorCreateUnsafeView(
    source: TVMFFIObjectHandle,
    prototype: *const DLTensor,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    const F: &str = "TVMFFITensorCreateUnsafeView";
    guard(F, || {
        let out = out_ptr(out, F)?;
        let source = tensor_handle(source, F)?;
        let prototype = non_null(prototype, F, "prototype")?;
        // SAFETY: a valid prototype over the source's memory (caller contract).
        let view = unsafe { Tensor::create_unsafe_view(&source, prototype)? };
        *out = view.into_object().into_raw() as TVMFFIObjectHandle;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIDataTypeFromString(str: *const TVMFFIByteArray, out: *mut DLDataType) -> c_int {
    const F: &str = "TVMFFIDataTypeFromString";
    guard(F, || {
        let out = out_ptr(out, F)?;
        let b = bytes(str, F, "str")?;
        let s = std::str::from_utf8(b)
            .map_err(|_| Error::value_error(format!("unknown dtype `{}`", String::from_utf8_lossy(b))))?;
        *out = dtype::from_str(s)?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIDataTypeToString(dtype: *const DLDataType, out: *mut TVMFFIAny) -> c_int {
    const F: &str = "TVMFFIDataTypeToString";
    guard(F, || {
        let out = out_ptr(out, F)?;
        let d = *non_null(dtype, F, "dtype")?;
        *out = Any::string(&dtype::to_string(d)?)?.into_raw();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIEnvSetStream(
    device_type: i32,
    device_id: i32,
    stream: TVMFFIStreamHandle,
    opt_out_original_stream: *mut TVMFFIStreamHandle,
) -> c_int {
    guard("TVMFFIEnvSetStream", || {
        let old = env::set_stream(device_type, device_id, stream)?;
        // SAFETY: NULL or a valid output slot (module contract).
        if let Some(o) = unsafe { opt_out_original_stream.as_mut() } {
            *o = old;
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn TVMFFIEnvGetStream(device_type: i32, device_id: i32) -> TVMFFIStreamHandle {
    env::get_stream(device_type, device_id)
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIEnvSetDLPackManagedTensorAllocator(
    allocator: DLPackManagedTensorAllocator,
    write_to_global_context: c_int,
    opt_out_original_allocator: *mut DLPackManagedTensorAllocator,
) -> c_int {
    guard("TVMFFIEnvSetDLPackManagedTensorAllocator", || {
        let old = env::set_allocator(allocator, write_to_global_context != 0);
        // SAFETY: NULL or a valid output slot (module contract).
        if let Some(o) = unsafe { opt_out_original_allocator.as_mut() } {
            *o = old;
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn TVMFFIEnvGetDLPackManagedTensorAllocator() -> DLPackManagedTensorAllocator {
    env::get_allocator()
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIEnvTensorAlloc(prototype: *mut DLTensor, out: *mut TVMFFIObjectHandle) -> c_int {
    const F: &str = "TVMFFIEnvTensorAlloc";
    let mut allocator_rc = 0;
    let rc = guard(F, || {
        let out = out_ptr(out, F)?;
        non_null(prototype, F, "prototype")?;
        // SAFETY: a valid prototype (module contract).
        match unsafe { env::env_tensor_alloc(prototype) } {
            Ok(t) => {
                *out = t.into_object().into_raw() as TVMFFIObjectHandle;
                Ok(())
            }
            Err(env::AllocFailure::Error(e)) => Err(e),
            Err(env::AllocFailure::Raised(rc)) => {
                allocator_rc = rc;
                Ok(())
            }
        }
    });
    // The allocator's return code and raised error pass through, as upstream.
    if allocator_rc != 0 {
        allocator_rc
    } else {
        rc
    }
}
