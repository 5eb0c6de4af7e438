//! Map: an immutable hash map from Any to Any that keeps insertion order.
//!
//! The layout is tether's own (header, then Rust-owned storage); it is not
//! TVM-FFI's `MapObj` layout, so C++ code compiled against upstream headers
//! must go through functions, not read a Map's memory. Keys compare by value
//! for POD, strings and bytes (inline or heap alike), and by identity for
//! other objects.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use crate::abi::{type_index as ti, TVMFFIObject};
use crate::any::Any;
use crate::error::Error;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};

/// A key wrapper giving Any value semantics for hashing.
struct MapKey(Any);

impl MapKey {
    fn class(&self) -> (u8, i32) {
        match self.0.type_index() {
            ti::kTVMFFIStr | ti::kTVMFFISmallStr => (1, 0),
            ti::kTVMFFIBytes | ti::kTVMFFISmallBytes => (2, 0),
            i => (0, i),
        }
    }
}

impl Hash for MapKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.class().hash(h);
        match self.0.view().str_bytes() {
            Some(b) => b.hash(h),
            // SAFETY: non-string payloads are 8 plain bytes.
            None => unsafe { self.0.as_raw().value.v_uint64 }.hash(h),
        }
    }
}

impl PartialEq for MapKey {
    fn eq(&self, o: &Self) -> bool {
        self.class() == o.class() && self.0.same_value(&o.0)
    }
}
impl Eq for MapKey {}

#[repr(C)]
pub struct MapObj {
    header: TVMFFIObject,
    entries: Vec<(Any, Any)>,
    index: HashMap<MapKey, usize>,
}

// SAFETY: immutable after construction; holds Send + Sync values.
unsafe impl Send for MapObj {}
// SAFETY: as above.
unsafe impl Sync for MapObj {}

// SAFETY: repr(C), header first.
unsafe impl ObjectType for MapObj {
    const TYPE_KEY: &'static str = "ffi.Map";
    fn type_index() -> i32 {
        ti::kTVMFFIMap
    }
}

/// An owning handle to a Map.
#[derive(Clone)]
pub struct Map(ObjectPtr<MapObj>);

impl Map {
    /// Build from pairs; a repeated key keeps its first position and last value.
    pub fn new(pairs: Vec<(Any, Any)>) -> Result<Map, Error> {
        let mut entries: Vec<(Any, Any)> = Vec::with_capacity(pairs.len());
        let mut index: HashMap<MapKey, usize> = HashMap::with_capacity(pairs.len());
        for (k, v) in pairs {
            match index.get(&MapKey(k.clone())) {
                Some(&i) => entries[i].1 = v,
                None => {
                    index.insert(MapKey(k.clone()), entries.len());
                    entries.push((k, v));
                }
            }
        }
        Ok(Map(ObjectPtr::new(MapObj { header: header_placeholder(), entries, index })?))
    }

    pub fn from_object(obj: ObjectRef) -> Result<Map, Error> {
        obj.downcast::<MapObj>().map(Map)
    }

    pub fn len(&self) -> usize {
        self.0.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.entries.is_empty()
    }

    pub fn get(&self, key: &Any) -> Option<Any> {
        self.0.index.get(&MapKey(key.clone())).map(|&i| self.0.entries[i].1.clone())
    }

    pub fn items(&self) -> impl Iterator<Item = &(Any, Any)> {
        self.0.entries.iter()
    }

    pub fn into_object(self) -> ObjectRef {
        self.0.into_object_ref()
    }
}
