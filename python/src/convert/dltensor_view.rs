//! A Tensor for a `DLTensor` passed by pointer (`kTVMFFIDLTensorPtr`, as
//! native code passes a tensor it does not hand over, e.g. to a Python
//! callback): as with TVM-FFI, a Tensor viewing the caller's memory, valid
//! as long as the caller keeps it (for a callback argument, the call).
//!
//! SAFETY invariants of this module: functions run with the GIL held; the
//! managed tensor made here is handed to the core at most once and freed by
//! its own deleter otherwise.

use std::ffi::c_void;
use std::ptr;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tether_sys::abi::TVMFFIObject;
use tether_sys::dlpack::DLManagedTensorVersioned;
use tether_sys::*;

use crate::convert::error_bridge::take_ffi_error;
use crate::convert::owned_any::OwnedAny;

/// The managed tensor behind a Tensor made from a borrowed `DLTensor*`:
/// the shape and strides are copied (the caller's arrays may not outlive
/// the call), the data is the caller's. Freed by its deleter.
#[repr(C)]
struct BorrowedView {
    managed: DLManagedTensorVersioned,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

unsafe extern "C" fn delete_borrowed_view(m: *mut DLManagedTensorVersioned) {
    if !m.is_null() {
        // SAFETY: `m` is the first field of a boxed BorrowedView made by
        // `tensor_from_dltensor_ptr`; DLPack calls the deleter once.
        drop(unsafe { Box::from_raw(m as *mut BorrowedView) });
    }
}

/// A Tensor describing the `DLTensor` a native caller passed by pointer
/// (`kTVMFFIDLTensorPtr`, a callback argument): as with TVM-FFI, it views
/// the caller's memory, which stays valid while the caller says so (for a
/// callback argument, the call). Shape and strides are copied into it.
///
/// # Safety
/// `t` is NULL or points to a valid `DLTensor` whose shape (and strides,
/// when non-NULL) hold `ndim` entries.
pub unsafe fn tensor_from_dltensor_ptr(py: Python<'_>, t: *const tether_sys::dlpack::DLTensor) -> PyResult<OwnedAny> {
    if t.is_null() {
        return Err(PyValueError::new_err("DLTensor pointer is NULL"));
    }
    // SAFETY: per the caller.
    let dl = unsafe { *t };
    if dl.ndim < 0 || (dl.ndim > 0 && dl.shape.is_null()) {
        return Err(PyValueError::new_err(format!("DLTensor has ndim {} and no shape", dl.ndim)));
    }
    let n = dl.ndim as usize;
    // SAFETY: `ndim` entries each (per the caller).
    let shape = if n == 0 { Vec::new() } else { unsafe { std::slice::from_raw_parts(dl.shape, n) }.to_vec() };
    let strides = if dl.strides.is_null() || n == 0 {
        Vec::new()
    } else {
        // SAFETY: as for the shape.
        unsafe { std::slice::from_raw_parts(dl.strides, n) }.to_vec()
    };
    let has_strides = !dl.strides.is_null();
    let mut view = Box::new(BorrowedView {
        managed: DLManagedTensorVersioned {
            version: tether_sys::dlpack::DLPackVersion {
                major: tether_sys::dlpack::DLPACK_MAJOR_VERSION,
                minor: tether_sys::dlpack::DLPACK_MINOR_VERSION,
            },
            manager_ctx: ptr::null_mut(),
            deleter: Some(delete_borrowed_view),
            flags: 0,
            dl_tensor: dl,
        },
        shape,
        strides,
    });
    view.managed.dl_tensor.shape = view.shape.as_mut_ptr();
    view.managed.dl_tensor.strides = if has_strides { view.strides.as_mut_ptr() } else { ptr::null_mut() };
    let managed = Box::into_raw(view) as *mut DLManagedTensorVersioned;
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: a managed tensor we own; the core takes it only on success.
    if unsafe { TVMFFITensorFromDLPackVersioned(managed, 0, 0, &mut out) } != 0 {
        // SAFETY: not adopted: still ours, deleted once.
        unsafe { delete_borrowed_view(managed) };
        return Err(take_ffi_error(py));
    }
    Ok(OwnedAny::from_handle(out as *mut TVMFFIObject))
}
