//! Deep and cyclic input through every recursive algorithm of the core:
//! structural equal/hash/first mismatch, walk and map, repr, JSON text,
//! JSON graphs, deep copy and recursive equality. Deep input must be walked
//! on the calling thread (callbacks see its thread-locals) with memory
//! linear in the depth; cyclic input must terminate with equal, hash and
//! repr agreeing on where cycles close, or with a clear error.

use std::cell::Cell;

use tether_core::serialization::{deep_copy::deep_copy, json, json_graph, repr::repr_print};
use tether_core::structural::equal::{first_mismatch, structural_equal};
use tether_core::structural::hash::structural_hash;
use tether_core::structural::mutate::structural_map;
use tether_core::structural::recursive_compare::recursive_eq;
use tether_core::containers::typed_args::Entry;
use tether_core::structural::visit::structural_walk;
use tether_core::{Any, Array, Dict, Error, Function, List};

/// Deep enough to overflow a test thread's 2 MiB stack many times over
/// (each level takes several frames), small enough for the suite to stay
/// fast in a debug build. The Python suite walks 10^6 levels.
const DEPTH: usize = 40_000;

fn nested_lists(depth: usize) -> Result<Any, Error> {
    let mut v = Any::from_object(List::new(vec![])?.into_object());
    for _ in 0..depth {
        v = Any::from_object(List::new(vec![v])?.into_object());
    }
    Ok(v)
}

/// `[1, <itself>]`.
fn self_list() -> Result<(List, Any), Error> {
    let l = List::new(vec![Any::from(1i64)])?;
    let any = Any::from_object(l.clone().into_object());
    l.push(any.clone())?;
    Ok((l, any))
}

/// Break a List cycle so the test does not leak it.
fn unlink(l: &List) {
    l.clear();
}

thread_local! {
    static MARK: Cell<u64> = const { Cell::new(0) };
}

fn any_type_callback(f: Function) -> Vec<Entry> {
    vec![Entry { type_index: -1, callback: f, takes_mode: false }]
}

#[test]
fn deep_lists_are_compared_hashed_and_printed_on_the_calling_thread() -> Result<(), Error> {
    let (a, b) = (nested_lists(DEPTH)?, nested_lists(DEPTH)?);
    assert!(structural_equal(&a, &b, false, false)?);
    assert_eq!(structural_hash(&a, false, false)?, structural_hash(&b, false, false)?);
    assert!(first_mismatch(&a, &b, false, false)?.is_none());
    let c = nested_lists(DEPTH - 1)?;
    assert!(!structural_equal(&a, &c, false, false)?);
    assert!(first_mismatch(&a, &c, false, false)?.is_some());
    assert!(recursive_eq(&a, &b)?);

    let text = repr_print(&a)?;
    assert_eq!(text.len(), 2 * (DEPTH + 1));
    assert!(text.starts_with("[[[") && text.ends_with("]]]"));
    Ok(())
}

#[test]
fn deep_lists_round_trip_through_json_text_graphs_and_copies() -> Result<(), Error> {
    let a = nested_lists(DEPTH)?;
    let text = json::stringify(&a, 0)?;
    assert_eq!(text.len(), 2 * (DEPTH + 1));
    let back = json::parse(&text)?;
    // JSON arrays come back as Arrays: compare by shape through the text.
    assert_eq!(json::stringify(&back, 0)?, text);

    let graph = json_graph::to_json_graph(&a, &Any::none())?;
    let loaded = json_graph::from_json_graph(&graph)?;
    assert!(structural_equal(&a, &loaded, false, false)?);

    let copy = deep_copy(&a)?;
    assert!(!copy.as_object().unwrap().same_as(&a.as_object().unwrap()));
    assert!(structural_equal(&a, &copy, false, false)?);
    Ok(())
}

#[test]
fn a_deep_walk_calls_back_on_the_calling_thread() -> Result<(), Error> {
    let a = nested_lists(DEPTH)?;
    MARK.with(|m| m.set(0x5eed));
    let caller = std::thread::current().id();
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (seen_in, off_thread) = (seen.clone(), std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)));
    let off_thread_in = off_thread.clone();
    let f = Function::from_closure(move |_| {
        if std::thread::current().id() != caller || MARK.with(|m| m.get()) != 0x5eed {
            off_thread_in.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        seen_in.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Any::none())
    })?;
    assert!(structural_walk(&a, any_type_callback(f.clone()), vec![], true)?.is_none());
    assert_eq!(seen.load(std::sync::atomic::Ordering::Relaxed), DEPTH + 1);
    assert!(!off_thread.load(std::sync::atomic::Ordering::Relaxed), "a callback ran off the calling thread");

    let identity = Function::from_closure(|args| args[0].to_owned())?;
    let mapped = structural_map(a.clone(), any_type_callback(identity), vec![], true)?;
    assert!(structural_equal(&a, &mapped, false, false)?);
    Ok(())
}

#[test]
fn cyclic_lists_compare_and_hash_by_where_the_cycle_closes() -> Result<(), Error> {
    let (la, a) = self_list()?;
    let (lb, b) = self_list()?;
    // c = [1, [1, c]]: the same infinite unfolding, but the cycle closes two
    // levels up instead of one.
    let lc = List::new(vec![Any::from(1i64)])?;
    let inner = List::new(vec![Any::from(1i64), Any::from_object(lc.clone().into_object())])?;
    lc.push(Any::from_object(inner.into_object()))?;
    let c = Any::from_object(lc.clone().into_object());

    assert!(structural_equal(&a, &a, false, false)?);
    assert!(structural_equal(&a, &b, false, false)?);
    assert!(!structural_equal(&a, &c, false, false)?);
    assert!(first_mismatch(&a, &b, false, false)?.is_none());
    assert!(first_mismatch(&a, &c, false, false)?.is_some());
    let (ha, hb, hc) = (structural_hash(&a, false, false)?, structural_hash(&b, false, false)?, structural_hash(&c, false, false)?);
    assert_eq!(ha, hb);
    assert_ne!(ha, hc);
    assert!(recursive_eq(&a, &b)?);

    // A cycle through a Dict value.
    let d = Dict::new(vec![])?;
    d.set(Any::string("self")?, Any::from_object(d.clone().into_object()))?;
    let dv = Any::from_object(d.clone().into_object());
    assert!(structural_equal(&dv, &dv, false, false)?);
    assert_eq!(structural_hash(&dv, false, false)?, structural_hash(&dv, false, false)?);
    assert_eq!(repr_print(&dv)?, "{\"self\": ...}");
    d.clear();

    for l in [la, lb, lc] {
        unlink(&l);
    }
    Ok(())
}

#[test]
fn cyclic_lists_terminate_in_every_other_algorithm() -> Result<(), Error> {
    let (la, a) = self_list()?;
    assert_eq!(repr_print(&a)?, "[1, ...]");
    let err = json::stringify(&a, 0).expect_err("JSON cannot hold a cycle");
    assert!(err.to_string().contains("ycle"), "{err}");
    let err = json_graph::to_json_graph(&a, &Any::none()).expect_err("a graph is written in order");
    assert!(err.to_string().contains("ycle"), "{err}");

    let copy = List::from_object(deep_copy(&a)?.as_object().unwrap())?;
    assert_eq!(copy.len(), 2);
    let copy_obj = copy.clone().into_object();
    assert!(copy.get(1)?.as_object().unwrap().same_as(&copy_obj), "the copy keeps its cycle");
    assert!(!copy_obj.same_as(&la.clone().into_object()));
    unlink(&copy);

    let visits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let v = visits.clone();
    let f = Function::from_closure(move |_| {
        v.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Any::none())
    })?;
    structural_walk(&a, any_type_callback(f), vec![], false)?;
    // The list, its 1, and the back edge to the list (not descended again).
    assert_eq!(visits.load(std::sync::atomic::Ordering::Relaxed), 3);

    let identity = Function::from_closure(|args| args[0].to_owned())?;
    let mapped = structural_map(a.clone(), any_type_callback(identity), vec![], true)?;
    assert_eq!(List::from_object(mapped.as_object().unwrap())?.len(), 2);

    // An Array holding a cyclic List is walked the same way.
    let arr = Any::from_object(Array::new(vec![a.clone(), a.clone()])?.into_object());
    assert!(structural_equal(&arr, &arr, false, false)?);
    assert_eq!(repr_print(&arr)?, "([1, ...], [1, ...])");
    unlink(&la);
    Ok(())
}

/// An Array or Map root held as a key of a Dict inside it: the copied
/// Dict's key is the copied root (fixed up once the root's copy exists),
/// never the original, and the Dict keeps its other pairs and their order.
#[test]
fn a_dict_keyed_by_the_root_being_copied_gets_the_copy_as_key() -> Result<(), Error> {
    use tether_core::Map;
    for root_is_map in [false, true] {
        let d = Dict::new(vec![(Any::string("before")?, Any::from(0i64))])?;
        let root = if root_is_map {
            Any::from_object(Map::new(vec![(Any::string("d")?, Any::from_object(d.as_object()))])?.into_object())
        } else {
            Any::from_object(Array::new(vec![Any::from_object(d.as_object())])?.into_object())
        };
        d.set(root.clone(), Any::from(1i64))?;
        d.set(Any::string("after")?, Any::from(2i64))?;
        let copy = deep_copy(&root)?;
        let copied_dict = if root_is_map {
            Map::from_object(copy.as_object().unwrap())?.get(&Any::string("d")?).unwrap()
        } else {
            Array::from_object(copy.as_object().unwrap())?.iter().next().cloned().unwrap()
        };
        let copied_dict = Dict::from_object(copied_dict.as_object().unwrap())?;
        assert_ne!(copied_dict.as_object().as_ptr(), d.as_object().as_ptr());
        let items = copied_dict.items();
        assert_eq!(items.len(), 3);
        assert_eq!(items[0].0.object_ptr(), None);
        assert_eq!(items[1].0.object_ptr(), copy.object_ptr(), "the key is the copied root");
        assert_ne!(items[1].0.object_ptr(), root.object_ptr());
        assert_eq!(items[1].1.get::<i64>()?, 1);
        assert_eq!(items[2].1.get::<i64>()?, 2);
        // Break the cycles so the test leaks nothing.
        d.clear();
        copied_dict.clear();
    }
    Ok(())
}
