//! The interrupt signal of a structural visit: a `ffi.VisitInterrupt`
//! object stops a traversal and carries a payload; a visit's outcome is
//! `None` to go on or the interrupt ([`Visited`]).

use std::sync::OnceLock;

use crate::abi::{type_index as ti, TVMFFIObject};
use crate::object::{header_placeholder, ObjectPtr, ObjectRef};
use crate::reflection::structural_kind as kind;
use crate::reflection::{DefaultObject, ShallowCopy, TypeBuilder};
use crate::values::any::Any;
use crate::values::error::Error;

/// The interrupt signal: stops a traversal and carries a payload.
#[repr(C)]
pub struct VisitInterruptObj {
    header: TVMFFIObject,
    value: Any,
}
object_type!(VisitInterruptObj, "ffi.VisitInterrupt");

impl DefaultObject for VisitInterruptObj {
    fn default_object() -> Self {
        VisitInterruptObj { header: header_placeholder(), value: Any::none() }
    }
}

impl ShallowCopy for VisitInterruptObj {
    fn shallow_copy(&self) -> Self {
        VisitInterruptObj { header: header_placeholder(), value: self.value.clone() }
    }
}

/// Make a VisitInterrupt carrying `value`.
pub fn visit_interrupt(value: Any) -> Result<ObjectRef, Error> {
    crate::types::start_up::ensure();
    Ok(ObjectPtr::new(VisitInterruptObj {
        header: header_placeholder(),
        value,
    })?
    .into_object_ref())
}

/// The payload of a VisitInterrupt.
pub fn interrupt_value(obj: &ObjectRef) -> Result<Any, Error> {
    Ok(obj.clone().downcast::<VisitInterruptObj>()?.value.clone())
}

/// A traversal's outcome: `None` to continue, or the interrupt.
pub type Visited = Option<ObjectRef>;

/// A callback's or hook's `Optional<VisitInterrupt>` result.
pub(crate) fn optional_interrupt(v: Any) -> Result<Visited, Error> {
    match v.type_index() {
        ti::kTVMFFINone => Ok(None),
        ti::kTVMFFIVisitInterrupt => Ok(Some(v.get::<ObjectRef>()?)),
        _ => Err(Error::type_error(format!(
            "CallExpected: result type mismatch, expected Optional<ffi.VisitInterrupt>, but got {}",
            v.type_key()
        ))),
    }
}

/// Register VisitInterrupt's reflection (once).
pub(crate) fn ensure_reflection() -> Result<(), Error> {
    static DONE: OnceLock<Result<(), Error>> = OnceLock::new();
    DONE.get_or_init(|| {
        TypeBuilder::<VisitInterruptObj>::new()
            .readonly_field_default_none::<Any>("value", std::mem::offset_of!(VisitInterruptObj, value))?
            .metadata_with_creator(kind::UNSUPPORTED)?
            .shallow_copy()?
            .type_final(true)?;
        Ok(())
    })
    .clone()
}
