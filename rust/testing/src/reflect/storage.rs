//! How a reflected field of a test type is stored, read and written.
//!
//! The storages are the C++ layouts of upstream's field types: `int64_t`,
//! `int32_t`, `double`, `float`, `bool` (one byte), `DLDevice`,
//! `DLDataType`, a 16-byte `TVMFFIAny` (`Any`, `String`, `Bytes`,
//! `Optional<int64_t>`, `Variant<...>`) and an object pointer (`ObjectRef`
//! and the containers; NULL is None). Getters are C functions per storage;
//! a setter converts the value to the field's static type ([`Ty`]) first,
//! so each (storage, type) pair gets its own C setter, picked from a table
//! of monomorphised functions by the slot the pair was given.
//!
//! SAFETY invariants of this module: every `field` address passed to a
//! getter, setter or `read`/`write`/`release`/`copy` is a live field of the
//! storage named (inside an object kept alive by the caller); an Any field
//! holds an owned value and an object field owns one reference when
//! non-NULL. All-zero bytes are a valid value of every storage.

use std::ffi::{c_int, c_void};
use std::ptr::NonNull;
use std::sync::RwLock;

use tether_sys::abi::{DLDataType, DLDevice, TVMFFIAny, TVMFFIFieldGetter, TVMFFIFieldSetter, TVMFFIObject};

use crate::ffi::{Any, AnyView, Error, ObjectRef};
use crate::sig::Ty;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    I64,
    I32,
    F64,
    F32,
    Bool,
    Device,
    DType,
    Any,
    Object,
}

impl Store {
    pub fn size(self) -> usize {
        match self {
            Store::I64 | Store::F64 | Store::Device | Store::Object => 8,
            Store::I32 | Store::F32 | Store::DType => 4,
            Store::Bool => 1,
            Store::Any => 16,
        }
    }

    pub fn align(self) -> usize {
        match self {
            Store::I64 | Store::F64 | Store::Object | Store::Any => 8,
            Store::I32 | Store::F32 | Store::Device => 4,
            Store::DType => 2,
            Store::Bool => 1,
        }
    }

    pub fn getter(self) -> TVMFFIFieldGetter {
        match self {
            Store::I64 => get_i64,
            Store::I32 => get_i32,
            Store::F64 => get_f64,
            Store::F32 => get_f32,
            Store::Bool => get_bool,
            Store::Device => get_device,
            Store::DType => get_dtype,
            Store::Any => get_any,
            Store::Object => get_object,
        }
    }

    /// The field's value (owned).
    ///
    /// # Safety
    /// `field` is a live field of this storage (module invariant).
    pub unsafe fn read(self, field: *const u8) -> Any {
        // SAFETY: per the caller; reads are unaligned-tolerant.
        unsafe {
            match self {
                Store::I64 => Any::int((field as *const i64).read_unaligned()),
                Store::I32 => Any::int((field as *const i32).read_unaligned() as i64),
                Store::F64 => Any::float((field as *const f64).read_unaligned()),
                Store::F32 => Any::float((field as *const f32).read_unaligned() as f64),
                Store::Bool => Any::bool(field.read() != 0),
                Store::Device => Any::device((field as *const DLDevice).read_unaligned()),
                Store::DType => Any::dtype((field as *const DLDataType).read_unaligned()),
                Store::Any => AnyView::from_raw(&*(field as *const TVMFFIAny)).to_owned().unwrap_or_else(|_| Any::none()),
                Store::Object => match NonNull::new((field as *const *mut TVMFFIObject).read_unaligned()) {
                    Some(p) => Any::object(ObjectRef::from_raw_borrowed(p)),
                    None => Any::none(),
                },
            }
        }
    }

    /// Store `value` (already converted to the field's type), releasing
    /// what the field held.
    ///
    /// # Safety
    /// `field` is a live field of this storage (module invariant).
    pub unsafe fn write(self, field: *mut u8, value: Any) -> Result<(), Error> {
        let v = value.view();
        let bad = || Error::type_error(format!("cannot store a value of type `{}` in this field", v.type_key()));
        // SAFETY: per the caller.
        unsafe {
            match self {
                Store::I64 => (field as *mut i64).write_unaligned(v.int().ok_or_else(bad)?),
                Store::I32 => (field as *mut i32).write_unaligned(v.int().ok_or_else(bad)? as i32),
                Store::F64 => (field as *mut f64).write_unaligned(v.float().ok_or_else(bad)?),
                Store::F32 => (field as *mut f32).write_unaligned(v.float().ok_or_else(bad)? as f32),
                Store::Bool => field.write(v.bool().ok_or_else(bad)? as u8),
                Store::Device => (field as *mut DLDevice).write_unaligned(v.device().ok_or_else(bad)?),
                Store::DType => (field as *mut DLDataType).write_unaligned(v.dtype().ok_or_else(bad)?),
                Store::Any => {
                    let old = (field as *mut TVMFFIAny).replace(value.into_raw());
                    drop(Any::from_raw_owned(old));
                }
                Store::Object => {
                    let new = match value.into_object() {
                        Some(o) => o.into_raw(),
                        None => std::ptr::null_mut(),
                    };
                    let old = (field as *mut *mut TVMFFIObject).replace(new);
                    if let Some(p) = NonNull::new(old) {
                        drop(ObjectRef::from_raw_owned(p));
                    }
                }
            }
        }
        Ok(())
    }

    /// Release what the field owns, leaving it zero.
    ///
    /// # Safety
    /// `field` is a live field of this storage (module invariant).
    pub unsafe fn release(self, field: *mut u8) {
        // SAFETY: per the caller.
        unsafe {
            match self {
                Store::Any => drop(Any::from_raw_owned((field as *mut TVMFFIAny).replace(TVMFFIAny::NONE))),
                Store::Object => {
                    if let Some(p) = NonNull::new((field as *mut *mut TVMFFIObject).replace(std::ptr::null_mut())) {
                        drop(ObjectRef::from_raw_owned(p));
                    }
                }
                _ => {}
            }
        }
    }

    /// Copy the field at `src` into the zero field at `dst`, with new
    /// references for what it holds.
    ///
    /// # Safety
    /// Both are live fields of this storage; `dst` owns nothing.
    pub unsafe fn copy(self, dst: *mut u8, src: *const u8) {
        // SAFETY: per the caller.
        unsafe {
            match self {
                Store::Any | Store::Object => {
                    let v = self.read(src);
                    // The read value is the copy's own reference.
                    let _ = self.write(dst, v);
                }
                _ => std::ptr::copy_nonoverlapping(src, dst, self.size()),
            }
        }
    }
}

fn write_out(v: Any, out: *mut TVMFFIAny) -> c_int {
    // SAFETY: the caller of a getter passes a writable result slot.
    unsafe { out.write(v.into_raw()) };
    0
}

macro_rules! getter {
    ($name:ident, $store:expr) => {
        unsafe extern "C" fn $name(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
            // SAFETY: the core passes a field of this storage (module invariant).
            write_out(unsafe { $store.read(field as *const u8) }, out)
        }
    };
}
getter!(get_i64, Store::I64);
getter!(get_i32, Store::I32);
getter!(get_f64, Store::F64);
getter!(get_f32, Store::F32);
getter!(get_bool, Store::Bool);
getter!(get_device, Store::Device);
getter!(get_dtype, Store::DType);
getter!(get_any, Store::Any);
getter!(get_object, Store::Object);

/// The (storage, type) pairs setters have been made for; a setter's slot
/// is its index here.
static SETTER_KINDS: RwLock<Vec<(Store, String, Ty)>> = RwLock::new(Vec::new());

/// The setter storing values of `ty` in a field of `store`.
pub fn setter_for(store: Store, ty: &Ty) -> Result<TVMFFIFieldSetter, Error> {
    let key = ty.display();
    let mut kinds = SETTER_KINDS.write().map_err(|_| Error::runtime_error("setter table poisoned"))?;
    let slot = match kinds.iter().position(|(s, k, _)| *s == store && *k == key) {
        Some(i) => i,
        None => {
            kinds.push((store, key, ty.clone()));
            kinds.len() - 1
        }
    };
    SETTERS
        .get(slot)
        .copied()
        .ok_or_else(|| Error::runtime_error("the testing library ran out of field setter slots"))
}

/// Convert and store: the body of every setter.
fn set_slot(slot: usize, field: *mut c_void, value: *const TVMFFIAny) -> c_int {
    let kind = SETTER_KINDS.read().ok().and_then(|k| k.get(slot).map(|(s, _, t)| (*s, t.clone())));
    let Some((store, ty)) = kind else {
        Error::runtime_error("unknown field setter").raise();
        return -1;
    };
    // SAFETY: the core passes a valid value view for the call.
    let view = unsafe { AnyView::from_raw(&*value) };
    let converted = ty.convert(&view).or_else(|got| {
        // A field of a payload enum type also takes the raw int or string
        // naming one of its singletons (as upstream's dataclass fields do).
        if let Ty::Object { key, .. } = &ty {
            if let Some(target) = crate::ffi::type_table::type_index_of(key) {
                if let Some(singleton) = super::enum_state::normalize_payload(target, &view)? {
                    return Ok(singleton);
                }
            }
        }
        Err(Error::type_error(format!("Cannot convert from type `{got}` to `{}`", ty.display())))
    });
    // SAFETY: the core passes a field of this storage (module invariant).
    match converted.and_then(|v| unsafe { store.write(field as *mut u8, v) }) {
        Ok(()) => 0,
        Err(e) => {
            e.raise();
            -1
        }
    }
}

unsafe extern "C" fn setter<const SLOT: usize>(field: *mut c_void, value: *const TVMFFIAny) -> c_int {
    set_slot(SLOT, field, value)
}

macro_rules! setter_table {
    ($($n:literal)*) => { [$(setter::<$n> as TVMFFIFieldSetter),*] };
}

static SETTERS: [TVMFFIFieldSetter; 64] = setter_table!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
    32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63
);
