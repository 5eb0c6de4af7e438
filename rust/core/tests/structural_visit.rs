//! Structural walk, visit, map and mutate: orders, skip and interrupt
//! results, def regions, copy-on-write and in-place mutation, the variable
//! remap, hooks, the globals' argument errors, and deep input.

use std::sync::{Arc, Mutex};

use tether_core::abi::{field_flag, type_index as ti, TVMFFIByteArray, TVMFFITypeMetadata};
use tether_core::dataclass::{self, FieldKind, FieldSpec};
use tether_core::structural::mutate::{structural_map, structural_mutate};
use tether_core::containers::typed_args::Entry;
use tether_core::structural::visit::{
    interrupt_value, structural_visit, structural_walk, visit_interrupt,
};
use tether_core::types::type_registry;
use tether_core::{Any, Array, Dict, Function, List, Map, ObjectRef};

fn spec(name: &str, kind: FieldKind, flags: i64) -> FieldSpec {
    FieldSpec {
        name: name.into(),
        kind,
        flags,
        frozen: false,
    }
}

fn set_kind(index: i32, kind: i32) {
    let total = type_registry::type_info(index)
        .map(|i| unsafe { (*i.metadata).total_size })
        .unwrap();
    type_registry::register_metadata(
        index,
        &TVMFFITypeMetadata {
            doc: TVMFFIByteArray::EMPTY,
            creator: None,
            total_size: total,
            structural_eq_hash_kind: kind,
        },
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

fn int(i: i64) -> Any {
    Any::from(i)
}

fn ints(v: &Any) -> Vec<i64> {
    Array::from_object(v.get::<ObjectRef>().unwrap())
        .unwrap()
        .iter()
        .map(|x| x.get::<i64>().unwrap())
        .collect()
}

fn func(f: impl Fn(&[Any]) -> Result<Any, tether_core::Error> + Send + Sync + 'static) -> Function {
    Function::from_closure(move |args| {
        let owned: Vec<Any> = args.iter().map(|a| a.to_owned().unwrap()).collect();
        f(&owned)
    })
    .unwrap()
}

/// A walk callback recording the ints it sees and returning `result(v)`.
fn recorder(seen: &Arc<Mutex<Vec<i64>>>, result: fn(i64) -> Any) -> Entry {
    let seen = seen.clone();
    Entry::new(
        ti::kTVMFFIInt,
        func(move |a| {
            let v = a[0].get::<i64>()?;
            seen.lock().unwrap().push(v);
            Ok(result(v))
        }),
    )
}

#[test]
fn walk_orders_skip_and_interrupt() {
    let tree = arr(vec![int(1), arr(vec![int(2), int(3)]), int(4)]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let r = structural_walk(&tree, vec![recorder(&seen, |_| Any::none())], vec![], false).unwrap();
    assert!(r.is_none());
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3, 4]);

    // Pre-order sees a container before its items, post-order after.
    let order = Arc::new(Mutex::new(Vec::<String>::new()));
    let o = order.clone();
    let all = Entry::new(
        -1,
        func(move |a| {
            o.lock().unwrap().push(a[0].type_key());
            Ok(Any::none())
        }),
    );
    structural_walk(&arr(vec![int(1)]), vec![all.clone()], vec![], false).unwrap();
    structural_walk(&arr(vec![int(1)]), vec![all], vec![], true).unwrap();
    assert_eq!(
        *order.lock().unwrap(),
        ["ffi.Array", "int", "int", "ffi.Array"]
    );

    // A pre-order skip (1 or True) prunes the children.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let skip_arrays = Entry::new(ti::kTVMFFIArray, func(|_| Ok(Any::from(true))));
    structural_walk(
        &tree,
        vec![skip_arrays, recorder(&seen, |_| Any::none())],
        vec![],
        false,
    )
    .unwrap();
    assert!(
        seen.lock().unwrap().is_empty(),
        "the root itself was skipped"
    );

    // An interrupt stops the walk and is its result.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let stop = |v: i64| {
        if v == 2 {
            Any::from_object(visit_interrupt(Any::from(v * 10)).unwrap())
        } else {
            Any::none()
        }
    };
    let r = structural_walk(&tree, vec![recorder(&seen, stop)], vec![], false)
        .unwrap()
        .unwrap();
    assert_eq!(interrupt_value(&r).unwrap().get::<i64>().unwrap(), 20);
    assert_eq!(*seen.lock().unwrap(), [1, 2]);

    // A result that is not a walk result is a TypeError naming its type.
    let bad = Entry::new(ti::kTVMFFIInt, func(|_| Ok(Any::from(1.5))));
    let e = structural_walk(&tree, vec![bad], vec![], false).unwrap_err();
    assert_eq!(e.kind(), "TypeError");
    assert_eq!(
        e.message(),
        "CallExpected: result type mismatch, expected WalkResult, but got float"
    );
}

#[test]
fn walk_containers_visit_values_not_keys() {
    let m = Any::from_object(Map::new(vec![(int(100), int(1))]).unwrap().into_object());
    let d = Any::from_object(Dict::new(vec![(int(200), int(2))]).unwrap().into_object());
    let l = Any::from_object(List::new(vec![int(3), Any::none()]).unwrap().into_object());
    let seen = Arc::new(Mutex::new(Vec::new()));
    structural_walk(
        &arr(vec![m, d, l]),
        vec![recorder(&seen, |_| Any::none())],
        vec![],
        true,
    )
    .unwrap();
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3]);
}

fn lambda_types() -> (i32, i32) {
    static TYPES: std::sync::OnceLock<(i32, i32)> = std::sync::OnceLock::new();
    *TYPES.get_or_init(|| {
        let var = dataclass::register_type(
            "test.visit.Var",
            ti::kTVMFFIObject,
            vec![
                spec("name", FieldKind::Str, field_flag::kSEqHashIgnore),
                spec("ty", FieldKind::Any, 0),
            ],
        )
        .unwrap();
        set_kind(var, 2);
        let lam = dataclass::register_type(
            "test.visit.Lambda",
            ti::kTVMFFIObject,
            vec![
                spec("param", FieldKind::Any, field_flag::kSEqHashDefSimple),
                spec("body", FieldKind::Any, 0),
            ],
        )
        .unwrap();
        set_kind(lam, 1);
        (var, lam)
    })
}

#[test]
fn def_regions_reach_callbacks() {
    let (var, lam) = lambda_types();
    let x = make(var, &[Any::string("x").unwrap(), int(7)]);
    let f = make(lam, &[x.clone(), arr(vec![x.clone()])]);
    let kinds = Arc::new(Mutex::new(Vec::new()));
    let k = kinds.clone();
    let entry = Entry::new(
        -1,
        func(move |a| {
            k.lock()
                .unwrap()
                .push((a[0].type_key(), a[1].get::<i64>()?));
            Ok(Any::none())
        }),
    );
    structural_walk(&f, vec![], vec![entry], false).unwrap();
    // The param is a simple definition; its type field is a use (None);
    // the body's occurrence is a use.
    let got = kinds.lock().unwrap().clone();
    let expect: Vec<(String, i64)> = [
        ("test.visit.Lambda", 0),
        ("test.visit.Var", 2),
        ("int", 0),
        ("ffi.Array", 0),
        ("test.visit.Var", 0),
        ("int", 0),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), *b))
    .collect();
    assert_eq!(got, expect);
}

#[test]
fn visit_callbacks_own_descent() {
    let tree = arr(vec![int(1), arr(vec![int(2)]), int(3)]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    // Arrays matched by a callback that does not descend: nothing below.
    let s = seen.clone();
    let prune = Entry::new(
        ti::kTVMFFIArray,
        func(move |_| {
            s.lock().unwrap().push(-1);
            Ok(Any::none())
        }),
    );
    structural_visit(&tree, vec![prune]).unwrap();
    assert_eq!(*seen.lock().unwrap(), [-1]);
    // Unmatched values get the default descent.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let ints_only = Entry::new(
        ti::kTVMFFIInt,
        func(move |a| {
            s.lock().unwrap().push(a[0].get::<i64>()?);
            Ok(Any::none())
        }),
    );
    structural_visit(&tree, vec![ints_only]).unwrap();
    assert_eq!(*seen.lock().unwrap(), [1, 2, 3]);
    // Descending through the visitor's default visit from a callback.
    let default_visit = Function::get_global("ffi.StructuralVisitorDefaultVisit").unwrap();
    let seen = Arc::new(Mutex::new(0));
    let s = seen.clone();
    let all = Entry::new(
        -1,
        func(move |a| {
            *s.lock().unwrap() += 1;
            default_visit.call(&[a[1].clone(), a[0].clone()])
        }),
    );
    assert!(structural_visit(&tree, vec![all]).unwrap().is_none());
    assert_eq!(*seen.lock().unwrap(), 5); // (1, (2,), 3), 1, (2,), 2, 3
    let bad = Entry::new(ti::kTVMFFIInt, func(|_| Ok(Any::from(5i64))));
    let e = structural_visit(&tree, vec![bad]).unwrap_err();
    assert_eq!(
        e.message(),
        "CallExpected: result type mismatch, expected Optional<ffi.VisitInterrupt>, but got int"
    );
}

#[test]
fn map_copies_on_write_and_keeps_unchanged_identity() {
    let inner = arr(vec![int(2), int(3)]);
    let root = arr(vec![
        int(1),
        inner.clone(),
        arr(vec![Any::string("s").unwrap()]),
    ]);
    let plus_one = || {
        Entry::new(
            ti::kTVMFFIInt,
            func(|a| Ok(Any::from(a[0].get::<i64>()? + 1))),
        )
    };
    let out = structural_map(root.clone(), vec![plus_one()], vec![], true).unwrap();
    let items: Vec<Any> = Array::from_object(out.get::<ObjectRef>().unwrap())
        .unwrap()
        .iter()
        .cloned()
        .collect();
    assert_eq!(items[0].get::<i64>().unwrap(), 2);
    assert_eq!(ints(&items[1]), [3, 4]);
    assert_eq!(ints(&inner), [2, 3], "the input is intact");
    let old: Vec<Any> = Array::from_object(root.get::<ObjectRef>().unwrap())
        .unwrap()
        .iter()
        .cloned()
        .collect();
    assert!(items[2].same_value(&old[2]), "an unchanged child is shared");
    // Nothing changed: the root itself comes back.
    let same = structural_map(
        root.clone(),
        vec![Entry::new(ti::kTVMFFIInt, func(|a| Ok(a[0].clone())))],
        vec![],
        true,
    )
    .unwrap();
    assert!(same.same_value(&root));
    // Pre-order descends into what the callback returned.
    let expand = Entry::new(
        ti::kTVMFFIInt,
        func(|a| {
            let v = a[0].get::<i64>()?;
            Ok(if v == 1 {
                arr(vec![int(10), int(20)])
            } else {
                Any::from(v * 100)
            })
        }),
    );
    let out = structural_map(arr(vec![int(1), int(2)]), vec![expand], vec![], false).unwrap();
    let items: Vec<Any> = Array::from_object(out.get::<ObjectRef>().unwrap())
        .unwrap()
        .iter()
        .cloned()
        .collect();
    assert_eq!(ints(&items[0]), [1000, 2000]);
    assert_eq!(items[1].get::<i64>().unwrap(), 200);
}

#[test]
fn map_in_place_on_a_moved_root() {
    let list = List::new(vec![
        int(1),
        Any::from_object(List::new(vec![int(2)]).unwrap().into_object()),
    ])
    .unwrap();
    let handle = list.clone().into_object();
    let plus_one = Entry::new(
        ti::kTVMFFIInt,
        func(|a| Ok(Any::from(a[0].get::<i64>()? + 1))),
    );
    // Shared root (we keep `handle`): copy-on-write.
    let out = structural_map(
        Any::from_object(handle.clone()),
        vec![plus_one.clone()],
        vec![],
        true,
    )
    .unwrap();
    assert!(!out.get::<ObjectRef>().unwrap().same_as(&handle));
    assert_eq!(list.get(0).unwrap().get::<i64>().unwrap(), 1);
    // Given away: the same List comes back, changed in place.
    let ptr = handle.as_ptr();
    drop(list);
    let out = structural_map(Any::from_object(handle), vec![plus_one], vec![], true).unwrap();
    let back = out.get::<ObjectRef>().unwrap();
    assert_eq!(back.as_ptr(), ptr);
    let back = List::from_object(back).unwrap();
    assert_eq!(back.get(0).unwrap().get::<i64>().unwrap(), 2);
    let nested = List::from_object(back.get(1).unwrap().get::<ObjectRef>().unwrap()).unwrap();
    assert_eq!(nested.get(0).unwrap().get::<i64>().unwrap(), 3);
}

#[test]
fn mutate_remaps_redefined_variables() {
    let (var, lam) = lambda_types();
    let x = make(var, &[Any::string("x").unwrap(), int(7)]);
    let f = make(lam, &[x.clone(), arr(vec![x.clone(), int(1)])]);
    // Changing the definition's type field rewrites the var; its uses in
    // the body follow through the remap.
    let to_i32 = Entry::new(
        ti::kTVMFFIInt,
        func(|a| Ok(Any::from(a[0].get::<i64>()? * 2))),
    );
    let out = structural_map(f.clone(), vec![to_i32], vec![], true).unwrap();
    let param = type_registry::find_field(lam, "param").unwrap();
    let body = type_registry::find_field(lam, "body").unwrap();
    let o = out.get::<ObjectRef>().unwrap();
    let new_x = dataclass::get_field(&o, param).unwrap();
    assert!(!new_x.same_value(&x));
    let ty = type_registry::find_field(var, "ty").unwrap();
    assert_eq!(
        dataclass::get_field(&new_x.get::<ObjectRef>().unwrap(), ty)
            .unwrap()
            .get::<i64>()
            .unwrap(),
        14
    );
    let b = dataclass::get_field(&o, body).unwrap();
    let b: Vec<Any> = Array::from_object(b.get::<ObjectRef>().unwrap())
        .unwrap()
        .iter()
        .cloned()
        .collect();
    assert!(
        b[0].same_value(&new_x),
        "the use follows the rewritten definition"
    );
    assert_eq!(b[1].get::<i64>().unwrap(), 2);
    // The original is intact.
    assert_eq!(
        dataclass::get_field(&x.get::<ObjectRef>().unwrap(), ty)
            .unwrap()
            .get::<i64>()
            .unwrap(),
        7
    );

    // structural_mutate: the callback owns descent; here it replaces every
    // Var by a string and leaves the rest to default descent.
    let to_name = Entry::new(var, func(|_| Any::string("replaced")));
    let out = structural_mutate(f, vec![to_name]).unwrap();
    let b = dataclass::get_field(&out.get::<ObjectRef>().unwrap(), body).unwrap();
    let b: Vec<Any> = Array::from_object(b.get::<ObjectRef>().unwrap())
        .unwrap()
        .iter()
        .cloned()
        .collect();
    assert_eq!(b[0].get::<String>().unwrap(), "replaced");
}

#[test]
fn globals_check_their_arguments() {
    let walk = Function::get_global("ffi.StructuralWalk").unwrap();
    let e = walk.call(&[]).unwrap_err();
    assert_eq!(
        e.message(),
        "Mismatched number of arguments when calling: `ffi.StructuralWalk(0: AnyView, 1: Array<Tuple<int, ffi.Function>>, \
         2: Array<Tuple<int, ffi.Function>>, 3: int) -> Optional<ffi.VisitInterrupt>`. Expected 4 but got 0 arguments"
    );
    let bad_table = arr(vec![arr(vec![int(1), int(5)])]);
    let e = walk
        .call(&[int(1), bad_table, arr(vec![]), int(0)])
        .unwrap_err();
    assert_eq!(e.kind(), "TypeError");
    assert!(e.message().ends_with("Expected `Array<Tuple<int, ffi.Function>>` but got `Array[index 0: Array[index 1: int]]`"), "{}", e.message());
    let short = arr(vec![arr(vec![int(1)])]);
    let e = walk
        .call(&[int(1), short, arr(vec![]), int(0)])
        .unwrap_err();
    assert!(
        e.message()
            .ends_with("but got `Array[index 0: Array[size=1]]`"),
        "{}",
        e.message()
    );
    let with_kind = Function::get_global("ffi.StructuralVisitorWithDefRegionKind").unwrap();
    let e = with_kind
        .call(&[Any::none(), int(2), Any::none()])
        .unwrap_err();
    assert!(
        e.message()
            .ends_with("Expected `ffi.StructuralVisitor` but got `None`"),
        "{}",
        e.message()
    );
    let vi = Function::get_global("ffi.VisitInterrupt")
        .unwrap()
        .call(&[int(5)])
        .unwrap();
    assert_eq!(vi.type_index(), ti::kTVMFFIVisitInterrupt);
    let remap_get = Function::get_global("ffi.StructuralMutatorVarRemapGet").unwrap();
    let probe = Entry::new(
        -1,
        func(move |a| {
            let e = remap_get.call(&[a[1].clone(), int(1)]).unwrap_err();
            assert_eq!(
                e.message(),
                "Variable-remap key must be an object-backed value"
            );
            Ok(a[0].clone())
        }),
    );
    let mut e = probe;
    e.takes_mode = false;
    structural_mutate(int(1), vec![e]).unwrap();
}

#[test]
fn objects_without_a_shallow_copy_cannot_be_rewritten() {
    let shape = Any::from_object(tether_core::Shape::new(&[1, 2]).unwrap().into_object());
    let e = structural_map(
        arr(vec![shape]),
        vec![Entry::new(ti::kTVMFFIInt, func(|a| Ok(a[0].clone())))],
        vec![],
        true,
    )
    .unwrap_err();
    assert_eq!(e.kind(), "TypeError");
    assert_eq!(e.message(), "__ffi_shallow_copy__ must be an ffi.Function");
}

#[test]
fn deep_input_does_not_overflow() {
    let mut v = arr(vec![int(0)]);
    for _ in 0..100_000 {
        v = arr(vec![v]);
    }
    let count = Arc::new(Mutex::new(0));
    let c = count.clone();
    let entry = Entry::new(
        ti::kTVMFFIArray,
        func(move |_| {
            *c.lock().unwrap() += 1;
            Ok(Any::none())
        }),
    );
    let v2 = v.clone();
    let t = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            structural_walk(&v2, vec![entry], vec![], true).unwrap();
            let plus = Entry::new(
                ti::kTVMFFIInt,
                func(|a| Ok(Any::from(a[0].get::<i64>()? + 1))),
            );
            structural_map(v2, vec![plus], vec![], true).unwrap()
        })
        .unwrap();
    let mapped = t.join().unwrap();
    assert_eq!(*count.lock().unwrap(), 100_001);
    assert!(!mapped.same_value(&v));
}
