//! The process-wide type table: type keys, indices, ancestry, and the
//! reflected fields, methods and metadata each type's info points to.
//!
//! The values those records hold (defaults, setters, methods) are kept
//! alive by the reflection layer, which registers them
//! (`reflection::type_members`); the attribute columns live there too
//! (`reflection::attr_columns`). This table knows only the ABI's layouts.
//!
//! Entries are boxed and never removed, so the `TVMFFITypeInfo` pointers
//! handed out by `TVMFFIGetTypeInfo` stay valid for the life of the process.
//! Registration takes the write lock; lookups take the read lock. Which
//! index a new type gets is `type_index_alloc`'s business.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use parking_lot::RwLock;

use crate::abi::{
    field_flag, type_index as ti, TVMFFIAny, TVMFFIByteArray, TVMFFIFieldInfo, TVMFFIMethodInfo,
    TVMFFITypeInfo, TVMFFITypeMetadata,
};
use crate::types::builtin_types::{pod_type_key, STATIC_OBJECT_TYPES};
use crate::types::byte_array::byte_slice;
use crate::types::type_table_error::TypeTableError;
use crate::types::type_index_alloc::{self as alloc, IndexAllocator, Refusal, Slots};

/// Counts the changes to what types are and hold (types, fields, methods,
/// metadata, attributes), so that readers caching facts per type across
/// calls (structural plans, printing) can tell when to look again.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The current generation of the type table (see [`note_change`]).
pub fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// Record a change to the type table or to a type's attributes.
pub fn note_change() {
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

struct TypeEntry {
    info: TVMFFITypeInfo,
    key: Box<[u8]>,
    /// The index range the type reserves for itself and its subtypes.
    slots: Slots,
    ancestors: Vec<*const TVMFFITypeInfo>,
    fields: Vec<TVMFFIFieldInfo>,
    methods: Vec<TVMFFIMethodInfo>,
    /// Field and method arrays outgrown by later registrations, kept so
    /// that references into them (and C readers of `info`) stay valid.
    retired_fields: Vec<Vec<TVMFFIFieldInfo>>,
    retired_methods: Vec<Vec<TVMFFIMethodInfo>>,
    metadata: Option<Box<TVMFFITypeMetadata>>,
    /// Byte strings the field/method/metadata records point into.
    strings: Vec<Box<[u8]>>,
}

struct Registry {
    entries: Vec<Option<Box<TypeEntry>>>,
    by_key: HashMap<Vec<u8>, i32>,
    alloc: IndexAllocator,
}

// SAFETY: the raw pointers inside point into boxed entries owned by the
// registry itself, which is only mutated under the write lock.
unsafe impl Send for Registry {}
// SAFETY: as above.
unsafe impl Sync for Registry {}

fn registry() -> &'static RwLock<Registry> {
    static REG: OnceLock<RwLock<Registry>> = OnceLock::new();
    REG.get_or_init(|| {
        let mut r = Registry {
            entries: Vec::new(),
            by_key: HashMap::new(),
            alloc: IndexAllocator::new(),
        };
        // Every static index has a type info, PODs included: code compiled
        // against TVM-FFI's headers reads the key of any index it meets
        // (e.g. to word a failed conversion) without checking for NULL.
        // Slot ranges are TVM-FFI's: no child slots anywhere; only
        // ffi.Object (and ffi.VisitInterrupt, which its headers register as
        // any dynamic type) let subtypes take fresh indices, so e.g. a
        // subtype of ffi.Error is refused as it is there.
        for index in ti::kTVMFFINone..=ti::kTVMFFIUnchanged {
            let key = pod_type_key(index).expect("every POD index has a key");
            r.insert(key.as_bytes(), index, None, Slots::new(0, false)).expect("POD type");
        }
        r.insert(b"ffi.Object", ti::kTVMFFIObject, None, Slots::new(0, true)).expect("root type");
        r.entry_mut(ti::kTVMFFIObject).expect("root type").metadata_record(TVMFFITypeMetadata {
            doc: TVMFFIByteArray::EMPTY,
            creator: None,
            total_size: std::mem::size_of::<crate::abi::TVMFFIObject>() as i32,
            structural_eq_hash_kind: 0,
        });
        for (key, index) in STATIC_OBJECT_TYPES {
            let slots = Slots::new(0, *index == ti::kTVMFFIVisitInterrupt);
            r.insert(key.as_bytes(), *index, Some(ti::kTVMFFIObject), slots).expect("static type");
        }
        RwLock::new(r)
    })
}

/// 64-bit FNV-1a: stable across runs and platforms.
fn key_hash(key: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in key {
        h ^= *b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

impl Registry {
    fn entry(&self, index: i32) -> Option<&TypeEntry> {
        usize::try_from(index).ok().and_then(|i| self.entries.get(i)).and_then(|e| e.as_deref())
    }

    fn entry_mut(&mut self, index: i32) -> Result<&mut TypeEntry, TypeTableError> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.entries.get_mut(i))
            .and_then(|e| e.as_deref_mut())
            .ok_or_else(|| TypeTableError::new(format!("unknown type index {index}")))
    }

    fn insert(&mut self, key: &[u8], index: i32, parent: Option<i32>, slots: Slots) -> Result<i32, TypeTableError> {
        let (depth, ancestors) = match parent {
            None => (0, Vec::new()),
            Some(p) => {
                let pe = self.entry(p).ok_or_else(|| TypeTableError::new(format!("unknown parent type index {p}")))?;
                let mut anc = pe.ancestors.clone();
                anc.push(&pe.info as *const TVMFFITypeInfo);
                (pe.info.type_depth + 1, anc)
            }
        };
        let key: Box<[u8]> = key.into();
        let mut entry = Box::new(TypeEntry {
            info: TVMFFITypeInfo {
                type_index: index,
                type_depth: depth,
                type_key: TVMFFIByteArray::EMPTY,
                type_ancestors: std::ptr::null(),
                type_key_hash: key_hash(&key),
                num_fields: 0,
                num_methods: 0,
                fields: std::ptr::null(),
                methods: std::ptr::null(),
                metadata: std::ptr::null(),
            },
            key,
            slots,
            ancestors,
            fields: Vec::new(),
            retired_fields: Vec::new(),
            retired_methods: Vec::new(),
            methods: Vec::new(),
            metadata: None,
            strings: Vec::new(),
        });
        let key_text = nul_terminated(&entry.key);
        entry.info.type_key = TVMFFIByteArray::from_slice(&key_text[..entry.key.len()]);
        entry.strings.push(key_text);
        entry.info.type_ancestors = entry.ancestors.as_ptr();
        let slot = index as usize;
        if self.entries.len() <= slot {
            self.entries.resize_with(slot + 1, || None);
        }
        self.by_key.insert(entry.key.to_vec(), index);
        self.entries[slot] = Some(entry);
        Ok(index)
    }
}

/// `text` followed by a NUL: TVM-FFI's registry keeps names and docs in
/// `std::string`s, so C code may read a type info's byte arrays as C strings.
fn nul_terminated(text: &[u8]) -> Box<[u8]> {
    let mut v = Vec::with_capacity(text.len() + 1);
    v.extend_from_slice(text);
    v.push(0);
    v.into_boxed_slice()
}

impl TypeEntry {
    /// Install `md` (its doc already owned by this entry or empty). A
    /// previous record is kept alive: readers may hold its pointer.
    fn metadata_record(&mut self, md: TVMFFITypeMetadata) {
        let boxed = Box::new(md);
        self.info.metadata = &*boxed as *const TVMFFITypeMetadata;
        if let Some(old) = self.metadata.replace(boxed) {
            std::mem::forget(old);
        }
    }

    fn keep_bytes(&mut self, b: &TVMFFIByteArray) -> TVMFFIByteArray {
        // SAFETY: registration records come from callers that pass valid
        // byte arrays (checked non-NULL by the C ABI layer).
        let text = unsafe { byte_slice(b) };
        let owned = nul_terminated(text);
        let out = TVMFFIByteArray::from_slice(&owned[..text.len()]);
        self.strings.push(owned);
        out
    }
}

/// Look up a type key, or register it with no child slots, letting its
/// subtypes overflow (what a Rust- or Python-defined type declares).
///
/// `static_index >= 0` registers at that fixed index; `-1` allocates one.
/// `parent` is the parent's index, or `-1` for a root (static indices only).
pub fn get_or_alloc_index(key: &str, static_index: i32, parent: i32) -> Result<i32, TypeTableError> {
    get_or_alloc_index_bytes(key.as_bytes(), static_index, parent)
}

pub fn get_or_alloc_index_bytes(key: &[u8], static_index: i32, parent: i32) -> Result<i32, TypeTableError> {
    get_or_alloc_index_slots(key, static_index, 0, true, parent)
}

/// Look up a type key, or register it reserving `num_child_slots` indices
/// after its own for its subtypes (`TVMFFITypeGetOrAllocIndex`). A key
/// already registered keeps its index and range whatever is asked now.
///
/// A dynamic index comes from the parent's range or, when that is full and
/// the parent allows it, from past every index handed out so far (see
/// `type_index_alloc`); a full parent that forbids overflow is an error.
pub fn get_or_alloc_index_slots(
    key: &[u8],
    static_index: i32,
    num_child_slots: i32,
    child_slots_can_overflow: bool,
    parent: i32,
) -> Result<i32, TypeTableError> {
    if let Some(i) = registry().read().by_key.get(key) {
        return Ok(*i);
    }
    let mut r = registry().write();
    note_change();
    if let Some(i) = r.by_key.get(key) {
        return Ok(*i);
    }
    let name = || String::from_utf8_lossy(key).into_owned();
    alloc::check_child_slots(num_child_slots)
        .map_err(|m| TypeTableError::new(format!("cannot register type {}: {m}", name())))?;
    let parent = if parent == -1 { None } else { Some(parent) };
    if let Some(p) = parent {
        if r.entry(p).is_none() {
            return Err(TypeTableError::new(format!("cannot register type {}: unknown parent type index {p}", name())));
        }
    }
    let index = if static_index >= 0 {
        alloc::check_static_bounds(static_index, num_child_slots)
            .map_err(|m| TypeTableError::new(format!("cannot register type {}: {m}", name())))?;
        if let Some(taken) = r.entry(static_index) {
            return Err(TypeTableError::new(format!(
                "cannot register type {} at index {static_index}: taken by {}",
                name(),
                String::from_utf8_lossy(&taken.key)
            )));
        }
        let existing = r.entries.iter().enumerate().filter_map(|(i, e)| Some((i as i32, e.as_ref()?.slots)));
        alloc::check_static(static_index, num_child_slots, existing)
            .map_err(|m| TypeTableError::new(format!("cannot register type {}: {m}", name())))?;
        static_index
    } else {
        let Some(p) = parent else {
            return Err(TypeTableError::new(format!("cannot register type {}: a dynamic type needs a parent", name())));
        };
        let Registry { entries, alloc, .. } = &mut *r;
        let pe = entries[p as usize].as_deref_mut().expect("parent checked above");
        alloc.alloc_child(p, &mut pe.slots, num_child_slots).map_err(|refusal| {
            let pkey = String::from_utf8_lossy(&pe.key);
            TypeTableError::new(match refusal {
                Refusal::ParentFull { reserved } => format!(
                    "cannot register type {}: its parent {pkey} has no child slot left (it reserves {} and forbids overflow)",
                    name(),
                    reserved - 1
                ),
                Refusal::OutOfIndices => format!("cannot register type {}: type indices exhausted", name()),
            })
        })?
    };
    let can_overflow =
        alloc::inherited_overflow(parent.and_then(|p| r.entry(p)).map(|e| &e.slots), child_slots_can_overflow);
    r.insert(key, index, parent, Slots::new(num_child_slots, can_overflow))
}

/// Whether `index` is a registered type (no start-up registration needed:
/// every index it could register is taken by then or later).
pub fn is_registered(index: i32) -> bool {
    registry().read().entry(index).is_some()
}

/// The child slots a registered type reserves and whether its subtypes may
/// overflow them (the latter false when any ancestor forbids it).
pub fn child_slots(index: i32) -> Option<(i32, bool)> {
    registry().read().entry(index).map(|e| (e.slots.child_slots(), e.slots.can_overflow))
}

/// The index registered for `key`.
pub fn key_to_index(key: &[u8]) -> Option<i32> {
    // The core's own types (ffi.Enum, ...) are part of the start-up registration.
    crate::types::start_up::ensure();
    registry().read().by_key.get(key).copied()
}

/// The type info of a registered object type.
pub fn type_info(index: i32) -> Option<&'static TVMFFITypeInfo> {
    // The builtin types' metadata is part of the start-up registration.
    crate::types::start_up::ensure();
    info_in(&registry().read(), index)
}

/// A printable name for any type index (POD names included).
pub fn type_key_of(index: i32) -> String {
    if let Some(k) = pod_type_key(index) {
        return k.to_string();
    }
    match registry().read().entry(index) {
        Some(e) => String::from_utf8_lossy(&e.key).into_owned(),
        None => format!("<unknown type index {index}>"),
    }
}

/// Whether type `child` is `parent` or derives from it.
pub fn is_instance(child: i32, parent: i32) -> bool {
    if child == parent || parent == ti::kTVMFFIObject && child >= ti::kTVMFFIStaticObjectBegin {
        return true;
    }
    let r = registry().read();
    let (Some(c), Some(p)) = (r.entry(child), r.entry(parent)) else { return false };
    let d = p.info.type_depth as usize;
    // SAFETY: ancestor pointers point into boxed entries that live forever.
    d < c.ancestors.len() && unsafe { (*c.ancestors[d]).type_index } == parent
}

/// Register a reflected field. Its strings are copied; its default value
/// and function setter are stored as given: the caller keeps them alive for
/// the life of the process (`reflection::type_members` does).
pub fn register_field(index: i32, info: &TVMFFIFieldInfo) -> Result<(), TypeTableError> {
    let mut r = registry().write();
    note_change();
    let e = r.entry_mut(index)?;
    // SAFETY: see `keep_bytes`.
    let name = unsafe { byte_slice(&info.name) };
    if name.is_empty() {
        return Err(TypeTableError::new("field name must not be empty"));
    }
    // SAFETY: registered names point into strings the entry owns.
    if e.fields.iter().any(|f| unsafe { byte_slice(&f.name) } == name) {
        return Err(TypeTableError::new(format!(
            "field {} already registered on {}",
            String::from_utf8_lossy(name),
            String::from_utf8_lossy(&e.key)
        )));
    }
    // A field without a getter is legal (TVM-FFI accepts it: the field is
    // then only described, not readable); readers check `getter`.
    let mut rec = TVMFFIFieldInfo {
        name: e.keep_bytes(&info.name),
        doc: e.keep_bytes(&info.doc),
        metadata: e.keep_bytes(&info.metadata),
        flags: info.flags,
        size: info.size,
        alignment: info.alignment,
        offset: info.offset,
        getter: info.getter,
        setter: info.setter,
        default_value_or_factory: TVMFFIAny::NONE,
        field_static_type_index: info.field_static_type_index,
    };
    if info.flags & field_flag::kHasDefault != 0 {
        rec.default_value_or_factory = info.default_value_or_factory;
    }
    append_stable(&mut e.fields, &mut e.retired_fields, rec);
    // Pointer before count: the new array holds every earlier record.
    e.info.fields = e.fields.as_ptr();
    e.info.num_fields = e.fields.len() as i32;
    Ok(())
}

/// Register a reflected method. Its strings are copied; its function value
/// is stored as given, kept alive by the caller as for fields.
pub fn register_method(index: i32, info: &TVMFFIMethodInfo) -> Result<(), TypeTableError> {
    let mut r = registry().write();
    note_change();
    let e = r.entry_mut(index)?;
    let rec = TVMFFIMethodInfo {
        name: e.keep_bytes(&info.name),
        doc: e.keep_bytes(&info.doc),
        metadata: e.keep_bytes(&info.metadata),
        flags: info.flags,
        method: info.method,
    };
    append_stable(&mut e.methods, &mut e.retired_methods, rec);
    e.info.methods = e.methods.as_ptr();
    e.info.num_methods = e.methods.len() as i32;
    Ok(())
}

/// Register (or replace) a type's metadata.
pub fn register_metadata(index: i32, md: &TVMFFITypeMetadata) -> Result<(), TypeTableError> {
    let mut r = registry().write();
    note_change();
    let e = r.entry_mut(index)?;
    let doc = e.keep_bytes(&md.doc);
    e.metadata_record(TVMFFITypeMetadata {
        doc,
        creator: md.creator,
        total_size: md.total_size,
        structural_eq_hash_kind: md.structural_eq_hash_kind,
    });
    Ok(())
}

/// Append `rec` without moving the records already in `list`: a full array
/// is retired (kept, not freed) and its contents copied into one twice as
/// large, because readers hold `&'static` references into it.
fn append_stable<T: Copy>(list: &mut Vec<T>, retired: &mut Vec<Vec<T>>, rec: T) {
    if list.len() == list.capacity() {
        let mut grown = Vec::with_capacity((list.capacity() * 2).max(4));
        grown.extend_from_slice(list);
        retired.push(std::mem::replace(list, grown));
    }
    list.push(rec);
}

/// The type info of a registered type, read under the registry's lock `r`
/// (its `fields`/`methods` pointer and count change only under the write
/// lock, so they are read consistently while `r` is held).
fn info_in(r: &Registry, index: i32) -> Option<&'static TVMFFITypeInfo> {
    // SAFETY: entries are boxed and never dropped: the reference outlives the lock.
    r.entry(index).map(|e| unsafe { &*(&e.info as *const TVMFFITypeInfo) })
}

/// Find a field by name on a type or its ancestors.
pub fn find_field(index: i32, name: &str) -> Option<&'static TVMFFIFieldInfo> {
    let r = registry().read();
    let info = info_in(&r, index)?;
    for_each_type_in_mro(info, |t| {
        // A type without fields may have no array at all (NULL).
        if t.num_fields == 0 {
            return None;
        }
        // SAFETY: records of registered types live forever (outgrown arrays
        // are retired, not freed); the count is read under the lock.
        let fields = unsafe { std::slice::from_raw_parts(t.fields, t.num_fields as usize) };
        fields.iter().find(|f| unsafe { byte_slice(&f.name) } == name.as_bytes())
    })
}

/// Find a method by name on a type or its ancestors.
pub fn find_method(index: i32, name: &str) -> Option<&'static TVMFFIMethodInfo> {
    let r = registry().read();
    let info = info_in(&r, index)?;
    for_each_type_in_mro(info, |t| {
        if t.num_methods == 0 {
            return None;
        }
        // SAFETY: as above.
        let methods = unsafe { std::slice::from_raw_parts(t.methods, t.num_methods as usize) };
        methods.iter().find(|m| unsafe { byte_slice(&m.name) } == name.as_bytes())
    })
}

/// The index of a type's parent (None for a root or an unknown index).
pub fn parent_index(index: i32) -> Option<i32> {
    let r = registry().read();
    let info = info_in(&r, index)?;
    let depth = usize::try_from(info.type_depth).ok().filter(|&d| d > 0)?;
    // SAFETY: ancestors array has type_depth live entries.
    Some(unsafe { (**info.type_ancestors.add(depth - 1)).type_index })
}

/// All fields of a type, ancestors' first (declaration order).
pub fn all_fields(index: i32) -> Vec<&'static TVMFFIFieldInfo> {
    let r = registry().read();
    let Some(info) = info_in(&r, index) else { return Vec::new() };
    let mut chain: Vec<&'static TVMFFITypeInfo> = (0..info.type_depth as usize)
        // SAFETY: ancestors array has type_depth live entries.
        .map(|d| unsafe { &**info.type_ancestors.add(d) })
        .collect();
    chain.push(info);
    let mut out = Vec::new();
    for t in chain {
        if t.num_fields > 0 {
            // SAFETY: as in `find_field`.
            out.extend(unsafe { std::slice::from_raw_parts(t.fields, t.num_fields as usize) }.iter());
        }
    }
    out
}

fn for_each_type_in_mro<R>(
    info: &'static TVMFFITypeInfo,
    mut f: impl FnMut(&'static TVMFFITypeInfo) -> Option<R>,
) -> Option<R> {
    if let Some(r) = f(info) {
        return Some(r);
    }
    for d in (0..info.type_depth as usize).rev() {
        // SAFETY: ancestors array has type_depth live entries.
        let t = unsafe { &**info.type_ancestors.add(d) };
        if let Some(r) = f(t) {
            return Some(r);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_types_are_preregistered() {
        assert_eq!(key_to_index(b"ffi.String"), Some(ti::kTVMFFIStr));
        let info = type_info(ti::kTVMFFIArray).unwrap();
        assert_eq!(info.type_depth, 1);
        // SAFETY: depth-1 type has one ancestor.
        assert_eq!(unsafe { (**info.type_ancestors).type_index }, ti::kTVMFFIObject);
        assert_eq!(type_key_of(ti::kTVMFFIInt), "int");
    }

    #[test]
    fn dynamic_types_get_depth_and_ancestors() {
        let a = get_or_alloc_index("test.registry.A", -1, ti::kTVMFFIObject).unwrap();
        let b = get_or_alloc_index("test.registry.B", -1, a).unwrap();
        assert!(a >= ti::kTVMFFIDynObjectBegin);
        assert_eq!(get_or_alloc_index("test.registry.B", -1, a).unwrap(), b);
        let info = type_info(b).unwrap();
        assert_eq!(info.type_depth, 2);
        assert!(is_instance(b, a));
        assert!(is_instance(b, ti::kTVMFFIObject));
        assert!(!is_instance(a, b));
        assert!(get_or_alloc_index("test.registry.C", -1, 99_999).is_err());
    }
}

/// Every registered type key in index order, the POD names first (TVM-FFI's
/// `ffi.GetRegisteredTypeKeys`).
pub fn registered_type_keys() -> Vec<String> {
    // The core's own types (ffi.Enum, ...) are part of the start-up registration.
    crate::types::start_up::ensure();
    let mut out: Vec<String> = (0..ti::kTVMFFIStaticObjectBegin).filter_map(pod_type_key).map(str::to_string).collect();
    let r = registry().read();
    for (i, e) in r.entries.iter().enumerate() {
        if let Some(e) = e {
            if i as i32 >= ti::kTVMFFIStaticObjectBegin || pod_type_key(i as i32).is_none() {
                out.push(String::from_utf8_lossy(&e.key).into_owned());
            }
        }
    }
    out
}
