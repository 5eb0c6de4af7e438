//! The shared core's function table, the only way this library reaches the
//! core.
//!
//! The library links `libtether_core` and looks up its one uniquely named
//! entry point, `tether_core_api_table`; every C ABI call goes through the
//! table it returns. So the testing library registers into the same tables
//! as every other user of the process's one core, even when another library
//! exporting the `TVMFFI*` names was loaded into the global scope (see the
//! `api_table` module of tether-sys). The table is fetched once and cached.

use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use tether_sys::api_table::{TetherCoreApiTable, TETHER_CORE_API_VERSION};

// rustc names a cdylib's import library `tether_core.dll.lib` (MSVC), and
// MSVC links `-l NAME` as `NAME.lib`: there the library is `tether_core.dll`.
#[cfg_attr(all(windows, target_env = "msvc"), link(name = "tether_core.dll"))]
#[cfg_attr(not(all(windows, target_env = "msvc")), link(name = "tether_core"))]
extern "C" {
    fn tether_core_api_table() -> *const TetherCoreApiTable;
}

static TABLE: AtomicPtr<TetherCoreApiTable> = AtomicPtr::new(ptr::null_mut());

/// The core's function table.
#[inline]
pub fn api() -> &'static TetherCoreApiTable {
    let p = TABLE.load(Ordering::Acquire);
    if p.is_null() {
        return fetch();
    }
    // SAFETY: only a table checked by `fetch` is stored; it is a static of
    // the core, which stays loaded while this library is (it links it).
    unsafe { &*p }
}

#[cold]
fn fetch() -> &'static TetherCoreApiTable {
    // SAFETY: the entry point takes no arguments and returns its static table.
    let p = unsafe { tether_core_api_table() };
    // SAFETY: NULL or the core's static table, checked before use.
    let Some(table) = (unsafe { p.as_ref() }) else {
        incompatible("tether_core_api_table() returned NULL")
    };
    if table.version != TETHER_CORE_API_VERSION || (table.size as usize) < std::mem::size_of::<TetherCoreApiTable>() {
        incompatible(&format!(
            "the core offers table version {} of {} bytes; the testing library needs version {} of at least {} bytes",
            table.version,
            table.size,
            TETHER_CORE_API_VERSION,
            std::mem::size_of::<TetherCoreApiTable>()
        ));
    }
    TABLE.store(p as *mut TetherCoreApiTable, Ordering::Release);
    table
}

/// A core that cannot serve this library is a packaging error; library
/// load time has no error channel to report it through.
fn incompatible(why: &str) -> ! {
    eprintln!("tether-testing: incompatible core library: {why}");
    std::process::abort()
}
