//! Everything `tether._ffi` registers, in order: the allocator, the
//! wrapper base types, the class table's start, and each class and
//! function Python sees. The hooks lower layers need are installed before
//! this runs (the crate root, `lib.rs`).

use pyo3::prelude::*;

use crate::call::{function_type, mlir_packed_call};
use crate::convert::builtin_calls;
use crate::convert::dlpack;
use crate::convert::py_to_ffi::OpaquePtrValue;
use crate::convert::rvalue_ref::{self, RValueRef};
use crate::convert::{dtype_stream, error_cell, opaque_values, registry, shape_values, string_values, value_classes};
use crate::module::{classes, construct, conversions, descriptor, globals, object_ops, seq_index, type_info, wrapper_state};
use crate::tie::py_allocator;

/// Adds the extension's classes and functions to `m` and starts the
/// allocator and class table.
pub fn populate(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    py_allocator::install_allocator().map_err(pyo3::exceptions::PyRuntimeError::new_err)?;
    let base = classes::make_base_type(py)?;
    m.add("CObject", base.bind(py))?;
    let function_base = function_type::make_function_base(py, base.bind(py))?;
    m.add("FunctionBase", function_base.bind(py))?;
    function_type::set_function_base(py, function_base);
    registry::set_base(py, base);
    builtin_calls::load_builtins(py)?;
    m.add_class::<RValueRef>()?;
    rvalue_ref::record_type(py);
    m.add_class::<descriptor::FieldDescriptor>()?;
    descriptor::install_field_get(&py.get_type::<descriptor::FieldDescriptor>())?;
    m.add_function(wrap_pyfunction!(classes::install_field_get, m)?)?;
    m.add_function(wrap_pyfunction!(classes::install_seq_getitem, m)?)?;
    m.add_class::<OpaquePtrValue>()?;
    m.add_function(wrap_pyfunction!(globals::set_hooks, m)?)?;
    m.add_function(wrap_pyfunction!(globals::error_new, m)?)?;
    m.add_function(wrap_pyfunction!(error_cell::error_backtrace, m)?)?;
    m.add_function(wrap_pyfunction!(error_cell::error_update_backtrace, m)?)?;
    m.add_function(wrap_pyfunction!(error_cell::error_extra_context, m)?)?;
    m.add_function(wrap_pyfunction!(conversions::to_object, m)?)?;
    m.add_function(wrap_pyfunction!(string_values::string_object_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(string_values::register_string_classes, m)?)?;
    m.add_function(wrap_pyfunction!(shape_values::register_shape_class, m)?)?;
    m.add_function(wrap_pyfunction!(object_ops::move_handle, m)?)?;
    m.add_function(wrap_pyfunction!(opaque_values::opaque_object, m)?)?;
    m.add_function(wrap_pyfunction!(mlir_packed_call::function_from_mlir_packed, m)?)?;
    m.add_function(wrap_pyfunction!(opaque_values::opaque_payload, m)?)?;
    m.add_function(wrap_pyfunction!(object_ops::register_type_attr, m)?)?;
    m.add_function(wrap_pyfunction!(object_ops::register_type_method, m)?)?;
    m.add_function(wrap_pyfunction!(classes::install_slots, m)?)?;
    m.add_function(wrap_pyfunction!(classes::register_class, m)?)?;
    m.add_function(wrap_pyfunction!(function_type::install_function_call, m)?)?;
    m.add_function(wrap_pyfunction!(classes::registered_class, m)?)?;
    m.add_function(wrap_pyfunction!(classes::set_class_factory, m)?)?;
    m.add_function(wrap_pyfunction!(wrapper_state::mark_python_finalizing, m)?)?;
    m.add_function(wrap_pyfunction!(wrapper_state::sweep_side_table, m)?)?;
    m.add_function(wrap_pyfunction!(wrapper_state::tied_by_side_table, m)?)?;
    m.add_function(wrap_pyfunction!(wrapper_state::chandle, m)?)?;
    m.add_function(wrap_pyfunction!(wrapper_state::tie_state_of, m)?)?;
    m.add_function(wrap_pyfunction!(wrapper_state::type_index_of, m)?)?;
    m.add_function(wrap_pyfunction!(wrapper_state::use_count, m)?)?;
    m.add_function(wrap_pyfunction!(globals::call, m)?)?;
    m.add_function(wrap_pyfunction!(globals::call_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(globals::call_seq, m)?)?;
    m.add_function(wrap_pyfunction!(globals::get_global, m)?)?;
    m.add_function(wrap_pyfunction!(globals::set_global, m)?)?;
    m.add_function(wrap_pyfunction!(conversions::convert_value, m)?)?;
    m.add_function(wrap_pyfunction!(type_info::type_key_to_index, m)?)?;
    m.add_function(wrap_pyfunction!(type_info::type_info, m)?)?;
    m.add_function(wrap_pyfunction!(type_info::type_attr, m)?)?;
    m.add_function(wrap_pyfunction!(construct::construct, m)?)?;
    m.add_function(wrap_pyfunction!(globals::function_from_symbol, m)?)?;
    m.add_function(wrap_pyfunction!(seq_index::seq_items, m)?)?;
    m.add_function(wrap_pyfunction!(error_cell::error_parts, m)?)?;
    value_classes::add_functions(m)?;
    m.add_function(wrap_pyfunction!(dlpack::entry_points::tensor_from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::export::tensor_to_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::methods::install_dlpack_methods, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::entry_points::tensor_info, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::entry_points::from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::entry_points::tensor_device, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_stream::dtype_parse, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_stream::dtype_format, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_stream::env_set_stream, m)?)?;
    m.add_function(wrap_pyfunction!(dtype_stream::env_get_stream, m)?)?;
    py.import("atexit")?.call_method1("register", (m.getattr("mark_python_finalizing")?,))?;
    Ok(())
}
