//! Structural algorithms over FFI values, following TVM-FFI's semantics:
//! structural equality ([`equal`]), structural hashing ([`hash`]), the
//! hashable [`key`] wrapper, and the [`access_path`] objects that name where
//! two values first differ. Objects take part through reflection: their
//! registered fields (skipping `SEqHashIgnore`, opening def regions at
//! `SEqHashDef*`), the structural kind in their type metadata, and the type
//! attributes `__s_equal__` / `__s_hash__` when a type customises the walk.
//!
//! This module holds what the algorithms share: the stable hash primitives,
//! the per-type structural kind, and reading reflected fields.

pub mod access_path;
pub(crate) mod active_path;
pub(crate) mod container_hooks;
pub mod deep_stack;
pub mod equal;
pub mod hash;
pub mod hook_callback;
pub mod key;
pub mod mutate;
pub mod recursive_compare;
pub mod recursive_hash;
pub(crate) mod trampoline;
pub(crate) mod type_plan;
pub mod typed_args;
pub mod visit;
pub mod visit_error_context;

use crate::abi::{type_index as ti, TVMFFIFieldInfo, TVMFFITypeInfo};
use crate::any::Any;
use crate::error::{byte_slice, Error};
use crate::function::Function;
use crate::object::ObjectRef;
use crate::type_registry;

/// `TVMFFISEqHashKind`.
pub mod kind {
    pub const UNSUPPORTED: i32 = 0;
    pub const TREE_NODE: i32 = 1;
    pub const FREE_VAR: i32 = 2;
    pub const DAG_NODE: i32 = 3;
    pub const CONST_TREE_NODE: i32 = 4;
    pub const UNIQUE_INSTANCE: i32 = 5;
}

/// `TVMFFIDefRegionKind`.
pub mod def_region {
    pub const NONE: i32 = 0;
    /// Propagates to everything below it; entering another region inside
    /// it has no effect.
    pub const PATTERN: i32 = 1;
    /// Free variables directly in it bind; their own fields do not.
    pub const SIMPLE: i32 = 2;
}

/// TVM-FFI's `StableHashCombine`: stable across processes and platforms.
pub fn hash_combine(key: u64, value: u64) -> u64 {
    key ^ value
        .wrapping_add(0x9e37_79b9)
        .wrapping_add(key << 6)
        .wrapping_add(key >> 2)
}

/// TVM-FFI's `StableHashBytes` (little-endian words, modulo 2^31 - 1).
pub fn hash_bytes(data: &[u8]) -> u64 {
    const MULTIPLIER: u64 = 1_099_511_628_211;
    const MODULUS: u64 = 2_147_483_647;
    // x mod (2^31 - 1) without a division: 2^31 is 1 modulo the modulus,
    // so the high bits fold onto the low ones (twice brings any u64 below
    // 2^31 + 8), then one conditional subtraction.
    #[inline]
    fn reduce(x: u64) -> u64 {
        let x = (x & MODULUS) + (x >> 31);
        let x = (x & MODULUS) + (x >> 31);
        if x >= MODULUS {
            x - MODULUS
        } else {
            x
        }
    }
    let mut result: u64 = 0;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let word = u64::from_le_bytes(c.try_into().expect("8-byte chunk"));
        result = reduce(result.wrapping_mul(MULTIPLIER).wrapping_add(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        // The last word assembled in a register: copying the bytes into a
        // buffer and loading it as one word stalled on every short string
        // (the load waits for the byte stores to retire).
        let word = rest.iter().enumerate().fold(0u64, |w, (i, &b)| w | (b as u64) << (8 * i));
        result = reduce(result.wrapping_mul(MULTIPLIER).wrapping_add(word));
    }
    result
}

/// The hash TVM-FFI stores as a type's `type_key_hash` when built with
/// libstdc++ (`std::hash<std::string_view>`, 64-bit Murmur2 with libstdc++'s
/// seed). Structural hashes of containers and objects start from it, so
/// using the same function makes tether's hashes equal upstream's.
pub fn type_key_hash(key: &[u8]) -> u64 {
    const MUL: u64 = (0xc6a4_a793u64 << 32) + 0x5bd1_e995;
    const SEED: u64 = 0xc70f_6907;
    fn shift_mix(v: u64) -> u64 {
        v ^ (v >> 47)
    }
    let mut hash = SEED ^ (key.len() as u64).wrapping_mul(MUL);
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let data =
            shift_mix(u64::from_le_bytes(c.try_into().expect("8-byte chunk")).wrapping_mul(MUL))
                .wrapping_mul(MUL);
        hash ^= data;
        hash = hash.wrapping_mul(MUL);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut data = 0u64;
        for &b in rest.iter().rev() {
            data = (data << 8) + b as u64;
        }
        hash ^= data;
        hash = hash.wrapping_mul(MUL);
    }
    hash = shift_mix(hash).wrapping_mul(MUL);
    shift_mix(hash)
}

/// The type key hash of a registered type index.
pub(crate) fn type_index_key_hash(index: i32) -> u64 {
    type_key_hash(type_registry::type_key_of(index).as_bytes())
}

/// The structural kind of an object's type, with TVM-FFI's errors for
/// types that do not take part.
pub(crate) fn structural_kind(info: &TVMFFITypeInfo) -> Result<i32, Error> {
    // SAFETY: type infos and their keys live for the process.
    let key = String::from_utf8_lossy(unsafe { byte_slice(&info.type_key) }).into_owned();
    if info.metadata.is_null() {
        return Err(Error::type_error(format!(
            "Type metadata is not set for type `{key}`, so StructuralHash is not supported for this type"
        )));
    }
    // SAFETY: non-NULL metadata records live for the process.
    let kind = unsafe { (*info.metadata).structural_eq_hash_kind };
    if kind == kind::UNSUPPORTED {
        return Err(Error::type_error(format!(
            "_type_s_eq_hash_kind is not set for type `{key}`, so StructuralHash is not supported for this type"
        )));
    }
    Ok(kind)
}

pub(crate) fn type_info_of(obj: &ObjectRef) -> Result<&'static TVMFFITypeInfo, Error> {
    type_registry::type_info(obj.type_index()).ok_or_else(|| {
        Error::type_error(format!(
            "object has unregistered type index {}",
            obj.type_index()
        ))
    })
}

/// Read a reflected field of `obj` (the field belongs to its type).
pub(crate) fn read_field(obj: &ObjectRef, field: &TVMFFIFieldInfo) -> Result<Any, Error> {
    match read_field_in_place(obj, field) {
        Some(v) => Ok(v),
        None => crate::dataclass::get_field(obj, field),
    }
}

/// A field of a Python-defined layout, read in place (None for fields
/// with other getters, which [`read_field`] calls). A walk reads every
/// field of every object, and the call through the getter was a large
/// part of each; no Result either: returned through memory, it was
/// written in wide stores and read back in narrow pieces, a
/// store-forwarding stall per field.
#[inline(always)]
pub(crate) fn read_field_in_place(obj: &ObjectRef, field: &TVMFFIFieldInfo) -> Option<Any> {
    // SAFETY: the field belongs to the object's type (callers look it up
    // from the object's own type index), so the address is inside it.
    let addr = unsafe { (obj.as_ptr() as *const u8).add(field.offset as usize) };
    // SAFETY: as above, the live object holds the field at `addr`.
    unsafe { crate::dataclass::native_field::read_without_getter(field, addr) }
}

pub(crate) fn field_name(field: &TVMFFIFieldInfo) -> String {
    // SAFETY: registered field names live for the process.
    String::from_utf8_lossy(unsafe { byte_slice(&field.name) }).into_owned()
}

/// The region a `SEqHashDef*` field opens inside region `current`.
pub(crate) fn region_for_field(flags: i64, current: i32) -> Option<i32> {
    use crate::abi::field_flag::{kSEqHashDefPattern, kSEqHashDefSimple};
    if flags & (kSEqHashDefPattern | kSEqHashDefSimple) == 0 {
        return None;
    }
    Some(if current == def_region::PATTERN {
        def_region::PATTERN
    } else if flags & kSEqHashDefSimple != 0 {
        def_region::SIMPLE
    } else {
        def_region::PATTERN
    })
}

/// The region a custom hook's callback asks for inside region `current`.
pub(crate) fn region_for_hook(requested: i32, current: i32) -> i32 {
    if current == def_region::PATTERN || requested == def_region::NONE {
        current
    } else {
        requested
    }
}

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

pub(crate) fn is_object_index(index: i32) -> bool {
    index >= ti::kTVMFFIStaticObjectBegin
}

/// Register the structural types' reflection and type attributes. They
/// exist from start-up, as in TVM-FFI, so frontends can bind classes to
/// their keys before the first object is made.
pub(crate) fn ensure_reflection() {
    access_path::ensure_reflection();
    key::ensure_reflection();
    visit::ensure_reflection();
    mutate::ensure_reflection();
    visit_error_context::ensure_reflection();
}

/// A builtin global: its name and its function.
pub(crate) type Global = (&'static str, Result<Function, Error>);

/// The structural globals (`ffi.StructuralEqual`, `ffi.StructuralHash`,
/// `ffi.GetFirstStructuralMismatch`, `ffi.StructuralKey`,
/// `ffi.StructuralKeyEqual`), and the reflection of the access-path and key
/// types.
pub(crate) fn register_globals() -> Vec<Global> {
    ensure_reflection();
    let mut out = Vec::new();
    out.extend(equal::globals());
    out.extend(hash::globals());
    out.extend(key::globals());
    out.extend(visit::globals());
    out.extend(mutate::globals());
    out.extend(recursive_compare::globals());
    out.extend(recursive_hash::globals());
    out.extend(visit_error_context::globals());
    out
}

#[cfg(test)]
mod tests {
    use super::hash_bytes;

    /// The reference: TVM-FFI's loop, with a division per word.
    fn hash_bytes_by_division(data: &[u8]) -> u64 {
        let mut result: u64 = 0;
        for c in data.chunks(8) {
            let mut word = [0u8; 8];
            word[..c.len()].copy_from_slice(c);
            result = result.wrapping_mul(1_099_511_628_211).wrapping_add(u64::from_le_bytes(word)) % 2_147_483_647;
        }
        result
    }

    #[test]
    fn byte_hash_reduction_matches_the_division() {
        let mut state: u64 = 0x1234_5678_9abc_def0;
        let mut data = Vec::new();
        for len in 0..600 {
            // xorshift bytes, plus runs of 0xff and 0x00 that drive the sum
            // near the wrap-around and near multiples of the modulus.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let byte = match len % 3 {
                0 => 0xff,
                1 => state as u8,
                _ => 0,
            };
            data.push(byte);
            assert_eq!(hash_bytes(&data), hash_bytes_by_division(&data), "length {}", data.len());
            let ones = vec![0xffu8; len];
            assert_eq!(hash_bytes(&ones), hash_bytes_by_division(&ones));
        }
    }
}
