//! Views of the container and tensor values the structural algorithms
//! compare and hash item by item: a Map or Dict as its entries, an Array,
//! List or Shape as its items, a tensor's content bytes.

use crate::abi::{type_index as ti, TVMFFIAny};
use crate::containers::{Array, List};
use crate::object::ObjectRef;
use crate::values::any::Any;
use crate::values::error::Error;

/// The data of a CPU, contiguous tensor, with TVM-FFI's checks (`verb` is
/// "hash" or "compare", `side` names the tensor in the message).
pub(crate) fn tensor_content<'t>(t: &'t crate::tensor::Tensor, verb: &str, side: &str) -> Result<&'t [u8], Error> {
    if t.device().device_type as i32 != 1 {
        return Err(Error::runtime_error(format!(
            "Check failed: ({side}.device().device_type == kDLCPU) is false: can only {verb} CPU tensor"
        )));
    }
    if !t.is_contiguous() {
        return Err(Error::runtime_error(format!(
            "Check failed: ({side}.IsContiguous()) is false: Can only {verb} contiguous tensor"
        )));
    }
    let size = crate::tensor::tensor::data_size(t.numel().max(0) as u64, t.dtype()) as usize;
    if size == 0 || t.data().is_null() {
        return Ok(&[]);
    }
    // SAFETY: a CPU tensor's data (past its byte offset) holds `size` bytes
    // while the tensor lives, and `t` is borrowed for the slice's lifetime.
    Ok(unsafe { std::slice::from_raw_parts((t.data() as *const u8).add(t.byte_offset() as usize), size) })
}

/// A Map or a Dict, read the same way by the structural algorithms.
pub(crate) enum MapLike {
    Map(crate::containers::Map),
    Dict(crate::containers::Dict),
}

impl MapLike {
    pub(crate) fn from_object(obj: ObjectRef) -> Result<MapLike, Error> {
        Ok(if obj.type_index() == ti::kTVMFFIDict {
            MapLike::Dict(crate::containers::Dict::from_object(obj)?)
        } else {
            MapLike::Map(crate::containers::Map::from_object(obj)?)
        })
    }
    pub(crate) fn len(&self) -> usize {
        match self {
            MapLike::Map(m) => m.len(),
            MapLike::Dict(d) => d.len(),
        }
    }
    pub(crate) fn get(&self, key: &Any) -> Option<Any> {
        match self {
            MapLike::Map(m) => m.get(key),
            MapLike::Dict(d) => d.get(key),
        }
    }
    pub(crate) fn items(&self) -> Vec<(Any, Any)> {
        match self {
            MapLike::Map(m) => m.items(),
            MapLike::Dict(d) => d.items(),
        }
    }
}

/// The elements of an Array or a List, as the structural algorithms walk
/// them: an Array is immutable, so it is read in place (no copy of its
/// elements per walk); a List is copied, since a hook may change it while
/// the walk is inside it.
pub(crate) enum SeqItems {
    Array(crate::containers::Array),
    Copied(Vec<Any>),
}

impl SeqItems {
    pub(crate) fn of(index: i32, obj: ObjectRef) -> Result<SeqItems, Error> {
        Ok(if index == ti::kTVMFFIArray {
            SeqItems::Array(crate::containers::Array::from_object(obj)?)
        } else {
            SeqItems::Copied(crate::containers::List::from_object(obj)?.to_vec())
        })
    }
    #[inline]
    pub(crate) fn as_slice(&self) -> &[Any] {
        match self {
            SeqItems::Array(a) => a.as_slice(),
            SeqItems::Copied(v) => v,
        }
    }
}

/// The elements of a sequence, or the values of a map, of `value`.
pub(crate) fn container_children(value: &TVMFFIAny) -> Result<Vec<Any>, Error> {
    let obj = Any::from_view(value)?.get::<ObjectRef>()?;
    Ok(match value.type_index {
        ti::kTVMFFIArray => Array::from_object(obj)?.iter().cloned().collect(),
        ti::kTVMFFIList => List::from_object(obj)?.to_vec(),
        _ => MapLike::from_object(obj)?.items().into_iter().map(|(_, v)| v).collect(),
    })
}
