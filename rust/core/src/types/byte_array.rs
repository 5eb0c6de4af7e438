//! Reading the ABI's byte arrays (`TVMFFIByteArray`) as Rust slices: an
//! empty array may carry a NULL pointer, which a slice may not.

use crate::abi::TVMFFIByteArray;

/// # Safety
/// `b` must be empty or point to `b.size` readable bytes that outlive `'a`.
pub unsafe fn byte_slice<'a>(b: &TVMFFIByteArray) -> &'a [u8] {
    if b.size == 0 || b.data.is_null() {
        &[]
    } else {
        // SAFETY: per the caller.
        unsafe { std::slice::from_raw_parts(b.data as *const u8, b.size) }
    }
}
