//! List: a mutable sequence. Same `TVMFFISeqCell` as Array, but the
//! elements live in a separate buffer (`data`, freed by `data_deleter`) so
//! the list can grow.
//!
//! Mutations through this API are serialised by the list's lock
//! ([`super::container_lock`]: TVM-FFI's `ListObj` has no room for one, and
//! C++ allocates Lists at exactly that size). Code that reads the cell
//! directly (C, C++) must not race with mutation, the same contract
//! TVM-FFI's List has. Lists C++ allocated are read and changed the same way.
//!
//! Two families of accessors: the Python-style ones (`get`, `set`, `insert`,
//! `pop`; negative indices count from the end) and TVM-FFI's (`at`,
//! `set_at`, `insert_at`, `pop_at`, `erase_at`, `erase_range`; indices must
//! be in range, with TVM-FFI's messages), which the `ffi.List*` globals use.

use std::cell::UnsafeCell;

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIObject, TVMFFISeqCell};
use crate::values::any::{Any, AnyView};
use crate::values::error::Error;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};

#[repr(C)]
pub struct ListObj {
    header: TVMFFIObject,
    /// Changed in place under the lock through `&self`, hence the UnsafeCell
    /// (same layout as the bare cell).
    cell: UnsafeCell<TVMFFISeqCell>,
}

// SAFETY: the cell is mutated only under `lock` by this API.
unsafe impl Send for ListObj {}
// SAFETY: as above.
unsafe impl Sync for ListObj {}

// SAFETY: repr(C), header first.
unsafe impl ObjectType for ListObj {
    const TYPE_KEY: &'static str = "ffi.List";
    fn type_index() -> i32 {
        ti::kTVMFFIList
    }
}

unsafe extern "C" fn free_buffer(p: *mut std::ffi::c_void) {
    // SAFETY: buffers are allocated with libc::malloc below.
    unsafe { libc::free(p) }
}

impl Drop for ListObj {
    fn drop(&mut self) {
        let cell = self.cell.get_mut();
        let data = cell.data as *mut Any;
        for i in 0..cell.size as usize {
            // SAFETY: `size` initialised, owned elements.
            unsafe { std::ptr::drop_in_place(data.add(i)) };
        }
        if let (false, Some(d)) = (cell.data.is_null(), cell.data_deleter) {
            // SAFETY: the buffer's own deleter.
            unsafe { d(cell.data) };
        }
    }
}

impl ListObj {
    /// # Safety
    /// Caller holds `lock`.
    unsafe fn cell_mut(&self) -> *mut TVMFFISeqCell {
        self.cell.get()
    }

    /// # Safety
    /// Caller holds `lock`.
    unsafe fn slice(&self) -> &[Any] {
        // SAFETY: the caller holds the lock, so nobody writes the cell.
        let cell = unsafe { &*self.cell.get() };
        if cell.size == 0 {
            &[]
        } else {
            // SAFETY: `size` initialised elements; Any is transparent.
            unsafe { std::slice::from_raw_parts(cell.data as *const Any, cell.size as usize) }
        }
    }

    /// Make room for one more element.
    ///
    /// # Safety
    /// Caller holds `lock`.
    unsafe fn reserve_one(&self) -> Result<(), Error> {
        // SAFETY: under the lock, per the caller.
        let cell = unsafe { &mut *self.cell_mut() };
        if cell.size < cell.capacity {
            return Ok(());
        }
        // SAFETY: per the caller.
        unsafe { self.reserve((cell.capacity * 2).max(4) as usize) }
    }

    /// Make room for `new_cap` elements in all (no-op if there is).
    ///
    /// # Safety
    /// Caller holds `lock`.
    unsafe fn reserve(&self, new_cap: usize) -> Result<(), Error> {
        // SAFETY: under the lock, per the caller.
        let cell = unsafe { &mut *self.cell_mut() };
        if new_cap as i64 <= cell.capacity && new_cap <= i64::MAX as usize {
            return Ok(());
        }
        // A capacity whose byte size overflows (or that no allocation could
        // hold) is refused before anything is allocated.
        let bytes = match new_cap.checked_mul(std::mem::size_of::<TVMFFIAny>()) {
            Some(b) if b <= isize::MAX as usize => b,
            _ => {
                return Err(Error::new(
                    "MemoryError",
                    format!("cannot reserve room for {new_cap} list elements: the size overflows"),
                ))
            }
        };
        // SAFETY: plain allocation; elements are moved bitwise below.
        let new = unsafe { libc::malloc(bytes) };
        if new.is_null() {
            return Err(Error::new("MemoryError", format!("growing a list to {new_cap} elements failed")));
        }
        // SAFETY: moving `size` elements into the new buffer, then freeing
        // the old one without dropping them (ownership moved).
        unsafe {
            if cell.size > 0 {
                std::ptr::copy_nonoverlapping(cell.data as *const TVMFFIAny, new as *mut TVMFFIAny, cell.size as usize);
            }
            if !cell.data.is_null() {
                if let Some(d) = cell.data_deleter {
                    d(cell.data);
                }
            }
        }
        cell.data = new;
        cell.capacity = new_cap as i64;
        cell.data_deleter = Some(free_buffer);
        Ok(())
    }
}

/// An owning handle to a List.
#[derive(Clone)]
pub struct List(ObjectPtr<ListObj>);

impl List {
    pub fn new(items: Vec<Any>) -> Result<List, Error> {
        let l = List(ObjectPtr::new(ListObj {
            header: header_placeholder(),
            cell: UnsafeCell::new(TVMFFISeqCell { data: std::ptr::null_mut(), size: 0, capacity: 0, data_deleter: None }),
        })?);
        for it in items {
            l.push(it)?;
        }
        Ok(l)
    }

    /// A list of `n` values taken over from `items` (which yields at least
    /// `n`), its storage allocated once; nothing is taken when allocating
    /// fails.
    pub fn from_owned(n: usize, items: impl Iterator<Item = Any>) -> Result<List, Error> {
        let l = List::new(Vec::new())?;
        if n == 0 {
            return Ok(l);
        }
        {
            let _g = l.lock();
            // SAFETY: lock held (and the list not yet shared); room for
            // every element is made before any is taken.
            unsafe {
                l.0.reserve(n)?;
                let cell = &mut *l.0.cell_mut();
                let data = cell.data as *mut Any;
                let mut written = 0usize;
                for v in items.take(n) {
                    std::ptr::write(data.add(written), v);
                    written += 1;
                }
                cell.size = written as i64;
            }
        }
        Ok(l)
    }

    /// A list owning the values `views` show, its storage allocated once
    /// (`ffi.List` of many arguments).
    pub fn from_views(views: &[AnyView<'_>]) -> Result<List, Error> {
        let l = List::new(Vec::new())?;
        if views.is_empty() {
            return Ok(l);
        }
        {
            let _g = l.lock();
            // SAFETY: lock held (and the list not yet shared); room for
            // every element is made before any is written, and `size`
            // counts the ones written, so an error leaves a valid list.
            unsafe {
                l.0.reserve(views.len())?;
                let cell = &mut *l.0.cell_mut();
                for v in views {
                    std::ptr::write((cell.data as *mut Any).add(cell.size as usize), v.to_owned()?);
                    cell.size += 1;
                }
            }
        }
        Ok(l)
    }

    pub fn from_object(obj: ObjectRef) -> Result<List, Error> {
        obj.downcast::<ListObj>().map(List).map_err(Error::from)
    }

    fn lock(&self) -> parking_lot::MutexGuard<'static, ()> {
        super::container_lock::lock_for(self.0.as_ptr() as *const u8)
    }

    pub fn len(&self) -> usize {
        let _g = self.lock();
        // SAFETY: lock held.
        unsafe { (*self.0.cell_mut()).size as usize }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: i64) -> Result<Any, Error> {
        let _g = self.lock();
        // SAFETY: lock held.
        let s = unsafe { self.0.slice() };
        Ok(s[super::resolve_index(i, s.len(), "list")?].clone())
    }

    /// Snapshot of the elements.
    pub fn to_vec(&self) -> Vec<Any> {
        let _g = self.lock();
        // SAFETY: lock held.
        unsafe { self.0.slice() }.to_vec()
    }

    pub fn push(&self, v: Any) -> Result<(), Error> {
        let _g = self.lock();
        // SAFETY: lock held; after reserve there is room at `size`.
        unsafe {
            self.0.reserve_one()?;
            let cell = &mut *self.0.cell_mut();
            std::ptr::write((cell.data as *mut Any).add(cell.size as usize), v);
            cell.size += 1;
        }
        Ok(())
    }

    pub fn set(&self, i: i64, v: Any) -> Result<(), Error> {
        let old = {
            let _g = self.lock();
            // SAFETY: lock held; index checked.
            unsafe {
                let cell = &mut *self.0.cell_mut();
                let j = super::resolve_index(i, cell.size as usize, "list")?;
                std::ptr::replace((cell.data as *mut Any).add(j), v)
            }
        };
        drop(old); // outside the lock: dropping may run arbitrary deleters
        Ok(())
    }

    pub fn insert(&self, i: i64, v: Any) -> Result<(), Error> {
        let _g = self.lock();
        // SAFETY: lock held; shifting initialised elements up by one.
        unsafe {
            self.0.reserve_one()?;
            let cell = &mut *self.0.cell_mut();
            let n = cell.size as usize;
            let j = if i < 0 { (i + n as i64).max(0) as usize } else { (i as usize).min(n) };
            let data = cell.data as *mut Any;
            std::ptr::copy(data.add(j), data.add(j + 1), n - j);
            std::ptr::write(data.add(j), v);
            cell.size += 1;
        }
        Ok(())
    }

    pub fn pop(&self, i: i64) -> Result<Any, Error> {
        let _g = self.lock();
        // SAFETY: lock held; index checked; shifting elements down.
        unsafe {
            let cell = &mut *self.0.cell_mut();
            let n = cell.size as usize;
            let j = super::resolve_index(i, n, "pop")?;
            let data = cell.data as *mut Any;
            let v = std::ptr::read(data.add(j));
            std::ptr::copy(data.add(j + 1), data.add(j), n - j - 1);
            cell.size -= 1;
            Ok(v)
        }
    }

    pub fn clear(&self) {
        let items: Vec<Any> = {
            let _g = self.lock();
            // SAFETY: lock held; moving all elements out, then size = 0.
            unsafe {
                let cell = &mut *self.0.cell_mut();
                let v = (0..cell.size as usize).map(|k| std::ptr::read((cell.data as *const Any).add(k))).collect();
                cell.size = 0;
                v
            }
        };
        drop(items);
    }

    /// TVM-FFI's bounds check: `0 <= i < size`.
    fn check(i: i64, size: i64) -> Result<usize, Error> {
        if i < 0 || i >= size {
            return Err(Error::index_error(format!("Index {i} out of bounds {size}")));
        }
        Ok(i as usize)
    }

    /// Element `i`, `0 <= i < len` (TVM-FFI's `at`).
    pub fn at(&self, i: i64) -> Result<Any, Error> {
        let _g = self.lock();
        // SAFETY: lock held.
        let s = unsafe { self.0.slice() };
        Ok(s[Self::check(i, s.len() as i64)?].clone())
    }

    /// Replace element `i`, `0 <= i < len`.
    pub fn set_at(&self, i: i64, v: Any) -> Result<(), Error> {
        let old = {
            let _g = self.lock();
            // SAFETY: lock held; index checked.
            unsafe {
                let cell = &mut *self.0.cell_mut();
                let j = Self::check(i, cell.size)?;
                std::ptr::replace((cell.data as *mut Any).add(j), v)
            }
        };
        drop(old);
        Ok(())
    }

    /// Insert before position `i`, `0 <= i <= len`.
    pub fn insert_at(&self, i: i64, v: Any) -> Result<(), Error> {
        let _g = self.lock();
        // SAFETY: lock held; index checked; shifting initialised elements.
        unsafe {
            let size = (*self.0.cell_mut()).size;
            if i < 0 || i > size {
                return Err(Error::index_error(format!("Index {i} out of bounds [0, {size}]")));
            }
            self.0.reserve_one()?;
            let cell = &mut *self.0.cell_mut();
            let (n, j) = (cell.size as usize, i as usize);
            let data = cell.data as *mut Any;
            std::ptr::copy(data.add(j), data.add(j + 1), n - j);
            std::ptr::write(data.add(j), v);
            cell.size += 1;
        }
        Ok(())
    }

    /// Remove and return element `i`, `0 <= i < len`.
    pub fn pop_at(&self, i: i64) -> Result<Any, Error> {
        let _g = self.lock();
        // SAFETY: lock held; index checked; shifting elements down.
        unsafe {
            let cell = &mut *self.0.cell_mut();
            let (n, j) = (cell.size as usize, Self::check(i, cell.size)?);
            let data = cell.data as *mut Any;
            let v = std::ptr::read(data.add(j));
            std::ptr::copy(data.add(j + 1), data.add(j), n - j - 1);
            cell.size -= 1;
            Ok(v)
        }
    }

    /// Remove elements `start..stop` (`0 <= start <= stop <= len`).
    pub fn erase_range(&self, start: i64, stop: i64) -> Result<(), Error> {
        let removed: Vec<Any> = {
            let _g = self.lock();
            // SAFETY: lock held; range checked; moving the removed elements
            // out and the tail down.
            unsafe {
                let cell = &mut *self.0.cell_mut();
                if start < 0 || stop > cell.size || start > stop {
                    return Err(Error::index_error(format!(
                        "Erase range [{start}, {stop}) out of bounds {}",
                        cell.size
                    )));
                }
                let (n, a, b) = (cell.size as usize, start as usize, stop as usize);
                let data = cell.data as *mut Any;
                let out = (a..b).map(|k| std::ptr::read(data.add(k))).collect();
                std::ptr::copy(data.add(b), data.add(a), n - b);
                cell.size -= (b - a) as i64;
                out
            }
        };
        drop(removed);
        Ok(())
    }

    /// Reverse in place.
    pub fn reverse(&self) {
        let _g = self.lock();
        // SAFETY: lock held; swapping initialised elements.
        unsafe {
            let cell = &mut *self.0.cell_mut();
            if cell.size > 0 {
                std::slice::from_raw_parts_mut(cell.data as *mut Any, cell.size as usize).reverse();
            }
        }
    }

    /// Make room for `n` elements in all (negative or smaller: no-op).
    pub fn reserve(&self, n: i64) -> Result<(), Error> {
        if n <= 0 {
            return Ok(());
        }
        let _g = self.lock();
        // SAFETY: lock held.
        unsafe { self.0.reserve(n as usize) }
    }

    /// Replace elements `start..stop` by `items`, one step under the lock.
    pub fn replace_slice(&self, start: i64, stop: i64, items: Vec<Any>) -> Result<(), Error> {
        let removed: Vec<Any> = {
            let _g = self.lock();
            // SAFETY: lock held; range checked; the elements move bitwise.
            unsafe {
                let size = (*self.0.cell_mut()).size;
                if start < 0 || stop > size || start > stop {
                    return Err(Error::index_error(format!("Erase range [{start}, {stop}) out of bounds {size}")));
                }
                let (a, b, k) = (start as usize, stop as usize, items.len());
                let new_len = size as usize - (b - a) + k;
                self.0.reserve(new_len)?;
                let cell = &mut *self.0.cell_mut();
                let data = cell.data as *mut Any;
                let out = (a..b).map(|x| std::ptr::read(data.add(x))).collect();
                std::ptr::copy(data.add(b), data.add(a + k), size as usize - b);
                for (x, it) in items.into_iter().enumerate() {
                    std::ptr::write(data.add(a + x), it);
                }
                cell.size = new_len as i64;
                out
            }
        };
        drop(removed);
        Ok(())
    }

    /// Whether an element equals `v` (TVM-FFI's `AnyEqual`).
    pub fn contains(&self, v: &Any) -> bool {
        let _g = self.lock();
        // SAFETY: lock held; elements alive while compared.
        unsafe { self.0.slice().iter().any(|e| super::any_hash::any_equal(e.as_raw(), v.as_raw())) }
    }

    pub fn into_object(self) -> ObjectRef {
        self.0.into_object_ref()
    }
}
