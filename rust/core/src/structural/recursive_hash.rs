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
//! type key hash. The hash runs on an explicit stack of open objects on the
//! calling thread, and nesting past 2^20 levels is refused like TVM-FFI's.

use std::collections::{HashMap, HashSet};

use crate::abi::{field_flag, type_index as ti};
use crate::values::any::{Any, AnyView};
use crate::containers::Shape;
use crate::values::error::Error;
use crate::values::function::Function;
use crate::object::ObjectRef;
use crate::types::type_registry;

use super::recursive_compare::MAX_DEPTH;
use crate::containers::typed_args::Sig;
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
    /// Hash on an explicit stack of open objects, so nesting depth costs
    /// heap memory, not native stack (only `__ffi_hash__` hooks nest
    /// natively, on a grown stack).
    fn hash(&mut self, value: &Any) -> Result<u64, Error> {
        let mut stack: Vec<OpenObject> = Vec::new();
        let r = self.run(value, &mut stack);
        if r.is_err() {
            for open in stack {
                self.depth -= 1;
                self.on_stack.remove(&(open.obj.as_ptr() as usize));
            }
        }
        r
    }

    fn run(&mut self, root: &Any, stack: &mut Vec<OpenObject>) -> Result<u64, Error> {
        let mut done = match self.start(root)? {
            Ok(h) => return Ok(h),
            Err(open) => {
                stack.push(open);
                None
            }
        };
        loop {
            let Some(top) = stack.last_mut() else {
                return Ok(done.expect("the root's hash"));
            };
            if let Some(h) = done.take() {
                top.accept(h);
            }
            match top.next_child()? {
                Some(child) => match self.start(&child)? {
                    Ok(h) => done = Some(h),
                    Err(open) => stack.push(open),
                },
                None => {
                    let open = stack.pop().expect("the frame read above");
                    done = Some(self.finish(open));
                }
            }
        }
    }

    /// The hash of a value decided without descending, or its open frame
    /// (entered on the cycle set and the depth count).
    fn start(&mut self, value: &Any) -> Result<Result<u64, OpenObject>, Error> {
        if let Some(h) = self.immediate(value)? {
            return Ok(Ok(h));
        }
        if self.depth >= MAX_DEPTH {
            return Err(Error::value_error(format!("ObjectGraphDFS: maximum stack depth ({MAX_DEPTH}) exceeded")));
        }
        let obj = value.as_object().expect("frames are objects");
        let index = obj.type_index();
        let key_hash = type_index_key_hash(index);
        let children = match index {
            ti::kTVMFFIArray | ti::kTVMFFIList => {
                let items = super::recursive_compare::sequence_items(obj.clone())?;
                let h = hash_combine(key_hash, items.len() as u64);
                Children::Sequence { items, h }
            }
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                let map = MapLike::from_object(obj.clone())?;
                let h = hash_combine(key_hash, map.len() as u64);
                Children::Map { items: map.items(), key: None, entries: Vec::with_capacity(map.len()), h }
            }
            _ => {
                let fields = type_registry::all_fields(index)
                    .into_iter()
                    .filter(|f| f.flags & (field_flag::kHashOff | field_flag::kCompareOff) == 0)
                    .collect();
                Children::Fields { fields, h: key_hash }
            }
        };
        self.on_stack.insert(obj.as_ptr() as usize);
        self.depth += 1;
        Ok(Err(OpenObject { obj, children, next: 0 }))
    }

    /// The hash of an object whose children are all hashed; leaves it.
    fn finish(&mut self, open: OpenObject) -> u64 {
        let h = match open.children {
            Children::Sequence { h, .. } | Children::Fields { h, .. } => h,
            Children::Map { mut entries, h, .. } => {
                entries.sort_unstable();
                entries.into_iter().fold(h, hash_combine)
            }
        };
        let addr = open.obj.as_ptr() as usize;
        self.depth -= 1;
        self.on_stack.remove(&addr);
        self.memo.insert(addr, (open.obj, h));
        h
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
        if let Some(hook) = crate::reflection::attr_columns::attr_value(index, b"__ffi_hash__") {
            let hook = Function::from_object(hook.get::<ObjectRef>()?)?;
            self.on_stack.insert(addr);
            let arg = Any::from_object(obj.clone());
            // Hooks nest natively (through their callback): grow this
            // thread's stack when it runs low.
            let r = deep_stack::guarded(|| {
                super::hook_callback::with_scoped_callback(self, hash_callback, |cb| {
                    hook.call(&[arg, Any::from_object(cb.as_object().clone())])
                })
            });
            self.on_stack.remove(&addr);
            let h = r?.get::<i64>()? as u64;
            self.memo.insert(addr, (obj, h));
            return Ok(Some(h));
        }
        if index >= ti::kTVMFFIStaticObjectEnd
            && (crate::reflection::attr_columns::attr_value(index, b"__ffi_eq__").is_some()
                || crate::reflection::attr_columns::attr_value(index, b"__ffi_compare__").is_some())
        {
            return Err(Error::value_error(format!(
                "RecursiveHash: type '{}' defines __ffi_eq__ or __ffi_compare__ but not __ffi_hash__. Add a __ffi_hash__ hook to maintain the invariant RecursiveEq(a,b) => RecursiveHash(a)==RecursiveHash(b).",
                type_registry::type_key_of(index)
            )));
        }
        Ok(None)
    }

}

/// The children of an object being hashed, and its hash so far.
enum Children {
    Sequence { items: Vec<Any>, h: u64 },
    /// `key` is the hash of the key whose value is being hashed.
    Map { items: Vec<(Any, Any)>, key: Option<u64>, entries: Vec<u64>, h: u64 },
    Fields { fields: Vec<&'static crate::abi::TVMFFIFieldInfo>, h: u64 },
}

/// An object whose children are being hashed, from `next` on (map keys and
/// values alternate).
struct OpenObject {
    obj: ObjectRef,
    children: Children,
    next: usize,
}

impl OpenObject {
    fn next_child(&mut self) -> Result<Option<Any>, Error> {
        let i = self.next;
        self.next += 1;
        Ok(match &self.children {
            Children::Sequence { items, .. } => items.get(i).cloned(),
            Children::Map { items, .. } => items.get(i / 2).map(|(k, v)| if i % 2 == 0 { k.clone() } else { v.clone() }),
            Children::Fields { fields, .. } => match fields.get(i) {
                Some(f) => Some(super::read_field(&self.obj, f)?),
                None => None,
            },
        })
    }

    /// Combine the hash of the child last handed out.
    fn accept(&mut self, child: u64) {
        let i = self.next - 1;
        match &mut self.children {
            Children::Sequence { h, .. } => *h = hash_combine(*h, hash_combine(child, i as u64)),
            Children::Map { key, entries, .. } => match key.take() {
                None => *key = Some(child),
                Some(kh) => entries.push(hash_combine(kh, child)),
            },
            Children::Fields { h, .. } => *h = hash_combine(*h, child),
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
