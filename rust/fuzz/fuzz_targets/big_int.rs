//! BigInt parsing: decimal text (`ffi.BigInt` from a string) prints back
//! as its canonical form (no '+', no leading zeros, no "-0"), and
//! `TVMFFIBigIntFromByteArray` on arbitrary bytes gives a value whose
//! content bytes give the same value again.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_core::abi::{TVMFFIAny, TVMFFIByteArray};
use tether_core::values::big_int::decimal::{parse_decimal, to_decimal};
use tether_core::values::big_int::{content_words, words_from_bytes};
use tether_core::c_api::{TVMFFIBigIntFromByteArray, TVMFFIBigIntGetContentByteArray};
use tether_core::values::error::take_raised;
use tether_core::structural::equal::structural_equal;
use tether_core::Any;

fn canonical(text: &str) -> String {
    let (neg, digits) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let digits = digits.trim_start_matches('0');
    match (digits.is_empty(), neg) {
        (true, _) => "0".to_string(),
        (false, true) => format!("-{digits}"),
        (false, false) => digits.to_string(),
    }
}

fn words(v: &Any) -> Vec<i64> {
    if let Ok(i) = v.get::<i64>() {
        return vec![i];
    }
    // SAFETY: `v` is a live value for the duration of the borrow.
    unsafe { content_words(v.as_raw()) }.expect("an integer value is an int or a BigInt").to_vec()
}

fn from_bytes(bytes: &[u8]) -> Option<Any> {
    let input = TVMFFIByteArray { data: bytes.as_ptr() as *const _, size: bytes.len() };
    // SAFETY: TVMFFIAny is plain data; zero is the None value.
    let mut out: TVMFFIAny = unsafe { std::mem::zeroed() };
    // SAFETY: valid input and output pointers for the call.
    match unsafe { TVMFFIBigIntFromByteArray(&input, &mut out) } {
        // SAFETY: on success `out` owns one reference, which the Any takes.
        0 => Some(unsafe { Any::from_raw_owned(out) }),
        _ => {
            take_raised().expect("a failed call raises");
            None
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(v) = parse_decimal(text) {
            assert_eq!(to_decimal(&words(&v)), canonical(text), "decimal round trip of {text:?}");
        }
    }
    if let Some(v) = from_bytes(data) {
        // SAFETY: `v` is live while the content is read and copied.
        let content = unsafe {
            let b = TVMFFIBigIntGetContentByteArray(v.as_raw());
            if b.data.is_null() { Vec::new() } else { std::slice::from_raw_parts(b.data as *const u8, b.size).to_vec() }
        };
        if !content.is_empty() {
            let again = from_bytes(&content).expect("a BigInt's content bytes parse");
            assert!(structural_equal(&v, &again, false, false).unwrap_or(false), "content bytes round trip");
        }
        // The value holds the words in canonical length: sign-extended back
        // to the input's length they are the input's words.
        let w = words_from_bytes(data).expect("accepted bytes are whole words");
        let mut got = words(&v);
        let fill = if got.last().is_some_and(|&t| t < 0) { -1 } else { 0 };
        got.resize(w.len().max(got.len()), fill);
        let mut want = w;
        want.resize(got.len(), 0);
        assert_eq!(got, want, "byte-array value and its input words disagree");
    }
});
