//! DLPack between Python and the FFI: tensors in (`tensor_import`, with
//! the per-type cache of exchange tables in `exchange_api`), tensors out
//! (`export`, and `methods`: the class's native `__dlpack__`; `exchange_out`:
//! a call's results back to the framework its tensor arguments came from),
//! and the functions `tether._ffi` offers over them (`entry_points`).
//! Data types and streams (no tensor involved) are in
//! [`crate::convert::dtype_stream`].
//!
//! Part of the conversion layer: it may name the tying layer, `core_link`
//! and the lower conversion modules (owned values, the error bridge, the
//! class registry); `entry_points` also names `ffi_to_py`, which names
//! `tensor_import` (so nothing under here below `entry_points` names it).

pub mod entry_points;
pub mod exchange_api;
pub mod exchange_out;
pub mod export;
pub mod methods;
pub mod tensor_import;
