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
//! Layout: one folder per layer, top first; a module names only its own
//! layer and those below (`make lint-layers-core` checks it, with no import
//! circle between files; tools/layering/layers.txt):
//!
//! | layer | holds |
//! | --- | --- |
//! | [`c_api`], [`cxx_shim`] | the exported `TVMFFI*` functions, the API table, the C++ entry points |
//! | [`module`] | modules, libraries, the system library |
//! | [`serialization`] | JSON, JSON graph, repr, deep copy |
//! | [`structural`] | equality, hashing, visit, mutate, access paths |
//! | [`dataclass`], [`enum_type`] | run-time types and enums, the reflection globals |
//! | [`tensor`] | tensors, DLPack, dtypes, devices, streams |
//! | [`containers`] | Array, List, Map, Dict, Shape, opaque objects |
//! | [`reflection`] | fields, methods, attribute columns, native hooks |
//! | [`values`] | Any, strings, Error, Function and the global function table |
//! | [`object`] | reference counting, `ObjectPtr`/`ObjectRef`, the allocator registry |
//! | [`types`] | the type table: keys, indices, ancestors |
//!
//! This root is the map and the start-up registration: the global function
//! table and the type table declare the functions below and the linker
//! joins them, so the bottom reaches what the layers above register without
//! naming them, on its first use, whoever makes it. Unsafe code lives in
//! small modules with a `// SAFETY:` line per block.

pub use tether_sys::abi;
// First, and with #[macro_use]: the layers name `object_type!` unqualified,
// as the object layer's own macro rather than through the crate root.
#[macro_use]
pub mod object;
pub mod c_api;
pub mod containers;
pub mod cxx_shim;
pub mod dataclass;
pub mod enum_type;
pub mod module;
pub mod reflection;
pub mod serialization;
pub mod structural;
pub mod tensor;
pub mod types;
pub mod values;

pub use values::any::{Any, AnyView, FromAny, IntoAny};
pub use containers::{Array, Dict, List, Map, Shape};
pub use values::error::Error;
pub use values::function::Function;
pub use tensor::Tensor;
pub use object::{ObjectPtr, ObjectRef, ObjectType, WeakRef};

/// The builtin globals of every layer, which the global function table
/// (`values::global_table`) installs when it is first touched: it declares
/// this function and the linker joins the two, so the table names no layer
/// above it.
#[no_mangle]
fn tether_core_builtin_globals() -> Vec<values::global_table::Builtin> {
    let mut all = values::global_table::globals_of_the_table();
    all.extend(values::function_metadata::builtins());
    all.extend(values::backtrace_globals::builtins());
    all.extend(containers::globals::builtins());
    all.extend(tensor::builtins());
    all.extend(module::globals::builtins());
    all.extend(dataclass::reflection_globals::globals());
    all.push(("tether.dataclass.RegisterType", dataclass::register_type_global()));
    all.extend(dataclass::auto_init::globals());
    all.extend(dataclass::py_class::globals());
    all.extend(dataclass::py_class_fields::globals());
    all.extend(dataclass::field_default::globals());
    all.extend(structural::register_globals());
    all.extend(serialization::register_globals());
    all
}

/// The start-up type attributes of every layer, which the type table
/// (`types::start_up`) installs before its first lookup, joined by the
/// linker as above.
#[no_mangle]
fn tether_core_start_up_type_table() {
    c_api::register_call_boundary();
    let registered = containers::conversions::register()
        .and_then(|()| module::object::register_type_attrs())
        .and_then(|()| structural::big_int_hooks::register())
        .and_then(|()| enum_type::register())
        .map(|()| structural::ensure_reflection())
        .and_then(|()| structural::container_hooks::register());
    if let Err(e) = registered {
        panic!("registering the builtin type attributes: {}", e.message());
    }
}

/// What the layers above the type table do when a type first gets an
/// attribute (declared by `types::type_registry`, joined by the linker).
#[no_mangle]
fn tether_core_type_attr_installed(index: i32, attr_name: &[u8]) -> Result<(), Error> {
    enum_type::on_attr_installed(index, attr_name)
}
