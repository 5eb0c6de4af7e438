//! Instances of the test types: allocated through the core's allocator
//! registry (so every frontend ties and frees them like any other object),
//! zero-filled and then given their creator's initial field values; their
//! deleter releases the owning fields and returns the block.
//!
//! A type's [`Layout`] (size and every field, parents' included) is kept
//! for the process in a table indexed by type index (the deleter and the
//! copy find it there) and by slot (a type's metadata creator is a plain C
//! function with no context, so each type gets the creator monomorphised
//! for its slot).
//!
//! SAFETY invariants: an object whose deleter is [`deleter`] was made by
//! [`instantiate`] for a layout in the table, which lists fields of the
//! storages at the offsets the object has.

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;
use std::sync::{Arc, RwLock};

use tether_sys::abi::{
    kTVMFFIObjectDeleterFlagBitMaskStrong, kTVMFFIObjectDeleterFlagBitMaskWeak, TVMFFIObject, TVMFFIObjectAllocHeader,
    TVMFFIObjectCreator, TVMFFIObjectHandle, MARKER_REGISTRY_ALLOCATED,
};

use super::storage::Store;
use crate::core_api::api;
use crate::ffi::{Any, Error, ObjectRef};

/// One field of an instance.
pub struct SlotField {
    pub name: &'static str,
    pub offset: usize,
    pub store: Store,
    /// What a freshly created instance holds (zero when None).
    pub initial: Option<Any>,
}

pub struct Layout {
    pub type_index: i32,
    pub type_key: &'static str,
    pub total_size: usize,
    pub fields: Vec<SlotField>,
}

impl Layout {
    pub fn field(&self, name: &str) -> Option<&SlotField> {
        self.fields.iter().find(|f| f.name == name)
    }
}

#[derive(Default)]
struct Table {
    by_index: HashMap<i32, Arc<Layout>>,
    by_slot: Vec<Arc<Layout>>,
}

static TABLE: RwLock<Option<Table>> = RwLock::new(None);

/// Record a type's layout; its creator (None once the creator slots run out).
pub fn record(layout: Layout) -> (Arc<Layout>, Option<TVMFFIObjectCreator>) {
    let layout = Arc::new(layout);
    let mut guard = TABLE.write().unwrap_or_else(|e| e.into_inner());
    let table = guard.get_or_insert_with(Table::default);
    table.by_index.insert(layout.type_index, layout.clone());
    table.by_slot.push(layout.clone());
    let creator = CREATORS.get(table.by_slot.len() - 1).copied();
    (layout, creator)
}

pub fn layout_of(type_index: i32) -> Option<Arc<Layout>> {
    TABLE.read().ok()?.as_ref()?.by_index.get(&type_index).cloned()
}

/// The layout of the nearest test type among `type_index` and its
/// ancestors: an object of a type deriving from a test type (a Python
/// class extending it) has that type's fields at the same offsets.
pub fn layout_of_instance(type_index: i32) -> Option<Arc<Layout>> {
    if let Some(layout) = layout_of(type_index) {
        return Some(layout);
    }
    let info = crate::ffi::type_table::type_info(type_index)?;
    let depth = usize::try_from(info.type_depth).ok()?;
    (0..depth).rev().find_map(|d| {
        // SAFETY: the ancestors array has `type_depth` live entries, kept
        // by the core for the process.
        let ancestor = unsafe { (*info.type_ancestors.add(d)).as_ref() }?;
        layout_of(ancestor.type_index)
    })
}

/// The instance size and fields (its ancestors' included) of a type the
/// testing library did not declare, from the core's records; None for
/// `ffi.Object` and for types without metadata. Fields sharing an offset
/// (an alias such as `ffi.IntEnum`'s `value`) are listed once, so an
/// owning field is released once.
pub fn native_parent_fields(type_index: i32) -> Result<Option<(usize, Vec<SlotField>)>, Error> {
    use crate::ffi::bytes::bytes_to_string;
    use crate::ffi::type_table::type_info;
    use tether_sys::abi::type_index as ti;

    let Some(info) = type_info(type_index) else { return Ok(None) };
    // SAFETY: NULL or a metadata record the core keeps for the process.
    let Some(md) = (unsafe { info.metadata.as_ref() }) else { return Ok(None) };
    if type_index == ti::kTVMFFIObject {
        return Ok(None);
    }
    let mut chain = Vec::new();
    let depth = usize::try_from(info.type_depth).unwrap_or(0);
    for d in 0..depth {
        // SAFETY: the ancestors array has `type_depth` live entries.
        if let Some(a) = unsafe { (*info.type_ancestors.add(d)).as_ref() } {
            chain.push(a);
        }
    }
    chain.push(info);
    let mut fields: Vec<SlotField> = Vec::new();
    for t in chain {
        for i in 0..usize::try_from(t.num_fields).unwrap_or(0) {
            // SAFETY: the core keeps `num_fields` records at `fields`.
            let f = unsafe { &*t.fields.add(i) };
            let offset = usize::try_from(f.offset).map_err(|_| Error::runtime_error("a field at a negative offset"))?;
            if fields.iter().any(|s| s.offset == offset) {
                continue;
            }
            let store = match (f.field_static_type_index, f.size) {
                (ti::kTVMFFIInt, 8) => Store::I64,
                (ti::kTVMFFIFloat, 8) => Store::F64,
                (ti::kTVMFFIBool, 1) => Store::Bool,
                (_, 16) => Store::Any,
                (i, 8) if i >= ti::kTVMFFIStaticObjectBegin || i == ti::kTVMFFIAny => Store::Object,
                _ => {
                    return Err(Error::runtime_error(format!(
                        "field {} of {} has a storage the testing library does not model",
                        bytes_to_string(&f.name),
                        bytes_to_string(&t.type_key)
                    )))
                }
            };
            // Field names live as long as the layout table (the process).
            let name: &'static str = Box::leak(bytes_to_string(&f.name).into_boxed_str());
            fields.push(SlotField { name, offset, store, initial: None });
        }
    }
    let size = usize::try_from(md.total_size).map_err(|_| Error::runtime_error("a negative instance size"))?;
    Ok(Some((size, fields)))
}

fn layout_at(slot: usize) -> Option<Arc<Layout>> {
    TABLE.read().ok()?.as_ref()?.by_slot.get(slot).cloned()
}

/// A new instance with every field at its initial value.
pub fn instantiate(layout: &Layout) -> Result<ObjectRef, Error> {
    // SAFETY: the core's allocator entry is valid for the process.
    let alloc = unsafe { &*(api().TVMFFIGetCustomAllocator)() };
    let allocate = alloc.allocate.ok_or_else(|| Error::runtime_error("the core has no allocator"))?;
    // SAFETY: a size and alignment for this layout; the allocator returns
    // a block of at least that size, preceded by its allocation header.
    let body = unsafe { allocate(layout.total_size, 8, layout.type_index, alloc.context) } as *mut u8;
    let body = NonNull::new(body)
        .ok_or_else(|| Error::new("MemoryError", format!("cannot allocate an instance of {}", layout.type_key)))?;
    // SAFETY: `total_size` writable bytes; zero is a valid value of every
    // field storage, and the header is written before the object is shared.
    let obj = unsafe {
        std::ptr::write_bytes(body.as_ptr(), 0, layout.total_size);
        (body.as_ptr() as *mut TVMFFIObject).write(TVMFFIObject {
            combined_ref_count: 1 | (1 << 32),
            type_index: layout.type_index,
            __padding: MARKER_REGISTRY_ALLOCATED,
            deleter: Some(deleter),
        });
        ObjectRef::from_raw_owned(body.cast())
    };
    for f in &layout.fields {
        if let Some(v) = &f.initial {
            // SAFETY: a field of this layout inside the new instance.
            unsafe { f.store.write(field_addr(&obj, f), v.clone())? };
        }
    }
    Ok(obj)
}

pub fn field_addr(obj: &ObjectRef, f: &SlotField) -> *mut u8 {
    (obj.as_ptr() as *mut u8).wrapping_add(f.offset)
}

/// A new instance sharing `src`'s field values (`__ffi_shallow_copy__`).
pub fn shallow_copy(src: &ObjectRef) -> Result<ObjectRef, Error> {
    let layout = layout_of(src.type_index())
        .ok_or_else(|| Error::type_error(format!("cannot copy an object of type index {}", src.type_index())))?;
    let copy = instantiate(&layout)?;
    for f in &layout.fields {
        // SAFETY: both objects have this layout; the copy's owning fields
        // are released first so the copy starts from zero.
        unsafe {
            f.store.release(field_addr(&copy, f));
            f.store.copy(field_addr(&copy, f), field_addr(src, f));
        }
    }
    Ok(copy)
}

unsafe extern "C" fn deleter(ptr: *mut c_void, flags: c_int) {
    if flags & kTVMFFIObjectDeleterFlagBitMaskStrong != 0 {
        // SAFETY: the core calls the deleter with the object (module invariant).
        let index = unsafe { (*(ptr as *const TVMFFIObject)).type_index };
        if let Some(layout) = layout_of(index) {
            for f in &layout.fields {
                // SAFETY: a field of this layout inside the dying object.
                unsafe { f.store.release((ptr as *mut u8).add(f.offset)) };
            }
        }
    }
    if flags & kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: allocated through the registry: its header precedes the body.
        unsafe {
            let header = &*(ptr as *const TVMFFIObjectAllocHeader).sub(1);
            if let Some(free) = header.delete_space {
                free(ptr);
            }
        }
    }
}

fn create(slot: usize, out: *mut TVMFFIObjectHandle) -> c_int {
    let made = layout_at(slot)
        .ok_or_else(|| Error::runtime_error("unknown creator slot"))
        .and_then(|l| instantiate(&l));
    match made {
        Ok(o) => {
            // SAFETY: the core passes a writable output slot; it takes our reference.
            unsafe { out.write(o.into_raw().cast()) };
            0
        }
        Err(e) => {
            e.raise();
            -1
        }
    }
}

unsafe extern "C" fn creator<const SLOT: usize>(out: *mut TVMFFIObjectHandle) -> c_int {
    create(SLOT, out)
}

macro_rules! creator_table {
    ($($n:literal)*) => { [$(creator::<$n> as TVMFFIObjectCreator),*] };
}

static CREATORS: [TVMFFIObjectCreator; 48] = creator_table!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
    24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47
);
