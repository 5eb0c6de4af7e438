//! Recursive comparison and hashing with custom hooks, the hash guard,
//! deep nesting and cycles, and the reflection globals, through the Rust
//! API and the globals.

use tether_core::abi::{field_flag, type_index as ti};
use tether_core::dataclass::{self, FieldKind, FieldSpec};
use tether_core::structural::recursive_compare::{recursive_compare, recursive_eq};
use tether_core::structural::recursive_hash::recursive_hash;
use tether_core::types::type_registry;
use tether_core::{Any, Error, Function, List, ObjectRef};

fn spec(name: &str, kind: FieldKind) -> FieldSpec {
    FieldSpec { name: name.into(), kind, flags: 0, frozen: false }
}

fn make(index: i32, key: i64, label: &str) -> Any {
    let f = Function::get_global("ffi.MakeObjectFromPackedArgs").unwrap();
    f.call(&[Any::from(index as i64), Any::string("key").unwrap(), Any::from(key), Any::string("label").unwrap(), Any::string(label).unwrap()])
        .unwrap()
}

fn keyed_type(key: &str) -> i32 {
    dataclass::register_type(key, ti::kTVMFFIObject, vec![spec("key", FieldKind::Any), spec("label", FieldKind::Any)]).unwrap()
}

fn key_of(a: &tether_core::AnyView<'_>) -> i64 {
    let obj: ObjectRef = a.get().unwrap();
    let f = type_registry::find_field(obj.type_index(), "key").unwrap();
    dataclass::get_field(&obj, f).unwrap().get::<i64>().unwrap()
}

fn set_attr(index: i32, name: &[u8], f: Function) {
    tether_core::reflection::attr_columns::register_attr(index, name, Any::from_object(f.into_object()).as_raw()).unwrap();
}

#[test]
fn compare_hook_decides_equality_and_order() -> Result<(), Error> {
    let index = keyed_type("test.recursive.Cmp");
    set_attr(index, b"__ffi_compare__", Function::from_closure(|a| Ok(Any::from((key_of(&a[0]) - key_of(&a[1])).signum()))).unwrap());
    set_attr(index, b"__ffi_hash__", Function::from_closure(|a| Ok(Any::from(key_of(&a[0])))).unwrap());
    let (a, b, c) = (make(index, 1, "x"), make(index, 1, "y"), make(index, 2, "x"));
    assert!(recursive_eq(&a, &b)?);
    assert!(!recursive_eq(&a, &c)?);
    assert_eq!(recursive_compare(&a, &c)?, -1);
    assert_eq!(recursive_hash(&a)?, 1);
    assert_eq!(recursive_hash(&a)?, recursive_hash(&b)?);
    Ok(())
}

#[test]
fn eq_hook_gets_a_callback_for_nested_values() -> Result<(), Error> {
    let index = keyed_type("test.recursive.Eq");
    set_attr(
        index,
        b"__ffi_eq__",
        Function::from_closure(|a| {
            let fn_eq = Function::from_object(a[2].get::<ObjectRef>()?)?;
            fn_eq.call(&[Any::from(key_of(&a[0])), Any::from(key_of(&a[1]))])
        })
        .unwrap(),
    );
    let (a, b, c) = (make(index, 5, "x"), make(index, 5, "y"), make(index, 6, "x"));
    assert!(recursive_eq(&a, &b)?);
    assert!(!recursive_eq(&a, &c)?);
    // No __ffi_hash__: hashing refuses the type.
    let e = recursive_hash(&a).unwrap_err();
    assert_eq!(e.kind(), "ValueError");
    assert!(e.message().contains("defines __ffi_eq__ or __ffi_compare__ but not __ffi_hash__"), "{}", e.message());
    Ok(())
}

#[test]
fn compare_off_and_hash_off_fields_are_skipped() -> Result<(), Error> {
    let index = dataclass::register_type(
        "test.recursive.Flags",
        ti::kTVMFFIObject,
        vec![
            spec("key", FieldKind::Any),
            FieldSpec { name: "label".into(), kind: FieldKind::Any, flags: field_flag::kCompareOff, frozen: false },
        ],
    )?;
    let (a, b) = (make(index, 1, "x"), make(index, 1, "y"));
    assert!(recursive_eq(&a, &b)?);
    assert_eq!(recursive_hash(&a)?, recursive_hash(&b)?);
    Ok(())
}

fn nested(depth: usize) -> Any {
    let mut v = Any::from(1i64);
    for _ in 0..depth {
        v = Any::from_object(List::new(vec![v]).unwrap().into_object());
    }
    v
}

#[test]
fn deep_nesting_compares_and_hashes_without_overflow() -> Result<(), Error> {
    let (a, b) = (nested(200_000), nested(200_000));
    assert!(recursive_eq(&a, &b)?);
    assert_eq!(recursive_compare(&a, &b)?, 0);
    assert_eq!(recursive_hash(&a)?, recursive_hash(&b)?);
    Ok(())
}

#[test]
fn cycles_are_equal_under_eq_and_refused_when_ordering() -> Result<(), Error> {
    let l1 = List::new(vec![Any::from(1i64)])?;
    l1.push(Any::from_object(l1.clone().into_object()))?;
    let l2 = List::new(vec![Any::from(1i64)])?;
    l2.push(Any::from_object(l2.clone().into_object()))?;
    let (a, b) = (Any::from_object(l1.clone().into_object()), Any::from_object(l2.clone().into_object()));
    assert!(recursive_eq(&a, &b)?);
    let e = recursive_compare(&a, &b).unwrap_err();
    assert_eq!(e.kind(), "ValueError");
    assert_eq!(recursive_hash(&a)?, recursive_hash(&b)?);
    // Break the cycles so the lists can be freed.
    l1.clear();
    l2.clear();
    Ok(())
}

#[test]
fn make_object_from_packed_args_reports_missing_and_unknown_fields() {
    let index = keyed_type("test.recursive.Make");
    let f = Function::get_global("ffi.MakeObjectFromPackedArgs").unwrap();
    let e = f.call(&[Any::from(index as i64), Any::string("key").unwrap(), Any::from(1i64)]).unwrap_err();
    assert_eq!(e.message(), "Required field `label` not set in type `test.recursive.Make`");
    let e = f
        .call(&[Any::from(index as i64), Any::string("key").unwrap(), Any::from(1i64), Any::string("label").unwrap(), Any::none(), Any::string("zz").unwrap(), Any::none()])
        .unwrap_err();
    assert_eq!(e.message(), "Type `test.recursive.Make` does not have field `zz`");
    let e = f.call(&[Any::string("ffi.Array").unwrap()]).unwrap_err();
    assert!(e.message().contains("does not support reflection creation"), "{}", e.message());
}

#[test]
fn registered_type_keys_start_with_the_pod_names() {
    let keys = Function::get_global("ffi.GetRegisteredTypeKeys").unwrap().call(&[]).unwrap();
    let arr = tether_core::Array::from_object(keys.get::<ObjectRef>().unwrap()).unwrap();
    let names: Vec<String> = arr.iter().map(|v| v.get::<String>().unwrap()).collect();
    assert_eq!(&names[..4], &["None", "int", "bool", "float"]);
    assert!(names.contains(&"ffi.VisitErrorContext".to_string()));
}
