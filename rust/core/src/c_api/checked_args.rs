//! Checks on the pointers and byte arrays the C ABI hands in: NULL and
//! malformed arguments become errors naming the function and argument
//! instead of undefined behaviour.
//!
//! SAFETY contract (the C ABI's, see the parent module): non-NULL pointers
//! are valid for the access the ABI documents.

use std::ffi::{c_char, CStr};
use std::ptr::NonNull;

use crate::abi::{TVMFFIByteArray, TVMFFIObject, TVMFFIObjectHandle};
use crate::values::error::{byte_slice, Error};

pub(crate) fn non_null<'a, T>(p: *const T, func: &str, what: &str) -> Result<&'a T, Error> {
    // SAFETY: non-NULL pointers are valid per the module contract.
    unsafe { p.as_ref() }.ok_or_else(|| Error::value_error(format!("{func}: {what} is NULL")))
}

pub(crate) fn out_ptr<'a, T>(p: *mut T, func: &str) -> Result<&'a mut T, Error> {
    // SAFETY: as above.
    unsafe { p.as_mut() }.ok_or_else(|| Error::value_error(format!("{func}: output pointer is NULL")))
}

pub(crate) fn handle(h: TVMFFIObjectHandle, func: &str) -> Result<NonNull<TVMFFIObject>, Error> {
    NonNull::new(h as *mut TVMFFIObject).ok_or_else(|| Error::value_error(format!("{func}: object handle is NULL")))
}

pub(crate) fn bytes<'a>(b: *const TVMFFIByteArray, func: &str, what: &str) -> Result<&'a [u8], Error> {
    let b = non_null(b, func, what)?;
    if b.size > 0 && b.data.is_null() {
        return Err(Error::value_error(format!("{func}: {what} has size {} but NULL data", b.size)));
    }
    // SAFETY: validated above; valid per the module contract.
    Ok(unsafe { byte_slice(b) })
}

pub(crate) fn utf8<'a>(b: &'a [u8], func: &str, what: &str) -> Result<&'a str, Error> {
    std::str::from_utf8(b).map_err(|_| Error::value_error(format!("{func}: {what} is not valid UTF-8")))
}

pub(crate) fn cstr_lossy(p: *const c_char) -> String {
    if p.is_null() {
        "<null>".to_string()
    } else {
        // SAFETY: non-NULL C strings are NUL-terminated per the contract.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}
