//! Owned strong references to objects of the core, and what the testing
//! library reads from any object: its type index, its type key, its strong
//! count, whether it is an instance of a type.
//!
//! SAFETY invariant: an [`ObjectRef`] holds one strong reference to a live
//! object of the core (or of a library sharing it), released on drop.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use tether_sys::abi::{TVMFFIByteArray, TVMFFIObject, TVMFFITypeInfo};

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

/// The core's type information for `type_index`, if it has any.
pub fn type_info(type_index: i32) -> Option<&'static TVMFFITypeInfo> {
    // SAFETY: the core returns NULL or a record it keeps for the process.
    unsafe { (api().TVMFFIGetTypeInfo)(type_index).as_ref() }
}

/// The type key of `type_index` (`<type N>` for an unknown index).
pub fn type_key(type_index: i32) -> String {
    match type_info(type_index) {
        Some(info) => bytes_to_string(&info.type_key),
        None => format!("<type {type_index}>"),
    }
}

/// The index registered for `key`, if any.
pub fn type_index_of(key: &str) -> Option<i32> {
    let name = TVMFFIByteArray { data: key.as_ptr().cast(), size: key.len() };
    let mut out = -1;
    // SAFETY: a valid key and output slot.
    let rc = unsafe { (api().TVMFFITypeKeyToIndex)(&name, &mut out) };
    if rc != 0 {
        // The core raised "no such type"; it is not an error here.
        drop(super::error::Error::take_raised());
        return None;
    }
    Some(out)
}

/// Whether an object of `index` is an instance of `target` (itself or a
/// descendant), by the ancestors the core records.
pub fn is_instance(index: i32, target: i32) -> bool {
    if index == target {
        return true;
    }
    let (Some(info), Some(target_info)) = (type_info(index), type_info(target)) else {
        return false;
    };
    let depth = target_info.type_depth;
    if depth >= info.type_depth || info.type_ancestors.is_null() {
        return false;
    }
    // SAFETY: `type_ancestors` has `type_depth` entries, each a record the
    // core keeps for the process; `depth < type_depth`.
    let ancestor = unsafe { (*info.type_ancestors.add(depth as usize)).as_ref() };
    ancestor.is_some_and(|a| a.type_index == target)
}

/// The bytes a byte array of the core describes, as (lossy) UTF-8.
pub fn bytes_to_string(b: &TVMFFIByteArray) -> String {
    String::from_utf8_lossy(byte_slice(b)).into_owned()
}

/// The bytes a byte array describes.
pub fn byte_slice(b: &TVMFFIByteArray) -> &[u8] {
    if b.data.is_null() || b.size == 0 {
        return &[];
    }
    // SAFETY: the core's byte arrays describe `size` readable bytes that
    // live as long as the record or object holding them.
    unsafe { std::slice::from_raw_parts(b.data.cast(), b.size) }
}
