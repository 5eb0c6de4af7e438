//! The exported C functions for arbitrary-precision integers
//! (`c_api.h`'s BigInt section): import from and borrow the native word
//! content of `int`/`ffi.BigInt` values, with TVM-FFI's names, signatures
//! and semantics.
//!
//! The module contract of [`super`] applies. TVM-FFI's library dereferences
//! a NULL input or a non-integer value and crashes; tether reports them
//! instead (a `ValueError`/`TypeError` raised, and for the borrowing
//! function, which has no error code, an empty view).

use std::ffi::c_int;

use super::checked_args::{bytes, out_ptr};
use super::guard::guard;
use crate::abi::*;
use crate::values::big_int;
use crate::values::error::{self, Error};
use crate::types::type_registry;

#[no_mangle]
pub unsafe extern "C" fn TVMFFIBigIntFromByteArray(input: *const TVMFFIByteArray, out: *mut TVMFFIAny) -> c_int {
    const F: &str = "TVMFFIBigIntFromByteArray";
    guard(F, || {
        let out = out_ptr(out, F)?;
        let words = big_int::words_from_bytes(bytes(input, F, "input")?)?;
        *out = big_int::from_words(&words)?.into_raw();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIBigIntGetContentByteArray(value: *const TVMFFIAny) -> TVMFFIByteArray {
    const F: &str = "TVMFFIBigIntGetContentByteArray";
    let empty = TVMFFIByteArray { data: std::ptr::null(), size: 0 };
    // SAFETY: non-NULL values are valid per the module contract.
    let Some(value) = (unsafe { value.as_ref() }) else {
        error::set_raised(Error::value_error(format!("{F}: value is NULL")));
        return empty;
    };
    // SAFETY: a valid value whose object the caller keeps alive while it
    // uses the view (the function's documented contract).
    match unsafe { big_int::content_words(value) } {
        Some(words) => TVMFFIByteArray { data: words.as_ptr() as *const _, size: std::mem::size_of_val(words) },
        None => {
            let key = type_registry::type_key_of(value.type_index);
            error::set_raised(Error::type_error(format!("{F}: expected int or ffi.BigInt, got {key}")));
            empty
        }
    }
}
