//! Differential target: structural equality and hashing with the fast
//! paths (`structural/fast_path.rs`: native recursion over reflected
//! objects read in place and over Arrays, handing over to the walk past
//! its depth, at getters and at everything else) against the walk alone
//! (`TETHER_STRUCTURAL_FAST_PATH=0`, switched per call here through
//! `with_fast_paths`). The values are object graphs built from the fuzz
//! bytes (`tether_fuzz::graph`): py_class-like objects of every structural
//! kind, def regions and ignored fields, Arrays, Lists, Maps and Dicts,
//! shared subtrees, cycles and deep chains. For every pair of roots of two
//! builds of one program (and the two whole values), both `map_free_vars`
//! settings: equal gives the same answer both ways, or the same error;
//! so does every hash. Equal values also hash equally.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tether_core::structural::equal::structural_equal;
use tether_core::structural::hash::structural_hash;
use tether_core::structural::with_fast_paths;
use tether_core::{Any, Error};
use tether_fuzz::graph::build;

/// Roots compared pairwise (their squares' worth of comparisons).
const MAX_ROOTS: usize = 6;

fn outcome<T: std::fmt::Debug>(r: &Result<T, Error>) -> String {
    match r {
        Ok(v) => format!("Ok({v:?})"),
        Err(e) => format!("Err({}: {})", e.kind(), e.message()),
    }
}

fn both<T: PartialEq + std::fmt::Debug>(what: &str, f: impl Fn() -> Result<T, Error>) -> Result<T, Error> {
    let fast = with_fast_paths(true, &f);
    let walk = with_fast_paths(false, &f);
    let (fo, wo) = (outcome(&fast), outcome(&walk));
    assert_eq!(fo, wo, "{what}: the fast path and the walk disagree");
    fast
}

fn check_hash(v: &Any) {
    for m in [false, true] {
        let _ = both("structural_hash", || structural_hash(v, m, false));
    }
}

fn check_pair(a: &Any, b: &Any) {
    for m in [false, true] {
        if let Ok(true) = both("structural_equal", || structural_equal(a, b, m, false)) {
            if let (Ok(ha), Ok(hb)) = (structural_hash(a, m, false), structural_hash(b, m, false)) {
                assert_eq!(ha, hb, "structurally equal values hash differently (map_free_vars={m})");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (Ok(x), Ok(y)) = (build(data), build(data)) else { return };
    check_hash(&x.value);
    check_pair(&x.value, &y.value);
    check_pair(&x.value, &x.value);
    let n = x.roots.len().min(MAX_ROOTS);
    for i in 0..n {
        check_hash(&x.roots[i]);
        for j in 0..n {
            check_pair(&x.roots[i], &y.roots[j]);
        }
    }
});
