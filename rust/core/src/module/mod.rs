//! Modules (`ffi.Module`, static index 73): libraries of FFI functions
//! found by name, with imports. [`object`] is the module object (a C++
//! `tvm::ffi::ModuleObj`, so that code compiled against TVM-FFI's headers
//! can call and subclass it) and the logic TVM-FFI's library implements
//! for it; [`library`] the library modules over shared libraries and the
//! system library, [`library_bin`] the module trees libraries embed,
//! [`globals`] the `ffi.Module*` globals and `ffi.SystemLib`, [`symbols`]
//! the process-wide system-library and context symbol registries.

pub mod globals;
pub(crate) mod library;
mod library_bin;
mod library_module;
pub mod object;
pub mod symbols;

pub use globals::{load_from_file, load_shared_library, system_lib};
pub use object::Module;

/// The module tree a serialized library binary describes (the blob after its
/// u64 length prefix), built without a library: `"_lib"` entries are refused,
/// every other kind goes to its `ffi.Module.load_from_bytes.<kind>` loader.
/// Malformed blobs are errors, never aborts; the fuzz target
/// `library_bin` drives this entry with arbitrary bytes.
pub fn module_tree_from_library_bin(blob: &[u8]) -> Result<Module, crate::values::error::Error> {
    library_bin::build(blob, None).map(|(root, _)| root)
}
