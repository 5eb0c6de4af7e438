//! The type-attribute columns the core fills for its own types, read the
//! way compiled code reads them (through `TVMFFIGetTypeAttrColumn`), and
//! what the hooks in them do: every core type, every attribute TVM-FFI
//! defines, the kind of value (nothing, a native pointer, a Function, a
//! bool) TVM-FFI 0.1.15's library holds there. `tests/c/compare_type_attrs.c`
//! checks the same against the peer library itself in one process.

use tether_core::abi::{type_index as ti, TVMFFIAny, TVMFFIByteArray};
use tether_core::values::big_int::{self, decimal};
use tether_core::c_api::{TVMFFIGetTypeAttrColumn, TVMFFIGetTypeInfo, TVMFFITypeKeyToIndex};
use tether_core::containers::Map;
use tether_core::structural::key::StructuralKey;
use tether_core::{Any, Array, Function, ObjectRef};

#[derive(Debug, PartialEq, Clone, Copy)]
enum Kind {
    Missing,
    Pointer,
    Function,
    Bool(bool),
}
use Kind::*;

const ATTRS: &[&str] = &[
    "__ffi_new__",
    "__ffi_init__",
    "__ffi_shallow_copy__",
    "__ffi_type_final__",
    "__ffi_repr__",
    "__ffi_convert__",
    "__ffi_enum__",
    "__ffi_eq__",
    "__ffi_hash__",
    "__ffi_compare__",
    "__any_equal__",
    "__any_hash__",
    "__s_equal__",
    "__s_hash__",
    "__s_visit__",
    "__s_mutate__",
    "__s_maybe_inplace_mutate__",
    "__data_to_json__",
    "__data_from_json__",
];

fn index_of(key: &str) -> i32 {
    let k = TVMFFIByteArray { data: key.as_ptr() as *const _, size: key.len() };
    let mut out = -1;
    // SAFETY: valid arguments.
    assert_eq!(unsafe { TVMFFITypeKeyToIndex(&k, &mut out) }, 0, "{key} is not registered");
    out
}

/// What compiled code finds in column `attr` for type `key`.
fn column_kind(key: &str, attr: &str) -> Kind {
    let index = index_of(key);
    let name = TVMFFIByteArray { data: attr.as_ptr() as *const _, size: attr.len() };
    // SAFETY: a valid name; columns live for the process.
    let col = unsafe { TVMFFIGetTypeAttrColumn(&name).as_ref() }.unwrap_or_else(|| panic!("no column {attr}"));
    let slot = index - col.begin_index;
    if slot < 0 || slot >= col.size {
        return Missing;
    }
    // SAFETY: slot is inside the column.
    let v: &TVMFFIAny = unsafe { &*col.data.add(slot as usize) };
    match v.type_index {
        ti::kTVMFFINone => Missing,
        ti::kTVMFFIOpaquePtr => Pointer,
        ti::kTVMFFIFunction => Function,
        // SAFETY: a bool carries v_int64.
        ti::kTVMFFIBool => Bool(unsafe { v.value.v_int64 } != 0),
        other => panic!("{key}.{attr} holds a value of type index {other}"),
    }
}

/// The non-empty columns of each core type, as TVM-FFI 0.1.15's library
/// fills them (every other column of these types is empty).
fn expected() -> Vec<(&'static str, Vec<(&'static str, Kind)>)> {
    let convert = vec![("__ffi_convert__", Function)];
    let mutate = [("__s_mutate__", Pointer), ("__s_maybe_inplace_mutate__", Pointer)];
    let container = |with_visit: bool| {
        let mut v = vec![("__ffi_convert__", Function)];
        if with_visit {
            v.push(("__s_visit__", Pointer));
        }
        v.extend(mutate);
        v
    };
    let new_copy_final = vec![("__ffi_new__", Function), ("__ffi_shallow_copy__", Function), ("__ffi_type_final__", Bool(true))];
    let mut path_type = new_copy_final.clone();
    path_type.push(("__ffi_repr__", Function));
    let mut path_type = new_copy_final.clone();
    path_type.push(("__ffi_repr__", Function));
    vec![
        ("ffi.Object", convert.clone()),
        ("ffi.String", container(false)),
        ("ffi.Bytes", container(false)),
        ("ffi.Error", convert.clone()),
        ("ffi.Function", convert.clone()),
        ("ffi.Shape", convert.clone()),
        ("ffi.Tensor", convert.clone()),
        ("ffi.Array", container(true)),
        ("ffi.Map", container(true)),
        ("ffi.List", container(true)),
        ("ffi.Dict", container(true)),
        ("ffi.Module", vec![("__ffi_type_final__", Bool(true))]),
        ("ffi.OpaquePyObject", vec![]),
        ("ffi.VisitInterrupt", new_copy_final.clone()),
        (
            "ffi.BigInt",
            vec![
                ("__ffi_type_final__", Bool(true)),
                ("__ffi_eq__", Function),
                ("__ffi_hash__", Function),
                ("__ffi_compare__", Function),
                ("__any_equal__", Pointer),
                ("__any_hash__", Pointer),
                ("__s_mutate__", Pointer),
                ("__s_maybe_inplace_mutate__", Pointer),
                ("__data_to_json__", Function),
                ("__data_from_json__", Function),
            ],
        ),
        ("ffi.reflection.AccessStep", path_type.clone()),
        ("ffi.reflection.AccessPath", path_type),
        ("ffi.VisitErrorContext", new_copy_final.clone()),
        ("ffi.StructuralVisitor", vec![("__ffi_shallow_copy__", Function), ("__ffi_type_final__", Bool(false))]),
        ("ffi.StructuralMutator", vec![("__ffi_shallow_copy__", Function), ("__ffi_type_final__", Bool(false))]),
        (
            "ffi.StructuralKey",
            vec![
                ("__ffi_new__", Function),
                ("__ffi_init__", Function),
                ("__ffi_shallow_copy__", Function),
                ("__ffi_type_final__", Bool(true)),
                ("__any_equal__", Pointer),
                ("__any_hash__", Pointer),
            ],
        ),
    ]
}

#[test]
fn core_types_hold_the_columns_tvm_ffi_fills() {
    let mut differences = Vec::new();
    for (key, set) in expected() {
        for attr in ATTRS {
            let want = set.iter().find(|(a, _)| a == attr).map_or(Missing, |(_, k)| *k);
            let got = column_kind(key, attr);
            if got != want {
                differences.push(format!("{key}.{attr}: {got:?}, expected {want:?}"));
            }
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn structural_types_have_tvm_ffi_metadata() {
    for (key, kind, size, creator) in [
        ("ffi.VisitInterrupt", 0, 40, true),
        ("ffi.reflection.AccessStep", 4, 48, true),
        ("ffi.reflection.AccessPath", 4, 48, true),
        ("ffi.StructuralKey", 0, 48, true),
        ("ffi.VisitErrorContext", 0, 40, true),
        ("ffi.StructuralVisitor", 0, 40, false),
        ("ffi.StructuralMutator", 0, 40, false),
        ("ffi.BigInt", 0, 32, false),
        ("ffi.Module", 0, 48, false),
    ] {
        // SAFETY: a registered index; type infos live for the process.
        let info = unsafe { &*TVMFFIGetTypeInfo(index_of(key)) };
        // SAFETY: as above.
        let md = unsafe { info.metadata.as_ref() }.unwrap_or_else(|| panic!("{key} has no metadata"));
        assert_eq!((md.structural_eq_hash_kind, md.total_size, md.creator.is_some()), (kind, size, creator), "{key}");
    }
}

fn call_attr(key: &str, attr: &str, args: &[Any]) -> Any {
    let f = tether_core::reflection::attr_columns::attr_value(index_of(key), attr.as_bytes()).unwrap();
    Function::from_object(f.get::<ObjectRef>().unwrap()).unwrap().call(args).unwrap()
}

#[test]
fn new_copy_and_init_make_objects_of_the_type() {
    for key in ["ffi.VisitInterrupt", "ffi.reflection.AccessStep", "ffi.reflection.AccessPath", "ffi.StructuralKey", "ffi.VisitErrorContext"] {
        let fresh = call_attr(key, "__ffi_new__", &[]);
        assert_eq!(fresh.type_index(), index_of(key), "{key}");
        let copy = call_attr(key, "__ffi_shallow_copy__", &[fresh.clone()]);
        assert_eq!(copy.type_index(), index_of(key), "{key}");
        assert!(!copy.same_value(&fresh), "{key}: a copy is a new object");
    }
    let key = call_attr("ffi.StructuralKey", "__ffi_init__", &[Any::from(7i64)]);
    let key = StructuralKey::from_object(key.get::<ObjectRef>().unwrap()).unwrap();
    assert_eq!(key.key().get::<i64>().unwrap(), 7);
}

#[test]
fn any_hooks_make_equal_keys_one_map_entry() {
    // Structurally equal keys, distinct objects: one entry through the
    // native hooks.
    let arr = |v: i64| Any::from_object(Array::new(vec![Any::from(v)]).unwrap().into_object());
    let k1 = Any::from_object(StructuralKey::new(arr(1)).unwrap().into_object());
    let k2 = Any::from_object(StructuralKey::new(arr(1)).unwrap().into_object());
    let k3 = Any::from_object(StructuralKey::new(arr(2)).unwrap().into_object());
    let m = Map::new(vec![(k1, Any::from(1i64)), (k2.clone(), Any::from(2i64)), (k3, Any::from(3i64))]).unwrap();
    assert_eq!(m.len(), 2);
    assert_eq!(m.get(&k2).unwrap().get::<i64>().unwrap(), 2);

    // BigInts compare by value, whatever object holds them.
    let big = || decimal::parse_decimal("123456789012345678901234567890").unwrap();
    let (b1, b2) = (big(), big());
    assert!(!b1.same_value(&b2));
    let m = Map::new(vec![(b1, Any::from(1i64)), (b2.clone(), Any::from(2i64))]).unwrap();
    assert_eq!(m.len(), 1);
    assert_eq!(m.get(&b2).unwrap().get::<i64>().unwrap(), 2);
}

#[test]
fn a_failing_any_hook_raises_its_error_through_the_map() {
    // A type whose __any_equal__ Function fails: building a map with two
    // such keys raises that error from the map's constructor.
    #[repr(C)]
    struct Failing {
        header: tether_core::abi::TVMFFIObject,
    }
    tether_core::object_type!(Failing, "test.columns.FailingEqual");
    let hook = Function::from_closure(|_| Err(tether_core::Error::value_error("no equality for you"))).unwrap();
    tether_core::reflection::attr_columns::register_attr(
        <Failing as tether_core::ObjectType>::type_index(),
        b"__any_equal__",
        Any::from_object(hook.into_object()).as_raw(),
    )
    .unwrap();
    let key = || {
        let obj = tether_core::ObjectPtr::new(Failing { header: tether_core::object::header_placeholder() }).unwrap();
        Any::from_object(obj.into_object_ref())
    };
    let map_fn = Function::get_global("ffi.Map").unwrap();
    let err = map_fn.call(&[key(), Any::from(1i64), key(), Any::from(2i64)]).unwrap_err();
    assert_eq!((err.kind(), err.message()), ("ValueError", "no equality for you"));
}

#[test]
fn big_int_json_hooks_use_decimal_text() {
    let v = decimal::parse_decimal("-340282366920938463463374607431768211456").unwrap();
    let text = call_attr("ffi.BigInt", "__data_to_json__", &[v.clone()]);
    assert_eq!(text.get::<String>().unwrap(), "-340282366920938463463374607431768211456");
    let back = call_attr("ffi.BigInt", "__data_from_json__", &[text]);
    // SAFETY: both values are alive while their words are read.
    unsafe {
        assert_eq!(big_int::content_words(back.as_raw()), big_int::content_words(v.as_raw()));
    }
    let f = tether_core::reflection::attr_columns::attr_value(ti::kTVMFFIBigInt, b"__data_from_json__").unwrap();
    let err = Function::from_object(f.get::<ObjectRef>().unwrap()).unwrap().call(&[Any::string("12x").unwrap()]).unwrap_err();
    assert_eq!(err.message(), "Invalid decimal string for ffi.BigInt");
}
