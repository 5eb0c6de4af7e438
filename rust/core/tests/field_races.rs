//! Walks racing field writes: one thread hashes, compares and serializes a
//! forest of Python-defined (`py_class` layout) objects while another
//! keeps replacing their fields through the setters, each replacement
//! releasing the only reference to the old value. A walk must take its
//! reference to a field's value before the write can release it (the
//! field lock), so nothing it reads is freed under it. Run plainly this
//! catches crashes and wrong lengths; `make sanitize` runs it under
//! ThreadSanitizer, which reports the unsynchronised read otherwise.

use std::sync::atomic::{AtomicBool, Ordering};

use tether_core::abi::{field_flag, type_index as ti};
use tether_core::dataclass::{self, py_class_fields};
use tether_core::structural::{equal, hash};
use tether_core::types::type_registry;
use tether_core::{Any, Array, Error, Function, ObjectRef};

/// One field record of `RegisterPyClassFields`: [name, doc, metadata,
/// flags, static index, size, alignment, offset, converter, default].
fn record(name: &str, static_index: i32, size: i64, offset: i64) -> Any {
    let items = vec![
        Any::string(name).unwrap(),
        Any::none(),
        Any::string("").unwrap(),
        Any::from(field_flag::kWritable),
        Any::from(static_index as i64),
        Any::from(size),
        Any::from(8i64),
        Any::from(offset),
        Any::none(),
        Any::none(),
    ];
    Any::from_object(Array::new(items).unwrap().into_object())
}

fn array(items: Vec<Any>) -> Any {
    Any::from_object(Array::new(items).unwrap().into_object())
}

/// A tree-node type with an Any field `x` and an object field `o`.
fn node_type() -> Result<i32, Error> {
    let index = py_class_fields::alloc_type("test.field_races.Node", ti::kTVMFFIObject)?;
    let records = Array::new(vec![record("x", ti::kTVMFFIAny, 16, 24), record("o", ti::kTVMFFIObject, 8, 40)])?;
    // Structure kind 1: a tree node, compared and hashed by its fields.
    py_class_fields::register_fields(index, &records, 48, 1)?;
    Ok(index)
}

fn new_node(index: i32) -> Result<ObjectRef, Error> {
    let make = tether_core::reflection::attr_columns::attr_value(index, b"__ffi_new__").expect("__ffi_new__ registered");
    Function::from_object(make.get::<ObjectRef>()?)?.call(&[])?.get::<ObjectRef>()
}

fn set(obj: &ObjectRef, i: usize, v: Any) -> Result<(), Error> {
    let fields = type_registry::all_fields(obj.type_index());
    dataclass::set_field(obj, &fields[i], v.as_raw())
}

#[test]
fn walks_hold_what_they_read_while_another_thread_writes_fields() -> Result<(), Error> {
    let index = node_type()?;
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
