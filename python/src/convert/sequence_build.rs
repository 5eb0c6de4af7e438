//! `Array(list)` and `List(list)` in one crossing: each item is converted
//! once, straight into an owned value in a buffer this thread keeps, and
//! the core takes the whole buffer over (`TetherFFISeqFromOwned`). Passing
//! the items as arguments of `ffi.Array` instead wrote every item three
//! times (a tuple snapshot, an argument view, the array's own copy, with a
//! reference count taken on each object by the core), and the fresh
//! buffers of each call cost more than the conversions.
//!
//! The buffer is one the thread keeps between builds
//! (`arg_buffer::take_kept`).
//!
//! SAFETY invariants of this module: the GIL is held throughout; the
//! buffer holds owned values only (released on drop unless the core took
//! them).

use std::cell::Cell;
use std::ptr;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use tether_sys::abi::{TVMFFIAny, TVMFFIObject};
use tether_sys::*;

use crate::convert::arg_buffer::{keep, take_kept};
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

/// Owned values on their way into a container.
struct OwnedValues(Vec<TVMFFIAny>);

impl OwnedValues {
    fn take(n: usize) -> OwnedValues {
        OwnedValues(take_kept(&KEPT, n))
    }
}

impl Drop for OwnedValues {
    fn drop(&mut self) {
        for v in self.0.drain(..) {
            drop(OwnedAny(v));
        }
        keep(&KEPT, std::mem::take(&mut self.0));
    }
}

/// Whether some item is `x._move()`: those are moved only once every
/// conversion succeeded, which the argument path of a call does.
fn has_moves(items: &[*mut ffi::PyObject]) -> bool {
    // SAFETY: live items (the caller's sequence holds them).
    items.iter().any(|&p| unsafe { is_rvalue_ref_ptr(p) })
}

/// The items of a list or tuple, borrowed; None for anything else.
fn items_of<'a>(seq: &'a Bound<'_, PyAny>) -> Option<&'a [*mut ffi::PyObject]> {
    // SAFETY: the exact layouts of list and tuple objects; the slices are
    // read before any Python code runs (see `build`).
    unsafe {
        if let Ok(l) = seq.downcast::<PyList>() {
            let l = l.as_ptr() as *mut ffi::PyListObject;
            let n = (*l).ob_base.ob_size as usize;
            return Some(if n == 0 { &[] } else { std::slice::from_raw_parts((*l).ob_item, n) });
        }
        if let Ok(t) = seq.downcast::<PyTuple>() {
            let t = t.as_ptr() as *mut ffi::PyTupleObject;
            return Some(std::slice::from_raw_parts((*t).ob_item.as_ptr(), (*t).ob_base.ob_size as usize));
        }
    }
    None
}

/// A new container of type `type_index` (Array or List) holding `seq`'s
/// items, or None when an item is a move (the caller then makes the
/// container through a call, which handles moves).
pub fn build(py: Python<'_>, seq: &Bound<'_, PyAny>, type_index: i32) -> PyResult<Option<PyObject>> {
    let Some(items) = items_of(seq) else {
        return Err(PyTypeError::new_err(format!("expected a list or tuple, got {}", type_name(seq))));
    };
    if has_moves(items) {
        return Ok(None);
    }
    let mut values = OwnedValues::take(items.len());
    let mut i = 0;
    loop {
        // A conversion may run Python code that changes a list: its items
        // are read afresh each step, and the item being converted is held.
        let Some(items) = items_of(seq) else { unreachable!("checked above") };
        let Some(&p) = items.get(i) else { break };
        i += 1;
        // SAFETY: a live item of the sequence.
        if let Some(v) = unsafe { plain_value_ptr(p) } {
            values.0.push(v);
            continue;
        }
        // SAFETY: as above; the new reference keeps it alive while converting.
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
