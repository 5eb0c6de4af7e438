//! tether-core: a Rust implementation of the TVM-FFI object core.
//!
//! This crate owns every process-wide table of the FFI — the custom
//! allocator registry, the type registry, the global function registry and
//! the thread-local raised error — and exports TVM-FFI's C ABI
//! (`TVMFFI*` symbols) from its shared library (`libtether_core.so`,
//! `.dylib`, `tether_core.dll`), so code compiled against TVM-FFI's C ABI
//! runs on it unchanged. The same crate, used as an rlib, offers a safe Rust
//! API: [`ObjectRef`]/[`ObjectPtr`]/[`WeakRef`], [`Any`], [`Function`],
//! [`Error`], the containers, and reflection for Rust-defined types.
//!
//! Exactly one copy of these tables may exist per process. Code that shares
//! a process with other FFI users (a Python extension, plugins) must link the
//! shared library, not this rlib.
//!
//! Layout: [`abi`] holds the raw `#[repr(C)]` structs; [`object`] the
//! reference counting; [`alloc_header`] the allocator registry; [`c_api`]
//! the exported functions; [`c_api_table`] the one uniquely named entry
//! point through which the Python extension and `tether-sys` reach them. Unsafe code lives in those modules and in the
//! object layouts of [`string`], [`containers`] and [`dataclass`].

pub use tether_sys::abi;
pub mod c_api;
pub mod containers;
pub mod cxx_shim;
pub mod dataclass;
pub mod enum_type;
pub mod module;
pub mod object;
pub mod reflection;
pub mod serialization;
pub mod structural;
pub mod tensor;
pub mod types;
pub mod values;
mod builtins;

pub use values::any::{Any, AnyView, FromAny, IntoAny};
pub use containers::{Array, Dict, List, Map, Shape};
pub use values::error::Error;
pub use values::function::Function;
pub use tensor::Tensor;
pub use object::{ObjectPtr, ObjectRef, ObjectType, WeakRef};
