//! Registration at load time, as upstream's static initialisers do it: a
//! constructor in the platform's init section runs [`register_all`] when
//! the library is loaded (by the dynamic loader for programs linked
//! against it, by `dlopen`/`LoadLibrary` otherwise).
//!
//! Load time has no caller to report to: a registration that fails (a
//! `testing.*` name someone registered first, say) is recorded
//! ([`crate::registration::note`]), the rest still registered, and [`tether_testing_load_error`] returns the first
//! failure's message (NULL when everything registered).

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use crate::ffi::Error;
use crate::registration::{first_failure, note};

static LOAD_ERROR: OnceLock<Option<CString>> = OnceLock::new();

/// One group of registrations.
type Step = fn() -> Result<(), Error>;

/// Register every testing global and type; the first failure, if any.
pub fn register_all() -> Option<String> {
    let steps: [(&str, Step); 7] = [
        ("globals", crate::globals::register),
        ("basic types", crate::types::basic::register),
        ("compare types", crate::types::compare::register),
        ("enum types", crate::types::enums::register),
        ("C++ class types", crate::types::cxx_class::register),
        ("schema types", crate::types::schema::register),
        ("visit types", crate::types::visit::register),
    ];
    for (what, step) in steps {
        let _ = note(&format!("the {what}"), step());
    }
    first_failure()
}

extern "C" fn on_load() {
    LOAD_ERROR.get_or_init(|| register_all().map(|m| CString::new(m.replace('\0', " ")).unwrap_or_default()));
}

// The constructor, in the section each platform's loader runs at load.
#[used]
#[cfg_attr(all(unix, not(target_vendor = "apple")), link_section = ".init_array")]
#[cfg_attr(target_vendor = "apple", link_section = "__DATA,__mod_init_func")]
#[cfg_attr(windows, link_section = ".CRT$XCU")]
static ON_LOAD: extern "C" fn() = on_load;

/// NULL when every registration succeeded at load, else the first failure
/// (a string owned by the library).
#[no_mangle]
pub extern "C" fn tether_testing_load_error() -> *const c_char {
    match LOAD_ERROR.get() {
        Some(Some(m)) => m.as_ptr(),
        _ => std::ptr::null(),
    }
}

/// Upstream's testing library exports this symbol so that programs can
/// name it (and so keep the library linked); it does nothing.
#[no_mangle]
pub extern "C" fn TVMFFITestingDummyTarget() -> i32 {
    0
}
