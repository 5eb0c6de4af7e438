//! Visitors and mutators of any layout: objects that carry only TVM-FFI's
//! prefix (header, vtable, def region) and their own vtable, as code
//! compiled against the headers makes them, go through the core's globals
//! and builtin container hooks without the core reading past the prefix;
//! and the core's own visitors can be driven through their vtable, as
//! compiled code drives any visitor it is handed.

use std::sync::{Arc, Mutex};

use tether_core::abi::{type_index as ti, TVMFFIAny, TVMFFIObject};
use tether_core::object::header_placeholder;
use tether_core::structural::mutate::protocol::{MutatorBase, MutatorVTable};
use tether_core::containers::typed_args::Entry;
use tether_core::structural::visit::protocol::{VisitorBase, VisitorVTable};
use tether_core::structural::visit::structural_visit;
use tether_core::{Any, Array, Function, Map, ObjectPtr, ObjectRef};

fn int(i: i64) -> Any {
    Any::from(i)
}

fn arr(items: Vec<Any>) -> Any {
    Any::from_object(Array::new(items).unwrap().into_object())
}

fn global(name: &str) -> Function {
    Function::get_global(name).unwrap()
}

/// A visitor laid out as compiled code lays out its engines: the prefix,
/// then state the core knows nothing about.
#[repr(C)]
struct ForeignVisitor {
    header: TVMFFIObject,
    vtable: *const VisitorVTable,
    region: i32,
    seen: Mutex<Vec<i64>>,
}
// SAFETY: the vtable is a static; the rest is thread-safe.
unsafe impl Send for ForeignVisitor {}
// SAFETY: as above.
unsafe impl Sync for ForeignVisitor {}
tether_core::object_type!(ForeignVisitor, "ffi.StructuralVisitor");

unsafe extern "C" fn foreign_visit(p: *mut VisitorBase, value: TVMFFIAny) -> TVMFFIAny {
    // SAFETY: this vtable is only installed on ForeignVisitor.
    let this = unsafe { &*(p as *const ForeignVisitor) };
    if value.type_index == ti::kTVMFFIInt {
        // SAFETY: an int carries v_int64.
        this.seen.lock().unwrap().push(unsafe { value.value.v_int64 });
        return TVMFFIAny::NONE;
    }
    // Everything else through the core's default descent.
    // SAFETY: `p` is a live object; a new reference is taken.
    let me = unsafe { ObjectRef::from_raw_borrowed(std::ptr::NonNull::new(p as *mut TVMFFIObject).unwrap()) };
    let v = Any::from_view(&value).unwrap();
    global("ffi.StructuralVisitorDefaultVisit").call(&[Any::from_object(me), v]).unwrap().into_raw()
}

static FOREIGN_VISIT: VisitorVTable = VisitorVTable { visit: foreign_visit };

#[test]
fn visitors_made_elsewhere_go_through_their_own_vtable() {
    let visitor = ObjectPtr::new(ForeignVisitor {
        header: header_placeholder(),
        vtable: &FOREIGN_VISIT,
        region: 0,
        seen: Mutex::new(Vec::new()),
    })
    .unwrap();
    let map = Any::from_object(Map::new(vec![(Any::string("k").unwrap(), int(4))]).unwrap().into_object());
    let root = arr(vec![int(1), arr(vec![int(2), int(3)]), map]);
    let r = global("ffi.StructuralVisitorVisit").call(&[Any::from_object(visitor.to_object_ref()), root]).unwrap();
    assert!(r.is_none());
    assert_eq!(*visitor.seen.lock().unwrap(), vec![1, 2, 3, 4]);
    // The def region is the prefix's.
    let kind = global("ffi.StructuralVisitorDefRegionKind").call(&[Any::from_object(visitor.to_object_ref())]).unwrap();
    assert_eq!(kind.get::<i64>().unwrap(), 0);
}

#[test]
fn the_cores_visitors_answer_through_their_vtable() {
    // A visit callback drives the visitor it is handed through the prefix,
    // as compiled code does (`visitor->VisitExpected(child)`).
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let on_array = Function::from_closure(move |args| {
        let visitor = args[1].get::<ObjectRef>()?;
        let base = visitor.as_ptr() as *mut VisitorBase;
        let items = Array::from_object(args[0].get::<ObjectRef>()?)?;
        for it in items.iter() {
            // SAFETY: a live visitor; its vtable outlives it; the result is owned.
            let r = unsafe {
                let vtable = *(base as *const u8).add(24).cast::<*const VisitorVTable>();
                Any::from_raw_owned(((*vtable).visit)(base, *it.as_raw()))
            };
            assert!(r.is_none());
        }
        Ok(Any::none())
    })
    .unwrap();
    let on_int = Function::from_closure(move |args| {
        s.lock().unwrap().push(args[0].get::<i64>()?);
        Ok(Any::none())
    })
    .unwrap();
    let callbacks = vec![Entry::new(ti::kTVMFFIArray, on_array), Entry::new(ti::kTVMFFIInt, on_int)];
    let root = arr(vec![int(1), arr(vec![int(2)]), int(3)]);
    assert!(structural_visit(&root, callbacks).unwrap().is_none());
    assert_eq!(*seen.lock().unwrap(), vec![1, 2, 3]);
}

/// A mutator laid out as compiled code lays out its engines.
#[repr(C)]
struct ForeignMutator {
    header: TVMFFIObject,
    vtable: *const MutatorVTable,
    region: i32,
    calls: Mutex<u32>,
}
// SAFETY: the vtable is a static; the rest is thread-safe.
unsafe impl Send for ForeignMutator {}
// SAFETY: as above.
unsafe impl Sync for ForeignMutator {}
tether_core::object_type!(ForeignMutator, "ffi.StructuralMutator");

unsafe extern "C" fn foreign_mutate(p: *mut MutatorBase, value: TVMFFIAny) -> TVMFFIAny {
    // SAFETY: this vtable is only installed on ForeignMutator.
    *unsafe { &*(p as *const ForeignMutator) }.calls.lock().unwrap() += 1;
    if value.type_index == ti::kTVMFFIInt {
        // SAFETY: an int carries v_int64.
        return Any::from(unsafe { value.value.v_int64 } + 1).into_raw();
    }
    // SAFETY: `p` is a live object; a new reference is taken.
    let me = unsafe { ObjectRef::from_raw_borrowed(std::ptr::NonNull::new(p as *mut TVMFFIObject).unwrap()) };
    let v = Any::from_view(&value).unwrap();
    global("ffi.StructuralMutatorDefaultMutate").call(&[Any::from_object(me), v]).unwrap().into_raw()
}

unsafe extern "C" fn no_remap(_: *mut MutatorBase, _: TVMFFIAny) -> TVMFFIAny {
    TVMFFIAny::NONE
}

unsafe extern "C" fn no_remap_set(_: *mut MutatorBase, _: TVMFFIAny, _: TVMFFIAny) -> TVMFFIAny {
    TVMFFIAny::NONE
}

static FOREIGN_MUTATE: MutatorVTable = MutatorVTable {
    mutate: foreign_mutate,
    maybe_inplace_mutate: foreign_mutate,
    var_remap_get: no_remap,
    var_remap_set: no_remap_set,
};

#[test]
fn mutators_made_elsewhere_rewrite_containers_copy_on_write() {
    let mutator = ObjectPtr::new(ForeignMutator {
        header: header_placeholder(),
        vtable: &FOREIGN_MUTATE,
        region: 0,
        calls: Mutex::new(0),
    })
    .unwrap();
    let root = arr(vec![int(1), arr(vec![int(2)]), Any::string("s").unwrap()]);
    let out = global("ffi.StructuralMutatorMutate").call(&[Any::from_object(mutator.to_object_ref()), root.clone()]).unwrap();
    assert!(!out.same_value(&root));
    let out = Array::from_object(out.get::<ObjectRef>().unwrap()).unwrap();
    assert_eq!(out.get(0).unwrap().get::<i64>().unwrap(), 2);
    let inner = Array::from_object(out.get(1).unwrap().get::<ObjectRef>().unwrap()).unwrap();
    assert_eq!(inner.get(0).unwrap().get::<i64>().unwrap(), 3);
    assert_eq!(out.get(2).unwrap().get::<String>().unwrap(), "s");
    // The input is intact.
    let first = Array::from_object(root.get::<ObjectRef>().unwrap()).unwrap().get(0).unwrap();
    assert_eq!(first.get::<i64>().unwrap(), 1);
    assert_eq!(*mutator.calls.lock().unwrap(), 5);
}

#[test]
fn shallow_copies_of_visitors_keep_their_vtable() {
    let visitor = ObjectPtr::new(ForeignVisitor {
        header: header_placeholder(),
        vtable: &FOREIGN_VISIT,
        region: 2,
        seen: Mutex::new(Vec::new()),
    })
    .unwrap();
    let index = <ForeignVisitor as tether_core::ObjectType>::type_index();
    let copy_fn = tether_core::reflection::attr_columns::attr_value(index, b"__ffi_shallow_copy__").unwrap();
    let copy = Function::from_object(copy_fn.get::<ObjectRef>().unwrap())
        .unwrap()
        .call(&[Any::from_object(visitor.to_object_ref())])
        .unwrap()
        .get::<ObjectRef>()
        .unwrap();
    assert!(!copy.same_as(&visitor.to_object_ref()));
    // SAFETY: a visitor object starts with the prefix: the vtable at byte
    // 24, the region at byte 32.
    let (vtable, region) = unsafe {
        let p = copy.as_ptr() as *const u8;
        (*p.add(24).cast::<*const VisitorVTable>(), *p.add(32).cast::<i32>())
    };
    assert!(std::ptr::eq(vtable, &FOREIGN_VISIT));
    assert_eq!(region, 2);
}
