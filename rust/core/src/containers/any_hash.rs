//! Key hashing and equality for Map and Dict, as TVM-FFI's `AnyHash` and
//! `AnyEqual` compute them.
//!
//! C++ compiled against TVM-FFI's headers probes a map's slots inline with
//! its own copy of these functions, so the values here must be the same bit
//! for bit: strings and bytes hash and compare by content (inline small
//! values and heap objects alike, with the heap type index as the hash
//! seed), objects whose type registers an `__any_hash__`/`__any_equal__`
//! hook (a native pointer or an `ffi.Function`) through that hook, and
//! everything else by type index and the raw 8-byte payload (objects by
//! address).
//!
//! A hook's error cannot be returned through the map probes: as TVM-FFI
//! throws it through them, it unwinds here (with the [`Error`] as payload,
//! without the panic hook) to the function or C ABI boundary, which raises
//! it as it is.

use crate::abi::{type_index as ti, TVMFFIAny};
use crate::values::any::Any;
use crate::values::error::Error;
use crate::reflection::native_hook::{self, Hook};
use crate::values::string;

const HASH_MOD: u64 = 2_147_483_647;
const HASH_MULTIPLIER: u64 = 1_099_511_628_211;

/// TVM-FFI's `StableHashCombine` (wrapping, as C++ unsigned arithmetic).
fn combine(key: u64, value: u64) -> u64 {
    key ^ value.wrapping_add(0x9e37_79b9).wrapping_add(key << 6).wrapping_add(key >> 2)
}

/// TVM-FFI's `StableHashBytes` on a little-endian machine: 8-byte words,
/// then the zero-padded remainder, folded modulo 2^31 - 1.
fn hash_bytes(data: &[u8]) -> u64 {
    let mut result: u64 = 0;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes(c.try_into().expect("8-byte chunk"));
        result = result.wrapping_mul(HASH_MULTIPLIER).wrapping_add(word) % HASH_MOD;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut buf = [0u8; 8];
        buf[..rest.len()].copy_from_slice(rest);
        result = result.wrapping_mul(HASH_MULTIPLIER).wrapping_add(u64::from_le_bytes(buf)) % HASH_MOD;
    }
    result
}

fn payload(v: &TVMFFIAny) -> u64 {
    // SAFETY: every payload is 8 readable bytes.
    unsafe { v.value.v_uint64 }
}

/// The hook `attr` of an object value's type, if it registers one.
fn hook_of(v: &TVMFFIAny, attr: &str) -> Option<Hook> {
    if v.type_index < ti::kTVMFFIStaticObjectBegin {
        return None;
    }
    let value = crate::reflection::attr_columns::attr_value(v.type_index, attr.as_bytes())?;
    Hook::from_value(attr, &value).unwrap_or_else(|e| throw(e))
}

/// Unwind with `e` to the nearest function or C ABI boundary.
fn throw(e: Error) -> ! {
    std::panic::resume_unwind(Box::new(e))
}

/// A borrowed value as an owned one for a hook call.
///
/// # Safety
/// `v` must be valid.
unsafe fn owned(v: &TVMFFIAny) -> Any {
    Any::from_view(v).unwrap_or_else(|e| throw(e))
}

/// The hash of a key.
///
/// # Safety
/// `v` must be a valid value whose string or bytes object (if any) is alive.
pub unsafe fn any_hash(v: &TVMFFIAny) -> u64 {
    match v.type_index {
        // Small values hash their zero-padded payload word, which equals
        // the heap hash of the same content.
        ti::kTVMFFISmallStr => combine(ti::kTVMFFIStr as u64, payload(v) % HASH_MOD),
        ti::kTVMFFISmallBytes => combine(ti::kTVMFFIBytes as u64, payload(v) % HASH_MOD),
        ti::kTVMFFIStr | ti::kTVMFFIBytes => {
            // SAFETY: per the caller.
            let content = unsafe { string::content_of(v) }.unwrap_or_default();
            combine(v.type_index as u64, hash_bytes(content))
        }
        t => match hook_of(v, "__any_hash__") {
            Some(hook) => {
                // SAFETY: per the caller.
                let h = native_hook::call_any_hash(&hook, &unsafe { owned(v) }).unwrap_or_else(|e| throw(e));
                combine(t as u64, h as u64)
            }
            None => combine(t as i64 as u64, payload(v)),
        },
    }
}

fn is_str(t: i32) -> bool {
    matches!(t, ti::kTVMFFIStr | ti::kTVMFFISmallStr)
}

fn is_bytes(t: i32) -> bool {
    matches!(t, ti::kTVMFFIBytes | ti::kTVMFFISmallBytes)
}

/// Whether two keys are the same key.
///
/// # Safety
/// As [`any_hash`], for both values.
pub unsafe fn any_equal(a: &TVMFFIAny, b: &TVMFFIAny) -> bool {
    // The first 8 bytes are the type index and the padding/length word.
    if a.type_index == b.type_index && a.small_str_len == b.small_str_len && payload(a) == payload(b) {
        return true;
    }
    let (ta, tb) = (a.type_index, b.type_index);
    if (is_str(ta) && is_str(tb)) || (is_bytes(ta) && is_bytes(tb)) {
        // Two small values of one kind with different words differ.
        if ta == tb && matches!(ta, ti::kTVMFFISmallStr | ti::kTVMFFISmallBytes) {
            return false;
        }
        // SAFETY: per the caller.
        return unsafe { string::content_of(a) == string::content_of(b) };
    }
    if ta == tb {
        if let Some(hook) = hook_of(a, "__any_equal__") {
            // SAFETY: per the caller.
            let (a, b) = unsafe { (owned(a), owned(b)) };
            return native_hook::call_any_equal(&hook, &a, &b).unwrap_or_else(|e| throw(e));
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::any::Any;

    #[test]
    fn small_strings_hash_as_their_content_and_heap_strings_by_content() {
        let small = Any::string("abc").unwrap();
        let long = "a string longer than seven bytes";
        let (h1, h2) = (Any::string(long).unwrap(), Any::string(long).unwrap());
        assert_eq!(h1.type_index(), ti::kTVMFFIStr);
        assert_ne!(h1.object_ptr(), h2.object_ptr());
        // SAFETY: all values are alive.
        unsafe {
            // The inline word modulo 2^31-1 is the heap hash of the same bytes.
            assert_eq!(any_hash(small.as_raw()), combine(ti::kTVMFFIStr as u64, hash_bytes(b"abc")));
            assert_eq!(any_hash(h1.as_raw()), any_hash(h2.as_raw()));
            assert!(any_equal(h1.as_raw(), h2.as_raw()));
            let b = Any::bytes(b"abc").unwrap();
            assert_ne!(any_hash(small.as_raw()), any_hash(b.as_raw()));
            assert!(!any_equal(small.as_raw(), b.as_raw()));
        }
    }

    #[test]
    fn values_hash_by_type_and_payload() {
        // SAFETY: plain values.
        unsafe {
            let one = Any::from(1i64);
            let t = Any::from(true);
            assert!(!any_equal(one.as_raw(), t.as_raw()));
            assert_ne!(any_hash(one.as_raw()), any_hash(t.as_raw()));
            // Values computed by TVM-FFI's formula by hand.
            assert_eq!(any_hash(one.as_raw()), 1 ^ (1 + 0x9e37_79b9 + (1 << 6)));
            assert_eq!(hash_bytes(b"abcdefghij"), {
                let w1 = u64::from_le_bytes(*b"abcdefgh") % HASH_MOD;
                let w2 = u64::from_le_bytes([b'i', b'j', 0, 0, 0, 0, 0, 0]);
                w1.wrapping_mul(HASH_MULTIPLIER).wrapping_add(w2) % HASH_MOD
            });
        }
    }
}
