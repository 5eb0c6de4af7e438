//! Type attribute columns (`TVMFFIGetTypeAttrColumn`): per attribute name,
//! one value per type index, read directly by compiled code. The values are
//! `Any`s owned here, so the columns sit in the reflection layer, above the
//! type table whose indices they are keyed by.
//!
//! A column's `TVMFFITypeAttrColumn` is boxed and never freed, so pointers
//! handed out stay valid; its data pointer moves when the column grows, as
//! in TVM-FFI. The columns TVM-FFI creates at start-up exist from the first
//! access, empty.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use parking_lot::RwLock;

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFITypeAttrColumn};
pub use crate::types::builtin_types::STARTUP_ATTR_COLUMNS;
use crate::types::type_registry;
use crate::values::any::Any;
use crate::values::error::Error;

struct AttrColumn {
    column: Box<TVMFFITypeAttrColumn>,
    values: Vec<Any>,
    /// Slots holding a default the core installed (an enum type's
    /// `__ffi_repr__`), which a later registration may replace once.
    defaults: HashSet<usize>,
}

/// The columns by attribute name.
struct Columns(HashMap<Vec<u8>, AttrColumn>);

// SAFETY: the column records point into the `values` vectors owned beside
// them, which are only mutated under the write lock.
unsafe impl Send for Columns {}
// SAFETY: as above.
unsafe impl Sync for Columns {}

impl std::ops::Deref for Columns {
    type Target = HashMap<Vec<u8>, AttrColumn>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Columns {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

fn columns() -> &'static RwLock<Columns> {
    static COLUMNS: OnceLock<RwLock<Columns>> = OnceLock::new();
    COLUMNS.get_or_init(|| {
        let mut columns = Columns(HashMap::new());
        // The headers abort when a column they look up is missing, so the
        // columns TVM-FFI creates at start-up exist here too (empty).
        for name in STARTUP_ATTR_COLUMNS {
            ensure_column(&mut columns, name.as_bytes());
        }
        RwLock::new(columns)
    })
}

/// The column named `name`, created empty if absent.
fn ensure_column<'c>(columns: &'c mut Columns, name: &[u8]) -> &'c mut AttrColumn {
    columns.entry(name.to_vec()).or_insert_with(|| AttrColumn {
        column: Box::new(TVMFFITypeAttrColumn { data: std::ptr::null(), size: 0, begin_index: 0 }),
        values: Vec::new(),
        defaults: HashSet::new(),
    })
}

/// Set `attr_name` of type `index`. Setting an attribute twice to different
/// values is an error.
///
/// As in TVM-FFI, `index == kTVMFFINone` is the sentinel that only makes
/// sure the column exists (the headers' `EnsureTypeAttrColumn`); the value
/// is ignored.
pub fn register_attr(index: i32, attr_name: &[u8], value: &TVMFFIAny) -> Result<(), Error> {
    let installed = store_attr(index, attr_name, value, false)?;
    // E.g. an enum type's state makes it an enum with variants, which the
    // enum layer answers with the enum repr (outside the lock, as the hook
    // registers attributes itself).
    if installed {
        // SAFETY: the crate root defines the function with this exact
        // signature (same crate, same compiler); `attr_name` is a live slice.
        unsafe { tether_core_type_attr_installed(index, attr_name) }?;
    }
    Ok(())
}

extern "Rust" {
    /// What the layers above do when a type first gets an attribute;
    /// defined by the crate root (lib.rs), joined by the linker, because
    /// this table must not name them.
    fn tether_core_type_attr_installed(index: i32, attr_name: &[u8]) -> Result<(), Error>;
}

/// Set `attr_name` of type `index` to a default that a later
/// [`register_attr`] may replace; nothing happens when a value is set.
pub(crate) fn register_default_attr(index: i32, attr_name: &[u8], value: &TVMFFIAny) -> Result<(), Error> {
    store_attr(index, attr_name, value, true).map(|_| ())
}

/// Store an attribute value; whether it was stored (a default is not
/// stored over an existing value).
fn store_attr(index: i32, attr_name: &[u8], value: &TVMFFIAny, as_default: bool) -> Result<bool, Error> {
    if index < 0 {
        return Err(Error::value_error(format!("unknown type index {index}")));
    }
    let mut columns = columns().write();
    type_registry::note_change();
    if index == ti::kTVMFFINone {
        ensure_column(&mut columns, attr_name);
        return Ok(false);
    }
    // Types are never removed: one registered now stays registered.
    if !type_registry::is_registered(index) {
        return Err(Error::value_error(format!("unknown type index {index}")));
    }
    let value = Any::from_view(value)?;
    let col = ensure_column(&mut columns, attr_name);
    let slot = index as usize;
    if col.values.len() <= slot {
        col.values.resize_with(slot + 1, Any::none);
    }
    let existing = &col.values[slot];
    if as_default && !existing.is_none() {
        return Ok(false);
    }
    let replaces_default = !as_default && col.defaults.remove(&slot);
    if !existing.is_none() && !existing.same_value(&value) && !replaces_default {
        return Err(Error::value_error(format!(
            "attribute {} of type {} is already registered",
            String::from_utf8_lossy(attr_name),
            index
        )));
    }
    col.values[slot] = value;
    if as_default {
        col.defaults.insert(slot);
    }
    // Any is repr(transparent) over TVMFFIAny, so the Vec is the column.
    col.column.data = col.values.as_ptr() as *const TVMFFIAny;
    col.column.size = col.values.len() as i32;
    Ok(true)
}

/// The column of an attribute, if any type registered it.
pub fn attr_column(attr_name: &[u8]) -> Option<&'static TVMFFITypeAttrColumn> {
    crate::types::start_up::ensure();
    let columns = columns().read();
    // SAFETY: the column box lives as long as the table (forever).
    columns.get(attr_name).map(|c| unsafe { &*(&*c.column as *const TVMFFITypeAttrColumn) })
}

/// The value of an attribute for one type (None when unset).
pub fn attr_value(index: i32, attr_name: &[u8]) -> Option<Any> {
    crate::types::start_up::ensure();
    let columns = columns().read();
    let col = columns.get(attr_name)?;
    let v = col.values.get(usize::try_from(index).ok()?)?;
    (!v.is_none()).then(|| v.clone())
}

