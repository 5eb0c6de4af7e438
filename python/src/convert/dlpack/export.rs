//! DLPack out: `Tensor.__dlpack__` wraps the core's managed tensor in a
//! capsule whose destructor deletes it unless a consumer took it. The
//! legacy form, which has no read-only flag, refuses read-only Tensors.
//!
//! SAFETY invariants: as in the parent module (GIL held; capsule pointers
//! read only after checking the capsule's name).

use std::ffi::{c_void, CStr};
use std::ptr;

use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use tether_sys::abi::TVMFFIObject;
use tether_sys::dlpack::{DLManagedTensor, DLManagedTensorVersioned};
use tether_sys::*;

use super::tensor_import::{tensor_handle, LEGACY, VERSIONED};
use crate::convert::error_bridge::take_ffi_error;

/// Whether our capsule `cap` still carries the name it was made with (the
/// very pointer `name`: a consumer renames it to a string of its own when
/// it takes the tensor, so no text comparison is needed).
///
/// # Safety
/// GIL held; `cap` one of this module's capsules.
unsafe fn unconsumed(cap: *mut ffi::PyObject, name: &CStr) -> bool {
    // SAFETY: per the caller; a capsule always has a name to read.
    unsafe { ffi::PyCapsule_GetName(cap) == name.as_ptr() }
}

unsafe extern "C" fn delete_unconsumed_versioned(cap: *mut ffi::PyObject) {
    // SAFETY: called by CPython with the GIL; a capsule still carrying its
    // original name was not consumed, so its managed tensor is ours to delete.
    unsafe {
        if unconsumed(cap, VERSIONED) {
            let m = ffi::PyCapsule_GetPointer(cap, VERSIONED.as_ptr()) as *mut DLManagedTensorVersioned;
            if let Some(d) = (*m).deleter {
                d(m);
            }
        }
    }
}

unsafe extern "C" fn delete_unconsumed_legacy(cap: *mut ffi::PyObject) {
    // SAFETY: as above, for the legacy form.
    unsafe {
        if unconsumed(cap, LEGACY) {
            let m = ffi::PyCapsule_GetPointer(cap, LEGACY.as_ptr()) as *mut DLManagedTensor;
            if let Some(d) = (*m).deleter {
                d(m);
            }
        }
    }
}

/// A DLPack capsule sharing the Tensor's memory (and holding a reference).
#[pyfunction]
pub fn tensor_to_dlpack(py: Python<'_>, t: &Bound<'_, PyAny>, versioned: bool) -> PyResult<Py<PyAny>> {
    let h = tensor_handle(t)?;
    // SAFETY: a live Tensor; the capsule owns the managed tensor until consumed.
    unsafe {
        let (managed, name, dtor): (*mut c_void, &CStr, ffi::PyCapsule_Destructor) = if versioned {
            let mut out: *mut DLManagedTensorVersioned = ptr::null_mut();
            if TVMFFITensorToDLPackVersioned(h as *mut c_void, &mut out) != 0 {
                return Err(take_ffi_error(py));
            }
            (out as *mut c_void, VERSIONED, delete_unconsumed_versioned)
        } else {
            refuse_legacy_read_only(py, h)?;
            let mut out: *mut DLManagedTensor = ptr::null_mut();
            if TVMFFITensorToDLPack(h as *mut c_void, &mut out) != 0 {
                return Err(take_ffi_error(py));
            }
            (out as *mut c_void, LEGACY, delete_unconsumed_legacy)
        };
        let cap = ffi::PyCapsule_New(managed, name.as_ptr(), Some(dtor));
        if cap.is_null() {
            let err = PyErr::fetch(py);
            // Not wrapped: delete it here, as the capsule would have.
            if versioned {
                let m = managed as *mut DLManagedTensorVersioned;
                if let Some(d) = (*m).deleter {
                    d(m);
                }
            } else {
                let m = managed as *mut DLManagedTensor;
                if let Some(d) = (*m).deleter {
                    d(m);
                }
            }
            return Err(err);
        }
        Ok(Bound::from_owned_ptr(py, cap).unbind())
    }
}

/// The legacy capsule has no read-only flag: a read-only Tensor exported
/// in it would reach its consumer writable, so it is refused, as NumPy
/// refuses its read-only arrays there (DLPack 1.x carries the flag).
///
/// # Safety
/// GIL held; `h` a live Tensor handle.
unsafe fn refuse_legacy_read_only(py: Python<'_>, h: *mut TVMFFIObject) -> PyResult<()> {
    let mut probe: *mut DLManagedTensorVersioned = ptr::null_mut();
    // SAFETY: per the caller; the probe is deleted right after its flags
    // are read (the core's versioned export is the one place they show).
    unsafe {
        if TVMFFITensorToDLPackVersioned(h as *mut c_void, &mut probe) != 0 {
            return Err(take_ffi_error(py));
        }
        let flags = (*probe).flags;
        if let Some(d) = (*probe).deleter {
            d(probe);
        }
        if flags & tether_sys::dlpack::DLPACK_FLAG_BITMASK_READ_ONLY != 0 {
            return Err(PyBufferError::new_err(
                "Cannot export a read-only tensor in the legacy DLPack form, which cannot signal read-only \
                 (ask for DLPack 1.x: __dlpack__(max_version=(1, 0)))",
            ));
        }
    }
    Ok(())
}
