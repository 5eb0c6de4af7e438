//! Shape: an immutable list of i64 in TVM-FFI's layout — the header, a
//! `TVMFFIShapeCell`, then the dimensions in place.

use crate::abi::{type_index as ti, TVMFFIObject, TVMFFIShapeCell};
use crate::values::error::Error;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};

#[repr(C)]
pub struct ShapeObj {
    header: TVMFFIObject,
    cell: TVMFFIShapeCell,
}

// SAFETY: immutable after construction.
unsafe impl Send for ShapeObj {}
// SAFETY: as above.
unsafe impl Sync for ShapeObj {}

// SAFETY: repr(C), header first.
unsafe impl ObjectType for ShapeObj {
    const TYPE_KEY: &'static str = "ffi.Shape";
    fn type_index() -> i32 {
        ti::kTVMFFIShape
    }
}

impl ShapeObj {
    pub fn dims(&self) -> &[i64] {
        if self.cell.size == 0 {
            &[]
        } else {
            // SAFETY: `data` points at `size` dims in our own tail.
            unsafe { std::slice::from_raw_parts(self.cell.data, self.cell.size) }
        }
    }
}

/// An owning handle to a Shape.
#[derive(Clone)]
pub struct Shape(ObjectPtr<ShapeObj>);

impl Shape {
    pub fn new(dims: &[i64]) -> Result<Shape, Error> {
        let obj = ShapeObj { header: header_placeholder(), cell: TVMFFIShapeCell { data: std::ptr::null(), size: 0 } };
        // SAFETY: the tail is filled before the object escapes; i64 needs no drop.
        let ptr = unsafe { ObjectPtr::new_with_tail(obj, std::mem::size_of_val(dims), 8)? };
        // SAFETY: sole owner, writing into our tail.
        unsafe {
            let c = ptr.as_ptr();
            let data = (c as *mut u8).add(std::mem::size_of::<ShapeObj>()) as *mut i64;
            std::ptr::copy_nonoverlapping(dims.as_ptr(), data, dims.len());
            (*c).cell = TVMFFIShapeCell { data, size: dims.len() };
        }
        Ok(Shape(ptr))
    }

    pub fn from_object(obj: ObjectRef) -> Result<Shape, Error> {
        obj.downcast::<ShapeObj>().map(Shape).map_err(Error::from)
    }

    pub fn dims(&self) -> &[i64] {
        self.0.dims()
    }

    pub fn into_object(self) -> ObjectRef {
        self.0.into_object_ref()
    }
}
