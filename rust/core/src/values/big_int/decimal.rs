//! Decimal text of integers held as two's-complement words (least
//! significant first), as TVM-FFI prints and parses `BigInt`: an optional
//! minus sign, then the digits without leading zeros (`0` for zero).

use crate::values::any::Any;
use crate::values::error::Error;

/// 10^19, the largest power of ten below 2^64.
const CHUNK: u64 = 10_000_000_000_000_000_000;
const CHUNK_DIGITS: usize = 19;

/// Whether the words hold a negative value.
fn is_negative(words: &[i64]) -> bool {
    words.last().is_some_and(|w| *w < 0)
}

/// The magnitude of a two's-complement value, as unsigned limbs.
fn magnitude(words: &[i64]) -> Vec<u64> {
    let mut limbs: Vec<u64> = words.iter().map(|w| *w as u64).collect();
    if is_negative(words) {
        // Negate: invert every limb, then add one.
        let mut carry = true;
        for limb in &mut limbs {
            let (v, c) = (!*limb).overflowing_add(carry as u64);
            *limb = v;
            carry = c;
        }
    }
    limbs
}

/// Divide the limbs by `d` in place, returning the remainder.
fn div_rem_small(limbs: &mut [u64], d: u64) -> u64 {
    let mut rem: u128 = 0;
    for limb in limbs.iter_mut().rev() {
        let cur = (rem << 64) | *limb as u128;
        *limb = (cur / d as u128) as u64;
        rem = cur % d as u128;
    }
    rem as u64
}

/// The decimal text of the value the words hold.
pub fn to_decimal(words: &[i64]) -> String {
    let mut limbs = magnitude(words);
    let mut chunks = Vec::new();
    while limbs.iter().any(|l| *l != 0) {
        chunks.push(div_rem_small(&mut limbs, CHUNK));
    }
    let mut out = String::new();
    if is_negative(words) {
        out.push('-');
    }
    match chunks.split_last() {
        None => out.push('0'),
        Some((top, rest)) => {
            out.push_str(&top.to_string());
            for c in rest.iter().rev() {
                out.push_str(&format!("{c:0width$}", width = CHUNK_DIGITS));
            }
        }
    }
    out
}

/// Parse decimal text (an optional sign, then at least one digit and
/// nothing else) into an integer value: an `int` when it fits, else a
/// BigInt.
pub fn parse_decimal(text: &str) -> Result<Any, Error> {
    let invalid = || Error::value_error("Invalid decimal string for ffi.BigInt");
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid());
    }
    // Accumulate the magnitude: limbs = limbs * 10 + digit.
    let mut limbs: Vec<u64> = vec![0];
    for b in digits.bytes() {
        let mut carry = (b - b'0') as u128;
        for limb in &mut limbs {
            let cur = *limb as u128 * 10 + carry;
            *limb = cur as u64;
            carry = cur >> 64;
        }
        if carry != 0 {
            limbs.push(carry as u64);
        }
    }
    // A zero top limb keeps the sign bit clear before negation.
    limbs.push(0);
    if negative {
        let mut carry = true;
        for limb in &mut limbs {
            let (v, c) = (!*limb).overflowing_add(carry as u64);
            *limb = v;
            carry = c;
        }
    }
    let words: Vec<i64> = limbs.into_iter().map(|l| l as i64).collect();
    super::from_words(&words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_small_and_large_values() {
        for text in ["0", "1", "-1", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                     "-9223372036854775809", "57896044618658097711785492504343953926634992332820282019728792003956564819968",
                     "-340282366920938463463374607431768211456", "10000000000000000000000000000000000000"] {
            let v = parse_decimal(text).unwrap();
            let words = match v.type_index() {
                crate::abi::type_index::kTVMFFIInt => vec![v.get::<i64>().unwrap()],
                _ => {
                    // SAFETY: `v` is alive while its words are read.
                    unsafe { crate::values::big_int::content_words(v.as_raw()) }.unwrap().to_vec()
                }
            };
            assert_eq!(to_decimal(&words), text);
        }
        assert_eq!(parse_decimal("+12").unwrap().get::<i64>().unwrap(), 12);
        assert_eq!(to_decimal(&[]), "0");
    }

    #[test]
    fn refuses_junk() {
        for text in ["", "-", "12a", " 1", "1 ", "0x10"] {
            assert!(parse_decimal(text).is_err(), "{text:?}");
        }
    }
}
