//! The two process-wide symbol registries modules read: the system
//! library's symbols (`TVMFFIEnvModRegisterSystemLibSymbol`, what
//! `ffi.SystemLib` serves) and the context symbols
//! (`TVMFFIEnvModRegisterContextSymbol`, pointers the loader stores into
//! every library defining a variable of that name, listed by
//! `Module::VisitContextSymbols`).
//!
//! Addresses are kept as `usize`: the registries only hand them back, never
//! dereference them.

use std::collections::HashMap;
use std::ffi::c_void;

use parking_lot::Mutex;

static SYSTEM_LIB: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);
static CONTEXT: Mutex<Vec<(String, usize)>> = Mutex::new(Vec::new());

/// Register (or replace) a system-library symbol. Replacing with a
/// different address warns on stderr, as TVM-FFI does.
pub fn register_system_lib_symbol(name: &str, ptr: *mut c_void) {
    let mut table = SYSTEM_LIB.lock();
    let table = table.get_or_insert_with(HashMap::new);
    if let Some(&old) = table.get(name) {
        if old != ptr as usize {
            eprintln!("Warning:SystemLib symbol {name} get overriden to a different address {ptr:p}->{:#x}", old);
        }
    }
    table.insert(name.to_string(), ptr as usize);
}

/// A system-library symbol by its full name, or NULL.
pub fn system_lib_symbol(name: &str) -> *mut c_void {
    SYSTEM_LIB.lock().as_ref().and_then(|t| t.get(name).copied()).unwrap_or(0) as *mut c_void
}

/// Append a context symbol (registration order is kept; a name registered
/// twice is stored twice, and the later one wins when written, as in
/// TVM-FFI).
pub fn register_context_symbol(name: &str, ptr: *mut c_void) {
    CONTEXT.lock().push((name.to_string(), ptr as usize));
}

/// A snapshot of the context symbols, in registration order.
pub fn context_symbols() -> Vec<(String, *mut c_void)> {
    CONTEXT.lock().iter().map(|(n, p)| (n.clone(), *p as *mut c_void)).collect()
}
