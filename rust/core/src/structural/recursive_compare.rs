//! Recursive comparison of FFI values (`ffi.RecursiveEq`, `ffi.RecursiveLt`,
//! `…Le`, `…Gt`, `…Ge`; TVM-FFI's `RecursiveEq` … `RecursiveGe`), the
//! value semantics behind dataclass `==` and ordering.
//!
//! Unlike structural equality there are no def regions or free variables:
//! containers compare by content (sequences lexicographically, then by
//! length; Map and Dict by key, and they cannot be ordered), strings and
//! bytes by content (inline and heap forms alike), Shape by its dimensions,
//! and every other object by its reflected fields in declaration order
//! (fields flagged `CompareOff` are skipped; an object type without fields
//! compares equal to any other instance of the type). User types (past the
//! static indices) may take over with the `__ffi_eq__` / `__ffi_compare__`
//! type attributes, which receive a callback for nested values.
//!
//! The result is three-way (-1, 0, 1, or a hook's own value); `eq_only`
//! turns every "cannot order" condition (different types, NaN, maps, cycles)
//! into plain inequality or equality the way TVM-FFI does. A pair of objects
//! met again while it is being compared is a cycle: equal under `eq_only`,
//! a ValueError when ordering. The comparison runs on an explicit stack of
//! open pairs on the calling thread; like TVM-FFI, nesting past 2^20 levels
//! is refused with a ValueError.

use std::collections::HashSet;

use crate::abi::{field_flag, type_index as ti};
use crate::values::any::{Any, AnyView};
use crate::containers::{Array, List, Shape};
use crate::values::error::Error;
use crate::values::function::Function;
use crate::object::ObjectRef;
use crate::types::type_registry::{self, type_key_of};

use crate::containers::typed_args::Sig;
use super::{deep_stack, Global, MapLike};

/// TVM-FFI's limit on the nesting its iterative traversals accept.
pub(crate) const MAX_DEPTH: usize = 1 << 20;

/// Three-way recursive comparison: negative, zero or positive.
pub fn recursive_compare(lhs: &Any, rhs: &Any) -> Result<i32, Error> {
    Comparer::new(false).compare(lhs, rhs)
}

/// Recursive equality (never fails for lack of an order).
pub fn recursive_eq(lhs: &Any, rhs: &Any) -> Result<bool, Error> {
    Ok(Comparer::new(true).compare(lhs, rhs)? == 0)
}

struct Comparer {
    eq_only: bool,
    /// Object pairs being compared (addresses), for cycle detection.
    on_stack: HashSet<(usize, usize)>,
    depth: usize,
}

/// The children of one container or object pair.
enum Frame {
    Sequence { pairs: Vec<(Any, Any)>, lhs_len: usize, rhs_len: usize },
    Map(Vec<(Any, Any)>),
    Object(Vec<(Any, Any)>),
}

/// A pair whose children are being compared, from `next` on.
struct OpenPair {
    frame: Frame,
    next: usize,
    pair: (usize, usize),
}

fn sign(o: std::cmp::Ordering) -> i32 {
    o as i32
}

pub(crate) fn sequence_items(obj: ObjectRef) -> Result<Vec<Any>, Error> {
    Ok(if obj.type_index() == ti::kTVMFFIArray {
        Array::from_object(obj)?.iter().cloned().collect()
    } else {
        List::from_object(obj)?.to_vec()
    })
}

impl Comparer {
    fn new(eq_only: bool) -> Comparer {
        Comparer { eq_only, on_stack: HashSet::new(), depth: 0 }
    }

    /// Compare on an explicit stack of open pairs, so nesting depth costs
    /// heap memory, not native stack (only a type's hook nests natively).
    fn compare(&mut self, lhs: &Any, rhs: &Any) -> Result<i32, Error> {
        let mut stack: Vec<OpenPair> = Vec::new();
        let r = self.run(lhs, rhs, &mut stack);
        if r.is_err() {
            for open in stack {
                self.leave(&open);
            }
        }
        r
    }

    fn run(&mut self, lhs: &Any, rhs: &Any, stack: &mut Vec<OpenPair>) -> Result<i32, Error> {
        let mut done = match self.start(lhs, rhs)? {
            Ok(c) => return Ok(c),
            Err(open) => {
                stack.push(open);
                None
            }
        };
        loop {
            let Some(top) = stack.last_mut() else {
                return Ok(done.expect("the root's result"));
            };
            let result = match done.take() {
                // A difference inside a map leaves the maps unordered.
                Some(c) if c != 0 && matches!(top.frame, Frame::Map(_)) && !self.eq_only => {
                    return Err(Error::type_error("Cannot order Map/Dict values"));
                }
                Some(c) if c != 0 => Some(c),
                _ => {
                    let pairs = match &top.frame {
                        Frame::Sequence { pairs, .. } | Frame::Map(pairs) | Frame::Object(pairs) => pairs,
                    };
                    match pairs.get(top.next).cloned() {
                        Some((a, b)) => {
                            top.next += 1;
                            match self.start(&a, &b)? {
                                Ok(c) => done = Some(c),
                                Err(open) => stack.push(open),
                            }
                            None
                        }
                        None => Some(match &top.frame {
                            Frame::Sequence { lhs_len, rhs_len, .. } => sign(lhs_len.cmp(rhs_len)),
                            _ => 0,
                        }),
                    }
                }
            };
            if let Some(c) = result {
                let open = stack.pop().expect("the frame read above");
                self.leave(&open);
                done = Some(c);
            }
        }
    }

    /// The result of a pair decided without descending, or its open frame
    /// (entered on the cycle set and the depth count).
    fn start(&mut self, lhs: &Any, rhs: &Any) -> Result<Result<i32, OpenPair>, Error> {
        if let Some(c) = self.immediate(lhs, rhs)? {
            return Ok(Ok(c));
        }
        if self.depth >= MAX_DEPTH {
            return Err(Error::value_error(format!("RecursiveCompare: maximum stack depth ({MAX_DEPTH}) exceeded")));
        }
        let (lo, ro) = (lhs.as_object().expect("object index"), rhs.as_object().expect("object index"));
        let frame = match self.frame(lo.clone(), ro.clone())? {
            Ok(frame) => frame,
            Err(eager) => return Ok(Ok(eager)),
        };
        let pair = (lo.as_ptr() as usize, ro.as_ptr() as usize);
        self.on_stack.insert(pair);
        self.depth += 1;
        Ok(Err(OpenPair { frame, next: 0, pair }))
    }

    fn leave(&mut self, open: &OpenPair) {
        self.depth -= 1;
        self.on_stack.remove(&open.pair);
    }

    /// "Cannot order" under ordering, `eq_result` under `eq_only`.
    fn unordered(&self, eq_result: i32, message: impl FnOnce() -> String) -> Result<i32, Error> {
        if self.eq_only {
            Ok(eq_result)
        } else {
            Err(Error::type_error(message()))
        }
    }

    /// The result when no recursion is needed (None: compare the children).
    fn immediate(&mut self, lhs: &Any, rhs: &Any) -> Result<Option<i32>, Error> {
        let (lti, rti) = (lhs.type_index(), rhs.type_index());
        match (lti == ti::kTVMFFINone, rti == ti::kTVMFFINone) {
            (true, true) => return Ok(Some(0)),
            (true, false) => return Ok(Some(-1)),
            (false, true) => return Ok(Some(1)),
            _ => {}
        }
        let is_str = |i| matches!(i, ti::kTVMFFIStr | ti::kTVMFFISmallStr);
        let is_bytes = |i| matches!(i, ti::kTVMFFIBytes | ti::kTVMFFISmallBytes);
        if (is_str(lti) && is_str(rti)) || (is_bytes(lti) && is_bytes(rti)) {
            let (lv, rv) = (lhs.view(), rhs.view());
            let (a, b) = (lv.str_bytes().unwrap_or(&[]), rv.str_bytes().unwrap_or(&[]));
            return Ok(Some(sign(a.cmp(b))));
        }
        // Integers compare by value across their inline and BigInt forms.
        let is_int = |i| matches!(i, ti::kTVMFFIInt | ti::kTVMFFIBigInt);
        if is_int(lti) && is_int(rti) && (lti == ti::kTVMFFIBigInt || rti == ti::kTVMFFIBigInt) {
            let words = |v: &Any| crate::structural::big_int_hooks::words_of(v.as_raw());
            return Ok(Some(sign(crate::structural::big_int_hooks::compare_words(&words(lhs)?, &words(rhs)?))));
        }
        if lti != rti {
            return self
                .unordered(1, || format!("Cannot compare values of different types: {} vs {}", type_key_of(lti), type_key_of(rti)))
                .map(Some);
        }
        if !super::is_object_index(lti) {
            return self.compare_pod(lhs, rhs).map(Some);
        }
        let (lo, ro) = (lhs.as_object().expect("object index"), rhs.as_object().expect("object index"));
        if lo.as_ptr() == ro.as_ptr() {
            return Ok(Some(0));
        }
        if lti == ti::kTVMFFIShape {
            let (a, b) = (Shape::from_object(lo)?, Shape::from_object(ro)?);
            return Ok(Some(sign(a.dims().cmp(b.dims()))));
        }
        let pair = (lo.as_ptr() as usize, ro.as_ptr() as usize);
        if self.on_stack.contains(&pair) {
            if self.eq_only {
                return Ok(Some(0));
            }
            return Err(Error::value_error("RecursiveCompare: cyclic reference detected in ordering"));
        }
        if lti >= ti::kTVMFFIStaticObjectEnd {
            return self.custom_hook(&lo, &ro, pair);
        }
        Ok(None)
    }

    fn compare_pod(&self, lhs: &Any, rhs: &Any) -> Result<i32, Error> {
        let (a, b) = (lhs.as_raw(), rhs.as_raw());
        // SAFETY: POD payloads are 8 plain bytes, read as the type stored.
        let (ai, bi) = unsafe { (a.value.v_int64, b.value.v_int64) };
        match a.type_index {
            ti::kTVMFFIBool => Ok((ai != 0) as i32 - (bi != 0) as i32),
            ti::kTVMFFIInt => Ok(sign(ai.cmp(&bi))),
            ti::kTVMFFIFloat => {
                let (x, y) = (f64::from_bits(ai as u64), f64::from_bits(bi as u64));
                if x.is_nan() || y.is_nan() {
                    let eq = if x.is_nan() && y.is_nan() { 0 } else { 1 };
                    return self.unordered(eq, || "Cannot order NaN values".into());
                }
                Ok(x.partial_cmp(&y).map_or(0, sign))
            }
            ti::kTVMFFIDataType => {
                let key = |v: i64| {
                    let b = (v as u64).to_le_bytes();
                    (b[0], b[1], u16::from_le_bytes([b[2], b[3]]))
                };
                Ok(sign(key(ai).cmp(&key(bi))))
            }
            ti::kTVMFFIDevice => {
                let key = |v: i64| ((v as u64 & 0xffff_ffff) as i32, (v as u64 >> 32) as i32);
                Ok(sign(key(ai).cmp(&key(bi))))
            }
            index => {
                if a.small_str_len == b.small_str_len && ai == bi {
                    return Ok(0);
                }
                self.unordered(1, || format!("Cannot order values of type {}", type_key_of(index)))
            }
        }
    }

    /// A user type's `__ffi_eq__` / `__ffi_compare__` hook, if it has one.
    fn custom_hook(&mut self, lo: &ObjectRef, ro: &ObjectRef, pair: (usize, usize)) -> Result<Option<i32>, Error> {
        let index = lo.type_index();
        let eq_hook = if self.eq_only { crate::reflection::attr_columns::attr_value(index, b"__ffi_eq__") } else { None };
        let (hook, is_eq_hook) = match eq_hook {
            Some(h) => (h, true),
            None => match crate::reflection::attr_columns::attr_value(index, b"__ffi_compare__") {
                Some(h) => (h, false),
                None => return Ok(None),
            },
        };
        let hook = Function::from_object(hook.get::<ObjectRef>()?)?;
        let body: CallbackBody = if is_eq_hook { eq_callback } else { compare_callback };
        self.on_stack.insert(pair);
        let (l, r) = (Any::from_object(lo.clone()), Any::from_object(ro.clone()));
        // Hooks nest natively (through their callback): grow this thread's
        // stack when it runs low.
        let result = deep_stack::guarded(|| {
            super::hook_callback::with_scoped_callback(self, body, |cb| {
                hook.call(&[l, r, Any::from_object(cb.as_object().clone())])
            })
        });
        self.on_stack.remove(&pair);
        let result = result?;
        Ok(Some(if is_eq_hook {
            if result.get::<bool>()? { 0 } else { 1 }
        } else {
            result.get::<i64>()? as i32
        }))
    }

    /// The frame of a pair, or the result decided without one (maps with
    /// different keys under `eq_only`).
    fn frame(&self, lo: ObjectRef, ro: ObjectRef) -> Result<Result<Frame, i32>, Error> {
        match lo.type_index() {
            ti::kTVMFFIArray | ti::kTVMFFIList => {
                let (a, b) = (sequence_items(lo)?, sequence_items(ro)?);
                let (lhs_len, rhs_len) = (a.len(), b.len());
                Ok(Ok(Frame::Sequence { pairs: a.into_iter().zip(b).collect(), lhs_len, rhs_len }))
            }
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                let (a, b) = (MapLike::from_object(lo)?, MapLike::from_object(ro)?);
                let unorderable = || "Cannot order Map/Dict values".to_string();
                if a.len() != b.len() {
                    return self.unordered(1, unorderable).map(Err);
                }
                let mut pairs = Vec::with_capacity(a.len());
                for (k, v) in a.items() {
                    match b.get(&k) {
                        Some(w) => pairs.push((v, w)),
                        None => return self.unordered(1, unorderable).map(Err),
                    }
                }
                Ok(Ok(Frame::Map(pairs)))
            }
            index => {
                if index != ro.type_index() {
                    return self
                        .unordered(1, || {
                            format!("Cannot compare objects of different types: {} vs {}", type_key_of(index), type_key_of(ro.type_index()))
                        })
                        .map(Err);
                }
                let mut pairs = Vec::new();
                for field in type_registry::all_fields(index) {
                    if field.flags & field_flag::kCompareOff != 0 {
                        continue;
                    }
                    pairs.push((super::read_field(&lo, field)?, super::read_field(&ro, field)?));
                }
                Ok(Ok(Frame::Object(pairs)))
            }
        }
    }

    /// A nested comparison started by a hook's callback: a fresh depth
    /// count, the same cycle set.
    fn nested(&mut self, args: &[AnyView<'_>], what: &str) -> Result<i32, Error> {
        if args.len() != 2 {
            return Err(Error::type_error(format!("the {what} callback takes (lhs, rhs), got {} arguments", args.len())));
        }
        let (l, r) = (args[0].to_owned()?, args[1].to_owned()?);
        let saved = std::mem::replace(&mut self.depth, 0);
        let c = self.compare(&l, &r);
        self.depth = saved;
        c
    }
}

type CallbackBody = fn(&mut Comparer, &[AnyView<'_>]) -> Result<Any, Error>;

/// `fn_eq(lhs, rhs) -> bool` handed to `__ffi_eq__`.
fn eq_callback(c: &mut Comparer, args: &[AnyView<'_>]) -> Result<Any, Error> {
    Ok(Any::from(c.nested(args, "__ffi_eq__")? == 0))
}

/// `fn_cmp(lhs, rhs) -> int` handed to `__ffi_compare__`.
fn compare_callback(c: &mut Comparer, args: &[AnyView<'_>]) -> Result<Any, Error> {
    Ok(Any::from(c.nested(args, "__ffi_compare__")? as i64))
}

/// `ffi.RecursiveEq`, `ffi.RecursiveLt`, `ffi.RecursiveLe`,
/// `ffi.RecursiveGt`, `ffi.RecursiveGe`: `(lhs, rhs) -> bool`.
pub(crate) fn globals() -> Vec<Global> {
    fn op(name: &'static str, test: fn(i32) -> bool) -> Global {
        let sig = Sig { name, params: &["Any", "Any"], ret: "bool" };
        let eq_only = name == "ffi.RecursiveEq";
        (
            name,
            Function::from_closure(move |args| {
                sig.check_count(args)?;
                let c = Comparer::new(eq_only).compare(&args[0].to_owned()?, &args[1].to_owned()?)?;
                Ok(Any::from(test(c)))
            }),
        )
    }
    vec![
        op("ffi.RecursiveEq", |c| c == 0),
        op("ffi.RecursiveLt", |c| c < 0),
        op("ffi.RecursiveLe", |c| c <= 0),
        op("ffi.RecursiveGt", |c| c > 0),
        op("ffi.RecursiveGe", |c| c >= 0),
    ]
}
