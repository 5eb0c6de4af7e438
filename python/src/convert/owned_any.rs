//! Owned FFI values: a `TVMFFIAny` that releases its reference when
//! dropped, and the argument list of one call built from them.
//!
//! SAFETY invariants of this module: an [`OwnedAny`] owns one strong
//! reference when its type index is an object index.

use std::ffi::c_void;

use tether_sys::abi::{type_index as ti, TVMFFIAny, TVMFFIAnyValue, TVMFFIObject};
use tether_sys::*;

use crate::convert::arg_buffer::StackVec;

/// An owned FFI value that releases its reference when dropped.
pub struct OwnedAny(pub TVMFFIAny);

impl OwnedAny {
    pub(crate) fn pod(type_index: i32, value: TVMFFIAnyValue) -> Self {
        OwnedAny(TVMFFIAny { type_index, small_str_len: 0, value })
    }
    /// Give up ownership.
    pub fn into_raw(self) -> TVMFFIAny {
        let r = self.0;
        std::mem::forget(self);
        r
    }
    /// Own an object handle (+1 already held).
    pub fn from_handle(h: *mut TVMFFIObject) -> Self {
        // SAFETY: the caller owns +1 on a live object.
        let index = unsafe { (*h).type_index };
        OwnedAny::pod(index, TVMFFIAnyValue { v_obj: h })
    }
}

impl Drop for OwnedAny {
    fn drop(&mut self) {
        if self.0.type_index >= ti::kTVMFFIStaticObjectBegin {
            // SAFETY: module invariant: we own this reference.
            unsafe { TVMFFIObjectDecRef(self.0.value.v_obj as *mut c_void) };
        }
    }
}

/// Owned FFI values for one call, inline for up to 32 (a constructor's
/// fields), released on drop.
pub struct OwnedArgs(StackVec<TVMFFIAny, 32>);

impl OwnedArgs {
    pub fn new() -> Self {
        OwnedArgs(StackVec::new(TVMFFIAny::NONE))
    }

    pub fn push(&mut self, v: OwnedAny) {
        self.0.push(v.into_raw());
    }

    pub fn as_mut_slice(&mut self) -> &mut [TVMFFIAny] {
        self.0.as_mut_slice()
    }
}

impl Drop for OwnedArgs {
    fn drop(&mut self) {
        for v in self.0.as_slice() {
            drop(OwnedAny(*v));
        }
    }
}
