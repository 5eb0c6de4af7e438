//! The tying layer: the only code that moves a handle between its states
//! (Detached, Active, Inactive, InTransit, Moving) and the memory of the
//! wrappers bound to it. It holds the binding word and its two homes (the
//! Python allocator's header, the side table), the weak pins on side-table
//! handles, the free-threaded tying lock, kept wrapper memory, the wrapper
//! base type's slots (`tie_state`), and the parking of threads at
//! interpreter exit that every callback into Python goes through.
//!
//! It may name only `core_link` and the core's C ABI (`tether_sys`). The
//! one service it needs from above, the set-up of a `tether.Function`
//! wrapper, reaches it through the hook in `function_init`, which the
//! call layer fills at module start-up.

pub mod binding;
pub mod binding_word;
pub mod exchange_tags;
pub mod exit_park;
pub mod function_init;
pub mod handle_pin;
pub mod kept_memory;
pub mod py_allocator;
pub mod release_pool;
pub mod side_table;
pub mod tie_state;
pub mod tying_lock;
