//! Python-defined classes registered in two steps
//! (`tether.dataclass.AllocPyClassType`, then
//! `tether.dataclass.RegisterPyClassFields`): the type exists before its
//! fields, fields are laid out after the parent's (native parents
//! included), the core refuses layouts that overlap or leave the object,
//! a second registration and a parent whose fields are still pending; and
//! walks that hold what they read while another thread writes the fields.

use std::sync::atomic::{AtomicBool, Ordering};

use tether_core::abi::{field_flag, type_index as ti};
use tether_core::dataclass::py_class_fields::{alloc_type, register_fields};
use tether_core::structural::{equal, hash};
use tether_core::types::type_registry;
use tether_core::{Any, Array, Error, Function, ObjectRef};

const OBJECT: i32 = 64;

/// One record: [name, doc, metadata, flags, static index, size, alignment,
/// offset, converter, default].
fn record(name: &str, static_index: i32, size: i64, alignment: i64, offset: i64) -> Any {
    let items = vec![
        Any::string(name).unwrap(),
        Any::none(),
        Any::string("").unwrap(),
        Any::from(field_flag::kWritable),
        Any::from(static_index as i64),
        Any::from(size),
        Any::from(alignment),
        Any::from(offset),
        Any::none(),
        Any::none(),
    ];
    Any::from_object(Array::new(items).unwrap().into_object())
}

fn records(items: Vec<Any>) -> Array {
    Array::new(items).unwrap()
}

fn attr(index: i32, name: &str) -> Function {
    let v = tether_core::reflection::attr_columns::attr_value(index, name.as_bytes()).unwrap_or_else(|| panic!("{name} registered"));
    Function::from_object(v.get::<ObjectRef>().unwrap()).unwrap()
}

#[test]
fn the_type_exists_before_its_fields_and_gets_them_later() -> Result<(), Error> {
    let index = alloc_type("test.pcf.Later", OBJECT)?;
    assert_eq!(type_registry::key_to_index(b"test.pcf.Later"), Some(index));
    assert_eq!(type_registry::type_info(index).unwrap().num_fields, 0);
    assert!(tether_core::reflection::attr_columns::attr_value(index, b"__ffi_new__").is_none(), "no instance before the fields");
    // Three bools pack into consecutive bytes, an int aligns to 8.
    let recs = records(vec![record("a", 2, 1, 1, 24), record("b", 2, 1, 1, 25), record("n", 1, 8, 8, 32)]);
    register_fields(index, &recs, 40, 0)?;
    let offsets: Vec<i64> = type_registry::all_fields(index).iter().map(|f| f.offset).collect();
    assert_eq!(offsets, vec![24, 25, 32]);
    let obj = attr(index, "__ffi_new__").call(&[])?.get::<ObjectRef>()?;
    assert_eq!(obj.type_index(), index);
    // Registering the fields again is refused.
    let again = register_fields(index, &records(vec![record("c", 1, 8, 8, 24)]), 32, 0).unwrap_err();
    assert!(again.message().contains("already registered"), "{}", again.message());
    Ok(())
}

#[test]
fn a_key_is_allocated_once_but_an_unfinished_one_is_handed_back() -> Result<(), Error> {
    let index = alloc_type("test.pcf.Retry", OBJECT)?;
    // Nothing registered yet: the same key and parent get the same index
    // (a registration rolled back and retried).
    assert_eq!(alloc_type("test.pcf.Retry", OBJECT)?, index);
    register_fields(index, &records(vec![]), 24, 0)?;
    let dup = alloc_type("test.pcf.Retry", OBJECT).unwrap_err();
    assert!(dup.message().contains("already registered"), "{}", dup.message());
    // A native type's key is never handed out.
    assert!(alloc_type("ffi.Array", OBJECT).is_err());
    Ok(())
}

#[test]
fn hostile_layouts_are_refused_before_anything_is_registered() -> Result<(), Error> {
    let index = alloc_type("test.pcf.Hostile", OBJECT)?;
    let cases: Vec<(Array, i64, &str)> = vec![
        (records(vec![record("x", 1, 8, 8, 16)]), 32, "outside"), // inside the header
        (records(vec![record("x", 1, 8, 8, 32)]), 32, "outside"), // past total_size
        (records(vec![record("x", 1, 8, 8, 24), record("y", 1, 8, 8, 24)]), 40, "overlap"),
        (records(vec![record("x", 1, 4, 8, 24)]), 32, "size"), // wrong size for an int
        (records(vec![record("x", 1, 8, 3, 24)]), 32, "aligned"), // alignment not a power of two
        (records(vec![record("x", 1, 8, 8, 28)]), 40, "aligned"), // misaligned offset
        (records(vec![record("x", 1, 8, 8, -8)]), 32, "negative"), // negative offset
        (records(vec![record("x", 7, 8, 8, 24)]), 32, "unsupported"),
        (records(vec![record("x", 1, 8, 8, 24), record("x", 1, 8, 8, 32)]), 40, "repeated"),
        (records(vec![]), 8, "out of range"),
        (records(vec![]), i64::MAX, "out of range"),
    ];
    for (recs, total, what) in cases {
        let e = register_fields(index, &recs, total, 0).unwrap_err();
        assert!(e.message().contains(what), "expected {what:?}: {}", e.message());
        assert_eq!(type_registry::type_info(index).unwrap().num_fields, 0, "nothing registered on failure");
    }
    assert!(register_fields(index, &records(vec![]), 24, 9).is_err(), "structure kind out of range");
    register_fields(index, &records(vec![record("x", 1, 8, 8, 24)]), 32, 1)?;
    Ok(())
}

#[test]
fn a_child_waits_for_its_parents_fields_and_starts_after_them() -> Result<(), Error> {
    let parent = alloc_type("test.pcf.Parent", OBJECT)?;
    let child = alloc_type("test.pcf.Child", parent)?;
    let early = register_fields(child, &records(vec![record("c", 2, 1, 1, 24)]), 32, 0).unwrap_err();
    assert!(early.message().contains("not registered yet"), "{}", early.message());
    register_fields(parent, &records(vec![record("p", 2, 1, 1, 24)]), 32, 0)?;
    // The parent's bool ends at 25: the child's bool may reuse the tail
    // padding (offset 25) but never overlap the parent's field.
    let overlap = register_fields(child, &records(vec![record("c", 2, 1, 1, 24)]), 32, 0).unwrap_err();
    assert!(overlap.message().contains("outside"), "{}", overlap.message());
    register_fields(child, &records(vec![record("c", 2, 1, 1, 25)]), 32, 0)?;
    let names: Vec<i64> = type_registry::all_fields(child).iter().map(|f| f.offset).collect();
    assert_eq!(names, vec![24, 25]);
    Ok(())
}

#[test]
fn only_object_types_can_be_parents() {
    let e = alloc_type("test.pcf.BadParent", 1).unwrap_err();
    assert!(e.message().contains("not an object type"), "{}", e.message());
    assert!(alloc_type("", OBJECT).is_err());
}

#[test]
fn writes_go_through_the_converter_and_nested_errors_are_indented() -> Result<(), Error> {
    let index = alloc_type("test.pcf.Converted", OBJECT)?;
    // A converter that turns floats into twice their value as ints and refuses
    // the rest with a two-line message.
    let converter = Function::from_closure(|args| {
        let v: f64 = args[0].get().map_err(|_| Error::type_error("expected float\n  because the test says so"))?;
        Ok(Any::from((v * 2.0) as i64))
    })?;
    let mut items: Vec<Any> =
        Array::from_object(record("x", 1, 8, 8, 24).get::<ObjectRef>()?)?.iter().cloned().collect();
    items[8] = Any::from_object(converter.into_object());
    register_fields(index, &records(vec![Any::from_object(Array::new(items)?.into_object())]), 32, 0)?;
    let init = attr(index, "__ffi_init__");
    let field = type_registry::find_field(index, "x").unwrap();
    let made = init.call(&[Any::from(21.0f64)])?.get::<ObjectRef>()?;
    assert_eq!(tether_core::dataclass::get_field(&made, field)?.get::<i64>()?, 42);
    // An int is already the int field's kind: stored as is, no converter call.
    let made = init.call(&[Any::from(21i64)])?.get::<ObjectRef>()?;
    assert_eq!(tether_core::dataclass::get_field(&made, field)?.get::<i64>()?, 21);
    let e = init.call(&[Any::string("no")?]).unwrap_err();
    assert_eq!(
        e.message(),
        "test.pcf.Converted.__ffi_init__() field 'x':\n  expected float\n    because the test says so"
    );
    Ok(())
}

#[test]
fn a_fields_declared_default_is_readable() -> Result<(), Error> {
    use tether_core::dataclass::field_default::field_default;
    let index = alloc_type("test.pcf.Defaults", OBJECT)?;
    let with_default = |name: &str, offset: i64, flags: i64, default: Any| -> Result<Any, Error> {
        let mut items: Vec<Any> =
            Array::from_object(record(name, -1, 16, 8, offset).get::<ObjectRef>()?)?.iter().cloned().collect();
        items[3] = Any::from(field_flag::kWritable | flags);
        items[9] = default;
        Ok(Any::from_object(Array::new(items)?.into_object()))
    };
    let factory = Function::from_closure(|_| Ok(Any::from(7i64)))?;
    let recs = records(vec![
        record("plain", 1, 8, 8, 24),
        with_default("value", 32, field_flag::kHasDefault, Any::from(5i64))?,
        with_default(
            "made",
            48,
            field_flag::kHasDefault | field_flag::kDefaultFromFactory,
            Any::from_object(factory.into_object()),
        )?,
    ]);
    register_fields(index, &recs, 64, 0)?;
    assert!(field_default(index, "plain")?.is_empty());
    let value = field_default(index, "value")?;
    assert_eq!((value.len(), value.get(0)?.get::<i64>()?), (1, 5));
    let made = field_default(index, "made")?;
    assert_eq!(made.len(), 2);
    assert!(made.get(1)?.get::<bool>()?);
    assert!(field_default(index, "nope").is_err());
    assert!(field_default(-5, "plain").is_err());
    Ok(())
}

fn array(items: Vec<Any>) -> Any {
    Any::from_object(Array::new(items).unwrap().into_object())
}

/// A tree-node type with an Any field `x` and an object field `o`.
fn race_node_type() -> Result<i32, Error> {
    let index = alloc_type("test.pcf.RaceNode", OBJECT)?;
    let recs = records(vec![record("x", ti::kTVMFFIAny, 16, 8, 24), record("o", ti::kTVMFFIObject, 8, 8, 40)]);
    // Structure kind 1: a tree node, compared and hashed by its fields.
    register_fields(index, &recs, 48, 1)?;
    Ok(index)
}

fn new_node(index: i32) -> Result<ObjectRef, Error> {
    attr(index, "__ffi_new__").call(&[])?.get::<ObjectRef>()
}

fn set(obj: &ObjectRef, i: usize, v: Any) -> Result<(), Error> {
    let fields = type_registry::all_fields(obj.type_index());
    tether_core::dataclass::set_field(obj, &fields[i], v.as_raw())
}

/// Walks racing field writes: one thread hashes, compares and serializes a
/// forest of these objects while another keeps replacing their fields
/// through the setters, each replacement releasing the only reference to
/// the old value. A walk takes its reference to a field's value before
/// the write can release it (the field lock), so nothing it reads is freed
/// under it. Run plainly this catches crashes and wrong results; `make
/// sanitize` runs it under ThreadSanitizer, which reports the
/// unsynchronised read otherwise.
#[test]
fn walks_hold_what_they_read_while_another_thread_writes_fields() -> Result<(), Error> {
    let index = race_node_type()?;
    let forest = |n: usize| -> Result<(Vec<ObjectRef>, Any), Error> {
        let nodes = (0..n).map(|_| new_node(index)).collect::<Result<Vec<_>, _>>()?;
        for (i, node) in nodes.iter().enumerate() {
            set(node, 0, array(vec![Any::from(i as i64), Any::string("abcdefghijklmnopqrstuvwxyz")?]))?;
        }
        let root = array(nodes.iter().map(|o| Any::from_object(o.clone())).collect());
        Ok((nodes, root))
    };
    let (nodes, root) = forest(500)?;
    let (twins, twin) = forest(500)?;
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| -> Result<(), Error> {
        let writer = s.spawn(|| -> Result<(), Error> {
            let mut k = 0i64;
            while !stop.load(Ordering::Relaxed) {
                for (a, b) in nodes.iter().zip(&twins) {
                    set(a, 0, array(vec![Any::from(k), Any::string("abcdefghijklmnopqrstuvwxyz")?]))?;
                    set(a, 1, array(vec![Any::from(k)]))?;
                    set(b, 1, if k % 2 == 0 { Any::none() } else { Any::from_object(new_node(index)?) })?;
                }
                k += 1;
            }
            Ok(())
        });
        let result = (|| -> Result<(), Error> {
            for round in 0..60 {
                for fast in [true, false] {
                    tether_core::structural::with_fast_paths(fast, || -> Result<(), Error> {
                        hash::structural_hash(&root, false, false)?;
                        // Some state each was in: equal or not, never a crash.
                        equal::structural_equal(&root, &twin, false, false)?;
                        if round % 10 == 0 {
                            tether_core::serialization::json_graph::to_json_graph(&root, &Any::none())?;
                        }
                        Ok(())
                    })?;
                }
            }
            Ok(())
        })();
        stop.store(true, Ordering::Relaxed);
        writer.join().expect("the writer thread")?;
        result
    })
}
