//! `ffi.BigInt` (static index 78): integers outside the int64 range, laid
//! out as TVM-FFI's `BigIntObj` — the object header, a `size_t` word count,
//! then that many native-endian `i64` words in place, least significant
//! first, two's complement.
//!
//! Values are kept canonical as the format demands: the shortest word
//! sequence that still carries the sign (a top word is dropped only when it
//! is pure sign extension of the word below), and any value that fits in
//! one word is an inline `int`, never a BigInt. [`from_words`] does the
//! normalising; nothing else creates BigInt objects. [`decimal`] converts
//! to and from decimal text; [`hooks`] holds the type attributes TVM-FFI
//! registers for the type.

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::values::any::Any;
use crate::values::error::Error;
use crate::object::{header_placeholder, ObjectPtr, ObjectType};

pub mod decimal;

#[repr(C)]
pub struct BigIntObj {
    header: TVMFFIObject,
    size: usize,
}

// SAFETY: immutable after construction.
unsafe impl Send for BigIntObj {}
// SAFETY: as above.
unsafe impl Sync for BigIntObj {}

// SAFETY: repr(C), header first.
unsafe impl ObjectType for BigIntObj {
    const TYPE_KEY: &'static str = "ffi.BigInt";
    fn type_index() -> i32 {
        ti::kTVMFFIBigInt
    }
}

impl BigIntObj {
    /// The words, least significant first.
    pub fn words(&self) -> &[i64] {
        // SAFETY: `size` words follow the struct in the object's own tail,
        // written before the object escaped `from_words`.
        unsafe {
            let data = (self as *const BigIntObj).add(1) as *const i64;
            std::slice::from_raw_parts(data, self.size)
        }
    }
}

/// The canonical length of `words`: drop top words that only repeat the
/// sign of the word below them.
fn canonical_len(words: &[i64]) -> usize {
    let mut n = words.len();
    while n >= 2 {
        let top = words[n - 1];
        let below_negative = words[n - 2] < 0;
        if (top == -1 && below_negative) || (top == 0 && !below_negative) {
            n -= 1;
        } else {
            break;
        }
    }
    n
}

/// An integer from two's-complement words (least significant first):
/// an inline `int` when it fits in 64 bits (zero for no words), a BigInt
/// object otherwise.
pub fn from_words(words: &[i64]) -> Result<Any, Error> {
    let n = canonical_len(words);
    match n {
        0 => return Ok(Any::from(0i64)),
        1 => return Ok(Any::from(words[0])),
        _ => {}
    }
    let obj = BigIntObj { header: header_placeholder(), size: n };
    // SAFETY: the tail is filled before the object escapes; i64 needs no drop.
    let ptr = unsafe { ObjectPtr::new_with_tail(obj, n * std::mem::size_of::<i64>(), 8)? };
    // SAFETY: sole owner, writing `n` words into our own tail.
    unsafe {
        let data = (ptr.as_ptr() as *mut u8).add(std::mem::size_of::<BigIntObj>()) as *mut i64;
        std::ptr::copy_nonoverlapping(words.as_ptr(), data, n);
    }
    Ok(Any::from_object(ptr.into_object_ref()))
}

/// Words from the native-endian bytes of whole 64-bit words.
pub fn words_from_bytes(bytes: &[u8]) -> Result<Vec<i64>, Error> {
    if bytes.len() % 8 != 0 {
        return Err(Error::value_error("BigInt content must contain whole 64-bit words"));
    }
    Ok(bytes.chunks_exact(8).map(|c| i64::from_ne_bytes(c.try_into().expect("chunks of 8"))).collect())
}

/// The words of an integer value, borrowed from `value` itself: the
/// payload slot of an inline `int`, the tail of a BigInt. `None` for
/// anything else.
///
/// # Safety
/// `value` must be a valid `TVMFFIAny` whose object, if any, is alive for
/// as long as the returned slice is used.
pub unsafe fn content_words(value: &TVMFFIAny) -> Option<&[i64]> {
    match value.type_index {
        ti::kTVMFFIInt => {
            // SAFETY: an int's payload is its `v_int64` word, inside `value`.
            Some(std::slice::from_ref(unsafe { &value.value.v_int64 }))
        }
        ti::kTVMFFIBigInt => {
            // SAFETY: a live BigInt per the caller's contract.
            let obj = unsafe { &*(value.value.v_obj as *const BigIntObj) };
            Some(obj.words())
        }
        _ => None,
    }
}
