//! Inspecting wrappers and their handles from Python (tests and
//! diagnostics read the tying state through these), and the side-table
//! sweep and exit mark `tether.core` drives.

use std::ptr;

use pyo3::prelude::*;

use crate::convert::wrapper_access::{handle_of, wrapper};
use crate::tie::tie_state::{self, CObject};
use crate::tie::{exit_park, side_table};

#[pyfunction]
pub(crate) fn mark_python_finalizing() {
    exit_park::mark_python_finalizing();
}

/// Drop side-table entries of objects that died (run after each garbage
/// collection by `tether.core`); returns how many entries remain.
#[pyfunction]
pub(crate) fn sweep_side_table(_py: Python<'_>) -> usize {
    // SAFETY: the GIL is held (the token proves it).
    unsafe { side_table::sweep() };
    side_table::len()
}

/// The handle address of a wrapper (0 once moved from).
#[pyfunction]
pub(crate) fn chandle(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    let o = wrapper(obj)?;
    // SAFETY: a wrapper has the CObject layout.
    Ok(unsafe { (*(o.as_ptr() as *mut CObject)).chandle } as usize)
}

/// The tying state of a wrapper's handle and whether it names this wrapper.
#[pyfunction]
#[pyo3(name = "tie_state")]
pub(crate) fn tie_state_of(obj: &Bound<'_, PyAny>) -> PyResult<(String, bool)> {
    let h = handle_of(wrapper(obj)?)?;
    // SAFETY: GIL held, live handle.
    let (state, w, _) = unsafe { tie_state::state_of(h) };
    Ok((state.to_string(), w == obj.as_ptr() as usize))
}

/// Whether the handle's binding lives in the side table (an object
/// allocated without the allocation header).
#[pyfunction]
pub(crate) fn tied_by_side_table(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let h = handle_of(wrapper(obj)?)?;
    // SAFETY: GIL held, live handle.
    Ok(unsafe { tie_state::state_of(h) }.2)
}

#[pyfunction]
pub(crate) fn type_index_of(obj: &Bound<'_, PyAny>) -> PyResult<i32> {
    let h = handle_of(wrapper(obj)?)?;
    // SAFETY: live handle.
    Ok(unsafe { (*h).type_index })
}

#[pyfunction]
pub(crate) fn use_count(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    let h = handle_of(wrapper(obj)?)?;
    // SAFETY: live handle, whose count is only ever accessed atomically; a
    // relaxed snapshot of the strong count.
    let combined = unsafe { std::sync::atomic::AtomicU64::from_ptr(ptr::addr_of_mut!((*h).combined_ref_count)) };
    Ok(combined.load(std::sync::atomic::Ordering::Relaxed) & 0xFFFF_FFFF)
}
