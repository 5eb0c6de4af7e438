//! Owned strong references to objects of the core, and what the testing
//! library reads from any object itself: its type index and its strong
//! count. What the core's type table says about an index is in
//! [`super::type_table`].
//!
//! SAFETY invariant: an [`ObjectRef`] holds one strong reference to a live
//! object of the core (or of a library sharing it), released on drop.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use tether_sys::abi::TVMFFIObject;

use crate::core_api::api;

pub struct ObjectRef(NonNull<TVMFFIObject>);

// SAFETY: reference counts are atomic in the core; the objects the testing
// library shares are immutable or synchronised by their owners.
unsafe impl Send for ObjectRef {}
// SAFETY: as above.
unsafe impl Sync for ObjectRef {}

impl ObjectRef {
    /// Take over the reference `ptr` carries.
    ///
    /// # Safety
    /// `ptr` is a live object and the caller owns one strong reference to it.
    pub unsafe fn from_raw_owned(ptr: NonNull<TVMFFIObject>) -> ObjectRef {
        ObjectRef(ptr)
    }

    /// A new reference to an object someone else keeps alive.
    ///
    /// # Safety
    /// `ptr` is a live object for the duration of the call.
    pub unsafe fn from_raw_borrowed(ptr: NonNull<TVMFFIObject>) -> ObjectRef {
        // SAFETY: a live object, per the caller.
        unsafe { (api().TVMFFIObjectIncRef)(ptr.as_ptr().cast()) };
        ObjectRef(ptr)
    }

    pub fn as_ptr(&self) -> *mut TVMFFIObject {
        self.0.as_ptr()
    }

    /// Give up the reference without releasing it.
    pub fn into_raw(self) -> *mut TVMFFIObject {
        let p = self.0.as_ptr();
        std::mem::forget(self);
        p
    }

    pub fn type_index(&self) -> i32 {
        // SAFETY: a live object (module invariant).
        unsafe { (*self.0.as_ptr()).type_index }
    }

    pub fn same_as(&self, other: &ObjectRef) -> bool {
        self.0 == other.0
    }

    /// The strong count (this reference included).
    pub fn use_count(&self) -> i64 {
        strong_count(self.0)
    }
}

/// The strong count of a live object: the low 32 bits of its combined count.
pub fn strong_count(ptr: NonNull<TVMFFIObject>) -> i64 {
    // SAFETY: the count is an 8-byte aligned u64 at the start of a live
    // object, updated atomically by the core.
    let combined = unsafe { &*(ptr.as_ptr() as *const AtomicU64) }.load(Ordering::Relaxed);
    (combined & 0xFFFF_FFFF) as i64
}

impl Clone for ObjectRef {
    fn clone(&self) -> Self {
        // SAFETY: our reference keeps the object alive.
        unsafe { ObjectRef::from_raw_borrowed(self.0) }
    }
}

impl Drop for ObjectRef {
    fn drop(&mut self) {
        // SAFETY: we own one strong reference (module invariant).
        unsafe { (api().TVMFFIObjectDecRef)(self.0.as_ptr().cast()) };
    }
}
