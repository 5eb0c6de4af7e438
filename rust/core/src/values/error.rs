//! Errors: the Rust error type, the Error object, and the thread-local
//! raised-error channel of the C ABI.
//!
//! A failing C ABI call returns nonzero and leaves its error in the calling
//! thread's raised slot; `TVMFFIErrorMoveFromRaised` takes it out. The slot
//! holds either an Error object or a plain Rust [`Error`] that is turned into
//! an object only when C code asks for one, so raising never allocates.

use std::cell::{RefCell, UnsafeCell};
use std::ptr::NonNull;

use crate::abi::{
    kTVMFFIBacktraceUpdateModeAppend, type_index, TVMFFIByteArray, TVMFFIErrorCell, TVMFFIObject, TVMFFIObjectHandle,
};
use super::backtrace;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};
pub(crate) use crate::types::byte_array::byte_slice;

/// An error crossing the FFI: a kind (`"TypeError"`, `"ValueError"`, …), a
/// message and a backtrace. When it came from an Error object, the object is
/// kept so re-raising it preserves its identity and extra context.
#[derive(Clone)]
pub struct Error {
    kind: String,
    message: String,
    backtrace: String,
    origin: Option<ObjectRef>,
}

impl Error {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Error { kind: kind.into(), message: message.into(), backtrace: capture_backtrace(), origin: None }
    }
    pub fn type_error(message: impl Into<String>) -> Self {
        Self::new("TypeError", message)
    }
    pub fn value_error(message: impl Into<String>) -> Self {
        Self::new("ValueError", message)
    }
    pub fn runtime_error(message: impl Into<String>) -> Self {
        Self::new("RuntimeError", message)
    }
    pub fn index_error(message: impl Into<String>) -> Self {
        Self::new("IndexError", message)
    }
    pub fn key_error(message: impl Into<String>) -> Self {
        Self::new("KeyError", message)
    }
    pub fn attribute_error(message: impl Into<String>) -> Self {
        Self::new("AttributeError", message)
    }

    pub fn kind(&self) -> &str {
        &self.kind
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    /// The backtrace text, its native frames resolved (`values::backtrace`).
    pub fn backtrace(&self) -> std::borrow::Cow<'_, str> {
        backtrace::resolve(&self.backtrace)
    }

    /// Read an Error object (any other object becomes a TypeError).
    pub fn from_object(obj: ObjectRef) -> Error {
        if obj.type_index() != type_index::kTVMFFIError {
            return Error::type_error(format!(
                "expected ffi.Error, got {}",
                crate::types::type_registry::type_key_of(obj.type_index())
            ));
        }
        // SAFETY: type index checked: the object is an ErrorCell holder.
        let cell = unsafe { &*error_cell_ptr(obj.as_ptr()) };
        // SAFETY: the cell's byte arrays point into the live object.
        let (kind, message, backtrace) =
            unsafe { (bytes_to_string(cell.kind), bytes_to_string(cell.message), bytes_to_string(cell.backtrace)) };
        Error { kind, message, backtrace, origin: Some(obj) }
    }

    /// The Error object for this error (the original one when it has one).
    pub fn to_object(&self) -> Result<ObjectRef, Error> {
        if let Some(o) = &self.origin {
            return Ok(o.clone());
        }
        Ok(ErrorObj::create(self.kind.as_bytes(), self.message.as_bytes(), self.backtrace.as_bytes())?
            .into_object_ref())
    }
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for Error {}

/// The type table's refusals are ValueErrors.
impl From<crate::types::TypeTableError> for Error {
    fn from(e: crate::types::TypeTableError) -> Self {
        Error::value_error(e.message())
    }
}

/// The object layer's errors (allocation, downcast) keep their kind.
impl From<crate::object::ObjectError> for Error {
    fn from(e: crate::object::ObjectError) -> Self {
        Error::new(e.kind(), e.message())
    }
}

/// The core's own errors carry a backtrace only when asked for with
/// `TETHER_BACKTRACE=1`: they are raised on paths Python uses as control
/// flow, where even an address-only capture would show. When asked for,
/// it is taken as `TVMFFIBacktrace` takes one (addresses only, resolved
/// when read; `values::backtrace`).
#[inline(never)]
fn capture_backtrace() -> String {
    use std::sync::OnceLock;
    static ENABLED: OnceLock<bool> = OnceLock::new();
    if *ENABLED.get_or_init(|| std::env::var_os("TETHER_BACKTRACE").is_some_and(|v| v == "1")) {
        // Leave out this function's caller (Error::new) too.
        let req = backtrace::Request { explicit: None, stop_at_boundary: true };
        backtrace::capture(&req, capture_backtrace as *const () as usize, 1)
    } else {
        String::new()
    }
}

/// # Safety
/// `b` must be empty or point to `b.size` readable bytes.
pub(crate) unsafe fn bytes_to_string(b: TVMFFIByteArray) -> String {
    // SAFETY: per the caller.
    String::from_utf8_lossy(unsafe { byte_slice(&b) }).into_owned()
}


fn error_cell_ptr(obj: *mut TVMFFIObject) -> *mut TVMFFIErrorCell {
    // SAFETY: pointer arithmetic only: the cell follows the header.
    unsafe { (obj as *mut u8).add(std::mem::size_of::<TVMFFIObject>()) as *mut TVMFFIErrorCell }
}

/// The extra context an Error object carries (its cell's `extra_context`).
pub(crate) fn extra_context(err: &ObjectRef) -> Option<ObjectRef> {
    // SAFETY: an Error object's cell follows its header; a non-NULL
    // context is a live object the error owns.
    let h = unsafe { (*error_cell_ptr(err.as_ptr())).extra_context };
    NonNull::new(h as *mut TVMFFIObject).map(|p| unsafe { ObjectRef::from_raw_borrowed(p) })
}

/// Replace the extra context of an Error object, releasing the old one.
/// As TVM-FFI does while an error propagates, this changes the object in
/// place: the propagating thread owns it.
pub(crate) fn set_extra_context(err: &ObjectRef, context: ObjectRef) {
    // SAFETY: an Error object's cell follows its header; the old context
    // (if any) is owned by the error and released once replaced.
    unsafe {
        let cell = error_cell_ptr(err.as_ptr());
        let old = std::mem::replace(&mut (*cell).extra_context, context.into_raw() as TVMFFIObjectHandle);
        if let Some(p) = NonNull::new(old as *mut TVMFFIObject) {
            drop(ObjectRef::from_raw_owned(p));
        }
    }
}

/// The Error object: header, the ABI cell, then storage the cell points into.
#[repr(C)]
pub struct ErrorObj {
    header: TVMFFIObject,
    cell: TVMFFIErrorCell,
    kind: Box<[u8]>,
    message: Box<[u8]>,
    /// Mutated only through `update_backtrace`, which the ABI documents as
    /// done by the thread that owns the error while it propagates.
    backtrace: UnsafeCell<Box<[u8]>>,
}

// SAFETY: the only interior mutability is the backtrace, updated by the
// propagating thread before the error is shared (the ABI's contract).
unsafe impl Sync for ErrorObj {}
// SAFETY: owned data plus handles with atomic counts.
unsafe impl Send for ErrorObj {}

// SAFETY: repr(C), header first.
unsafe impl ObjectType for ErrorObj {
    const TYPE_KEY: &'static str = "ffi.Error";
    fn type_index() -> i32 {
        type_index::kTVMFFIError
    }
}

impl ErrorObj {
    pub fn create(kind: &[u8], message: &[u8], backtrace: &[u8]) -> Result<ObjectPtr<ErrorObj>, Error> {
        Self::create_with(kind, message, backtrace, None, None)
    }

    /// Create an error; `cause_chain` and `extra_context` are owned by it.
    pub fn create_with(
        kind: &[u8],
        message: &[u8],
        backtrace: &[u8],
        cause_chain: Option<ObjectRef>,
        extra_context: Option<ObjectRef>,
    ) -> Result<ObjectPtr<ErrorObj>, Error> {
        let (kind, message, backtrace) = (nul_terminated(kind), nul_terminated(message), nul_terminated(backtrace));
        let cell = TVMFFIErrorCell {
            kind: TVMFFIByteArray::from_slice(text_of(&kind)),
            message: TVMFFIByteArray::from_slice(text_of(&message)),
            backtrace: TVMFFIByteArray::from_slice(text_of(&backtrace)),
            update_backtrace: Some(update_backtrace),
            cause_chain: cause_chain.map_or(std::ptr::null_mut(), |o| o.into_raw() as TVMFFIObjectHandle),
            extra_context: extra_context.map_or(std::ptr::null_mut(), |o| o.into_raw() as TVMFFIObjectHandle),
        };
        ObjectPtr::new(ErrorObj {
            header: header_placeholder(),
            cell,
            kind,
            message,
            backtrace: UnsafeCell::new(backtrace),
        })
        .map_err(Error::from)
    }

    pub fn kind(&self) -> &[u8] {
        text_of(&self.kind)
    }
    pub fn message(&self) -> &[u8] {
        text_of(&self.message)
    }
}

/// `bytes` followed by a NUL: TVM-FFI keeps an error's texts in
/// `std::string`s, so C code may read the cell's `data` as C strings.
fn nul_terminated(bytes: &[u8]) -> Box<[u8]> {
    let mut v = Vec::with_capacity(bytes.len() + 1);
    v.extend_from_slice(bytes);
    v.push(0);
    v.into_boxed_slice()
}

/// The text of NUL-terminated storage (without its NUL).
fn text_of(stored: &[u8]) -> &[u8] {
    &stored[..stored.len().saturating_sub(1)]
}

impl Drop for ErrorObj {
    fn drop(&mut self) {
        for h in [self.cell.cause_chain, self.cell.extra_context] {
            if let Some(p) = NonNull::new(h as *mut TVMFFIObject) {
                // SAFETY: the error owned these references since creation.
                drop(unsafe { ObjectRef::from_raw_owned(p) });
            }
        }
    }
}

unsafe extern "C" fn update_backtrace(self_: TVMFFIObjectHandle, backtrace: *const TVMFFIByteArray, mode: i32) {
    if self_.is_null() || backtrace.is_null() {
        return;
    }
    // SAFETY: installed only on ErrorObj instances; the ABI has the owner
    // thread call this while nobody else reads the backtrace.
    unsafe {
        let obj = &mut *(self_ as *mut ErrorObj);
        let extra = byte_slice(&*backtrace);
        let bt = &mut *obj.backtrace.get();
        let mut new: Vec<u8> = if mode == kTVMFFIBacktraceUpdateModeAppend { text_of(bt).to_vec() } else { Vec::new() };
        new.extend_from_slice(extra);
        *bt = nul_terminated(&new);
        obj.cell.backtrace = TVMFFIByteArray::from_slice(text_of(bt));
    }
}

enum Raised {
    Object(ObjectRef),
    Pending(Error),
}

thread_local! {
    static RAISED: RefCell<Option<Raised>> = const { RefCell::new(None) };
}

/// Put an error in this thread's raised slot (replacing any earlier one).
pub fn set_raised(err: Error) {
    let v = match err.origin {
        Some(o) => Raised::Object(o),
        None => Raised::Pending(err),
    };
    RAISED.with(|r| *r.borrow_mut() = Some(v));
}

/// Put an Error object in this thread's raised slot.
pub fn set_raised_object(obj: ObjectRef) {
    RAISED.with(|r| *r.borrow_mut() = Some(Raised::Object(obj)));
}

/// Take the raised error out of this thread's slot, as a Rust error.
pub fn take_raised() -> Option<Error> {
    RAISED.with(|r| r.borrow_mut().take()).map(|v| match v {
        Raised::Object(o) => Error::from_object(o),
        Raised::Pending(e) => e,
    })
}

/// Take the raised error out as an owned Error object (NULL when none, or
/// when the object could not be allocated).
pub fn take_raised_object() -> Option<ObjectRef> {
    match RAISED.with(|r| r.borrow_mut().take())? {
        Raised::Object(o) => Some(o),
        Raised::Pending(e) => e.to_object().ok(),
    }
}

/// The error after a nonzero return from a safe call; a callee that forgot
/// to raise yields a RuntimeError that says so.
pub fn take_raised_or_unknown(rc: i32) -> Error {
    take_raised().unwrap_or_else(|| {
        Error::runtime_error(format!("call failed with code {rc} but raised no error"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cell_texts_are_c_strings() {
        let err = ErrorObj::create(b"ValueError", b"bad 5", b"").unwrap();
        let cell = error_cell_ptr(err.as_ptr() as *mut TVMFFIObject);
        // SAFETY: the cell of a live error; each text is followed by the
        // NUL its storage holds (size + 1 readable bytes).
        let (kind, message, backtrace) = unsafe {
            let read = |b: TVMFFIByteArray| std::slice::from_raw_parts(b.data as *const u8, b.size + 1).to_vec();
            (read((*cell).kind), read((*cell).message), read((*cell).backtrace))
        };
        assert_eq!((kind.as_slice(), message.as_slice(), backtrace.as_slice()), (&b"ValueError\0"[..], &b"bad 5\0"[..], &b"\0"[..]));
        assert_eq!((err.kind(), err.message()), (&b"ValueError"[..], &b"bad 5"[..]));
        // An updated backtrace is terminated too.
        let extra = TVMFFIByteArray::from_slice(b"frame");
        // SAFETY: the owner thread updates its own error's backtrace.
        unsafe {
            update_backtrace(err.as_ptr() as TVMFFIObjectHandle, &extra, kTVMFFIBacktraceUpdateModeAppend);
            update_backtrace(err.as_ptr() as TVMFFIObjectHandle, &extra, kTVMFFIBacktraceUpdateModeAppend);
            let bt = (*cell).backtrace;
            assert_eq!(std::slice::from_raw_parts(bt.data as *const u8, bt.size + 1), b"frameframe\0");
        }
    }
}
