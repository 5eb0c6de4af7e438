//! The hooks `tether.core` hands the extension once at import: Python
//! functions the conversions and the error bridge call for what lives in
//! Python (TVM-FFI's error-kind table, the conversion protocols).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// Python-side hooks the conversions consult, set once by `tether.core`:
/// `error_from_ffi(err) -> exception` (TVM-FFI's kind-to-class table lives
/// in Python, `tether.error`), `error_kind(exc) -> str`, and
/// `value_from_protocol(obj) -> value or NotImplemented` for Python objects
/// speaking TVM-FFI's conversion protocols (`__tvm_ffi_object__`,
/// `__tvm_ffi_int__`, `ObjectConvertible`, NumPy scalars, ...).
pub struct Hooks {
    pub error_from_ffi: Py<PyAny>,
    pub error_kind: Py<PyAny>,
    pub value_from_protocol: Py<PyAny>,
}

static HOOKS: PyOnceLock<Hooks> = PyOnceLock::new();

pub fn set_hooks(py: Python<'_>, hooks: Hooks) -> PyResult<()> {
    HOOKS.set(py, hooks).map_err(|_| PyValueError::new_err("conversion hooks already set"))
}

pub fn hooks(py: Python<'_>) -> Option<&Hooks> {
    HOOKS.get(py)
}
