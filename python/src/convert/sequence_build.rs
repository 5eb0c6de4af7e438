//! `Array(list)` and `List(list)` in one crossing: each item is converted
//! once, straight into an owned value in a buffer this thread keeps, and
//! the core takes the whole buffer over (`TetherFFISeqFromOwned`). Passing
//! the items as arguments of `ffi.Array` instead wrote every item three
//! times (a tuple snapshot, an argument view, the array's own copy, with a
//! reference count taken on each object by the core), and the fresh
//! buffers of each call cost more than the conversions.
//!
//! A list is converted from a snapshot (a tuple of its items, taken in one
//! step, under the list's own lock on a free-threaded build): an item's
//! conversion may run Python code that changes the list, and the result is
//! the list as it was when the build began, as upstream's `Array(list)`
//! gives it. The buffer is one the thread keeps between builds
//! (`arg_buffer::take_kept`).
//!
//! SAFETY invariants of this module: the GIL is held throughout (on a
//! free-threaded build: the thread is attached); items are read only from
//! a tuple this module holds, which nothing can change; the buffer holds
//! owned values only (released on drop unless the core took them).

use std::cell::Cell;
use std::ptr;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use tether_sys::abi::{TVMFFIAny, TVMFFIObject};
use tether_sys::*;

use crate::convert::arg_buffer::{keep, take_kept, Shared};
use crate::convert::error_bridge::take_ffi_error;
use crate::convert::ffi_to_py::any_to_py;
use crate::convert::owned_any::OwnedAny;
use crate::convert::py_to_ffi::{plain_value_ptr, py_to_any};
use crate::convert::rvalue_ref::is_rvalue_ref_ptr;
use crate::convert::wrapper_access::type_name;

thread_local! {
    /// The buffer of the last build on this thread, kept for the next one.
    static KEPT: Cell<Option<Vec<TVMFFIAny>>> = const { Cell::new(None) };
}
/// The large buffer kept for the process.
static SHARED: Shared<TVMFFIAny> = Shared::new();

/// Owned values on their way into a container.
struct OwnedValues(Vec<TVMFFIAny>);

impl OwnedValues {
    fn take(n: usize) -> OwnedValues {
        OwnedValues(take_kept(&KEPT, &SHARED, n))
    }
}

impl Drop for OwnedValues {
    fn drop(&mut self) {
        for v in self.0.drain(..) {
            drop(OwnedAny(v));
        }
        keep(&KEPT, &SHARED, std::mem::take(&mut self.0));
    }
}

/// Whether some item is `x._move()`: those are moved only once every
/// conversion succeeded, which the argument path of a call does.
fn has_moves(items: &[*mut ffi::PyObject]) -> bool {
    // SAFETY: live items (the caller's sequence holds them).
    items.iter().any(|&p| unsafe { is_rvalue_ref_ptr(p) })
}

/// The items of a list or tuple as a tuple (the tuple itself, or a new
/// snapshot of the list); None for anything else.
fn snapshot<'py>(seq: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyTuple>>> {
    if let Ok(t) = seq.cast::<PyTuple>() {
        return Ok(Some(t.clone()));
    }
    if let Ok(l) = seq.cast::<PyList>() {
        return Ok(Some(l.to_tuple()));
    }
    Ok(None)
}

/// The items of a tuple, borrowed from it.
fn items_of<'a>(t: &'a Bound<'_, PyTuple>) -> &'a [*mut ffi::PyObject] {
    // SAFETY: the exact layout of a tuple object, whose items never change
    // and live as long as it does.
    unsafe {
        let t = t.as_ptr() as *mut ffi::PyTupleObject;
        std::slice::from_raw_parts((*t).ob_item.as_ptr(), (*t).ob_base.ob_size as usize)
    }
}

/// A new container of type `type_index` (Array or List) holding `seq`'s
/// items, or None when an item is a move (the caller then makes the
/// container through a call, which handles moves).
pub fn build(py: Python<'_>, seq: &Bound<'_, PyAny>, type_index: i32) -> PyResult<Option<Py<PyAny>>> {
    let Some(tuple) = snapshot(seq)? else {
        return Err(PyTypeError::new_err(format!("expected a list or tuple, got {}", type_name(seq))));
    };
    let items = items_of(&tuple);
    if has_moves(items) {
        return Ok(None);
    }
    let mut values = OwnedValues::take(items.len());
    for &p in items {
        // SAFETY: a live item of the snapshot, which holds it.
        if let Some(v) = unsafe { plain_value_ptr(p) } {
            values.0.push(v);
            continue;
        }
        // SAFETY: as above.
        let item = unsafe { Bound::from_borrowed_ptr(py, p) };
        values.0.push(py_to_any(py, &item)?.into_raw());
    }
    let mut out: *mut std::ffi::c_void = ptr::null_mut();
    // SAFETY: `values` holds `len` owned values; on success the core owns
    // them (and the buffer is emptied without releasing them).
    let rc = unsafe { TetherFFISeqFromOwned(values.0.as_mut_ptr(), values.0.len() as i64, type_index, &mut out) };
    if rc != 0 {
        return Err(take_ffi_error(py));
    }
    // SAFETY: the core took every value over.
    unsafe { values.0.set_len(0) };
    any_to_py(py, OwnedAny::from_handle(out as *mut TVMFFIObject)).map(Some)
}
