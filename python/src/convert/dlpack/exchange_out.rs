//! Tensors back to the framework they came from: a call that took a tensor
//! through a producer's DLPack exchange table (PyTorch's, or the fallback
//! for a PyTorch without one) returns its Tensors as that producer's
//! tensors, and its Arrays, Lists, Maps and Dicts tagged with the table,
//! so the Tensors read out of them later convert too. TVM-FFI does the
//! same: the call remembers the table of its last such tensor argument (or,
//! when none, of the first tagged container argument) and converts the
//! result with it.
//!
//! The table of the running call lives in a thread-local, saved and
//! cleared when a call starts converting its arguments and restored when
//! it ends ([`CallScope`]), so calls made meanwhile (from a callback, or
//! from an argument's conversion hook) neither see nor change it. Only
//! arguments note a table: a tensor converted anywhere else (a callback's
//! return value, `from_dlpack`) does not.
//!
//! SAFETY invariants of this module: every function runs with the GIL
//! held; a table address is one [`exchange_api`](super::exchange_api) gave
//! (a producer's table, alive as long as the process keeps its type, which
//! DLPack requires to be for the life of the process, or the fallback).

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;

use pyo3::prelude::*;
use pyo3::ffi;
use tether_sys::abi::{type_index as ti, TVMFFIObject};
use tether_sys::dlpack::DLManagedTensorVersioned;
use tether_sys::*;

use super::exchange_api::{ExchangeApi, TORCH_FALLBACK};
use crate::convert::registry;
use crate::tie::exchange_tags;
use crate::tie::tie_state::CObject;

#[derive(Clone, Copy)]
struct State {
    /// The running call's table (0 for none).
    api: usize,
    /// Whether the running call is converting its arguments.
    collecting: bool,
}

thread_local! {
    static CALL: Cell<State> = const { Cell::new(State { api: 0, collecting: false }) };
}

/// One call's span: from the start of its argument conversion to the
/// conversion of its result. Restores the enclosing call's state on drop.
pub struct CallScope {
    saved: State,
}

impl CallScope {
    /// Start converting a call's arguments.
    #[inline]
    pub fn enter() -> CallScope {
        CallScope { saved: CALL.with(|c| c.replace(State { api: 0, collecting: true })) }
    }

    /// The arguments are converted: tensors converted from now on (in
    /// callbacks, say) do not count. Returns the table they noted (0 for
    /// none).
    #[inline]
    pub fn arguments_done(&self) -> usize {
        CALL.with(|c| {
            let s = c.get();
            c.set(State { api: s.api, collecting: false });
            s.api
        })
    }
}

impl Drop for CallScope {
    #[inline]
    fn drop(&mut self) {
        CALL.with(|c| c.set(self.saved));
    }
}

/// A tensor argument was converted through `api` (NULL for none): the last
/// one wins, as in TVM-FFI.
#[inline]
pub(crate) fn note_tensor_argument(api: *const ExchangeApi) {
    if api.is_null() || !can_convert_back(api) {
        return;
    }
    CALL.with(|c| {
        let s = c.get();
        if s.collecting {
            c.set(State { api: api as usize, collecting: true });
        }
    });
}

/// A wrapper argument: a container tagged with a table gives the call that
/// table unless an argument gave one already.
///
/// # Safety
/// `obj` is a live wrapper.
#[inline]
pub unsafe fn note_wrapper_argument(obj: *mut ffi::PyObject) {
    let api = exchange_tags::tag_of(obj);
    if api == 0 {
        return;
    }
    CALL.with(|c| {
        let s = c.get();
        if s.collecting && s.api == 0 {
            c.set(State { api, collecting: true });
        }
    });
}

fn is_fallback(api: *const ExchangeApi) -> bool {
    ptr::eq(api, &TORCH_FALLBACK.0)
}

fn can_convert_back(api: *const ExchangeApi) -> bool {
    // SAFETY: a table `exchange_api` gave (module invariant).
    is_fallback(api) || unsafe { (*api).managed_tensor_to_py_object_no_sync.is_some() }
}

/// The container wrapper `obj`'s table (0 for none).
pub fn tag_of(obj: &Bound<'_, PyAny>) -> usize {
    exchange_tags::tag_of(obj.as_ptr())
}

/// `value`, a result of a call (or an item read out of a container) whose
/// table is `api` (0 for none): a Tensor becomes the producer's tensor
/// sharing its memory, a container is tagged with the table, anything
/// else is returned as is. A Tensor the producer cannot import stays a
/// Tensor, as in TVM-FFI.
pub fn convert_back(py: Python<'_>, api: usize, value: Py<PyAny>) -> PyResult<Py<PyAny>> {
    if api == 0 {
        return Ok(value);
    }
    let p = value.as_ptr();
    // SAFETY: a live object; GIL held.
    if !unsafe { registry::is_wrapper_ptr(py, p) } {
        return Ok(value);
    }
    // SAFETY: a wrapper has the CObject layout; its +1 keeps the handle alive.
    let h = unsafe { (*(p as *mut CObject)).chandle };
    if h.is_null() {
        return Ok(value);
    }
    // SAFETY: a live handle.
    match unsafe { (*h).type_index } {
        ti::kTVMFFITensor => Ok(tensor_back(py, api as *const ExchangeApi, h, &value).unwrap_or(value)),
        ti::kTVMFFIArray | ti::kTVMFFIList | ti::kTVMFFIMap | ti::kTVMFFIDict => {
            exchange_tags::tag(p, api);
            Ok(value)
        }
        _ => Ok(value),
    }
}

/// The producer's tensor for the Tensor `h`, or None when it cannot be
/// made (the Python error, if any, is cleared: the Tensor is returned).
fn tensor_back(py: Python<'_>, api: *const ExchangeApi, h: *mut TVMFFIObject, wrapper: &Py<PyAny>) -> Option<Py<PyAny>> {
    if is_fallback(api) {
        let converted = py.import("torch").and_then(|torch| torch.getattr("from_dlpack")?.call1((wrapper,)));
        return converted.ok().map(|v| v.unbind());
    }
    // SAFETY: the table converts back (checked when noted).
    let to_py = unsafe { (*api).managed_tensor_to_py_object_no_sync }?;
    let mut managed: *mut DLManagedTensorVersioned = ptr::null_mut();
    // SAFETY: a live Tensor handle; the managed tensor is ours on success.
    if unsafe { TVMFFITensorToDLPackVersioned(h as *mut c_void, &mut managed) } != 0 || managed.is_null() {
        let _ = crate::convert::error_bridge::take_ffi_error(py);
        return None;
    }
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: DLPack's exchange protocol: on success the producer owns
    // `managed` and `out` is a new reference; on failure we still own it.
    unsafe {
        if to_py(managed, &mut out) != 0 || out.is_null() {
            if let Some(d) = (*managed).deleter {
                d(managed);
            }
            let _ = PyErr::take(py);
            return None;
        }
        Some(Bound::from_owned_ptr(py, out as *mut ffi::PyObject).unbind())
    }
}
