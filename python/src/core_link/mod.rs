//! The link to the core: the extension reaches the core's C ABI through
//! `tether_sys` (linked against the core library beside the extension),
//! and this layer holds what every caller of that ABI shares. It is the
//! bottom layer of the extension and names no other module of it.

use tether_sys::abi::TVMFFIByteArray;

/// A borrowed `str` as the C ABI's byte array (valid while `s` is).
pub(crate) fn byte_array(s: &str) -> TVMFFIByteArray {
    TVMFFIByteArray { data: s.as_ptr() as *const _, size: s.len() }
}
