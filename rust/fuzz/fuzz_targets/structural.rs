//! Structural equality and hashing on values built from fuzz bytes
//! (including deep nesting and cyclic Lists): two builds of one program
//! are equal with equal hashes, and for two programs (the input split in
//! two) equal implies equal hashes, for both the structural (`ffi.StructuralEqual`
//! / `ffi.StructuralHash`) and the recursive (`ffi.RecursiveEq` /
//! `ffi.RecursiveHash`) pair. Errors (e.g. a cycle an algorithm refuses)
//! are allowed; aborts and disagreements are not.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_core::structural::equal::structural_equal;
use tether_core::structural::hash::structural_hash;
use tether_core::structural::recursive_compare::{recursive_compare, recursive_eq};
use tether_core::structural::recursive_hash::recursive_hash;
use tether_core::Any;
use tether_fuzz::build;

fn check_pair(a: &Any, b: &Any) {
    for map_free_vars in [false, true] {
        if let Ok(true) = structural_equal(a, b, map_free_vars, false) {
            let (ha, hb) = (structural_hash(a, map_free_vars, false), structural_hash(b, map_free_vars, false));
            if let (Ok(ha), Ok(hb)) = (ha, hb) {
                assert_eq!(ha, hb, "structurally equal values hash differently (map_free_vars={map_free_vars})");
            }
        }
    }
    if let Ok(true) = recursive_eq(a, b) {
        if let (Ok(ha), Ok(hb)) = (recursive_hash(a), recursive_hash(b)) {
            assert_eq!(ha, hb, "RecursiveEq values hash differently");
        }
        if let Ok(c) = recursive_compare(a, b) {
            assert_eq!(c, 0, "RecursiveEq values compare unequal");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (Ok(a), Ok(a2)) = (build(data), build(data)) else { return };
    check_pair(&a.value, &a2.value);
    if let (Ok(ha), Ok(ha2)) = (structural_hash(&a.value, false, false), structural_hash(&a2.value, false, false)) {
        assert_eq!(ha, ha2, "two builds of one program hash differently");
    }
    let split = data.first().map_or(0, |&b| b as usize % (data.len().max(1)));
    let (l, r) = data.split_at(split);
    if let (Ok(x), Ok(y)) = (build(l), build(r)) {
        check_pair(&x.value, &y.value);
        check_pair(&a.value, &x.value);
    }
});
