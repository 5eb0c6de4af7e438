//! TVM-FFI's `CreateLibraryModule`: the module a freshly opened library
//! stands for. It stores every registered context symbol into the
//! library's variable of that name, and the module's address into
//! `__tvm_ffi__library_ctx`; a library embedding `__tvm_ffi__library_bin`
//! stands for the module tree that blob describes ([`super::library_bin`]),
//! any other for one library module ([`super::library`]).
//!
//! SAFETY invariants: those of [`super::library`] — `__tvm_ffi__library_ctx`
//! and context-symbol variables are pointer-sized writable variables, and
//! `__tvm_ffi__library_bin` is a u64 length followed by that many bytes.

use std::ffi::c_void;
use std::sync::Arc;

use crate::values::error::Error;

use super::library::{new_library_module, Library, LIBRARY_BIN, LIBRARY_CTX};
use super::library_bin;
use super::object::Module;
use super::symbols;

/// TVM-FFI's `CreateLibraryModule`: context symbols, then either the module
/// tree of an embedded library binary or one library module.
pub(crate) fn create_library_module(library: Arc<Library>) -> Result<Module, Error> {
    let bin = library.symbol(LIBRARY_BIN) as *const u8;
    let ctx = library.symbol(LIBRARY_CTX) as *mut *mut c_void;
    for (name, value) in symbols::context_symbols() {
        let slot = library.symbol(&name) as *mut *mut c_void;
        if !slot.is_null() {
            // SAFETY: a context-symbol variable of the library (module doc).
            unsafe { *slot = value };
        }
    }
    if !bin.is_null() {
        // SAFETY: the library's binary blob: a u64 length, then that many bytes.
        let blob = unsafe {
            let mut len = [0u8; 8];
            std::ptr::copy_nonoverlapping(bin, len.as_mut_ptr(), 8);
            std::slice::from_raw_parts(bin.add(8), u64::from_le_bytes(len) as usize)
        };
        let (root, lib_module) = library_bin::build(blob, Some(&library))?;
        if let (Some(m), false) = (lib_module, ctx.is_null()) {
            // SAFETY: the library's context variable (module doc).
            unsafe { *ctx = m.cxx_address() };
        }
        return Ok(root);
    }
    let module = new_library_module(&library)?;
    if !ctx.is_null() {
        // SAFETY: as above.
        unsafe { *ctx = module.cxx_address() };
    }
    Ok(module)
}
