//! Recursive hashing of FFI values (`ffi.RecursiveHash`; TVM-FFI's
//! `RecursiveHash`), consistent with [`super::recursive_compare`]: values
//! `RecursiveEq` calls equal hash equally. The values are TVM-FFI's
//! (`StableHashCombine` over type indices, payloads, byte hashes and
//! type-key hashes), so they agree with upstream across processes.
//!
//! Containers mix their type key hash, their size and each element (with
//! its position for sequences; Map and Dict entries sorted by their
//! combined key/value hash, so insertion order does not matter); objects
//! mix their type key hash and each reflected field not flagged `HashOff`
//! or `CompareOff`. Floats hash NaN and -0.0 canonically. A type may take
//! over with the `__ffi_hash__` attribute (it receives a callback for
//! nested values); a user type with `__ffi_eq__` or `__ffi_compare__` but
//! no `__ffi_hash__` is refused, since its hash could not follow its
//! equality. Each object is hashed once (memoized by address); an object
//! met again while its own hash is being computed (a cycle) contributes its
//! type key hash. Deep nesting continues on a new stack segment of the
//! calling thread, and past 2^20 levels is refused like TVM-FFI's.

use std::collections::{HashMap, HashSet};

use crate::abi::{field_flag, type_index as ti};
use crate::any::{Any, AnyView};
use crate::containers::Shape;
use crate::error::Error;
use crate::function::Function;
use crate::object::ObjectRef;
use crate::type_registry;

use super::recursive_compare::MAX_DEPTH;
use super::typed_args::Sig;
use super::{deep_stack, Global, hash_bytes, hash_combine, type_index_key_hash, MapLike};

/// The recursive hash of `value` (as TVM-FFI returns it, the u64's bits).
pub fn recursive_hash(value: &Any) -> Result<i64, Error> {
    Ok(Hasher::default().hash(value)? as i64)
}

#[derive(Default)]
struct Hasher {
    /// Objects whose hash is being computed.
    on_stack: HashSet<usize>,
    /// Finished hashes by address (the entry keeps the object alive so the
    /// address is not reused).
    memo: HashMap<usize, (ObjectRef, u64)>,
    depth: usize,
}

fn pod_hash(value: &Any) -> u64 {
    let raw = value.as_raw();
    let index = raw.type_index;
    // SAFETY: POD payloads are 8 plain bytes.
    let bits = unsafe { raw.value.v_uint64 };
    let le = bits.to_le_bytes();
    match index {
        ti::kTVMFFINone => hash_combine(0, 0),
        ti::kTVMFFIBool => hash_combine(index as u64, (bits != 0) as u64),
        ti::kTVMFFIFloat => {
            let v = f64::from_bits(bits);
            let canonical = if v.is_nan() {
                f64::NAN.to_bits()
            } else if v == 0.0 {
                0
            } else {
                bits
            };
            hash_combine(index as u64, canonical)
        }
        ti::kTVMFFIDataType => {
            let h = hash_combine(index as u64, le[0] as u64);
            let h = hash_combine(h, le[1] as u64);
            hash_combine(h, u16::from_le_bytes([le[2], le[3]]) as u64)
        }
        ti::kTVMFFIDevice => {
            let device_type = i32::from_le_bytes([le[0], le[1], le[2], le[3]]);
            let device_id = i32::from_le_bytes([le[4], le[5], le[6], le[7]]);
            hash_combine(hash_combine(index as u64, device_type as u64), device_id as i64 as u64)
        }
        _ => hash_combine(index as u64, bits),
    }
}

impl Hasher {
    fn hash(&mut self, value: &Any) -> Result<u64, Error> {
        if let Some(h) = self.immediate(value)? {
            return Ok(h);
        }
        self.hash_frame(value.as_object().expect("frames are objects"))
    }

    /// The hash when no recursion is needed (None: hash the children).
    fn immediate(&mut self, value: &Any) -> Result<Option<u64>, Error> {
        let index = value.type_index();
        if let Some(bytes) = value.view().str_bytes() {
            let class = if matches!(index, ti::kTVMFFIBytes | ti::kTVMFFISmallBytes) { ti::kTVMFFIBytes } else { ti::kTVMFFIStr };
            return Ok(Some(hash_combine(class as u64, hash_bytes(bytes))));
        }
        if !super::is_object_index(index) {
            return Ok(Some(pod_hash(value)));
        }
        let obj = value.as_object().expect("object index");
        let addr = obj.as_ptr() as usize;
        if let Some((_, h)) = self.memo.get(&addr) {
            return Ok(Some(*h));
        }
        if self.on_stack.contains(&addr) {
            return Ok(Some(type_index_key_hash(index)));
        }
        if index == ti::kTVMFFIShape {
            let shape = Shape::from_object(obj.clone())?;
            let mut h = hash_combine(type_index_key_hash(index), shape.dims().len() as u64);
            for d in shape.dims() {
                h = hash_combine(h, *d as u64);
            }
            self.memo.insert(addr, (obj, h));
            return Ok(Some(h));
        }
        if let Some(hook) = type_registry::attr_value(index, b"__ffi_hash__") {
            let hook = Function::from_object(hook.get::<ObjectRef>()?)?;
            self.on_stack.insert(addr);
            let arg = Any::from_object(obj.clone());
            let r = super::hook_callback::with_scoped_callback(self, hash_callback, |cb| {
                hook.call(&[arg, Any::from_object(cb.as_object().clone())])
            });
            self.on_stack.remove(&addr);
            let h = r?.get::<i64>()? as u64;
            self.memo.insert(addr, (obj, h));
            return Ok(Some(h));
        }
        if index >= ti::kTVMFFIStaticObjectEnd
            && (type_registry::attr_value(index, b"__ffi_eq__").is_some()
                || type_registry::attr_value(index, b"__ffi_compare__").is_some())
        {
            return Err(Error::value_error(format!(
                "RecursiveHash: type '{}' defines __ffi_eq__ or __ffi_compare__ but not __ffi_hash__. Add a __ffi_hash__ hook to maintain the invariant RecursiveEq(a,b) => RecursiveHash(a)==RecursiveHash(b).",
                type_registry::type_key_of(index)
            )));
        }
        Ok(None)
    }

    fn hash_frame(&mut self, obj: ObjectRef) -> Result<u64, Error> {
        if self.depth >= MAX_DEPTH {
            return Err(Error::value_error(format!("ObjectGraphDFS: maximum stack depth ({MAX_DEPTH}) exceeded")));
        }
        let addr = obj.as_ptr() as usize;
        self.on_stack.insert(addr);
        self.depth += 1;
        let result = deep_stack::guarded(|| self.hash_children(&obj));
        self.depth -= 1;
        self.on_stack.remove(&addr);
        let h = result?;
        self.memo.insert(addr, (obj, h));
        Ok(h)
    }

    fn hash_children(&mut self, obj: &ObjectRef) -> Result<u64, Error> {
        let index = obj.type_index();
        let key_hash = type_index_key_hash(index);
        match index {
            ti::kTVMFFIArray | ti::kTVMFFIList => {
                let items = super::recursive_compare::sequence_items(obj.clone())?;
                let mut h = hash_combine(key_hash, items.len() as u64);
                for (i, item) in items.iter().enumerate() {
                    h = hash_combine(h, hash_combine(self.hash(item)?, i as u64));
                }
                Ok(h)
            }
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                let map = MapLike::from_object(obj.clone())?;
                let mut h = hash_combine(key_hash, map.len() as u64);
                let mut entries = Vec::with_capacity(map.len());
                for (k, v) in map.items() {
                    let kh = self.hash(&k)?;
                    entries.push(hash_combine(kh, self.hash(&v)?));
                }
                entries.sort_unstable();
                for e in entries {
                    h = hash_combine(h, e);
                }
                Ok(h)
            }
            _ => {
                let mut h = key_hash;
                for field in type_registry::all_fields(index) {
                    if field.flags & (field_flag::kHashOff | field_flag::kCompareOff) != 0 {
                        continue;
                    }
                    h = hash_combine(h, self.hash(&super::read_field(obj, field)?)?);
                }
                Ok(h)
            }
        }
    }
}

/// `fn_hash(value) -> int` handed to `__ffi_hash__`: a nested hash with a
/// fresh depth count and the same memo.
fn hash_callback(h: &mut Hasher, args: &[AnyView<'_>]) -> Result<Any, Error> {
    if args.len() != 1 {
        return Err(Error::type_error(format!("the __ffi_hash__ callback takes (value), got {} arguments", args.len())));
    }
    let v = args[0].to_owned()?;
    let saved = std::mem::replace(&mut h.depth, 0);
    let r = h.hash(&v);
    h.depth = saved;
    Ok(Any::from(r? as i64))
}

/// `ffi.RecursiveHash(value) -> int`.
pub(crate) fn globals() -> Vec<Global> {
    let sig = Sig { name: "ffi.RecursiveHash", params: &["Any"], ret: "int" };
    vec![(
        "ffi.RecursiveHash",
        Function::from_closure(move |args| {
            sig.check_count(args)?;
            Ok(Any::from(recursive_hash(&args[0].to_owned()?)?))
        }),
    )]
}
