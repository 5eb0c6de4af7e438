//! Structural equality, hashing and first-mismatch paths over containers
//! and run-time dataclass trees, including free variables and def regions.

use tether_core::abi::{field_flag, type_index as ti, TVMFFIByteArray, TVMFFITypeMetadata};
use tether_core::dataclass::{self, FieldKind, FieldSpec};
use tether_core::structural::{equal, hash};
use tether_core::types::type_registry;
use tether_core::{Any, Array, ObjectRef};

fn spec(name: &str, kind: FieldKind, flags: i64) -> FieldSpec {
    FieldSpec { name: name.into(), kind, flags, frozen: false }
}

fn set_kind(index: i32, kind: i32) {
    let total = type_registry::type_info(index).map(|i| unsafe { (*i.metadata).total_size }).unwrap();
    type_registry::register_metadata(
        index,
        &TVMFFITypeMetadata { doc: TVMFFIByteArray::EMPTY, creator: None, total_size: total, structural_eq_hash_kind: kind },
    )
    .unwrap();
}

fn make(index: i32, values: &[Any]) -> Any {
    let views: Vec<_> = values.iter().map(|v| v.view()).collect();
    Any::from_object(dataclass::init_instance(index, &views).unwrap())
}

fn arr(items: Vec<Any>) -> Any {
    Any::from_object(Array::new(items).unwrap().into_object())
}

#[test]
fn containers_and_pods() {
    let a = arr(vec![Any::from(1i64), Any::string("a string longer than seven").unwrap(), Any::from(f64::NAN)]);
    let b = arr(vec![Any::from(1i64), Any::string("a string longer than seven").unwrap(), Any::from(f64::NAN)]);
    assert!(equal::structural_equal(&a, &b, false, false).unwrap());
    assert_eq!(hash::structural_hash(&a, false, false).unwrap(), hash::structural_hash(&b, false, false).unwrap());
    // Upstream's value for (1, 2), computed by tvm_ffi.
    let ints = arr(vec![Any::from(1i64), Any::from(2i64)]);
    assert_eq!(hash::structural_hash(&ints, false, false).unwrap() as i64, 2823322240268045181);
    assert!(!equal::structural_equal(&Any::from(1i64), &Any::from(true), false, false).unwrap());
}

#[test]
fn dataclass_trees_free_vars_and_paths() {
    let var = dataclass::register_type("test.structural.Var", ti::kTVMFFIObject, vec![spec("name", FieldKind::Str, field_flag::kSEqHashIgnore)]).unwrap();
    set_kind(var, 2);
    let lam = dataclass::register_type(
        "test.structural.Lambda",
        ti::kTVMFFIObject,
        vec![spec("param", FieldKind::Any, field_flag::kSEqHashDefPattern), spec("body", FieldKind::Any, 0)],
    )
    .unwrap();
    let x = make(var, &[Any::string("x").unwrap()]);
    let y = make(var, &[Any::string("y").unwrap()]);
    let f = make(lam, &[x.clone(), arr(vec![x.clone(), Any::from(1i64)])]);
    let g = make(lam, &[y.clone(), arr(vec![y.clone(), Any::from(1i64)])]);
    let h = make(lam, &[y.clone(), arr(vec![x.clone(), Any::from(1i64)])]);
    assert!(equal::structural_equal(&f, &g, false, false).unwrap(), "bound in the def region");
    assert_eq!(hash::structural_hash(&f, false, false).unwrap(), hash::structural_hash(&g, false, false).unwrap());
    assert!(!equal::structural_equal(&f, &h, false, false).unwrap());
    assert!(!equal::structural_equal(&x, &y, false, false).unwrap(), "free vars outside a def region");
    assert!(equal::structural_equal(&x, &y, true, false).unwrap(), "map_free_vars");
    let (l, r) = equal::first_mismatch(&f, &h, false, false).unwrap().unwrap();
    let steps = |p: &tether_core::structural::access_path::AccessPath| p.steps().len();
    assert_eq!((steps(&l), steps(&r)), (2, 2)); // .body[0]: x is bound to y, not to x
    let _ = ObjectRef::clone(&f.as_object().unwrap());
}

#[test]
fn deep_chain_does_not_overflow() {
    let mut v = arr(vec![]);
    for _ in 0..200_000 {
        v = arr(vec![v]);
    }
    let w = tether_core::serialization::deep_copy::deep_copy(&v).unwrap();
    let t = std::thread::Builder::new().stack_size(256 << 10).spawn(move || equal::structural_equal(&v, &w, false, false).unwrap()).unwrap();
    assert!(t.join().unwrap());
}
