//! Errors as the C ABI carries them: a call that fails leaves an `ffi.Error`
//! in the thread's raised slot. [`Error`] is either such an object, passed
//! on untouched (so a Python exception raised in a callback comes back as
//! the same exception), or a kind and message made here.

use std::ffi::{c_char, c_int, CString};
use std::ptr::NonNull;

use tether_sys::abi::{TVMFFIByteArray, TVMFFIObject};

use super::bytes::bytes_to_string;
use super::object::ObjectRef;
use crate::core_api::api;

pub enum Error {
    /// An `ffi.Error` object taken from the raised slot.
    Raised(ObjectRef),
    /// A new error of `kind` with `message` (and optionally the function
    /// named in its backtrace).
    New { kind: String, message: String, frame: Option<&'static str> },
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind(), self.message())
    }
}

impl Error {
    pub fn new(kind: &str, message: impl Into<String>) -> Error {
        Error::New { kind: kind.to_string(), message: message.into(), frame: None }
    }

    pub fn type_error(message: impl Into<String>) -> Error {
        Error::new("TypeError", message)
    }

    pub fn value_error(message: impl Into<String>) -> Error {
        Error::new("ValueError", message)
    }

    pub fn runtime_error(message: impl Into<String>) -> Error {
        Error::new("RuntimeError", message)
    }

    /// Ok for 0, else the error the failed call raised.
    pub fn check(rc: c_int) -> Result<(), Error> {
        if rc == 0 {
            Ok(())
        } else {
            Err(Error::take_raised())
        }
    }

    /// The error in the raised slot (a generic one if the slot is empty).
    pub fn take_raised() -> Error {
        let mut h: *mut std::ffi::c_void = std::ptr::null_mut();
        // SAFETY: a valid output slot; we receive the slot's reference.
        unsafe { (api().TVMFFIErrorMoveFromRaised)(&mut h) };
        match NonNull::new(h as *mut TVMFFIObject) {
            // SAFETY: the raised slot handed over its reference.
            Some(p) => Error::Raised(unsafe { ObjectRef::from_raw_owned(p) }),
            None => Error::runtime_error("a call failed without raising an error"),
        }
    }

    /// The error's message (read from the object of a raised error).
    pub fn message(&self) -> String {
        match self {
            Error::New { message, .. } => message.clone(),
            // SAFETY: an ffi.Error object: the error cell (kind, message,
            // ...) follows the header, alive with the object.
            Error::Raised(o) => unsafe {
                let cell = (o.as_ptr() as *const u8).add(std::mem::size_of::<TVMFFIObject>())
                    as *const tether_sys::abi::TVMFFIErrorCell;
                bytes_to_string(&(*cell).message)
            },
        }
    }

    /// The error's kind.
    pub fn kind(&self) -> String {
        match self {
            Error::New { kind, .. } => kind.clone(),
            // SAFETY: as in `message`.
            Error::Raised(o) => unsafe {
                let cell = (o.as_ptr() as *const u8).add(std::mem::size_of::<TVMFFIObject>())
                    as *const tether_sys::abi::TVMFFIErrorCell;
                bytes_to_string(&(*cell).kind)
            },
        }
    }

    /// Put the error in the thread's raised slot (the end of a failed call).
    pub fn raise(self) {
        match self {
            // SAFETY: a live ffi.Error; the slot takes its own reference.
            Error::Raised(o) => unsafe { (api().TVMFFIErrorSetRaised)(o.as_ptr().cast()) },
            Error::New { kind, message, frame: Some(frame) } => raise_with_frame(&kind, &message, frame),
            Error::New { kind, message, frame: None } => {
                let kind = c_string(&kind);
                let message = c_string(&message);
                let parts = [message.as_ptr()];
                // SAFETY: NUL-terminated strings alive for the call.
                unsafe { (api().TVMFFIErrorSetRaisedFromCStrParts)(kind.as_ptr(), parts.as_ptr(), 1) };
            }
        }
    }
}

/// An error whose backtrace names `frame` (as one thrown in a C++ function
/// of that name reads upstream).
fn raise_with_frame(kind: &str, message: &str, frame: &'static str) {
    let file = c_string(file!());
    let func = c_string(frame);
    // SAFETY: NUL-terminated strings alive for the call; the core returns
    // a byte array valid until the next backtrace call on this thread.
    let backtrace = unsafe { (api().TVMFFIBacktrace)(file.as_ptr(), line!() as c_int, func.as_ptr(), 0) };
    let empty = TVMFFIByteArray::EMPTY;
    let kind_b = TVMFFIByteArray { data: kind.as_ptr() as *const c_char, size: kind.len() };
    let msg_b = TVMFFIByteArray { data: message.as_ptr() as *const c_char, size: message.len() };
    let mut out: *mut std::ffi::c_void = std::ptr::null_mut();
    // SAFETY: valid byte arrays (the backtrace one, if any, just returned)
    // and output slot.
    let rc = unsafe {
        (api().TVMFFIErrorCreate)(&kind_b, &msg_b, if backtrace.is_null() { &empty } else { backtrace }, &mut out)
    };
    match NonNull::new(out as *mut TVMFFIObject) {
        // SAFETY: a new error whose reference we own; the slot takes its own.
        Some(p) if rc == 0 => unsafe {
            let err = ObjectRef::from_raw_owned(p);
            (api().TVMFFIErrorSetRaised)(err.as_ptr().cast());
        },
        // The failed create left its own error raised.
        _ => {}
    }
}

/// A C string of `s`, cut at the first NUL.
fn c_string(s: &str) -> CString {
    let cut = s.split('\0').next().unwrap_or("");
    CString::new(cut).unwrap_or_default()
}
