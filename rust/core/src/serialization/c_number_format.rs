//! Numbers printed exactly as TVM-FFI prints them, through the C library's
//! `snprintf` (`%.17g` and `%.1f` in JSON, `%g` — the default of a C++
//! stream — in reprs), so tether's text equals upstream's byte for byte.
//!
//! SAFETY invariants of this module: every format string passed to
//! `snprintf` is a NUL-terminated literal taking exactly one `double`.

use std::ffi::{c_char, CStr};

fn c_format(fmt: &CStr, value: f64) -> String {
    let mut buf = [0u8; 64];
    // SAFETY: module invariant; `buf` is writable for its length and
    // snprintf NUL-terminates within it.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr() as *mut c_char, buf.len(), fmt.as_ptr(), value) };
    let n = (n.max(0) as usize).min(buf.len() - 1);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// `%.17g`: enough digits to read the same double back.
pub fn round_trip_g(value: f64) -> String {
    c_format(c"%.17g", value)
}

/// `%.1f`: an integral double with one decimal.
pub fn one_decimal(value: f64) -> String {
    c_format(c"%.1f", value)
}

/// `%g`: six significant digits, a C++ stream's default.
pub fn stream_default(value: f64) -> String {
    c_format(c"%g", value)
}
