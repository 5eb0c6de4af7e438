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
pub mod object;
pub mod symbols;

pub use globals::{load_from_file, load_shared_library, system_lib};
pub use object::Module;
