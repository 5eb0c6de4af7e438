//! `ffi.BigInt`: canonical words, the inline-int rule and the C functions'
//! view of the same values.

use tether_core::abi::{type_index as ti, TVMFFIByteArray};
use tether_core::values::big_int::{content_words, from_words, words_from_bytes, BigIntObj};
use tether_core::c_api::{TVMFFIBigIntFromByteArray, TVMFFIBigIntGetContentByteArray};
use tether_core::Any;

fn words_of(v: &Any) -> Vec<i64> {
    // SAFETY: `v` is alive for the duration of the read.
    unsafe { content_words(v.as_raw()) }.expect("an integer").to_vec()
}

#[test]
fn values_that_fit_in_64_bits_are_inline_ints() {
    for words in [&[][..], &[7], &[7, 0], &[-7, -1, -1], &[i64::MAX, 0], &[i64::MIN, -1]] {
        let v = from_words(words).unwrap();
        assert_eq!(v.type_index(), ti::kTVMFFIInt, "{words:?}");
        assert_eq!(v.get::<i64>().unwrap(), words.first().copied().unwrap_or(0));
    }
}

#[test]
fn larger_values_are_canonical_big_ints() {
    // (input, canonical words)
    let cases: [(&[i64], &[i64]); 4] = [
        (&[0, 1, 0, 0], &[0, 1]),
        (&[i64::MIN, 0], &[i64::MIN, 0]),  // 2^63 keeps its zero sign guard
        (&[i64::MAX, -1, -1], &[i64::MAX, -1]), // a negative value keeps its -1 guard
        (&[5, 6, 7], &[5, 6, 7]),
    ];
    for (input, canonical) in cases {
        let v = from_words(input).unwrap();
        assert_eq!(v.type_index(), ti::kTVMFFIBigInt, "{input:?}");
        assert_eq!(words_of(&v), canonical);
        let obj = v.as_object().unwrap().downcast::<BigIntObj>().unwrap();
        assert_eq!(obj.words(), canonical);
    }
}

#[test]
fn bytes_must_be_whole_words() {
    assert_eq!(words_from_bytes(&[1u8; 16]).unwrap().len(), 2);
    let e = words_from_bytes(&[1u8; 12]).unwrap_err();
    assert_eq!((e.kind(), e.message()), ("ValueError", "BigInt content must contain whole 64-bit words"));
}

#[test]
fn the_c_functions_round_trip_native_words() {
    let words: [i64; 3] = [1, 2, 3];
    let input = TVMFFIByteArray { data: words.as_ptr() as *const _, size: 24 };
    let mut out = *Any::none().as_raw();
    // SAFETY: valid input and output.
    assert_eq!(unsafe { TVMFFIBigIntFromByteArray(&input, &mut out) }, 0);
    // SAFETY: the output is an owned value.
    let v = unsafe { Any::from_raw_owned(out) };
    // SAFETY: `v` outlives the view.
    let view = unsafe { TVMFFIBigIntGetContentByteArray(v.as_raw()) };
    assert_eq!(view.size, 24);
    // SAFETY: 24 readable bytes borrowed from `v`.
    let read = unsafe { std::slice::from_raw_parts(view.data as *const i64, 3) };
    assert_eq!(read, &words);
}

#[test]
fn structural_and_recursive_algorithms_treat_big_ints_as_values() {
    use tether_core::values::big_int::decimal::parse_decimal;
    use tether_core::serialization::{deep_copy::deep_copy, repr::repr_print};
    use tether_core::structural::{equal, hash, recursive_compare, recursive_hash};

    // 2^255 twice, as distinct objects, and 2^256.
    let a = parse_decimal("57896044618658097711785492504343953926634992332820282019728792003956564819968").unwrap();
    let b = parse_decimal("57896044618658097711785492504343953926634992332820282019728792003956564819968").unwrap();
    let c = parse_decimal("115792089237316195423570985008687907853269984665640564039457584007913129639936").unwrap();
    assert!(!a.same_value(&b));
    assert!(equal::structural_equal(&a, &b, false, false).unwrap());
    assert!(!equal::structural_equal(&a, &c, false, false).unwrap());
    assert_eq!(hash::structural_hash(&a, false, false).unwrap(), hash::structural_hash(&b, false, false).unwrap());
    assert!(recursive_compare::recursive_eq(&a, &b).unwrap());
    assert_eq!(recursive_compare::recursive_compare(&a, &c).unwrap(), -1);
    assert_eq!(recursive_hash::recursive_hash(&a).unwrap(), recursive_hash::recursive_hash(&b).unwrap());
    // Across the inline and BigInt forms, by value.
    let max = Any::from(i64::MAX);
    let above = parse_decimal("9223372036854775808").unwrap();
    let below = parse_decimal("-9223372036854775809").unwrap();
    assert_eq!(recursive_compare::recursive_compare(&max, &above).unwrap(), -1);
    assert_eq!(recursive_compare::recursive_compare(&below, &Any::from(i64::MIN)).unwrap(), -1);
    assert_eq!(recursive_compare::recursive_compare(&above, &max).unwrap(), 1);
    // Printed in decimal, shared by deep copies.
    assert_eq!(repr_print(&below).unwrap(), "-9223372036854775809");
    assert!(deep_copy(&a).unwrap().same_value(&a));
}
