//! The hook through which a fresh or revived wrapper gets the per-object
//! set-up of `tether.Function` (its vectorcall entry and GIL-release flag).
//! That set-up belongs to the call layer (`call::function_type`), above
//! this one; it installs itself here at module start-up, and the wrapper
//! slots (`tie_state::tp_alloc`, `kept_memory::revive`) run it before any
//! binding can name the object.

use std::sync::OnceLock;

use pyo3::ffi;

/// Prepares `obj`, a new, unpublished instance of the wrapper type `tp`
/// (a no-op for types without the Function layout).
pub type InitFunctionObject = unsafe fn(obj: *mut ffi::PyObject, tp: *mut ffi::PyTypeObject);

static INIT_FUNCTION_OBJECT: OnceLock<InitFunctionObject> = OnceLock::new();

/// Installs the set-up (once, at module initialisation; later calls keep
/// the first).
pub fn install(init: InitFunctionObject) {
    let _ = INIT_FUNCTION_OBJECT.set(init);
}

/// Runs the installed set-up on `obj`.
///
/// # Safety
/// GIL held (an attached thread state); `obj` is a new, unpublished
/// instance of `tp`, a wrapper type.
#[inline]
pub unsafe fn init_function_object(obj: *mut ffi::PyObject, tp: *mut ffi::PyTypeObject) {
    if let Some(init) = INIT_FUNCTION_OBJECT.get() {
        // SAFETY: per the caller.
        unsafe { init(obj, tp) };
    }
}
