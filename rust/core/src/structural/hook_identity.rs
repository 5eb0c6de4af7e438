//! Which native hook pointers are the core's own container hooks
//! (`container_hooks`): a visit or mutate engine meeting one runs the
//! container's descent as steps of its own work stack instead of calling
//! it. The hooks record their addresses here when they are registered at
//! start-up, before any column can hand them out; the engines, which the
//! hooks themselves call back into, ask here without naming them.

use std::sync::OnceLock;

/// Which builtin mutate hook a native pointer is, if any.
pub(crate) enum BuiltinMutate {
    Leaf,
    Copy,
    InPlace,
}

struct Addresses {
    visit: usize,
    /// Leaf, copy, in place.
    mutate: [usize; 3],
}

static ADDRESSES: OnceLock<Addresses> = OnceLock::new();

/// Record the builtin hooks' addresses (once, at start-up).
pub(crate) fn record(visit: usize, mutate: [usize; 3]) {
    let _ = ADDRESSES.set(Addresses { visit, mutate });
}

/// Whether `hook` is the builtin `__s_visit__` of the containers (the
/// core's engines then visit the children on their own work stack).
pub(crate) fn is_builtin_visit(hook: usize) -> bool {
    ADDRESSES.get().is_some_and(|a| a.visit == hook)
}

/// The builtin mutate hook `hook` is (the core's engines then run it as
/// steps of their own work stack).
pub(crate) fn builtin_mutate(hook: usize) -> Option<BuiltinMutate> {
    let a = ADDRESSES.get()?;
    match a.mutate.iter().position(|&m| m == hook)? {
        0 => Some(BuiltinMutate::Leaf),
        1 => Some(BuiltinMutate::Copy),
        _ => Some(BuiltinMutate::InPlace),
    }
}
