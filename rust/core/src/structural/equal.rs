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

use crate::abi::type_index as ti;
use crate::values::any::{Any, AnyView};
use crate::containers::{Array, Shape};
use crate::tensor::Tensor;
use crate::values::error::Error;
use crate::values::function::{arg, Function};
use crate::object::ObjectRef;

use super::access_path::{AccessPath, AccessStep};
use super::leaf_equal::leaf_equal;
use super::map_equal::{MapBinding, MapStep, MapTask};
use super::active_path::can_close_cycle;
use super::equal_fast::Fast;
use super::equal_state::{Equal, Frame, Task};
use super::{deep_stack, def_region, kind, Global, MapLike, SeqItems};

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

impl Equal {
    /// Compare on an explicit stack of frames (one per open pair of
    /// containers or objects), so nesting depth costs heap memory, not
    /// native stack. Only an `__s_equal__` hook nests a comparison natively
    /// (through its callback), on a segment of this thread's stack.
    fn compare_any(&mut self, lhs: &Any, rhs: &Any) -> Result<bool, Error> {
        let mut stack: Vec<Frame> = Vec::new();
        let r = self.run(lhs, rhs, &mut stack);
        if r.is_err() {
            // Leave every open frame so a hook that catches the error keeps
            // a consistent comparison.
            while let Some(frame) = stack.pop() {
                self.restore(&frame);
                self.leave(&frame);
            }
        }
        r
    }

    fn run(&mut self, lhs: &Any, rhs: &Any, stack: &mut Vec<Frame>) -> Result<bool, Error> {
        let mut pending = Some((lhs.clone(), rhs.clone()));
        let mut done = None;
        loop {
            if let Some((l, r)) = pending.take() {
                match self.start(l, r)? {
                    Started::Decided(ok) => done = Some(ok),
                    Started::Open(frame) => stack.push(frame),
                    Started::HandedOver => {
                        // The fast path's open levels continue here; the
                        // pair it stopped at (if any) starts next.
                        stack.extend(self.handed_over.drain(..).rev());
                        pending = self.handed_over_pair.take();
                        continue;
                    }
                }
            }
            let Some(top) = stack.last_mut() else {
                return Ok(done.expect("the root's result"));
            };
            let decided = match done.take() {
                Some(ok) => self.accept(top, ok)?,
                None => None,
            };
            let decided = match decided {
                Some(ok) => Some(ok),
                None => match self.next_pair(top)? {
                    Next::Pair(l, r) => {
                        pending = Some((l, r));
                        None
                    }
                    Next::Decided(ok) => Some(ok),
                },
            };
            if let Some(ok) = decided {
                let frame = stack.pop().expect("the frame read above");
                done = Some(self.finish(frame, ok));
            }
        }
    }

    /// Decide a pair that opens no frame, or open its frame (entering both
    /// sides on their paths when they can close a cycle). Takes the values
    /// so that their object references move into the frame (no count up
    /// and down).
    fn start(&mut self, lhs: Any, rhs: Any) -> Result<Started, Error> {
        if let Some(ok) = leaf_equal(&lhs, &rhs) {
            return Ok(Started::Decided(ok));
        }
        let li = lhs.type_index();
        if li == ti::kTVMFFIBigInt {
            let words = |v: &Any| crate::structural::big_int_hooks::words_of(v.as_raw());
            return Ok(Started::Decided(words(&lhs)? == words(&rhs)?));
        }
        if !self.trace && super::fast_path::enabled() {
            match self.fast_pair(&lhs, &rhs, 0)? {
                Fast::Equal(ok) => return Ok(Started::Decided(ok)),
                Fast::HandedOver => return Ok(Started::HandedOver),
                Fast::NotWalked => {}
            }
        }
        let (Ok(lo), Ok(ro)) = (lhs.into_object(), rhs.into_object()) else {
            unreachable!("leaf_equal took every pair of one non-object type")
        };
        let cycle = if can_close_cycle(li) {
            match self.enter_pair(lo.as_ptr() as usize, ro.as_ptr() as usize) {
                Ok(entered) => Some(entered),
                Err(ok) => return Ok(Started::Decided(ok)),
            }
        } else {
            None
        };
        let task = self.open(li, lo, ro);
        let frame = Frame { task: match task {
            Ok(t) => t,
            Err(e) => {
                self.leave_cycle(cycle);
                return Err(e);
            }
        }, cycle };
        if let Task::Decided(ok) = frame.task {
            return Ok(Started::Decided(self.finish(frame, ok)));
        }
        Ok(Started::Open(frame))
    }

    /// The task of comparing two objects of type index `li` (strings,
    /// bytes and BigInts were decided by `start`).
    fn open(&mut self, li: i32, lo: ObjectRef, ro: ObjectRef) -> Result<Task, Error> {
        Ok(match li {
            ti::kTVMFFIArray | ti::kTVMFFIList => self.open_sequence(SeqItems::of(li, lo)?, SeqItems::of(li, ro)?),
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                let (a, b) = (MapLike::from_object(lo)?, MapLike::from_object(ro)?);
                if a.len() != b.len() && !self.trace {
                    Task::Decided(false)
                } else {
                    Task::Map(Box::new(MapTask::new(a, b)))
                }
            }
            ti::kTVMFFITensor if lo.same_as(&ro) => Task::Decided(true),
            ti::kTVMFFITensor => Task::Decided(self.compare_tensor(&Tensor::from_object(lo)?, &Tensor::from_object(ro)?)?),
            ti::kTVMFFIShape => Task::Decided(Shape::from_object(lo)?.dims() == Shape::from_object(ro)?.dims()),
            _ => self.open_object(lo, ro)?,
        })
    }

    fn open_sequence(&self, a: SeqItems, b: SeqItems) -> Task {
        if a.as_slice().len() != b.as_slice().len() && !self.trace {
            return Task::Decided(false);
        }
        Task::Sequence { a, b, next: 0 }
    }

    fn open_object(&mut self, lhs: ObjectRef, rhs: ObjectRef) -> Result<Task, Error> {
        let plan_id = self.plans.of(&lhs)?;
        let k = self.plans.get(plan_id).kind;
        if k == kind::UNIQUE_INSTANCE {
            return Ok(Task::Decided(lhs.same_as(&rhs)));
        }
        if k == kind::CONST_TREE_NODE && lhs.same_as(&rhs) {
            return Ok(Task::Decided(true));
        }
        if k == kind::DAG_NODE || k == kind::FREE_VAR {
            if let Some((_, bound)) = self.lhs_to_rhs.get(&(lhs.as_ptr() as usize)) {
                return Ok(Task::Decided(bound.same_as(&rhs)));
            }
            if self.rhs_to_lhs.contains_key(&(rhs.as_ptr() as usize)) {
                return Ok(Task::Decided(false));
            }
        }
        // A free variable's own fields sit outside a simple def region.
        let object_region = self.region;
        if k == kind::FREE_VAR && self.region == def_region::SIMPLE {
            self.region = def_region::NONE;
        }
        if let Some(hook) = self.plans.get(plan_id).hook.clone() {
            let ok = deep_stack::guarded(|| self.compare_with_hook(&lhs, &rhs, hook));
            self.region = object_region;
            return Ok(Task::Decided(self.finish_object(&lhs, &rhs, k, ok?)));
        }
        Ok(Task::Fields { lhs, rhs, kind: k, plan: plan_id, next: 0, object_region, field_region: None })
    }

    fn compare_with_hook(&mut self, lhs: &ObjectRef, rhs: &ObjectRef, hook: Any) -> Result<bool, Error> {
        let hook = Function::from_object(hook.get::<ObjectRef>()?)?;
        let (l, r) = (Any::from_object(lhs.clone()), Any::from_object(rhs.clone()));
        super::hook_callback::with_scoped_callback(self, hook_callback_body, |cb| {
            hook.call(&[l, r, Any::from_object(cb.as_object().clone())])?.get::<bool>()
        })
    }

    /// The next pair of children of `frame`, or its result when it is
    /// decided without one (all children equal, or a missing map key).
    fn next_pair(&mut self, frame: &mut Frame) -> Result<Next, Error> {
        match &mut frame.task {
            Task::Decided(ok) => Ok(Next::Decided(*ok)),
            Task::Sequence { a, b, next } => {
                let (a, b) = (a.as_slice(), b.as_slice());
                // Leaves are decided here, without a round through the
                // driver: long sequences of PODs and strings stay cheap.
                let n = a.len().min(b.len());
                while *next < n {
                    let i = *next;
                    *next += 1;
                    match leaf_equal(&a[i], &b[i]) {
                        Some(true) => {}
                        Some(false) => {
                            if self.trace {
                                self.push_steps(AccessStep::array_item(i as i64), AccessStep::array_item(i as i64))?;
                            }
                            return Ok(Next::Decided(false));
                        }
                        None => return Ok(Next::Pair(a[i].clone(), b[i].clone())),
                    }
                }
                if a.len() == b.len() {
                    return Ok(Next::Decided(true));
                }
                // Lengths differ (only reached when tracing).
                if a.len() > b.len() {
                    let n = b.len() as i64;
                    self.push_steps(AccessStep::array_item(n), AccessStep::array_item_missing(n))?;
                } else {
                    let n = a.len() as i64;
                    self.push_steps(AccessStep::array_item_missing(n), AccessStep::array_item(n))?;
                }
                Ok(Next::Decided(false))
            }
            Task::Map(m) => Ok(match m.next(self)? {
                MapStep::Pair(l, r) => Next::Pair(l, r),
                MapStep::Decided(ok) => Next::Decided(ok),
            }),
            Task::Fields { lhs, rhs, plan, next, field_region, .. } => {
                // Leaf fields (PODs, strings, None) are decided here, as
                // for sequences; a def region only matters to objects.
                loop {
                    let Some(field) = self.plans.field(*plan, *next) else { return Ok(Next::Decided(true)) };
                    *next += 1;
                    let lv = match super::read_field_in_place(lhs, field) {
                        Some(v) => v,
                        None => super::read_field(lhs, field)?,
                    };
                    let rv = match super::read_field_in_place(rhs, field) {
                        Some(v) => v,
                        None => super::read_field(rhs, field)?,
                    };
                    match leaf_equal(&lv, &rv) {
                        Some(true) => continue,
                        Some(false) => {
                            if self.trace {
                                let name = super::field_name(field);
                                self.push_steps(AccessStep::attr(&name), AccessStep::attr(&name))?;
                            }
                            return Ok(Next::Decided(false));
                        }
                        None => {}
                    }
                    if let Some(region) = super::region_for_field(field.flags, self.region) {
                        *field_region = Some(std::mem::replace(&mut self.region, region));
                    }
                    return Ok(Next::Pair(lv, rv));
                }
            }
        }
    }

    /// Take a child pair's result into `frame`: Some(false) when that
    /// decides the frame (with the step to the difference when tracing).
    fn accept(&mut self, frame: &mut Frame, ok: bool) -> Result<Option<bool>, Error> {
        match &mut frame.task {
            Task::Decided(_) => {}
            Task::Sequence { next, .. } => {
                if !ok && self.trace {
                    let i = (*next - 1) as i64;
                    self.push_steps(AccessStep::array_item(i), AccessStep::array_item(i))?;
                }
            }
            Task::Map(m) => {
                let (k, rk) = m.keys.take().expect("the keys of the pair compared");
                if !ok && self.trace {
                    self.push_steps(AccessStep::map_item(k), AccessStep::map_item(rk))?;
                }
            }
            Task::Fields { plan, next, field_region, .. } => {
                if let Some(saved) = field_region.take() {
                    self.region = saved;
                }
                if !ok && self.trace {
                    let field = self.plans.field(*plan, *next - 1).expect("the field compared");
                    let name = super::field_name(field);
                    self.push_steps(AccessStep::attr(&name), AccessStep::attr(&name))?;
                }
            }
        }
        Ok((!ok).then_some(false))
    }

    /// The result of a decided frame (an object's kind has the last word);
    /// leaves it.
    fn finish(&mut self, frame: Frame, ok: bool) -> bool {
        self.restore(&frame);
        let ok = match &frame.task {
            Task::Fields { lhs, rhs, kind: k, .. } => self.finish_object(lhs, rhs, *k, ok),
            _ => ok,
        };
        self.leave(&frame);
        ok
    }

    /// Put back the def region a frame changed.
    fn restore(&mut self, frame: &Frame) {
        if let Task::Fields { object_region, .. } = frame.task {
            self.region = object_region;
        }
    }

    fn leave(&mut self, frame: &Frame) {
        self.leave_cycle(frame.cycle);
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
}

impl MapBinding for Equal {
    fn map_through(&self, key: &Any, lhs_to_rhs: bool) -> Any {
        Equal::map_through(self, key, lhs_to_rhs)
    }
    fn tracing(&self) -> bool {
        self.trace
    }
    fn push_steps(&mut self, l: Result<AccessStep, Error>, r: Result<AccessStep, Error>) -> Result<(), Error> {
        Equal::push_steps(self, l, r)
    }
}

/// What starting a pair gave: its result, a frame to work through, or
/// the fast path's open levels (in `handed_over`) to continue.
enum Started {
    Decided(bool),
    Open(Frame),
    HandedOver,
}

/// What a frame asks for next.
enum Next {
    Pair(Any, Any),
    Decided(bool),
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
