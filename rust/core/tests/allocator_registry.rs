//! A custom allocator installed by the test sees every allocation the core
//! makes (core types, containers, dataclass instances, Rust-defined types)
//! and every free. Its own test binary: the allocator is process-wide.

use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::Mutex;

use tether_core::abi::{type_index as ti, TVMFFICustomAllocator, TVMFFIObject, TVMFFIObjectAllocHeader};
use tether_core::object::alloc_header::{self, has_registry_marker};
use tether_core::dataclass::{self, FieldKind, FieldSpec};
use tether_core::{Any, Array, Error, Function, List, Map, ObjectPtr, ObjectType, Shape};

/// Live bodies handed out, and every type index seen.
static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);
static SEEN: Mutex<Vec<i32>> = Mutex::new(Vec::new());

#[repr(C)]
struct Block {
    size: usize,
    header: TVMFFIObjectAllocHeader,
}

unsafe extern "C" fn counting_allocate(size: usize, align: usize, type_index: i32, ctx: *mut c_void) -> *mut c_void {
    assert_eq!(ctx as usize, 0xC0FFEE, "context is passed through");
    assert!(align <= 16, "the core asks for at most 16 here");
    let layout = std::alloc::Layout::from_size_align(size + 16, 16).unwrap();
    // SAFETY: test allocator; 16 bytes of prefix hold our Block.
    unsafe {
        let base = std::alloc::alloc(layout);
        if base.is_null() {
            return std::ptr::null_mut();
        }
        std::ptr::write(base as *mut Block, Block { size, header: TVMFFIObjectAllocHeader { delete_space: Some(counting_free) } });
        let body = base.add(16);
        LIVE.lock().unwrap().get_or_insert_with(HashSet::new).insert(body as usize);
        SEEN.lock().unwrap().push(type_index);
        body as *mut c_void
    }
}

unsafe extern "C" fn counting_free(body: *mut c_void) {
    assert!(LIVE.lock().unwrap().as_mut().unwrap().remove(&(body as usize)), "freed once, and only ours");
    // SAFETY: undoing counting_allocate.
    unsafe {
        let base = (body as *mut u8).sub(16);
        let size = (*(base as *const Block)).size;
        std::alloc::dealloc(base, std::alloc::Layout::from_size_align(size + 16, 16).unwrap());
    }
}

#[repr(C)]
struct Point {
    header: TVMFFIObject,
    x: i64,
}
tether_core::object_type!(Point, "test.alloc.Point");

fn live() -> usize {
    LIVE.lock().unwrap().as_ref().map_or(0, |s| s.len())
}

#[test]
fn custom_allocator_sees_every_allocation_and_free() -> Result<(), Error> {
    static mut ENTRY: TVMFFICustomAllocator =
        TVMFFICustomAllocator { allocate: Some(counting_allocate), context: 0xC0FFEE as *mut c_void };
    // Register types and globals first so their one-time objects are not counted.
    let dc = dataclass::register_type(
        "test.alloc.DC",
        ti::kTVMFFIObject,
        vec![FieldSpec { name: "v".into(), kind: FieldKind::Any, flags: 0, frozen: false }],
    )?;
    let _ = Point::type_index();
    let _ = Function::get_global("ffi.Array");

    // SAFETY: the entry is a static that lives for the process.
    unsafe { alloc_header::set_allocator(std::ptr::addr_of_mut!(ENTRY))? };
    assert_eq!(live(), 0);
    {
        let s = Any::string("a string long enough to be heap allocated")?;
        let b = Any::bytes(b"bytes long enough to be on the heap")?;
        let arr = Array::new(vec![s.clone(), Any::from(1i64)])?;
        let list = List::new(vec![b.clone()])?;
        let map = Map::new(vec![(s.clone(), b.clone())])?;
        let shape = Shape::new(&[1, 2, 3])?;
        let f = Function::from_closure(|_| Ok(Any::none()))?;
        let inst = dataclass::new_instance(dc)?;
        let p = ObjectPtr::new(Point { header: tether_core::object::header_placeholder(), x: 7 })?;
        for o in [
            s.as_object().unwrap(),
            arr.as_object(),
            inst.clone(),
            p.to_object_ref(),
            f.as_object().clone(),
        ] {
            // SAFETY: live objects.
            assert!(unsafe { has_registry_marker(o.as_ptr()) }, "{o:?} carries the registry marker");
        }
        let seen = SEEN.lock().unwrap().clone();
        for want in [ti::kTVMFFIStr, ti::kTVMFFIBytes, ti::kTVMFFIArray, ti::kTVMFFIList, ti::kTVMFFIMap, ti::kTVMFFIShape, ti::kTVMFFIFunction, dc, Point::type_index()] {
            assert!(seen.contains(&want), "type index {want} went through the registry; saw {seen:?}");
        }
        assert_eq!(live(), 9);
        drop((arr, list, map, shape, f, inst, p));
        assert_eq!(live(), 2, "only the string and bytes remain");
    }
    assert_eq!(live(), 0, "every allocation was freed through delete_space");

    // NULL restores the builtin allocator; new objects no longer reach ours.
    // SAFETY: NULL is always accepted.
    unsafe { alloc_header::set_allocator(std::ptr::null_mut())? };
    let before = SEEN.lock().unwrap().len();
    let _s = Any::string("after restoring the builtin allocator")?;
    assert_eq!(SEEN.lock().unwrap().len(), before);
    assert_eq!(alloc_header::current_allocator(), alloc_header::builtin_allocator());
    Ok(())
}

