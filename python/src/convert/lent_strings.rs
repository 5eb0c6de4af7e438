//! Python `str` and `bytes` lent to the FFI: an `ffi.String`/`ffi.Bytes`
//! object whose content is the Python object's own buffer (the UTF-8 form
//! CPython caches in a `str`, the bytes of a `bytes`), held alive by a
//! reference on it. Both sides are immutable, so sharing is safe; a long
//! string crosses without being copied, and a lent string coming back is
//! rebuilt from the Python object it lends (`string_values`).
//!
//! TVM-FFI's layout is kept (the header, then the byte array `{data,
//! size}`; readers such as its inline `String::c_str()` use the pointer,
//! and CPython keeps a NUL after both buffers), and the object carries its
//! own deleter, as objects made by other allocators do: the strong release
//! drops the Python reference (taking the GIL, through the exit parking
//! frames, as `ffi.OpaquePyObject` does), the weak one frees the block.
//!
//! Short strings are still copied: below [`LEND_MIN`] bytes a copy costs
//! less than a Python reference released under the GIL.
//!
//! SAFETY invariants of this module: a `Lent` block is only made here, with
//! `owner` a Python object we hold one reference on whose buffer is
//! `content` (immutable, alive while the reference is held).

use std::ffi::{c_int, c_void};

use pyo3::ffi;
use pyo3::prelude::*;
use tether_sys::abi::{
    type_index as ti, TVMFFIAny, TVMFFIAnyValue, TVMFFIByteArray, TVMFFIObject, kTVMFFIObjectDeleterFlagBitMaskStrong,
    kTVMFFIObjectDeleterFlagBitMaskWeak,
};

use crate::convert::opaque_cell::release_pyobject;
use crate::convert::owned_any::OwnedAny;

/// The shortest content lent rather than copied, in bytes.
pub const LEND_MIN: usize = 512;

/// A String/Bytes object lending a Python object's buffer.
#[repr(C)]
struct Lent {
    header: TVMFFIObject,
    content: TVMFFIByteArray,
    owner: *mut ffi::PyObject,
}

/// The combined count of a new object: one strong reference, and the weak
/// one all strong references share (TVM-FFI's layout: strong count in the
/// low 32 bits, weak in the high ones).
const BOTH_ONE: u64 = 1 | (1 << 32);

unsafe extern "C" fn lent_deleter(p: *mut c_void, flags: c_int) {
    let lent = p as *mut Lent;
    if flags & kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
        // SAFETY: a `Lent` block (only this deleter is installed on one);
        // the owner reference is released once, then cleared.
        unsafe {
            let owner = std::mem::replace(&mut (*lent).owner, std::ptr::null_mut());
            release_pyobject(owner as *mut c_void);
        }
    }
    if flags & kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: the block was made by `Box::new` in `lend`; the last
        // reference is gone.
        drop(unsafe { Box::from_raw(lent) });
    }
}

/// An `ffi.Bytes` (`is_bytes`) or `ffi.String` object lending `content`,
/// which is `obj`'s own immutable buffer (a `bytes` object's bytes, or the
/// UTF-8 form a `str` caches), followed by a NUL.
pub fn lend(obj: &Bound<'_, PyAny>, content: &[u8], is_bytes: bool) -> OwnedAny {
    let type_index = if is_bytes { ti::kTVMFFIBytes } else { ti::kTVMFFIStr };
    let lent = Box::new(Lent {
        header: TVMFFIObject { combined_ref_count: BOTH_ONE, type_index, __padding: 0, deleter: Some(lent_deleter) },
        content: TVMFFIByteArray { data: content.as_ptr() as *const _, size: content.len() },
        owner: obj.clone().into_ptr(),
    });
    let h = Box::into_raw(lent) as *mut TVMFFIObject;
    OwnedAny(TVMFFIAny { type_index, small_str_len: 0, value: TVMFFIAnyValue { v_obj: h } })
}

/// The Python object a lent String/Bytes object `h` lends (borrowed), or
/// None when `h` holds a copy of its own.
///
/// # Safety
/// `h` is a live String or Bytes object.
pub unsafe fn lender_of(h: *mut TVMFFIObject) -> Option<*mut ffi::PyObject> {
    // SAFETY: reading a live object's header; a block with this deleter is
    // a `Lent` whose owner is alive while the object is.
    unsafe {
        let deleter: Option<unsafe extern "C" fn(*mut c_void, c_int)> = (*h).deleter;
        if deleter.map(|d| d as usize) != Some(lent_deleter as usize) {
            return None;
        }
        let owner = (*(h as *mut Lent)).owner;
        (!owner.is_null()).then_some(owner)
    }
}
