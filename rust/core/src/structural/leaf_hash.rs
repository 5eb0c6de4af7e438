//! Structural hashes of the values hashed without descending: PODs,
//! strings and bytes (inline and heap alike), BigInts. The hashing walk,
//! its fast path and its map entries all hash leaves here.

use crate::abi::type_index as ti;
use crate::values::any::Any;
use crate::values::error::Error;

use super::{hash_bytes, hash_combine};

/// Hash of a string or bytes content (heap and inline alike).
pub(super) fn content_hash(index: i32, bytes: &[u8]) -> u64 {
    let class = if matches!(index, ti::kTVMFFIBytes | ti::kTVMFFISmallBytes) { ti::kTVMFFIBytes } else { ti::kTVMFFIStr };
    hash_combine(class as u64, hash_bytes(bytes))
}

/// Hash of a BigInt value: its canonical words as bytes, so aliases of one
/// value hash alike wherever they are met.
pub(super) fn big_int_hash(value: &Any) -> Result<u64, Error> {
    let words = crate::structural::big_int_hooks::words_of(value.as_raw())?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    Ok(hash_combine(ti::kTVMFFIBigInt as u64, hash_bytes(&bytes)))
}

/// Hash of a POD value.
#[inline]
pub(super) fn pod_hash(value: &Any) -> u64 {
    let raw = value.as_raw();
    // Inline bytes hash as upstream hashes them, by type and payload (bytes
    // of up to 7 bytes are always inline, so equal values still agree).
    if raw.type_index == ti::kTVMFFISmallBytes {
        // SAFETY: the payload of inline bytes is 8 plain bytes.
        return hash_combine(raw.type_index as u64, unsafe { raw.value.v_uint64 });
    }
    if let Some(b) = value.view().str_bytes() {
        return content_hash(raw.type_index, b);
    }
    // SAFETY: POD payloads are 8 plain bytes.
    let mut bits = unsafe { raw.value.v_uint64 };
    // SAFETY: as above.
    if raw.type_index == ti::kTVMFFIFloat && unsafe { raw.value.v_float64 }.is_nan() {
        bits = f64::NAN.to_bits();
    }
    hash_combine(raw.type_index as u64, bits)
}

/// The hash of a value hashed without descending (PODs, strings, bytes).
/// Always inlined, with ints (the common leaf of long sequences) hashed
/// right here: as a call per element it cost as much as the combining.
#[inline(always)]
pub(super) fn leaf_hash(value: &Any) -> Option<u64> {
    let raw = value.as_raw();
    if raw.type_index == ti::kTVMFFIInt {
        // SAFETY: an int's payload is 8 plain bytes.
        return Some(hash_combine(ti::kTVMFFIInt as u64, unsafe { raw.value.v_uint64 }));
    }
    let index = value.type_index();
    (!super::is_object_index(index) || matches!(index, ti::kTVMFFIStr | ti::kTVMFFIBytes)).then(|| pod_hash(value))
}

