//! `ffi.StructuralKey`: a value together with its structural hash, so that
//! structurally equal values can be found as one key (`ffi.StructuralKey`
//! makes one, `ffi.StructuralKeyEqual` compares two: identity, then the
//! cached hashes, then structural equality).

use std::sync::OnceLock;

use crate::abi::{TVMFFIByteArray, TVMFFIObject, TVMFFITypeMetadata};
use crate::any::Any;
use crate::error::Error;
use crate::function::{arg, expect_args, Function};
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};
use crate::reflection::TypeBuilder;
use crate::type_registry;

use super::Global;

#[repr(C)]
pub struct StructuralKeyObj {
    header: TVMFFIObject,
    key: Any,
    hash_i64: i64,
}
crate::object_type!(StructuralKeyObj, "ffi.StructuralKey");

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
        obj.downcast::<StructuralKeyObj>().map(StructuralKey)
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

pub(crate) fn ensure_reflection() {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    let r = DONE.get_or_init(|| {
        (|| -> Result<(), Error> {
            TypeBuilder::<StructuralKeyObj>::new()
                .readonly_field::<Any>("key", std::mem::offset_of!(StructuralKeyObj, key))?
                .readonly_field::<i64>("hash_i64", std::mem::offset_of!(StructuralKeyObj, hash_i64))?;
            // Like upstream, the key type itself declares no structural kind.
            type_registry::register_metadata(
                StructuralKeyObj::type_index(),
                &TVMFFITypeMetadata {
                    doc: TVMFFIByteArray::EMPTY,
                    creator: None,
                    total_size: std::mem::size_of::<StructuralKeyObj>() as i32,
                    structural_eq_hash_kind: super::kind::UNSUPPORTED,
                },
            )
        })()
        .map_err(|e| e.message().to_string())
    });
    if let Err(m) = r {
        panic!("registering ffi.StructuralKey reflection: {m}");
    }
}

pub(crate) fn globals() -> Vec<Global> {
    vec![
        (
            "ffi.StructuralKey",
            Function::from_closure(|args| {
                expect_args(args, 1, "ffi.StructuralKey")?;
                Ok(Any::from_object(StructuralKey::new(args[0].to_owned()?)?.into_object()))
            }),
        ),
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
