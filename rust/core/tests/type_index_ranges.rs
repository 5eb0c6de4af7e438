//! Type-index ranges through `TVMFFITypeGetOrAllocIndex`: the indices
//! TVM-FFI 0.1.15's runtime hands out for the same registrations (observed
//! on its library: a base of 4 child slots, children filling it, an
//! unrelated type past its range, nested bases, overflow allowed and
//! forbidden, interleaved order), refusals raised as errors, and the
//! headers' inline `IsInstance` (a range test, then the ancestor table only
//! for types that allow overflow) agreeing with the registry everywhere.
//!
//! Every test takes `SERIAL`: the fresh-index counter is process-wide, and
//! the expected indices assume no other registration slips in between.

use std::sync::Mutex;

use tether_core::abi::{type_index as ti, TVMFFIByteArray};
use tether_core::c_api::{TVMFFIGetTypeInfo, TVMFFITypeGetOrAllocIndex};
use tether_core::values::error::take_raised;
use tether_core::types::type_registry;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A type as the headers declare it: what `IsInstance<T>` compiles in.
#[derive(Clone, Copy)]
struct Declared {
    index: i32,
    depth: i32,
    child_slots: i32,
    can_overflow: bool,
}

fn alloc(key: &str, depth: i32, child_slots: i32, can_overflow: bool, parent: i32) -> i32 {
    let k = TVMFFIByteArray::from_slice(key.as_bytes());
    // SAFETY: a valid byte array.
    unsafe { TVMFFITypeGetOrAllocIndex(&k, -1, depth, child_slots, can_overflow as i32, parent) }
}

/// Register `key` and return what its headers would declare.
fn declare(key: &str, child_slots: i32, can_overflow: bool, parent: i32) -> Declared {
    let depth = type_registry::type_info(parent).unwrap().type_depth + 1;
    let index = alloc(key, depth, child_slots, can_overflow, parent);
    assert!(index >= 0, "{key}: {:?}", take_raised().map(|e| e.message().to_string()));
    Declared { index, depth, child_slots, can_overflow }
}

/// Register `key`, expecting a refusal raised as a ValueError whose message
/// contains `needle`; the key stays unregistered.
fn refused(key: &str, depth: i32, child_slots: i32, can_overflow: bool, parent: i32, needle: &str) {
    assert_eq!(alloc(key, depth, child_slots, can_overflow, parent), -1, "{key} was accepted");
    let e = take_raised().expect("an error was raised");
    assert_eq!(e.kind(), "ValueError");
    assert!(e.message().contains(needle), "{key}: {}", e.message());
    assert_eq!(type_registry::key_to_index(key.as_bytes()), None);
}

/// The headers' inline test of `IsInstance<T>()` on an object of type `x`.
fn header_is_instance(x: i32, t: &Declared) -> bool {
    let end = t.index + t.child_slots + 1;
    if (t.index..end).contains(&x) {
        return true;
    }
    if !t.can_overflow || x < t.index {
        return false;
    }
    let info = TVMFFIGetTypeInfo(x);
    assert!(!info.is_null());
    // SAFETY: registry type infos live for the process; the ancestor array
    // holds type_depth entries.
    unsafe { (*info).type_depth > t.depth && (**(*info).type_ancestors.add(t.depth as usize)).type_index == t.index }
}

/// For every pair, the compiled check, the registry's and the ancestry agree.
fn assert_is_instance_agrees(types: &[(&str, Declared)]) {
    for (xk, x) in types {
        for (tk, t) in types {
            let truth = type_registry::is_instance(x.index, t.index);
            assert_eq!(header_is_instance(x.index, t), truth, "IsInstance<{tk}>({xk})");
        }
    }
}

#[test]
fn indices_follow_tvm_ffi_for_the_same_registrations() {
    let _g = serial();
    let obj = ti::kTVMFFIObject;
    // (TVM-FFI 0.1.15 gave base = 138: its library registers ten types of
    // its own at load.) The offsets are what matter.
    let base = declare("ranges.Base4", 4, true, obj);
    let c1 = declare("ranges.C1", 0, true, base.index);
    let c2 = declare("ranges.C2", 1, true, base.index);
    let unrelated = declare("ranges.Unrelated", 0, true, obj);
    let c3 = declare("ranges.C3", 0, true, base.index);
    let c2a = declare("ranges.C2a", 0, true, c2.index);
    let c2b = declare("ranges.C2b", 0, true, c2.index);
    let c4 = declare("ranges.C4", 0, true, base.index);
    let c1a = declare("ranges.C1a", 0, true, c1.index);
    let outer = declare("ranges.Outer6", 6, true, obj);
    let inner = declare("ranges.Inner3", 3, true, outer.index);
    let inner_x = declare("ranges.InnerX", 0, true, inner.index);
    let outer_b = declare("ranges.OuterB", 1, true, outer.index);
    let outer_c = declare("ranges.OuterC", 1, true, outer.index);
    let closed = declare("ranges.Closed1", 1, false, obj);
    let closed_a = declare("ranges.ClosedA", 0, true, closed.index);
    refused("ranges.ClosedB", 2, 0, true, closed.index, "forbids overflow");
    // ClosedA asked for overflow, but under a closed parent it is closed.
    assert_eq!(type_registry::child_slots(closed_a.index), Some((0, false)));
    refused("ranges.ClosedAX", 3, 0, true, closed_a.index, "forbids overflow");
    let closed3 = declare("ranges.Closed3", 3, false, obj);
    refused("ranges.Closed3Big", 2, 3, true, closed3.index, "forbids overflow");
    let mid = declare("ranges.Closed3Mid", 2, true, closed3.index);
    let mid_x = declare("ranges.MidX", 0, true, mid.index);
    let mid_y = declare("ranges.MidY", 0, true, mid.index);
    refused("ranges.MidZ", 3, 0, true, mid.index, "forbids overflow");
    let last = declare("ranges.Last", 0, true, obj);

    let b = base.index;
    let got: Vec<i32> = [
        base, c1, c2, unrelated, c3, c2a, c2b, c4, c1a, outer, inner, inner_x, outer_b, outer_c, closed, closed_a,
        closed3, mid, mid_x, mid_y, last,
    ]
    .iter()
    .map(|d| d.index - b)
    .collect();
    assert_eq!(got, [0, 1, 2, 5, 4, 3, 6, 7, 8, 9, 10, 11, 14, 16, 18, 19, 20, 21, 22, 23, 24]);

    // A key already registered keeps its index whatever is asked now.
    assert_eq!(alloc("ranges.Base4", 1, 9, false, obj), b);
    assert_eq!(type_registry::child_slots(b), Some((4, true)));

    let all = [
        ("Base4", base),
        ("C1", c1),
        ("C2", c2),
        ("Unrelated", unrelated),
        ("C3", c3),
        ("C2a", c2a),
        ("C2b", c2b),
        ("C4", c4),
        ("C1a", c1a),
        ("Outer6", outer),
        ("Inner3", inner),
        ("InnerX", inner_x),
        ("OuterB", outer_b),
        ("OuterC", outer_c),
        ("Closed1", closed),
        ("ClosedA", closed_a),
        ("Closed3", closed3),
        ("Closed3Mid", mid),
        ("MidX", mid_x),
        ("MidY", mid_y),
        ("Last", last),
    ];
    assert_is_instance_agrees(&all);
}

#[test]
fn no_unrelated_type_lands_in_a_reserved_range() {
    let _g = serial();
    let obj = ti::kTVMFFIObject;
    // Bases of several sizes with unrelated types and children interleaved.
    let mut types: Vec<(String, Declared)> = Vec::new();
    let mut bases = Vec::new();
    for (i, slots) in [3, 0, 5, 1, 2].into_iter().enumerate() {
        let key = format!("interleave.Base{i}");
        let d = declare(&key, slots, true, obj);
        types.push((key, d));
        bases.push(d);
        let key = format!("interleave.Free{i}");
        types.push((key.clone(), declare(&key, 0, true, obj)));
        for (j, parent) in bases.clone().into_iter().enumerate() {
            let key = format!("interleave.Child{i}_{j}");
            let child = declare(&key, if j % 2 == 0 { 1 } else { 0 }, true, parent.index);
            types.push((key, child));
            if child.child_slots > 0 {
                let key = format!("interleave.Grand{i}_{j}");
                types.push((key.clone(), declare(&key, 0, true, child.index)));
            }
        }
    }
    // Every reserved range holds only the type and its descendants.
    for (tk, t) in &types {
        for (xk, x) in &types {
            if (t.index..=t.index + t.child_slots).contains(&x.index) {
                assert!(type_registry::is_instance(x.index, t.index), "{xk} lies in the range of {tk}");
            }
        }
    }
    let named: Vec<(&str, Declared)> = types.iter().map(|(k, d)| (k.as_str(), *d)).collect();
    assert_is_instance_agrees(&named);
}

#[test]
fn zero_slot_types_allocate_one_index_each() {
    let _g = serial();
    let a = declare("zero.A", 0, true, ti::kTVMFFIObject);
    let b = declare("zero.B", 0, true, a.index);
    let c = declare("zero.C", 0, true, ti::kTVMFFIObject);
    assert_eq!((b.index - a.index, c.index - a.index), (1, 2));
    // A leaf that forbids overflow takes no subtype at all.
    let leaf = declare("zero.Leaf", 0, false, ti::kTVMFFIObject);
    refused("zero.UnderLeaf", 2, 0, true, leaf.index, "forbids overflow");
    assert_is_instance_agrees(&[("A", a), ("B", b), ("C", c), ("Leaf", leaf)]);
}

#[test]
fn builtin_types_take_subtypes_as_tvm_ffi_does() {
    let _g = serial();
    // The fixed-index object types forbid subtypes, except ffi.Object and
    // ffi.VisitInterrupt; PODs have none either.
    for parent in [ti::kTVMFFIError, ti::kTVMFFIFunction, ti::kTVMFFIModule, ti::kTVMFFIStr, ti::kTVMFFIArray] {
        refused(&format!("builtin.Sub{parent}"), 2, 0, true, parent, "forbids overflow");
    }
    refused("builtin.SubInt", 1, 0, true, ti::kTVMFFIInt, "forbids overflow");
    let sub = declare("builtin.SubVisitInterrupt", 0, true, ti::kTVMFFIVisitInterrupt);
    assert!(sub.index >= ti::kTVMFFIDynObjectBegin);
    assert_eq!(type_registry::child_slots(ti::kTVMFFIObject), Some((0, true)));
}

#[test]
fn bad_requests_are_errors_not_aborts() {
    let _g = serial();
    let obj = ti::kTVMFFIObject;
    refused("bad.Depth", 5, 0, true, obj, "depth");
    refused("bad.NegativeSlots", 1, -1, true, obj, "num_child_slots");
    refused("bad.HugeSlots", 1, i32::MAX, true, obj, "num_child_slots");
    refused("bad.DynamicRoot", 0, 0, true, -1, "needs a parent");
    refused("bad.UnknownParent", 1, 0, true, 99_999, "unknown parent");
    let k = TVMFFIByteArray::from_slice(b"bad.StaticInDynamicRegion");
    // SAFETY: a valid byte array.
    assert_eq!(unsafe { TVMFFITypeGetOrAllocIndex(&k, 200, 1, 0, 1, obj) }, -1);
    assert!(take_raised().unwrap().message().contains("below 128"));
    let k = TVMFFIByteArray::from_slice(b"bad.StaticRangeTooLong");
    // SAFETY: as above.
    assert_eq!(unsafe { TVMFFITypeGetOrAllocIndex(&k, 120, 1, 8, 1, obj) }, -1);
    assert!(take_raised().unwrap().message().contains("below 128"));
    // A free static index below the dynamic region is fine, range included.
    let k = TVMFFIByteArray::from_slice(b"ranges.Static100");
    // SAFETY: as above.
    assert_eq!(unsafe { TVMFFITypeGetOrAllocIndex(&k, 100, 1, 2, 1, obj) }, 100);
    let k = TVMFFIByteArray::from_slice(b"ranges.Static101");
    // SAFETY: as above.
    assert_eq!(unsafe { TVMFFITypeGetOrAllocIndex(&k, 101, 1, 0, 1, obj) }, -1);
    assert!(take_raised().unwrap().message().contains("overlaps"));
    let child = declare("ranges.Static100Child", 0, true, 100);
    assert_eq!(child.index, 101);
}
