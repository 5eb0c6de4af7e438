//! The conversion layer: values crossing between Python and the FFI. Owned
//! FFI values (`owned_any`), reading wrappers (`wrapper_access`), the class
//! table (`registry`), errors in both directions (`error_bridge`,
//! `exception_to_ffi`), Python to FFI (`py_to_ffi`, with `nested`
//! containers, `big_int`, `string_values`, `shape_values`, `value_classes`,
//! `dlpack`, `opaque_cell`, `rvalue_ref`) and FFI to Python (`ffi_to_py`),
//! and the Python entry points over single value kinds (`dtype_stream`,
//! `error_cell`, `opaque_values`, `dlpack::entry_points`); `dltensor_view`
//! makes a Tensor of a `DLTensor*` for `ffi_to_py`.
//!
//! It may name the tying layer and `core_link`, never the call or module
//! layers. Two services come from elsewhere through hooks filled at module
//! start-up: `py_to_ffi` turns a Python callable into a Function through
//! the call layer (`install_callable_to_function`), and `error_bridge`
//! hands an Error object to Python through `ffi_to_py`, which names the
//! error bridge itself (`install_any_to_py`). Inside the layer the files
//! form no import circle: the converters reach each other only downwards
//! (`nested` gets the leaf conversion as an argument).

pub mod arg_buffer;
pub mod big_int;
pub mod builtin_calls;
pub mod dlpack;
pub mod dltensor_view;
pub mod dtype_stream;
pub mod error_bridge;
pub mod error_cell;
pub mod lent_strings;
pub mod exception_to_ffi;
pub mod ffi_to_py;
pub mod nested;
pub mod opaque_cell;
pub mod opaque_values;
pub mod owned_any;
pub mod py_to_ffi;
pub mod python_hooks;
pub mod registry;
pub mod rvalue_ref;
pub mod sequence_build;
pub mod shape_values;
pub mod string_values;
pub mod type_attrs;
pub mod value_classes;
pub mod wrapper_access;
