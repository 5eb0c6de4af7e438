//! The core's C ABI functions as Rust functions of the same names and
//! signatures (see `cpp/include/tether/c_api.h` for their contracts).
//!
//! They do not reference the `TVMFFI*` symbols: each one calls through the
//! core's function table (`api_table`), fetched once through the uniquely
//! named `tether_core_api_table` and cached in a static. So a user of this
//! crate reaches tether's core even when another library exporting the same
//! `TVMFFI*` names was loaded into the global scope before or after it. The
//! hot path is one acquire load (a plain load on x86) and an indirect call.

use std::ffi::{c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::abi::*;
use crate::api_table::{with_core_api, TetherCoreApiTable, TETHER_CORE_API_VERSION};
// The DLPack types appear in the table's signatures (some builds use none).
#[allow(unused_imports)]
use crate::dlpack::*;

// rustc names a cdylib's import library `tether_core.dll.lib` (MSVC), and
// MSVC links `-l NAME` as `NAME.lib`: there the library is `tether_core.dll`.
#[cfg_attr(all(windows, target_env = "msvc"), link(name = "tether_core.dll"))]
#[cfg_attr(not(all(windows, target_env = "msvc")), link(name = "tether_core"))]
extern "C" {
    /// The core's table (static, immutable, valid for the library's lifetime).
    pub fn tether_core_api_table() -> *const TetherCoreApiTable;
}

static TABLE: AtomicPtr<TetherCoreApiTable> = AtomicPtr::new(ptr::null_mut());

/// The core's table, fetched on first use.
#[inline(always)]
pub fn core_api() -> &'static TetherCoreApiTable {
    let p = TABLE.load(Ordering::Acquire);
    if p.is_null() {
        return fetch_table();
    }
    // SAFETY: only a table checked by `fetch_table` is ever stored; it is a
    // static of the core, which stays loaded while we are (we link it).
    unsafe { &*p }
}

#[cold]
#[inline(never)]
fn fetch_table() -> &'static TetherCoreApiTable {
    // SAFETY: the core's entry point takes no arguments and returns a pointer
    // to its static table.
    let p = unsafe { tether_core_api_table() };
    // SAFETY: NULL or the core's static table (checked before the deref).
    let table = match unsafe { p.as_ref() } {
        Some(t) => t,
        None => incompatible("tether_core_api_table() returned NULL"),
    };
    if table.version != TETHER_CORE_API_VERSION || (table.size as usize) < std::mem::size_of::<TetherCoreApiTable>() {
        incompatible(&format!(
            "libtether_core offers API table version {} of {} bytes; this build needs version {} of at least {} bytes",
            table.version,
            table.size,
            TETHER_CORE_API_VERSION,
            std::mem::size_of::<TetherCoreApiTable>()
        ));
    }
    // Racing first calls store the same pointer: no lock needed.
    TABLE.store(p as *mut TetherCoreApiTable, Ordering::Release);
    table
}

/// A core that cannot serve this build is a packaging error with no safe way
/// to continue (void functions have no error channel): say so and abort.
fn incompatible(why: &str) -> ! {
    eprintln!("tether-sys: incompatible core library: {why}");
    std::process::abort()
}

macro_rules! define_wrappers {
    ($( fn $name:ident ( $( $arg:ident : $ty:ty ),* $(,)? ) $( -> $ret:ty )? ; )*) => {
        $(
            #[doc = concat!("`", stringify!($name), "` of tether's core, called through its function table.")]
            ///
            /// # Safety
            /// The contract of the C function of the same name.
            #[inline]
            pub unsafe fn $name($( $arg: $ty ),*) $( -> $ret )? {
                // SAFETY: the table's entry is the core's function of this
                // name; the caller upholds its contract.
                unsafe { (core_api().$name)($( $arg ),*) }
            }
        )*
    };
}
with_core_api!(define_wrappers);
