//! The exported C functions through which a host environment (Python)
//! hands the core the few C entry points it needs for low-level work
//! (`extra/c_env_api.h`: `TVMFFIEnvRegisterCAPI`, `TVMFFIEnvCheckSignals`),
//! with TVM-FFI's names, signatures and semantics.
//!
//! A long-running native function calls `TVMFFIEnvCheckSignals()` now and
//! then; when the host registered `PyErr_CheckSignals` (together with
//! `PyGILState_Ensure`/`PyGILState_Release`, since native code runs
//! without the GIL), the check runs under the GIL and a pending
//! `KeyboardInterrupt` makes it return -1: the host has set its own error,
//! and the native function should unwind. With nothing registered it
//! returns 0. The module contract of [`super`] applies.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

use super::guard::guard;
use crate::values::error::Error;

static CHECK_SIGNALS: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static GIL_ENSURE: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static GIL_RELEASE: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

type CheckSignalsFn = unsafe extern "C" fn() -> c_int;
type GilEnsureFn = unsafe extern "C" fn() -> *mut c_void;
type GilReleaseFn = unsafe extern "C" fn(*mut c_void);

#[no_mangle]
pub unsafe extern "C" fn TVMFFIEnvRegisterCAPI(name: *const c_char, symbol: *mut c_void) -> c_int {
    const F: &str = "TVMFFIEnvRegisterCAPI";
    guard(F, || {
        if name.is_null() {
            return Err(Error::value_error(format!("{F}: name is NULL")));
        }
        // SAFETY: a NUL-terminated string per the module contract.
        let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy();
        let slot = match name.as_ref() {
            "PyErr_CheckSignals" => &CHECK_SIGNALS,
            "PyGILState_Ensure" => &GIL_ENSURE,
            "PyGILState_Release" => &GIL_RELEASE,
            // TVM-FFI's message.
            other => return Err(Error::value_error(format!("Unknown env API {other}"))),
        };
        slot.store(symbol, Ordering::Release);
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn TVMFFIEnvCheckSignals() -> c_int {
    let check = CHECK_SIGNALS.load(Ordering::Acquire);
    if check.is_null() {
        return 0;
    }
    let (ensure, release) = (GIL_ENSURE.load(Ordering::Acquire), GIL_RELEASE.load(Ordering::Acquire));
    if ensure.is_null() || release.is_null() {
        // TVM-FFI aborts here; the check cannot run without the GIL.
        return guard("TVMFFIEnvCheckSignals", || {
            Err(Error::runtime_error(
                "TVMFFIEnvCheckSignals: PyErr_CheckSignals is registered but PyGILState_Ensure and \
                 PyGILState_Release are not",
            ))
        });
    }
    // SAFETY: the host registered these under their CPython names, so they
    // have CPython's signatures; the GIL state is released on the same
    // thread that took it.
    unsafe {
        let check: CheckSignalsFn = std::mem::transmute(check);
        let ensure: GilEnsureFn = std::mem::transmute(ensure);
        let release: GilReleaseFn = std::mem::transmute(release);
        let state = ensure();
        let rc = check();
        release(state);
        if rc != 0 {
            -1
        } else {
            0
        }
    }
}
