//! Map (immutable) and Dict (mutable): hash maps from Any to Any in
//! TVM-FFI's `MapObj`/`DictObj` layout (see [`super::map_cell`]), keeping
//! insertion order as TVM-FFI does.
//!
//! Keys compare by value for POD, strings and bytes (inline or heap alike),
//! and by identity for other objects. A Map is never changed once another
//! reference to it exists. A Dict's operations through this API are
//! serialised by its lock ([`super::container_lock`]); C++ reading the cell
//! inline does not lock, the same contract as TVM-FFI. Maps and Dicts that
//! C++ allocated (with its own deleter) are read and changed the same way.
//!
//! SAFETY invariants of this module: a `MapObj`/`DictObj` pointer names a
//! live map object (see `map_cell`); a Dict's cell is only touched under its
//! lock, a Map's only before the Map is shared.

use crate::abi::{type_index as ti, TVMFFIAny};
use crate::values::any::Any;
use crate::values::error::Error;
use crate::object::{header_placeholder, object_deleter, ObjectPtr, ObjectRef, ObjectType};

use super::container_lock::lock_for;
use super::map_cell::{CellRef, MapCell, SMALL_INIT, SMALL_MAX, SMALL_TAG};

macro_rules! map_object {
    ($obj:ident, $key:literal, $index:expr) => {
        /// The object: TVM-FFI's map cell and nothing else.
        #[repr(C)]
        pub struct $obj {
            cell: MapCell,
        }

        // SAFETY: values are Send + Sync; mutation is serialised by the
        // container lock (Dict) or happens before sharing (Map).
        unsafe impl Send for $obj {}
        // SAFETY: as above.
        unsafe impl Sync for $obj {}

        // SAFETY: repr(C), header first.
        unsafe impl ObjectType for $obj {
            const TYPE_KEY: &'static str = $key;
            fn type_index() -> i32 {
                $index
            }
        }

        impl Drop for $obj {
            fn drop(&mut self) {
                CellRef(&mut self.cell).destroy();
            }
        }

        impl $obj {
            /// A new empty small map with inline room for the largest
            /// small map, so it grows in place until it turns dense.
            fn alloc() -> Result<ObjectPtr<$obj>, Error> {
                let cell = MapCell {
                    header: header_placeholder(),
                    data: std::ptr::null_mut(),
                    size: 0,
                    slots: SMALL_TAG,
                    data_deleter: None,
                };
                let room = super::map_cell::small_object_size(SMALL_MAX) - std::mem::size_of::<MapCell>();
                // SAFETY: the inline room is set up as an empty small map
                // before the object escapes; Drop handles any layout.
                let p = unsafe { ObjectPtr::new_with_tail($obj { cell }, room, 8)? };
                // SAFETY: the object has room for SMALL_MAX inline pairs.
                unsafe { CellRef(p.as_ptr() as *mut MapCell).init_small_inline(SMALL_INIT) };
                Ok(p)
            }

            /// Inline pairs the object has room for (only known for objects
            /// tether allocated).
            fn inline_room(p: &ObjectPtr<$obj>) -> u64 {
                // SAFETY: reading the header of a live object.
                let deleter = unsafe { (*p.header()).deleter };
                if deleter.map(|d| d as *const () as usize) == Some(object_deleter::<$obj> as *const () as usize) {
                    SMALL_MAX
                } else {
                    0
                }
            }
        }
    };
}

map_object!(MapObj, "ffi.Map", ti::kTVMFFIMap);
map_object!(DictObj, "ffi.Dict", ti::kTVMFFIDict);

fn cell_of<T: ObjectType>(p: &ObjectPtr<T>) -> CellRef {
    CellRef(p.as_ptr() as *mut MapCell)
}

/// Build a map object from pairs as repeated insertion does (a repeated key
/// keeps its first key and position and takes the last value — in the small
/// layout; see [`Dict::set`] for the dense one).
fn build<T: ObjectType>(p: &ObjectPtr<T>, room: u64, pairs: Vec<(Any, Any)>) -> Result<(), Error> {
    let mut graveyard = Vec::new();
    let total = pairs.len() as u64;
    for (i, (k, v)) in pairs.into_iter().enumerate() {
        let c = cell_of(p);
        if c.is_small() && c.size() >= SMALL_MAX && c.find(k.as_raw()).is_none() {
            // The map turns dense here: size the table for every pair
            // still to come at once instead of rehashing on the way.
            c.reserve(c.size() + (total - i as u64), &mut graveyard)?;
        }
        // SAFETY: the object is not shared yet.
        cell_of(p).insert(k, v, room, &mut graveyard)?;
    }
    Ok(())
}

/// Read the pairs of a map under `lock`.
///
/// One pass over the iteration order (no list of pair addresses first), and
/// stored values are cloned as they are (they are owned values, never a
/// view kind that would need converting).
fn snapshot(c: CellRef) -> Vec<(Any, Any)> {
    let mut out = Vec::with_capacity(c.size() as usize);
    let (mut pos, end) = (c.begin(), c.end());
    while pos != end {
        let kv = c.kv_at(pos);
        // SAFETY: a live pair; the caller's lock or immutability keeps it
        // alive while it is cloned; Any is repr(transparent) over
        // TVMFFIAny, and stored keys and values are owned values.
        unsafe {
            let key = &*(&(*kv).key as *const TVMFFIAny as *const Any);
            let value = &*(&(*kv).value as *const TVMFFIAny as *const Any);
            out.push((key.clone(), value.clone()));
        }
        pos = c.advance(pos);
    }
    out
}

fn lookup(c: CellRef, key: &Any) -> Option<Any> {
    // SAFETY: a live pair, cloned as stored (an owned value; Any is
    // repr(transparent) over TVMFFIAny) while the map cannot change.
    c.find(key.as_raw()).map(|kv| unsafe { (*(&(*kv).value as *const TVMFFIAny as *const Any)).clone() })
}

/// A position in a [`Map`]'s iteration order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MapPos(u64);

/// An owning handle to a Map.
#[derive(Clone)]
pub struct Map(ObjectPtr<MapObj>);

impl Map {
    /// Build from pairs, as TVM-FFI's `ffi.Map` does (insertion one by one).
    pub fn new(pairs: Vec<(Any, Any)>) -> Result<Map, Error> {
        let p = MapObj::alloc()?;
        build(&p, MapObj::inline_room(&p), pairs)?;
        Ok(Map(p))
    }

    pub fn from_object(obj: ObjectRef) -> Result<Map, Error> {
        obj.downcast::<MapObj>().map(Map).map_err(Error::from)
    }

    pub fn len(&self) -> usize {
        cell_of(&self.0).size() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, key: &Any) -> Option<Any> {
        lookup(cell_of(&self.0), key)
    }

    pub fn contains(&self, key: &Any) -> bool {
        cell_of(&self.0).find(key.as_raw()).is_some()
    }

    /// The pairs in iteration order.
    pub fn items(&self) -> Vec<(Any, Any)> {
        snapshot(cell_of(&self.0))
    }

    /// The first position of the iteration order (see [`Map::pair_at`]).
    pub fn first(&self) -> MapPos {
        MapPos(cell_of(&self.0).begin())
    }

    /// The pair at `pos`, borrowed, and the position after it; None at the
    /// end of the iteration order or for a position that names no pair of
    /// this map. A Map never changes, so walking it by position reads each
    /// pair in place (no snapshot).
    pub fn pair_at(&self, pos: MapPos) -> Option<(&Any, &Any, MapPos)> {
        let c = cell_of(&self.0);
        if pos.0 == c.end() || !c.holds(pos.0) {
            return None;
        }
        let kv = c.kv_at(pos.0);
        // SAFETY: a stored pair of an immutable map, alive while `self`
        // is; Any is repr(transparent) over TVMFFIAny and stored keys and
        // values are owned values.
        let (k, v) = unsafe {
            (&*(&(*kv).key as *const TVMFFIAny as *const Any), &*(&(*kv).value as *const TVMFFIAny as *const Any))
        };
        Some((k, v, MapPos(c.advance(pos.0))))
    }

    /// Whether the map uses the small layout, and its slot count.
    pub fn layout(&self) -> (bool, u64) {
        let c = cell_of(&self.0);
        (c.is_small(), c.num_slots())
    }

    pub fn into_object(self) -> ObjectRef {
        self.0.into_object_ref()
    }

    pub fn as_object(&self) -> ObjectRef {
        self.0.to_object_ref()
    }
}

/// An owning handle to a Dict (shared, mutable).
#[derive(Clone)]
pub struct Dict(ObjectPtr<DictObj>);

impl Dict {
    pub fn new(pairs: Vec<(Any, Any)>) -> Result<Dict, Error> {
        let p = DictObj::alloc()?;
        build(&p, DictObj::inline_room(&p), pairs)?;
        Ok(Dict(p))
    }

    pub fn from_object(obj: ObjectRef) -> Result<Dict, Error> {
        obj.downcast::<DictObj>().map(Dict).map_err(Error::from)
    }

    fn lock(&self) -> parking_lot::MutexGuard<'static, ()> {
        lock_for(self.0.as_ptr() as *const u8)
    }

    pub fn len(&self) -> usize {
        let _g = self.lock();
        cell_of(&self.0).size() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, key: &Any) -> Option<Any> {
        let _g = self.lock();
        lookup(cell_of(&self.0), key)
    }

    pub fn contains(&self, key: &Any) -> bool {
        let _g = self.lock();
        cell_of(&self.0).find(key.as_raw()).is_some()
    }

    /// Insert or overwrite. As in TVM-FFI, overwriting a key of a dense
    /// dict moves it to the end of the iteration order; a small one keeps
    /// its position.
    pub fn set(&self, key: Any, value: Any) -> Result<(), Error> {
        let mut graveyard = Vec::new();
        let r = {
            let _g = self.lock();
            cell_of(&self.0).insert(key, value, DictObj::inline_room(&self.0), &mut graveyard)
        };
        drop(graveyard); // outside the lock: deleters may run arbitrary code
        r
    }

    /// Remove `key`; returns whether it was present.
    pub fn erase(&self, key: &Any) -> bool {
        let mut graveyard = Vec::new();
        let found = {
            let _g = self.lock();
            cell_of(&self.0).erase(key.as_raw(), &mut graveyard)
        };
        drop(graveyard);
        found
    }

    pub fn clear(&self) {
        let mut graveyard = Vec::new();
        {
            let _g = self.lock();
            cell_of(&self.0).clear(&mut graveyard);
        }
        drop(graveyard);
    }

    /// The pairs in iteration order (a snapshot).
    pub fn items(&self) -> Vec<(Any, Any)> {
        let _g = self.lock();
        snapshot(cell_of(&self.0))
    }

    /// Whether the dict uses the small layout, and its slot count.
    pub fn layout(&self) -> (bool, u64) {
        let _g = self.lock();
        let c = cell_of(&self.0);
        (c.is_small(), c.num_slots())
    }

    pub fn into_object(self) -> ObjectRef {
        self.0.into_object_ref()
    }

    pub fn as_object(&self) -> ObjectRef {
        self.0.to_object_ref()
    }
}

/// A forward iterator over a Map or Dict that stays memory-safe while other
/// threads change a Dict: every step runs under the container's lock and
/// checks that the map still has the storage and size it had when the
/// iterator was made (else a RuntimeError, like CPython's dict).
pub struct MapCursor {
    obj: ObjectRef,
    state: parking_lot::Mutex<CursorState>,
}

struct CursorState {
    pos: u64,
    at_end: bool,
    data: usize,
    slots: u64,
    size: u64,
}

impl MapCursor {
    /// A cursor at the first pair of `obj`, which must be a Map or a Dict.
    pub fn new(obj: ObjectRef) -> Result<MapCursor, Error> {
        if !matches!(obj.type_index(), ti::kTVMFFIMap | ti::kTVMFFIDict) {
            return Err(Error::type_error(format!("expected ffi.Map or ffi.Dict, got {}", crate::types::type_registry::type_key_of(obj.type_index()))));
        }
        let state = {
            let _g = lock_for(obj.as_ptr() as *const u8);
            let c = CellRef(obj.as_ptr() as *mut MapCell);
            // SAFETY: a live map read under its lock.
            CursorState { pos: c.begin(), at_end: c.size() == 0, data: unsafe { (*c.0).data } as usize, slots: unsafe { (*c.0).slots }, size: c.size() }
        };
        Ok(MapCursor { obj, state: parking_lot::Mutex::new(state) })
    }

    /// TVM-FFI's iterator functor protocol: 0 the current key, 1 the
    /// current value, 2 advance (returns whether a pair is left). tether
    /// adds 3: whether the cursor is on a pair, read from the cursor's own
    /// snapshot, so a caller never has to ask the map's size separately
    /// (which races with writers on another thread).
    pub fn command(&self, command: i64) -> Result<Any, Error> {
        let mut st = self.state.lock();
        let _g = lock_for(self.obj.as_ptr() as *const u8);
        let c = CellRef(self.obj.as_ptr() as *mut MapCell);
        // SAFETY: a live map read under its lock.
        let (data, slots) = unsafe { ((*c.0).data as usize, (*c.0).slots) };
        let what = if self.obj.type_index() == ti::kTVMFFIDict { "Dict" } else { "Map" };
        let changed = || Error::runtime_error(format!("{what} changed size during iteration"));
        if data != st.data || slots != st.slots || c.size() != st.size {
            return Err(changed());
        }
        if command == 3 {
            return Ok(Any::from(!st.at_end));
        }
        if st.at_end {
            return match command {
                0 | 1 => Err(Error::index_error("map iterator is past the end")),
                _ => Ok(Any::from(false)),
            };
        }
        // Same storage and size, but an erase and an insert may have moved
        // the pair this cursor was on.
        if !c.holds(st.pos) {
            return Err(changed());
        }
        match command {
            0 | 1 => {
                let kv = c.kv_at(st.pos);
                // SAFETY: a live pair, cloned under the lock.
                unsafe { Any::from_view(if command == 0 { &(*kv).key } else { &(*kv).value }) }
            }
            _ => {
                st.pos = c.advance(st.pos);
                st.at_end = st.pos == c.end();
                Ok(Any::from(!st.at_end))
            }
        }
    }
}
