//! Array: an immutable sequence in TVM-FFI's layout — the header, a
//! `TVMFFISeqCell`, then the elements stored in place as `TVMFFIAny`s.

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIObject, TVMFFISeqCell};
use crate::values::any::{Any, AnyView};
use crate::values::error::Error;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};

#[repr(C)]
pub struct ArrayObj {
    header: TVMFFIObject,
    cell: TVMFFISeqCell,
}

// SAFETY: immutable after construction; elements are Send + Sync values.
unsafe impl Send for ArrayObj {}
// SAFETY: as above.
unsafe impl Sync for ArrayObj {}

// SAFETY: repr(C), header first.
unsafe impl ObjectType for ArrayObj {
    const TYPE_KEY: &'static str = "ffi.Array";
    fn type_index() -> i32 {
        ti::kTVMFFIArray
    }
}

impl ArrayObj {
    pub fn as_slice(&self) -> &[Any] {
        if self.cell.size == 0 {
            return &[];
        }
        // SAFETY: `data` points at `size` initialised elements in our tail;
        // Any is repr(transparent) over TVMFFIAny.
        unsafe { std::slice::from_raw_parts(self.cell.data as *const Any, self.cell.size as usize) }
    }
}

impl Drop for ArrayObj {
    fn drop(&mut self) {
        let n = self.cell.size as usize;
        let data = self.cell.data as *mut Any;
        for i in 0..n {
            // SAFETY: each of the `size` elements is initialised and owned.
            unsafe { std::ptr::drop_in_place(data.add(i)) };
        }
    }
}

/// An owning handle to an Array.
#[derive(Clone)]
pub struct Array(ObjectPtr<ArrayObj>);

impl Array {
    pub fn new(items: Vec<Any>) -> Result<Array, Error> {
        let n = items.len();
        Self::build(n, items.into_iter().map(Ok))
    }

    /// An array of `n` values taken over from `items` (which yields at
    /// least `n`); nothing is taken when allocating fails.
    pub fn from_owned(n: usize, items: impl Iterator<Item = Any>) -> Result<Array, Error> {
        Self::build(n, items.map(Ok))
    }

    /// An array owning the values `views` show, written straight into the
    /// array's storage (no intermediate vector: `ffi.Array` of many
    /// arguments).
    pub fn from_views(views: &[AnyView<'_>]) -> Result<Array, Error> {
        Self::build(views.len(), views.iter().map(|v| v.to_owned()))
    }

    /// An array of the first `n` items; the first error stops the build
    /// (the items written so far are released with the array).
    fn build(n: usize, items: impl Iterator<Item = Result<Any, Error>>) -> Result<Array, Error> {
        let tail = n
            .checked_mul(std::mem::size_of::<TVMFFIAny>())
            .ok_or_else(|| Error::value_error("array too large"))?;
        let obj = ArrayObj {
            header: header_placeholder(),
            cell: TVMFFISeqCell { data: std::ptr::null_mut(), size: 0, capacity: n as i64, data_deleter: None },
        };
        // SAFETY: `size` is set to the elements written before the array
        // can be dropped, and Drop drops exactly `size` elements, so a
        // failed build releases what it wrote; the array escapes only when
        // full.
        let ptr = unsafe { ObjectPtr::new_with_tail(obj, tail, std::mem::align_of::<TVMFFIAny>())? };
        // SAFETY: sole owner; writing the elements into the tail, at most
        // `n` of them (its capacity).
        unsafe {
            let cell = ptr.as_ptr();
            let data = (cell as *mut u8).add(std::mem::size_of::<ArrayObj>()) as *mut Any;
            (*cell).cell.data = data as *mut _;
            // The count is stored once, after the loop (or at the first
            // error): a store through the cell per element kept the loop
            // from running at the speed of the copy.
            let mut written = 0usize;
            let mut failed = None;
            for item in items.take(n) {
                match item {
                    Ok(v) => {
                        std::ptr::write(data.add(written), v);
                        written += 1;
                    }
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            (*cell).cell.size = written as i64;
            if let Some(e) = failed {
                return Err(e);
            }
        }
        if ptr.as_slice().len() != n {
            return Err(Error::new("InternalError", "array built from fewer items than its length"));
        }
        Ok(Array(ptr))
    }

    pub fn from_object(obj: ObjectRef) -> Result<Array, Error> {
        obj.downcast::<ArrayObj>().map(Array).map_err(Error::from)
    }

    pub fn len(&self) -> usize {
        self.0.as_slice().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` (negative counts from the end).
    pub fn get(&self, i: i64) -> Result<Any, Error> {
        let s = self.0.as_slice();
        Ok(s[super::resolve_index(i, s.len(), "array")?].clone())
    }

    pub fn iter(&self) -> impl Iterator<Item = &Any> {
        self.0.as_slice().iter()
    }

    /// The elements, in place (an Array never changes).
    pub fn as_slice(&self) -> &[Any] {
        self.0.as_slice()
    }

    pub fn into_object(self) -> ObjectRef {
        self.0.into_object_ref()
    }

    pub fn as_object(&self) -> ObjectRef {
        self.0.to_object_ref()
    }
}
