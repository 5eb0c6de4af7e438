//! List: a mutable sequence. Same `TVMFFISeqCell` as Array, but the
//! elements live in a separate buffer (`data`, freed by `data_deleter`) so
//! the list can grow.
//!
//! Mutations through this API are serialised by a lock inside the object.
//! Code that reads the cell directly (C, C++) must not race with mutation,
//! the same contract TVM-FFI's List has.

use parking_lot::Mutex;

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIObject, TVMFFISeqCell};
use crate::any::Any;
use crate::error::Error;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};

#[repr(C)]
pub struct ListObj {
    header: TVMFFIObject,
    cell: TVMFFISeqCell,
    lock: Mutex<()>,
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
        let data = self.cell.data as *mut Any;
        for i in 0..self.cell.size as usize {
            // SAFETY: `size` initialised, owned elements.
            unsafe { std::ptr::drop_in_place(data.add(i)) };
        }
        if let (false, Some(d)) = (self.cell.data.is_null(), self.cell.data_deleter) {
            // SAFETY: the buffer's own deleter.
            unsafe { d(self.cell.data) };
        }
    }
}

impl ListObj {
    /// # Safety
    /// Caller holds `lock`.
    unsafe fn cell_mut(&self) -> *mut TVMFFISeqCell {
        std::ptr::addr_of!(self.cell) as *mut TVMFFISeqCell
    }

    /// # Safety
    /// Caller holds `lock`.
    unsafe fn slice(&self) -> &[Any] {
        if self.cell.size == 0 {
            &[]
        } else {
            // SAFETY: `size` initialised elements; Any is transparent.
            unsafe { std::slice::from_raw_parts(self.cell.data as *const Any, self.cell.size as usize) }
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
        let new_cap = (cell.capacity * 2).max(4) as usize;
        let bytes = new_cap * std::mem::size_of::<TVMFFIAny>();
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
            cell: TVMFFISeqCell { data: std::ptr::null_mut(), size: 0, capacity: 0, data_deleter: None },
            lock: Mutex::new(()),
        })?);
        for it in items {
            l.push(it)?;
        }
        Ok(l)
    }

    pub fn from_object(obj: ObjectRef) -> Result<List, Error> {
        obj.downcast::<ListObj>().map(List)
    }

    pub fn len(&self) -> usize {
        let _g = self.0.lock.lock();
        self.0.cell.size as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: i64) -> Result<Any, Error> {
        let _g = self.0.lock.lock();
        // SAFETY: lock held.
        let s = unsafe { self.0.slice() };
        Ok(s[super::resolve_index(i, s.len(), "list")?].clone())
    }

    /// Snapshot of the elements.
    pub fn to_vec(&self) -> Vec<Any> {
        let _g = self.0.lock.lock();
        // SAFETY: lock held.
        unsafe { self.0.slice() }.to_vec()
    }

    pub fn push(&self, v: Any) -> Result<(), Error> {
        let _g = self.0.lock.lock();
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
            let _g = self.0.lock.lock();
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
        let _g = self.0.lock.lock();
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
        let _g = self.0.lock.lock();
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
            let _g = self.0.lock.lock();
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

    pub fn into_object(self) -> ObjectRef {
        self.0.into_object_ref()
    }
}
