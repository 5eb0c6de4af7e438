//! `ffi.StructuralKey`: a value together with its structural hash, so that
//! structurally equal values can be found as one key (`ffi.StructuralKey`
//! makes one, `ffi.StructuralKeyEqual` compares two: identity, then the
//! cached hashes, then structural equality). As in TVM-FFI, the type's
//! `__any_hash__`/`__any_equal__` hooks (native pointers) make Map and
//! Dict — and compiled code probing them — use the same comparison.

use std::sync::OnceLock;

use crate::abi::{TVMFFIAny, TVMFFIObject};
use crate::values::any::Any;
use crate::values::error::Error;
use crate::values::function::{arg, expect_args, Function};
use crate::reflection::native_hook::{expected_raw, pointer_value};
use crate::object::{header_placeholder, ObjectPtr, ObjectRef};
use crate::reflection::{DefaultObject, ShallowCopy, TypeBuilder};

use super::Global;

#[repr(C)]
pub struct StructuralKeyObj {
    header: TVMFFIObject,
    key: Any,
    hash_i64: i64,
}
object_type!(StructuralKeyObj, "ffi.StructuralKey");

impl DefaultObject for StructuralKeyObj {
    fn default_object() -> Self {
        StructuralKeyObj { header: header_placeholder(), key: Any::none(), hash_i64: 0 }
    }
}

impl ShallowCopy for StructuralKeyObj {
    fn shallow_copy(&self) -> Self {
        StructuralKeyObj { header: header_placeholder(), key: self.key.clone(), hash_i64: self.hash_i64 }
    }
}

/// A key compared structurally.
#[derive(Clone)]
pub struct StructuralKey(ObjectPtr<StructuralKeyObj>);

impl StructuralKey {
    pub fn new(key: Any) -> Result<StructuralKey, Error> {
        ensure_reflection();
        let hash_i64 = super::hash::structural_hash(&key, false, false)? as i64;
        Ok(StructuralKey(ObjectPtr::new(StructuralKeyObj { header: header_placeholder(), key, hash_i64 })?))
    }
    pub fn key(&self) -> &Any {
        &self.0.key
    }
    pub fn hash_i64(&self) -> i64 {
        self.0.hash_i64
    }
    pub fn from_object(obj: ObjectRef) -> Result<StructuralKey, Error> {
        obj.downcast::<StructuralKeyObj>().map(StructuralKey).map_err(Error::from)
    }
    pub fn into_object(self) -> ObjectRef {
        self.0.into_object_ref()
    }
    /// Identity, then equal hashes and structural equality.
    pub fn key_equal(&self, other: &StructuralKey) -> Result<bool, Error> {
        if self.0.as_ptr() == other.0.as_ptr() {
            return Ok(true);
        }
        if self.0.hash_i64 != other.0.hash_i64 {
            return Ok(false);
        }
        super::equal::structural_equal(&self.0.key, &other.0.key, false, false)
    }
}

/// `__any_hash__`: the cached hash.
unsafe extern "C" fn any_hash_hook(key: *const TVMFFIAny) -> TVMFFIAny {
    expected_raw("ffi.StructuralKey.__any_hash__", || {
        // SAFETY: the caller passes a live value of this type.
        let key = StructuralKey::from_object(unsafe { Any::from_view(&*key) }?.get::<ObjectRef>()?)?;
        Ok(Any::from(key.hash_i64()))
    })
}

/// `__any_equal__`: identity, then hashes and structural equality.
unsafe extern "C" fn any_equal_hook(lhs: *const TVMFFIAny, rhs: *const TVMFFIAny) -> TVMFFIAny {
    expected_raw("ffi.StructuralKey.__any_equal__", || {
        // SAFETY: the caller passes two live values of this type.
        let (lhs, rhs) = unsafe { (Any::from_view(&*lhs)?, Any::from_view(&*rhs)?) };
        let lhs = StructuralKey::from_object(lhs.get::<ObjectRef>()?)?;
        Ok(Any::from(lhs.key_equal(&StructuralKey::from_object(rhs.get::<ObjectRef>()?)?)?))
    })
}

fn new_key(args: &[crate::values::any::AnyView<'_>]) -> Result<Any, Error> {
    expect_args(args, 1, "ffi.StructuralKey")?;
    Ok(Any::from_object(StructuralKey::new(args[0].to_owned()?)?.into_object()))
}

pub(crate) fn ensure_reflection() {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    let r = DONE.get_or_init(|| {
        (|| -> Result<(), Error> {
            // Like upstream, the key type itself declares no structural
            // kind; its constructor takes the key.
            TypeBuilder::<StructuralKeyObj>::new()
                .static_method("__ffi_init__", Function::from_closure(new_key)?)?
                .readonly_field::<Any>("key", std::mem::offset_of!(StructuralKeyObj, key))?
                .readonly_field::<i64>("hash_i64", std::mem::offset_of!(StructuralKeyObj, hash_i64))?
                .metadata_with_creator(super::kind::UNSUPPORTED)?
                .fn_attr("__ffi_init__", Function::from_closure(new_key)?)?
                .shallow_copy()?
                .type_final(true)?
                .attr("__any_hash__", pointer_value(any_hash_hook as *const _))?
                .attr("__any_equal__", pointer_value(any_equal_hook as *const _))?;
            Ok(())
        })()
        .map_err(|e| e.message().to_string())
    });
    if let Err(m) = r {
        panic!("registering ffi.StructuralKey reflection: {m}");
    }
}

pub(crate) fn globals() -> Vec<Global> {
    vec![
        ("ffi.StructuralKey", Function::from_closure(new_key)),
        (
            "ffi.StructuralKeyEqual",
            Function::from_closure(|args| {
                expect_args(args, 2, "ffi.StructuralKeyEqual")?;
                let a = StructuralKey::from_object(arg(args, 0, "lhs")?)?;
                let b = StructuralKey::from_object(arg(args, 1, "rhs")?)?;
                Ok(Any::from(a.key_equal(&b)?))
            }),
        ),
    ]
}
