//! The generated `__ffi_init__` of run-time dataclass types and
//! `ffi._RegisterFFIInit`: positional and KWARGS calls, defaults and
//! factories, and TVM-FFI's error messages.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use tether_core::abi::{field_flag, type_index as ti};
use tether_core::dataclass::{self, FieldDefault, FieldKind, FieldSpec};
use tether_core::types::type_registry;
use tether_core::{Any, Error, Function, ObjectRef};

fn spec(name: &str, kind: FieldKind, flags: i64) -> FieldSpec {
    FieldSpec { name: name.into(), kind, flags, frozen: false }
}

fn init_of(index: i32) -> Function {
    Function::from_object(tether_core::reflection::attr_columns::attr_value(index, b"__ffi_init__").unwrap().as_object().unwrap()).unwrap()
}

fn field(obj: &ObjectRef, index: i32, name: &str) -> Any {
    dataclass::get_field(obj, type_registry::find_field(index, name).unwrap()).unwrap()
}

fn kwargs() -> Any {
    Function::get_global("ffi.GetKwargsObject").unwrap().call(&[]).unwrap()
}

#[test]
fn positional_keyword_default_and_factory() -> Result<(), Error> {
    let calls = Arc::new(AtomicI64::new(0));
    let counter = calls.clone();
    let factory = Function::from_closure(move |_| Ok(Any::from(100 + counter.fetch_add(1, Ordering::SeqCst))))?;
    // a: int = 7 (declared first), b: int (required), c: int kw-only from a
    // factory, hidden: init=False with no default.
    let index = dataclass::register_type_with_defaults(
        "test.init.Point",
        ti::kTVMFFIObject,
        vec![
            spec("a", FieldKind::Int, 0),
            spec("b", FieldKind::Int, 0),
            spec("c", FieldKind::Int, field_flag::kKwOnly),
            spec("hidden", FieldKind::Int, field_flag::kInitOff),
        ],
        vec![
            Some(FieldDefault { value: Any::from(7i64), from_factory: false }),
            None,
            Some(FieldDefault { value: Any::from(factory.into_object()), from_factory: true }),
            None,
        ],
    )?;
    let init = init_of(index);
    // Required positional fields come first: the one value binds `b`.
    let p = init.call(&[Any::from(1i64)])?.as_object().unwrap();
    assert_eq!(field(&p, index, "b").get::<i64>()?, 1);
    assert_eq!(field(&p, index, "a").get::<i64>()?, 7);
    assert_eq!(field(&p, index, "c").get::<i64>()?, 100);
    assert_eq!(field(&p, index, "hidden").get::<i64>()?, 0);
    let q = init.call(&[Any::from(1i64), Any::from(2i64), kwargs(), Any::string("c")?, Any::from(3i64)])?.as_object().unwrap();
    assert_eq!([field(&q, index, "b").get::<i64>()?, field(&q, index, "a").get::<i64>()?, field(&q, index, "c").get::<i64>()?], [1, 2, 3]);
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the factory runs only when the default is needed");

    let msg = |args: Vec<Any>| init.call(&args).unwrap_err().message().to_string();
    assert_eq!(msg(vec![]), "test.init.Point.__ffi_init__() missing required argument: 'b'");
    assert_eq!(
        msg(vec![Any::from(1i64), Any::from(2i64), Any::from(3i64)]),
        "test.init.Point.__ffi_init__() takes at most 2 positional argument(s), but 3 were given"
    );
    assert_eq!(
        msg(vec![kwargs(), Any::string("z")?, Any::from(1i64)]),
        "test.init.Point.__ffi_init__() got an unexpected keyword argument 'z'"
    );
    assert_eq!(
        msg(vec![Any::from(1i64), kwargs(), Any::string("b")?, Any::from(1i64)]),
        "test.init.Point.__ffi_init__() got multiple values for argument 'b'"
    );
    assert_eq!(
        msg(vec![kwargs(), Any::string("hidden")?, Any::from(1i64)]),
        "test.init.Point.__ffi_init__() got an unexpected keyword argument 'hidden'"
    );
    assert_eq!(msg(vec![kwargs(), Any::string("b")?]), "test.init.Point.__ffi_init__() KWARGS requires an even number of key-value arguments");
    let e = init.call(&[Any::string("x")?]).unwrap_err();
    assert_eq!(e.kind(), "TypeError");
    assert_eq!(e.message(), "test.init.Point.__ffi_init__() field 'b':\n  field \"b\" of test.init.Point expects int, got ffi.SmallStr");
    Ok(())
}

#[test]
fn keyword_only_required_and_shallow_copy() -> Result<(), Error> {
    let index = dataclass::register_type("test.init.Kw", ti::kTVMFFIObject, vec![spec("k", FieldKind::Any, field_flag::kKwOnly)])?;
    let e = init_of(index).call(&[]).unwrap_err();
    assert_eq!(e.message(), "test.init.Kw.__ffi_init__() missing required keyword-only argument: 'k'");
    let shared = Any::from(tether_core::Array::new(vec![Any::from(1i64)])?.into_object());
    let a = init_of(index).call(&[kwargs(), Any::string("k")?, shared.clone()])?.as_object().unwrap();
    let copy_fn = Function::from_object(tether_core::reflection::attr_columns::attr_value(index, b"__ffi_shallow_copy__").unwrap().as_object().unwrap())?;
    let b = copy_fn.call(&[Any::from(a.clone())])?.as_object().unwrap();
    assert!(!b.same_as(&a));
    assert!(field(&b, index, "k").as_object().unwrap().same_as(&shared.as_object().unwrap()), "fields are shared");
    Ok(())
}

#[test]
fn register_ffi_init_global_checks_its_type_and_kwargs_is_one_object() -> Result<(), Error> {
    let e = Function::get_global("ffi._RegisterFFIInit").unwrap().call(&[Any::from(99999i64)]).unwrap_err();
    assert_eq!(e.message(), "unknown type index 99999");
    assert!(kwargs().as_object().unwrap().same_as(&kwargs().as_object().unwrap()), "one sentinel");
    Ok(())
}
