//! Destruction does not recurse per level: long chains of objects, each
//! holding the next, are dropped in a thread with a small native stack.
//! Foreign objects (own layout, own deleter) in a chain still get exactly
//! one Strong/Both call and one Weak call each.

use std::alloc::Layout;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use tether_core::abi::{
    kTVMFFIObjectDeleterFlagBitMaskStrong, kTVMFFIObjectDeleterFlagBitMaskWeak, type_index as ti, TVMFFIObject,
};
use tether_core::dataclass::{self, FieldKind, FieldSpec};
use tether_core::object::COMBINED_BOTH_ONE;
use tether_core::types::type_registry::find_field;
use tether_core::{Any, Array, ObjectRef};

/// Far less than one stack frame per level of any chain below.
const SMALL_STACK: usize = 256 * 1024;

fn on_small_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new().stack_size(SMALL_STACK).spawn(f).expect("spawn").join().expect("no overflow")
}

#[test]
fn million_nested_arrays_drop_without_recursion() {
    let innermost_expired = on_small_stack(|| {
        let innermost = Array::new(vec![Any::from(1i64)]).unwrap().into_object();
        let weak = innermost.downgrade();
        let mut chain = innermost;
        for _ in 0..1_000_000 {
            chain = Array::new(vec![Any::from_object(chain)]).unwrap().into_object();
        }
        assert!(!weak.expired());
        drop(chain);
        weak.expired()
    });
    assert!(innermost_expired);
}

#[test]
fn dataclass_chain_drops_without_recursion() {
    let index = dataclass::register_type(
        "test.deep.Node",
        ti::kTVMFFIObject,
        vec![
            FieldSpec { name: "value".into(), kind: FieldKind::Int, flags: 0, frozen: false },
            FieldSpec { name: "next".into(), kind: FieldKind::Object(ti::kTVMFFIObject), flags: 0, frozen: false },
        ],
    )
    .unwrap();
    let (first_expired, last_value) = on_small_stack(move || {
        let value = find_field(index, "value").unwrap();
        let next = find_field(index, "next").unwrap();
        let tail = dataclass::new_instance(index).unwrap();
        let weak = tail.downgrade();
        let mut head = tail;
        for i in 1..=300_000i64 {
            let node = dataclass::new_instance(index).unwrap();
            dataclass::set_field(&node, value, Any::from(i).as_raw()).unwrap();
            dataclass::set_field(&node, next, Any::from_object(head).as_raw()).unwrap();
            head = node;
        }
        let last = dataclass::get_field(&head, value).unwrap().get::<i64>().unwrap();
        drop(head);
        (weak.expired(), last)
    });
    assert_eq!(last_value, 300_000);
    assert!(first_expired);
}

// A foreign object: its own layout and deleter, holding one reference.
#[repr(C)]
struct ForeignNode {
    header: TVMFFIObject,
    child: *mut TVMFFIObject,
    strong_calls: *const AtomicUsize,
    weak_calls: *const AtomicUsize,
}

unsafe extern "C" fn foreign_deleter(ptr: *mut c_void, flags: i32) {
    let node = ptr as *mut ForeignNode;
    // SAFETY: installed only on ForeignNodes allocated by `foreign_node`;
    // the counters are statics.
    unsafe {
        if flags & kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
            (*(*node).strong_calls).fetch_add(1, Ordering::SeqCst);
            let child = std::mem::replace(&mut (*node).child, std::ptr::null_mut());
            if !child.is_null() {
                drop(ObjectRef::from_raw_owned(NonNull::new_unchecked(child)));
            }
        }
        if flags & kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
            (*(*node).weak_calls).fetch_add(1, Ordering::SeqCst);
            std::alloc::dealloc(ptr as *mut u8, Layout::new::<ForeignNode>());
        }
    }
}

fn foreign_node(child: ObjectRef, strong: &'static AtomicUsize, weak: &'static AtomicUsize) -> ObjectRef {
    let node = ForeignNode {
        header: TVMFFIObject {
            combined_ref_count: COMBINED_BOTH_ONE,
            type_index: ti::kTVMFFIObject,
            __padding: 0,
            deleter: Some(foreign_deleter),
        },
        child: child.into_raw(),
        strong_calls: strong,
        weak_calls: weak,
    };
    // SAFETY: a fresh allocation of the node's layout, written once; the
    // header starts at strong 1 / weak 1, owned by the returned reference.
    unsafe {
        let p = std::alloc::alloc(Layout::new::<ForeignNode>()) as *mut ForeignNode;
        assert!(!p.is_null());
        std::ptr::write(p, node);
        ObjectRef::from_raw_owned(NonNull::new_unchecked(p as *mut TVMFFIObject))
    }
}

#[test]
fn foreign_deleters_in_a_deep_chain_run_exactly_once() {
    static STRONG: AtomicUsize = AtomicUsize::new(0);
    static WEAK: AtomicUsize = AtomicUsize::new(0);
    const LEVELS: usize = 200_000;
    let held_weak = on_small_stack(|| {
        let mut chain = Array::new(Vec::new()).unwrap().into_object();
        let mut held = None;
        for i in 0..LEVELS {
            chain = foreign_node(chain, &STRONG, &WEAK);
            if i == LEVELS / 2 {
                // A weak reference splits this node's release into a Strong
                // call now and a Weak call when the weak reference goes.
                held = Some(chain.downgrade());
            }
            chain = Array::new(vec![Any::from_object(chain)]).unwrap().into_object();
        }
        drop(chain);
        held.unwrap()
    });
    assert_eq!(STRONG.load(Ordering::SeqCst), LEVELS);
    assert_eq!(WEAK.load(Ordering::SeqCst), LEVELS - 1);
    assert!(held_weak.expired());
    assert!(held_weak.upgrade().is_none());
    drop(held_weak);
    assert_eq!(WEAK.load(Ordering::SeqCst), LEVELS);
}

#[test]
fn threads_dropping_chains_that_share_a_tail_destroy_it_once() {
    static STRONG: AtomicUsize = AtomicUsize::new(0);
    static WEAK: AtomicUsize = AtomicUsize::new(0);
    let tail = foreign_node(Array::new(Vec::new()).unwrap().into_object(), &STRONG, &WEAK);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let mut chain = tail.clone();
            std::thread::Builder::new()
                .stack_size(SMALL_STACK)
                .spawn(move || {
                    for _ in 0..100_000 {
                        chain = Array::new(vec![Any::from_object(chain)]).unwrap().into_object();
                    }
                    drop(chain);
                })
                .expect("spawn")
        })
        .collect();
    drop(tail);
    for t in threads {
        t.join().expect("no overflow");
    }
    assert_eq!((STRONG.load(Ordering::SeqCst), WEAK.load(Ordering::SeqCst)), (1, 1));
}
