//! The call layer: Python calling native functions (`native_call`, with
//! the inline argument buffer of `convert::arg_buffer`), native code
//! calling Python callables (`callback`), the native base of
//! `tether.Function` (`function_type`), and Functions over MLIR packed
//! entry points (`mlir_packed_call`).
//!
//! It may name the conversion and tying layers and `core_link`, never the
//! module layer. It fills two hooks of the layers below at module
//! start-up: `tie::function_init` (the set-up of a Function wrapper) and
//! `convert::py_to_ffi`'s callable-to-Function conversion.

pub mod callback;
pub mod function_type;
pub mod mlir_packed_call;
pub mod native_call;
