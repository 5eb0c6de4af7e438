//! Structural equality (`ffi.StructuralEqual`) and first-mismatch reporting
//! (`ffi.GetFirstStructuralMismatch`), with TVM-FFI's semantics:
//!
//! * PODs compare by type and value (every NaN equals every NaN); strings
//!   and bytes by content, inline or heap alike; Array/List element-wise,
//!   Map by key lookup (object keys mapped through the free-variable
//!   binding first), Shape by dimensions.
//! * Objects of different types are unequal; otherwise the type's
//!   structural kind decides: UniqueInstance compares identity,
//!   ConstTreeNode short-cuts on identity, DAGNode and FreeVar consult the
//!   binding recorded so far (a DAG node equals only the node it was first
//!   matched with), and fields are compared in declaration order, skipping
//!   `SEqHashIgnore` fields, or through the type's `__s_equal__` hook.
//! * A FreeVar that is not yet bound binds to the other side when both are
//!   the same object or when the comparison is inside a def region (a field
//!   flagged `SEqHashDefPattern`/`SEqHashDefSimple`, or everywhere with
//!   `map_free_vars`).
//!
//! When tracing, each level that fails pushes one step per side, so the
//! reversed lists are the paths to the first difference.
//!
//! Cyclic values (a List, Dict or object that contains itself) compare by
//! where their cycles close ([`super::active_path`]): meeting a pair whose
//! sides are both still being compared, they are equal when both point
//! back the same number of levels, and a back-reference on one side only
//! is a difference. On acyclic values this is TVM-FFI's equality (which
//! recurses without end on cyclic ones).

use std::collections::HashMap;

use crate::abi::{field_flag, type_index as ti, TVMFFITypeInfo};
use crate::any::{Any, AnyView};
use crate::containers::{Array, List, Shape};
use crate::tensor::Tensor;
use crate::error::Error;
use crate::function::{arg, Function};
use crate::object::ObjectRef;
use crate::type_registry;

use super::access_path::{AccessPath, AccessStep};
use super::active_path::{can_close_cycle, ActivePath};
use super::{deep_stack, def_region, kind, Global, MapLike};

/// Whether `lhs` and `rhs` are structurally equal.
pub fn structural_equal(lhs: &Any, rhs: &Any, map_free_vars: bool, skip_tensor_content: bool) -> Result<bool, Error> {
    Equal::new(map_free_vars, skip_tensor_content, false).compare_any(lhs, rhs)
}

/// The paths (lhs, rhs) to the first difference, or None when equal.
pub fn first_mismatch(
    lhs: &Any,
    rhs: &Any,
    map_free_vars: bool,
    skip_tensor_content: bool,
) -> Result<Option<(AccessPath, AccessPath)>, Error> {
    let mut eq = Equal::new(map_free_vars, skip_tensor_content, true);
    if eq.compare_any(lhs, rhs)? {
        return Ok(None);
    }
    let l = AccessPath::from_steps(eq.lhs_rev.drain(..).rev())?;
    let r = AccessPath::from_steps(eq.rhs_rev.drain(..).rev())?;
    Ok(Some((l, r)))
}

struct Equal {
    region: i32,
    skip_tensor_content: bool,
    trace: bool,
    lhs_rev: Vec<AccessStep>,
    rhs_rev: Vec<AccessStep>,
    /// Bound pairs keyed by object address; the entries keep both alive so
    /// addresses are not reused during the comparison.
    lhs_to_rhs: HashMap<usize, (ObjectRef, ObjectRef)>,
    rhs_to_lhs: HashMap<usize, (ObjectRef, ObjectRef)>,
    /// The pairs being compared, per side (cycle detection).
    lhs_path: ActivePath,
    rhs_path: ActivePath,
}

fn is_str(index: i32) -> bool {
    matches!(index, ti::kTVMFFIStr | ti::kTVMFFISmallStr)
}
fn is_bytes(index: i32) -> bool {
    matches!(index, ti::kTVMFFIBytes | ti::kTVMFFISmallBytes)
}

impl Equal {
    fn new(map_free_vars: bool, skip_tensor_content: bool, trace: bool) -> Equal {
        Equal {
            region: if map_free_vars { def_region::PATTERN } else { def_region::NONE },
            skip_tensor_content,
            trace,
            lhs_rev: Vec::new(),
            rhs_rev: Vec::new(),
            lhs_to_rhs: HashMap::new(),
            rhs_to_lhs: HashMap::new(),
            lhs_path: ActivePath::default(),
            rhs_path: ActivePath::default(),
        }
    }

    fn push_steps(&mut self, l: Result<AccessStep, Error>, r: Result<AccessStep, Error>) -> Result<(), Error> {
        self.lhs_rev.push(l?);
        self.rhs_rev.push(r?);
        Ok(())
    }

    fn compare_any(&mut self, lhs: &Any, rhs: &Any) -> Result<bool, Error> {
        let (li, ri) = (lhs.type_index(), rhs.type_index());
        if li != ri {
            if (is_str(li) && is_str(ri)) || (is_bytes(li) && is_bytes(ri)) {
                return Ok(lhs.view().str_bytes() == rhs.view().str_bytes());
            }
            return Ok(false);
        }
        if !super::is_object_index(li) {
            let (l, r) = (lhs.as_raw(), rhs.as_raw());
            // SAFETY: POD payloads are 8 plain bytes.
            unsafe {
                if li == ti::kTVMFFIFloat && l.value.v_float64.is_nan() {
                    return Ok(r.value.v_float64.is_nan());
                }
                return Ok(l.small_str_len == r.small_str_len && l.value.v_int64 == r.value.v_int64);
            }
        }
        let (lo, ro) = (lhs.as_object().expect("object index"), rhs.as_object().expect("object index"));
        if can_close_cycle(li) {
            let (la, ra) = (lo.as_ptr() as usize, ro.as_ptr() as usize);
            match (self.lhs_path.back_reference(la), self.rhs_path.back_reference(ra)) {
                (None, None) => {}
                (l, r) => return Ok(l == r),
            }
            self.lhs_path.enter(la);
            self.rhs_path.enter(ra);
            let r = self.compare_objects(li, lhs, rhs, lo, ro);
            self.lhs_path.leave(la);
            self.rhs_path.leave(ra);
            return r;
        }
        self.compare_objects(li, lhs, rhs, lo, ro)
    }

    /// Compare two objects of type index `li`, both entered when they can
    /// close a cycle.
    fn compare_objects(&mut self, li: i32, lhs: &Any, rhs: &Any, lo: ObjectRef, ro: ObjectRef) -> Result<bool, Error> {
        match li {
            ti::kTVMFFIStr | ti::kTVMFFIBytes => Ok(lhs.view().str_bytes() == rhs.view().str_bytes()),
            ti::kTVMFFIBigInt => {
                let words = |v: &Any| crate::big_int::hooks::words_of(v.as_raw());
                Ok(words(lhs)? == words(rhs)?)
            }
            ti::kTVMFFIArray => {
                let (a, b) = (Array::from_object(lo)?, Array::from_object(ro)?);
                deep_stack::guarded(|| self.compare_sequence(a.iter().cloned().collect(), b.iter().cloned().collect()))
            }
            ti::kTVMFFIList => {
                let (a, b) = (List::from_object(lo)?, List::from_object(ro)?);
                deep_stack::guarded(|| self.compare_sequence(a.to_vec(), b.to_vec()))
            }
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                let (a, b) = (MapLike::from_object(lo)?, MapLike::from_object(ro)?);
                deep_stack::guarded(|| self.compare_map(&a, &b))
            }
            ti::kTVMFFITensor if lo.same_as(&ro) => Ok(true),
            ti::kTVMFFITensor => self.compare_tensor(&Tensor::from_object(lo)?, &Tensor::from_object(ro)?),
            ti::kTVMFFIShape => Ok(Shape::from_object(lo)?.dims() == Shape::from_object(ro)?.dims()),
            _ => deep_stack::guarded(|| self.compare_object(lo, ro)),
        }
    }

    fn compare_sequence(&mut self, a: Vec<Any>, b: Vec<Any>) -> Result<bool, Error> {
        if a.len() != b.len() && !self.trace {
            return Ok(false);
        }
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            if !self.compare_any(x, y)? {
                if self.trace {
                    self.push_steps(AccessStep::array_item(i as i64), AccessStep::array_item(i as i64))?;
                }
                return Ok(false);
            }
        }
        if a.len() == b.len() {
            return Ok(true);
        }
        if a.len() > b.len() {
            let n = b.len() as i64;
            self.push_steps(AccessStep::array_item(n), AccessStep::array_item_missing(n))?;
        } else {
            let n = a.len() as i64;
            self.push_steps(AccessStep::array_item_missing(n), AccessStep::array_item(n))?;
        }
        Ok(false)
    }

    fn map_through(&self, key: &Any, binding: bool) -> Any {
        let table = if binding { &self.lhs_to_rhs } else { &self.rhs_to_lhs };
        match key.object_ptr().and_then(|p| table.get(&(p as usize))) {
            Some((_, other)) => Any::from_object(other.clone()),
            None => key.clone(),
        }
    }

    fn compare_map(&mut self, a: &MapLike, b: &MapLike) -> Result<bool, Error> {
        if a.len() != b.len() && !self.trace {
            return Ok(false);
        }
        for (k, v) in a.items().iter() {
            let rk = self.map_through(k, true);
            let Some(rv) = b.get(&rk) else {
                if self.trace {
                    self.push_steps(AccessStep::map_item(k.clone()), AccessStep::map_item_missing(rk))?;
                }
                return Ok(false);
            };
            if !self.compare_any(v, &rv)? {
                if self.trace {
                    self.push_steps(AccessStep::map_item(k.clone()), AccessStep::map_item(rk))?;
                }
                return Ok(false);
            }
        }
        if a.len() == b.len() {
            return Ok(true);
        }
        for (k, _) in b.items().iter() {
            let lk = self.map_through(k, false);
            if a.get(&lk).is_none() {
                if self.trace {
                    self.push_steps(AccessStep::map_item_missing(lk), AccessStep::map_item(k.clone()))?;
                }
                return Ok(false);
            }
        }
        Ok(false)
    }

    /// Same shape and dtype, then (unless skipped) the same bytes.
    fn compare_tensor(&self, lhs: &Tensor, rhs: &Tensor) -> Result<bool, Error> {
        if lhs.shape() != rhs.shape() || lhs.dtype() != rhs.dtype() {
            return Ok(false);
        }
        if self.skip_tensor_content {
            return Ok(true);
        }
        let (l, r) = (super::tensor_content(lhs, "compare", "lhs")?, super::tensor_content(rhs, "compare", "rhs")?);
        Ok(l == r)
    }

    fn bind(&mut self, lhs: &ObjectRef, rhs: &ObjectRef) {
        self.lhs_to_rhs.insert(lhs.as_ptr() as usize, (lhs.clone(), rhs.clone()));
        self.rhs_to_lhs.insert(rhs.as_ptr() as usize, (rhs.clone(), lhs.clone()));
    }

    fn compare_object(&mut self, lhs: ObjectRef, rhs: ObjectRef) -> Result<bool, Error> {
        let info = super::type_info_of(&lhs)?;
        let k = super::structural_kind(info)?;
        if k == kind::UNIQUE_INSTANCE {
            return Ok(lhs.same_as(&rhs));
        }
        if k == kind::CONST_TREE_NODE && lhs.same_as(&rhs) {
            return Ok(true);
        }
        if k == kind::DAG_NODE || k == kind::FREE_VAR {
            if let Some((_, bound)) = self.lhs_to_rhs.get(&(lhs.as_ptr() as usize)) {
                return Ok(bound.same_as(&rhs));
            }
            if self.rhs_to_lhs.contains_key(&(rhs.as_ptr() as usize)) {
                return Ok(false);
            }
        }
        if k != kind::FREE_VAR {
            let ok = self.compare_fields(&lhs, &rhs, info)?;
            if ok && k == kind::DAG_NODE {
                self.bind(&lhs, &rhs);
            }
            return Ok(ok);
        }
        // A free variable's own fields sit outside a simple def region.
        let saved = self.region;
        if self.region == def_region::SIMPLE {
            self.region = def_region::NONE;
        }
        let ok = self.compare_fields(&lhs, &rhs, info);
        self.region = saved;
        if !ok? {
            return Ok(false);
        }
        if lhs.same_as(&rhs) || self.region != def_region::NONE {
            self.bind(&lhs, &rhs);
            return Ok(true);
        }
        Ok(false)
    }

    fn compare_fields(&mut self, lhs: &ObjectRef, rhs: &ObjectRef, info: &TVMFFITypeInfo) -> Result<bool, Error> {
        if let Some(hook) = type_registry::attr_value(info.type_index, b"__s_equal__") {
            let hook = Function::from_object(hook.get::<ObjectRef>()?)?;
            let (l, r) = (Any::from_object(lhs.clone()), Any::from_object(rhs.clone()));
            return super::hook_callback::with_scoped_callback(self, hook_callback_body, |cb| {
                hook.call(&[l, r, Any::from_object(cb.as_object().clone())])?.get::<bool>()
            });
        }
        for field in type_registry::all_fields(info.type_index) {
            if field.flags & field_flag::kSEqHashIgnore != 0 {
                continue;
            }
            let (lv, rv) = (super::read_field(lhs, field)?, super::read_field(rhs, field)?);
            let ok = match super::region_for_field(field.flags, self.region) {
                Some(region) => {
                    let saved = std::mem::replace(&mut self.region, region);
                    let r = self.compare_any(&lv, &rv);
                    self.region = saved;
                    r?
                }
                None => self.compare_any(&lv, &rv)?,
            };
            if !ok {
                if self.trace {
                    let name = super::field_name(field);
                    self.push_steps(AccessStep::attr(&name), AccessStep::attr(&name))?;
                }
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// `callback(lhs, rhs, def_region_kind, field_name) -> bool` for hooks.
fn hook_callback_body(eq: &mut Equal, args: &[AnyView<'_>]) -> Result<Any, Error> {
    let (l, r) = (args.first().map(|a| a.to_owned()), args.get(1).map(|a| a.to_owned()));
    let (Some(l), Some(r)) = (l, r) else {
        return Err(Error::type_error("the __s_equal__ callback takes (lhs, rhs, def_region_kind, field_name)"));
    };
    let (l, r) = (l?, r?);
    let requested: i32 = if args.len() > 2 { arg(args, 2, "def_region_kind")? } else { def_region::NONE };
    let region = super::region_for_hook(requested, eq.region);
    let saved = std::mem::replace(&mut eq.region, region);
    let ok = eq.compare_any(&l, &r);
    eq.region = saved;
    let ok = ok?;
    if !ok && eq.trace {
        let name: String = arg(args, 3, "field_name")?;
        eq.push_steps(AccessStep::attr(&name), AccessStep::attr(&name))?;
    }
    Ok(Any::from(ok))
}

fn flag(args: &[AnyView<'_>], i: usize, name: &str) -> Result<bool, Error> {
    if args.len() > i {
        arg(args, i, name)
    } else {
        Ok(false)
    }
}

fn two_values(args: &[AnyView<'_>], func: &str) -> Result<(Any, Any), Error> {
    if args.len() < 2 || args.len() > 4 {
        return Err(Error::type_error(format!(
            "{func} takes (lhs, rhs, map_free_vars=False, skip_tensor_content=False), got {} arguments",
            args.len()
        )));
    }
    Ok((args[0].to_owned()?, args[1].to_owned()?))
}

pub(crate) fn globals() -> Vec<Global> {
    vec![
        (
            "ffi.StructuralEqual",
            Function::from_closure(|args| {
                let (l, r) = two_values(args, "ffi.StructuralEqual")?;
                Ok(Any::from(structural_equal(&l, &r, flag(args, 2, "map_free_vars")?, flag(args, 3, "skip_tensor_content")?)?))
            }),
        ),
        (
            "ffi.GetFirstStructuralMismatch",
            Function::from_closure(|args| {
                let (l, r) = two_values(args, "ffi.GetFirstStructuralMismatch")?;
                match first_mismatch(&l, &r, flag(args, 2, "map_free_vars")?, flag(args, 3, "skip_tensor_content")?)? {
                    None => Ok(Any::none()),
                    Some((lp, rp)) => Ok(Any::from_object(
                        Array::new(vec![Any::from_object(lp.into_object()), Any::from_object(rp.into_object())])?.into_object(),
                    )),
                }
            }),
        ),
    ]
}
