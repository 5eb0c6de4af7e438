//! The DLPack exchange table a container wrapper was returned with: a call
//! that took a tensor through a producer's exchange table (PyTorch's, say)
//! returns its Arrays, Lists, Maps and Dicts tagged with that table, so the
//! Tensors later read out of them (or out of a call they are passed to)
//! come back as that producer's tensors, as TVM-FFI's containers do.
//!
//! Tags are keyed by wrapper address and dropped when the wrapper dies
//! (`tie_state::tp_dealloc` calls [`forget`]), so an address reused by a
//! new wrapper never inherits one. A process that never tags pays one
//! atomic load per wrapper teardown. The table stores the exchange table's
//! address only: what it means belongs to the conversion layer.
//!
//! SAFETY invariants of this module: none (addresses are kept as numbers,
//! never dereferenced here).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use pyo3::ffi;

/// Whether any wrapper was ever tagged (the teardown's fast check).
static ANY: AtomicBool = AtomicBool::new(false);
/// Wrapper address -> exchange table address.
static TAGS: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);

fn table() -> std::sync::MutexGuard<'static, Option<HashMap<usize, usize>>> {
    TAGS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Tag the live wrapper `obj` with the exchange table at `api` (non-zero).
pub fn tag(obj: *mut ffi::PyObject, api: usize) {
    if api == 0 {
        return;
    }
    table().get_or_insert_with(HashMap::new).insert(obj as usize, api);
    ANY.store(true, Ordering::Release);
}

/// The table `obj` was tagged with, 0 for none.
#[inline]
pub fn tag_of(obj: *mut ffi::PyObject) -> usize {
    if !ANY.load(Ordering::Acquire) {
        return 0;
    }
    table().as_ref().and_then(|t| t.get(&(obj as usize)).copied()).unwrap_or(0)
}

/// Drop the tag of a dying wrapper.
#[inline]
pub fn forget(obj: *mut ffi::PyObject) {
    if ANY.load(Ordering::Acquire) {
        if let Some(t) = table().as_mut() {
            t.remove(&(obj as usize));
        }
    }
}
