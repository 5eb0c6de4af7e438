//! Opaque objects: a foreign handle with a deleter, given an object's
//! lifetime (`TVMFFIObjectCreateOpaque`). Frontends use
//! `ffi.OpaquePyObject` to carry their own values through the FFI.

use std::ffi::c_void;

use crate::abi::{type_index as ti, TVMFFIObject, TVMFFIOpaqueObjectCell};
use crate::values::error::Error;
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};
use crate::types::type_registry;

#[repr(C)]
pub struct OpaqueObj {
    header: TVMFFIObject,
    cell: TVMFFIOpaqueObjectCell,
    deleter: Option<unsafe extern "C" fn(*mut c_void)>,
}

// SAFETY: the ABI requires opaque handles' deleters to be callable from any
// thread that drops the last reference.
unsafe impl Send for OpaqueObj {}
// SAFETY: the handle is never dereferenced by the core.
unsafe impl Sync for OpaqueObj {}

// SAFETY: repr(C), header first.
unsafe impl ObjectType for OpaqueObj {
    const TYPE_KEY: &'static str = "ffi.OpaquePyObject";
    fn type_index() -> i32 {
        ti::kTVMFFIOpaquePyObject
    }
}

impl Drop for OpaqueObj {
    fn drop(&mut self) {
        if let Some(d) = self.deleter {
            // SAFETY: the creator handed us this handle with this deleter.
            unsafe { d(self.cell.handle) }
        }
    }
}

impl OpaqueObj {
    pub fn handle(&self) -> *mut c_void {
        self.cell.handle
    }

    /// Wrap `handle`; on failure the handle is NOT released (the caller keeps it).
    pub fn create(
        handle: *mut c_void,
        type_index: i32,
        deleter: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> Result<ObjectRef, Error> {
        if type_index < ti::kTVMFFIStaticObjectBegin || type_registry::type_info(type_index).is_none() {
            return Err(Error::value_error(format!(
                "opaque objects need a registered object type index, got {type_index}"
            )));
        }
        let obj = OpaqueObj { header: header_placeholder(), cell: TVMFFIOpaqueObjectCell { handle }, deleter: None };
        // SAFETY: OpaqueObj has no tail; the type shares its layout.
        let ptr = unsafe { ObjectPtr::new_with_type_index(obj, 0, type_index)? };
        // SAFETY: sole owner; attach the deleter now that nothing can fail.
        unsafe { (*ptr.as_ptr()).deleter = deleter };
        Ok(ptr.into_object_ref())
    }

    /// The handle inside an opaque object of any opaque type index.
    ///
    /// # Safety
    /// `obj` must be an object created by [`OpaqueObj::create`].
    pub unsafe fn handle_of(obj: &ObjectRef) -> *mut c_void {
        // SAFETY: per the caller.
        unsafe { (*(obj.as_ptr() as *const OpaqueObj)).cell.handle }
    }
}
