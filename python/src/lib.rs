//! `tether._ffi`: the native half of the tether Python package.
//!
//! It links the core shared library (one registry per process), installs
//! the Python allocator, defines the wrapper base type `CObject` with its
//! own `tp_alloc`/`tp_dealloc`/`tp_free`, and offers the functions the
//! pure-Python layer builds on. The code sits in five layers, each naming
//! only itself and the layers below it (`tools/layering/layers.txt`):
//!
//! - [`module`]: what the Python module offers (classes, globals, type
//!   information, field descriptors, registration);
//! - [`call`]: calls into native functions and callbacks into Python, the
//!   native base of `tether.Function`;
//! - [`convert`]: values crossing (conversions both ways, errors, the class
//!   table, DLPack, strings, shapes, big ints, dtype/device);
//! - [`tie`]: the tying state machine over wrappers and handles, the Python
//!   allocator, kept memory, the exit parking of threads;
//! - [`core_link`]: what every caller of the core's C ABI shares.
//!
//! Where a lower layer needs a service from a higher one it defines a hook
//! that the module initialisation below fills before anything else runs.
//!
//! SAFETY invariants of the extension: functions that read a wrapper's
//! handle first check that the object is a wrapper
//! (`convert::wrapper_access::wrapper`), so it has the `CObject` layout;
//! handles they pass to the C ABI are live because the wrapper owns +1 on
//! them while the call runs.

mod call;
mod convert;
mod core_link;
mod module;
mod tie;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
fn _ffi(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Services of the upper layers the lower ones call, installed before
    // any wrapper exists or any value converts.
    tie::function_init::install(call::function_type::init_function_object);
    convert::py_to_ffi::install_callable_to_function(call::callback::function_from_callable);
    convert::error_bridge::install_any_to_py(convert::ffi_to_py::any_to_py);
    call::native_call::register_backtrace_boundary(m.py())?;
    module::registration::populate(m)
}
