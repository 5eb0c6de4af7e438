//! The type table's start-up hook: the type attributes, metadata and core
//! types every layer registers when the process starts, installed before
//! the first lookup that could see them.
//!
//! Those registrations live in the layers above (containers, structural,
//! enum types, ...), which this layer must not name. The crate root, which
//! knows every layer, defines [`tether_core_start_up_type_table`]; the
//! declaration below is how the bottom reaches it, joined by the linker. So
//! the first lookup starts the table whoever makes it — Rust code or C code
//! calling the C ABI first — and no user has an init call to make.
//!
//! [`ensure`] runs the hook once per process. A lookup made while the hook
//! runs (on the same thread) answers from what is registered so far instead
//! of waiting for itself.

use std::cell::Cell;
use std::sync::Once;

extern "Rust" {
    /// Registers every layer's start-up type attributes; defined in lib.rs.
    fn tether_core_start_up_type_table();
}

thread_local! {
    static REGISTERING: Cell<bool> = const { Cell::new(false) };
}

/// Run the start-up registration (once; a no-op inside it).
pub fn ensure() {
    static ONCE: Once = Once::new();
    if ONCE.is_completed() || REGISTERING.with(Cell::get) {
        return;
    }
    ONCE.call_once(|| {
        REGISTERING.with(|r| r.set(true));
        // SAFETY: the crate root defines the function with this exact
        // signature (no arguments, no result); it takes no pointers.
        unsafe { tether_core_start_up_type_table() };
        REGISTERING.with(|r| r.set(false));
    });
}
