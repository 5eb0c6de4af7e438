//! Python ints beyond the int64 range as FFI `ffi.BigInt` values, and FFI
//! BigInt values back as plain Python ints.
//!
//! Every conversion path first tries the int64 fast path (a plain
//! `kTVMFFIInt`); only an int that overflows it comes here. The FFI's
//! BigInt content is whole signed 64-bit words in native byte order, least
//! significant word first, two's complement. CPython exchanges integer
//! bytes as one little-endian buffer, so each word is converted between
//! that order and the native one (a no-op on little-endian targets).
//! Python 3.13+ has the public `PyLong_AsNativeBytes`/`PyLong_FromNativeBytes`;
//! older versions use `_PyLong_AsByteArray`/`_PyLong_FromByteArray`, whose
//! signatures before 3.13 are the ones pyo3 declares.
//!
//! The core is reached through its function table, as everywhere in the
//! extension (`tether_sys`'s functions).

use std::ffi::c_char;

use pyo3::ffi;
use pyo3::prelude::*;
use tether_sys::abi::{TVMFFIAny, TVMFFIByteArray};
use tether_sys::*;

use crate::convert::error_bridge::{check, take_ffi_error};
use crate::convert::owned_any::OwnedAny;

/// A Python int (any size; an `int` or a subclass) as an owned FFI value:
/// `ffi.BigInt` when it does not fit in int64 (the core stores one that
/// does as a plain int).
pub fn from_py(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<OwnedAny> {
    // SAFETY: `obj` is a live int object; the GIL is held (the token proves it).
    let words = unsafe { words_of(py, obj.as_ptr())? };
    let content = TVMFFIByteArray { data: words.as_ptr() as *const c_char, size: std::mem::size_of_val(words.as_slice()) };
    let mut out = TVMFFIAny::NONE;
    // SAFETY: a valid byte array (alive for the call) and output slot.
    let rc = unsafe { TVMFFIBigIntFromByteArray(&content, &mut out) };
    check(py, rc)?;
    Ok(OwnedAny(out))
}

/// Round up to whole 64-bit words (at least one).
fn whole_words(bytes: usize) -> usize {
    bytes.div_ceil(8).max(1)
}

/// The two's-complement words of int `p`, least significant first, each
/// in native byte order.
///
/// # Safety
/// GIL held; `p` a live `int` (or subclass) object.
unsafe fn words_of(py: Python<'_>, p: *mut ffi::PyObject) -> PyResult<Vec<i64>> {
    // SAFETY: per the caller.
    let mut words = unsafe { le_words_of(py, p)? };
    for w in &mut words {
        *w = i64::from_le(*w);
    }
    Ok(words)
}

/// [`words_of`] with each word still in little-endian byte order (the
/// whole buffer is CPython's little-endian two's complement).
///
/// # Safety
/// As [`words_of`].
#[cfg(Py_3_13)]
unsafe fn le_words_of(py: Python<'_>, p: *mut ffi::PyObject) -> PyResult<Vec<i64>> {
    let flags = ffi::Py_ASNATIVEBYTES_LITTLE_ENDIAN;
    // SAFETY: per the caller; a NULL buffer of size 0 asks for the size
    // needed (including the sign bit, the buffer being signed).
    let needed = unsafe { ffi::PyLong_AsNativeBytes(p, std::ptr::null_mut(), 0, flags) };
    if needed < 0 {
        return Err(PyErr::fetch(py));
    }
    let mut words = vec![0i64; whole_words(needed as usize)];
    let size = std::mem::size_of_val(words.as_slice());
    // SAFETY: `words` has `size` writable bytes.
    let written = unsafe { ffi::PyLong_AsNativeBytes(p, words.as_mut_ptr().cast(), size as ffi::Py_ssize_t, flags) };
    if written < 0 {
        return Err(PyErr::fetch(py));
    }
    if written as usize > size {
        return Err(pyo3::exceptions::PyOverflowError::new_err("int changed size while it was converted"));
    }
    Ok(words)
}

// CPython's own bit count of an int (exported through 3.12, where this is
// used; pyo3's bindings no longer name private functions).
#[cfg(not(Py_3_13))]
extern "C" {
    fn _PyLong_NumBits(obj: *mut ffi::PyObject) -> usize;
}

/// [`words_of`] with each word still in little-endian byte order.
///
/// # Safety
/// As [`words_of`].
#[cfg(not(Py_3_13))]
unsafe fn le_words_of(py: Python<'_>, p: *mut ffi::PyObject) -> PyResult<Vec<i64>> {
    // SAFETY: per the caller; (size_t)-1 with an exception set on failure.
    let bits = unsafe { _PyLong_NumBits(p) };
    // SAFETY: GIL held.
    if bits == usize::MAX && unsafe { !ffi::PyErr_Occurred().is_null() } {
        return Err(PyErr::fetch(py));
    }
    // A magnitude of `bits` bits and one sign bit.
    let mut words = vec![0i64; whole_words(bits / 8 + 1)];
    let size = std::mem::size_of_val(words.as_slice());
    // SAFETY: `words` has `size` writable bytes; little-endian, signed.
    let rc = unsafe { ffi::_PyLong_AsByteArray(p as *mut ffi::PyLongObject, words.as_mut_ptr().cast(), size, 1, 1) };
    if rc < 0 {
        return Err(PyErr::fetch(py));
    }
    Ok(words)
}

/// A borrowed `ffi.BigInt` (or int) value as a Python int.
///
/// # Safety
/// GIL held; `v` a valid value whose object stays alive for the call.
pub unsafe fn to_py(py: Python<'_>, v: &TVMFFIAny) -> PyResult<Py<PyAny>> {
    // SAFETY: per the caller.
    let p = unsafe { to_py_raw(v) };
    if p.is_null() {
        Err(PyErr::fetch(py))
    } else {
        // SAFETY: a new reference.
        Ok(unsafe { Bound::from_owned_ptr(py, p).unbind() })
    }
}

/// [`to_py`] as a new reference, or NULL with the Python exception set.
///
/// # Safety
/// As [`to_py`].
pub unsafe fn to_py_raw(v: &TVMFFIAny) -> *mut ffi::PyObject {
    // SAFETY: per the caller; the view borrows from `v`'s object, alive meanwhile.
    let content = unsafe { TVMFFIBigIntGetContentByteArray(v) };
    // SAFETY: GIL held (per the caller).
    let py = unsafe { Python::assume_attached() };
    if content.data.is_null() {
        // No content: not an integer value (the core raised the error).
        take_ffi_error(py).restore(py);
        return std::ptr::null_mut();
    }
    // SAFETY: the view names `size` readable bytes of whole words.
    let bytes = unsafe { std::slice::from_raw_parts(content.data as *const u8, content.size) };
    let mut le: Vec<u8> = Vec::with_capacity(bytes.len());
    for w in bytes.chunks_exact(8) {
        le.extend_from_slice(&i64::from_ne_bytes(w.try_into().expect("chunks of 8")).to_le_bytes());
    }
    if le.is_empty() {
        // SAFETY: GIL held.
        return unsafe { ffi::PyLong_FromLongLong(0) };
    }
    // SAFETY: `le` holds `le.len()` readable bytes: one little-endian
    // two's-complement integer.
    unsafe { from_le_bytes(&le) }
}

/// A Python int from a little-endian two's-complement buffer.
///
/// # Safety
/// GIL held.
#[cfg(Py_3_13)]
unsafe fn from_le_bytes(le: &[u8]) -> *mut ffi::PyObject {
    // SAFETY: per the caller; the buffer is valid for its length.
    unsafe { ffi::PyLong_FromNativeBytes(le.as_ptr().cast(), le.len(), ffi::Py_ASNATIVEBYTES_LITTLE_ENDIAN) }
}

/// A Python int from a little-endian two's-complement buffer.
///
/// # Safety
/// GIL held.
#[cfg(not(Py_3_13))]
unsafe fn from_le_bytes(le: &[u8]) -> *mut ffi::PyObject {
    // SAFETY: per the caller; the buffer is valid for its length.
    unsafe { ffi::_PyLong_FromByteArray(le.as_ptr(), le.len(), 1, 1) }
}
