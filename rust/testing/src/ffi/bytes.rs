//! Byte arrays as the C ABI carries them (`TVMFFIByteArray`): a borrowed
//! view of a Rust string to hand to the core, and the bytes (or lossy
//! UTF-8 text) of one the core hands back.

use tether_sys::abi::TVMFFIByteArray;

/// A view of `s` for the duration of a call (empty strings as the ABI's
/// empty array).
pub fn byte_array(s: &str) -> TVMFFIByteArray {
    if s.is_empty() {
        return TVMFFIByteArray::EMPTY;
    }
    TVMFFIByteArray { data: s.as_ptr().cast(), size: s.len() }
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
