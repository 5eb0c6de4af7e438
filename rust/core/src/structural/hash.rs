//! Structural hashing (`ffi.StructuralHash`), consistent with
//! [`super::equal`]: structurally equal values hash equally. Values follow
//! TVM-FFI's scheme (`StableHashCombine` over type indices, payloads, byte
//! hashes and type-key hashes), so hashes are stable across processes and
//! equal upstream's for PODs, strings, containers and reflected objects.
//!
//! Free variables hash by address outside def regions and by their order of
//! appearance inside one; DAG nodes also mix in their order of first
//! appearance, so a shared node and two equal copies hash differently, as
//! equality tells them apart. Map entries are combined in an order
//! independent of insertion (sorted by key hash; entries whose keys have no
//! such hash yet are skipped, and values of tied keys are left out).
//!
//! A List, Dict or object met again while it is still being hashed (a
//! cycle, [`super::active_path`]) hashes as a back-reference: a marker and
//! how many levels up it points, as [`super::equal`] compares cycles. An
//! object whose hash holds a back-reference to a node above it is not
//! memoised, since that hash depends on where it was met.

use crate::abi::type_index as ti;
use crate::values::any::{Any, AnyView};
use crate::containers::Shape;
use crate::tensor::Tensor;
use crate::values::error::Error;
use crate::values::function::{arg, Function};
use crate::object::ObjectRef;

use super::active_path::can_close_cycle;
use super::hash_fast::FastHash;
use super::hash_state::{Frame, Hasher, Task};
use super::leaf_hash::{big_int_hash, leaf_hash, pod_hash};
use super::{deep_stack, def_region, hash_bytes, hash_combine, kind, Global, MapLike, SeqItems};

/// The structural hash of `value`.
pub fn structural_hash(value: &Any, map_free_vars: bool, skip_tensor_content: bool) -> Result<u64, Error> {
    Hasher::new(map_free_vars, skip_tensor_content).hash_any(value)
}

impl Hasher {
    /// Hash `root` on an explicit stack of frames (one per open container
    /// or object), so nesting depth costs heap memory, not native stack.
    /// Only a type's `__s_hash__` hook nests a hash natively (through its
    /// callback), on a segment of this thread's stack ([`deep_stack`]).
    fn hash_any(&mut self, root: &Any) -> Result<u64, Error> {
        let mut stack: Vec<Frame> = Vec::new();
        let r = self.run(root, &mut stack);
        if r.is_err() {
            // Leave every open frame so a hook that catches the error keeps
            // a consistent hasher.
            while let Some(frame) = stack.pop() {
                self.abandon(frame);
            }
        }
        r
    }

    fn run(&mut self, root: &Any, stack: &mut Vec<Frame>) -> Result<u64, Error> {
        let mut pending = Some(root.clone());
        let mut done = None;
        loop {
            if let Some(value) = pending.take() {
                match self.start(value)? {
                    Started::Hashed(h) => done = Some(h),
                    Started::Open(frame) => stack.push(frame),
                    Started::HandedOver => {
                        // The fast path's open levels continue here; the
                        // value it stopped at (if any) starts next.
                        stack.extend(self.handed_over.drain(..).rev());
                        pending = self.handed_over_value.take();
                        continue;
                    }
                }
            }
            let Some(top) = stack.last_mut() else {
                return Ok(done.expect("the root's hash"));
            };
            if let Some(h) = done.take() {
                self.accept(top, h);
            }
            match self.next_child(top)? {
                Some(child) => pending = Some(child),
                None => {
                    let frame = stack.pop().expect("the frame read above");
                    done = Some(self.finish(frame)?);
                }
            }
        }
    }

    /// Hash a value that opens no frame, or open its frame (entering it on
    /// the path when it can close a cycle). Takes the value so that its
    /// object reference moves into the frame (no count up and down).
    fn start(&mut self, value: Any) -> Result<Started, Error> {
        if let Some(h) = leaf_hash(&value) {
            return Ok(Started::Hashed(h));
        }
        let index = value.type_index();
        if index == ti::kTVMFFIBigInt {
            return Ok(Started::Hashed(big_int_hash(&value)?));
        }
        if super::fast_path::enabled() {
            match self.fast_value(&value, 0)? {
                FastHash::Hashed(h) => return Ok(Started::Hashed(h)),
                FastHash::HandedOver => return Ok(Started::HandedOver),
                FastHash::NotWalked => {}
            }
        }
        let Ok(obj) = value.into_object() else { unreachable!("leaf_hash took every non-object") };
        let cycle = if can_close_cycle(index) {
            match self.enter_node(obj.as_ptr() as usize) {
                Ok(entered) => Some(entered),
                Err(h) => return Ok(Started::Hashed(h)),
            }
        } else {
            None
        };
        let task = match self.open(index, obj) {
            Ok(task) => task,
            Err(e) => {
                self.leave(cycle);
                return Err(e);
            }
        };
        match task {
            Task::Hashed(h) => {
                self.leave(cycle);
                Ok(Started::Hashed(h))
            }
            task => Ok(Started::Open(Frame { task, cycle })),
        }
    }

    /// The task of hashing an object value of type `index` (entered when
    /// it can close a cycle): its hash when there is nothing to descend.
    /// (Strings, bytes and BigInts were hashed by `start`.)
    fn open(&mut self, index: i32, obj: ObjectRef) -> Result<Task, Error> {
        Ok(match index {
            ti::kTVMFFIArray | ti::kTVMFFIList => {
                let items = SeqItems::of(index, obj)?;
                let h = hash_combine(super::type_index_key_hash(index), items.as_slice().len() as u64);
                Task::Sequence { items, next: 0, h }
            }
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                let map = MapLike::from_object(obj)?;
                let h = hash_combine(super::type_index_key_hash(index), map.len() as u64);
                let mut items: Vec<(u64, Any)> = Vec::with_capacity(map.len());
                match &map {
                    // A Map never changes: read its pairs in place.
                    MapLike::Map(m) => {
                        let mut pos = m.first();
                        while let Some((k, v, after)) = m.pair_at(pos) {
                            pos = after;
                            if let Some(kh) = self.order_independent_hash(k) {
                                items.push((kh, v.clone()));
                            }
                        }
                    }
                    MapLike::Dict(d) => items.extend(
                        d.items().into_iter().filter_map(|(k, v)| self.order_independent_hash(&k).map(|kh| (kh, v))),
                    ),
                }
                // Entries with equal key hashes are combined as a group
                // (their values left out), so their order among themselves
                // does not matter: an unstable sort gives the same hash.
                items.sort_unstable_by_key(|(kh, _)| *kh);
                Task::Map { items, next: 0, h }
            }
            ti::kTVMFFITensor => Task::Hashed(self.hash_tensor(&Tensor::from_object(obj)?)?),
            ti::kTVMFFIShape => {
                let shape = Shape::from_object(obj)?;
                let mut h = hash_combine(super::type_index_key_hash(index), shape.dims().len() as u64);
                for d in shape.dims() {
                    h = hash_combine(h, *d as u64);
                }
                Task::Hashed(h)
            }
            _ => self.open_object(obj)?,
        })
    }

    fn open_object(&mut self, obj: ObjectRef) -> Result<Task, Error> {
        let plan_id = self.plans.of(&obj)?;
        let plan = self.plans.get(plan_id);
        let (k, key_hash) = (plan.kind, plan.key_hash);
        let addr = obj.as_ptr() as usize;
        if let Some((_, h)) = self.memo.get(&addr) {
            return Ok(Task::Hashed(*h));
        }
        // A free variable's own fields sit outside a simple def region; the
        // fields are hashed even when the result is not used: free
        // variables met inside them advance the counter.
        let object_region = self.region;
        if k == kind::FREE_VAR && self.region == def_region::SIMPLE {
            self.region = def_region::NONE;
        }
        if let Some(hook) = plan.hook.clone() {
            let fields = deep_stack::guarded(|| self.hash_with_hook(&obj, hook, key_hash));
            self.region = object_region;
            let h = self.finish_object(obj, k, fields?);
            return Ok(Task::Hashed(h));
        }
        Ok(Task::Fields { obj, kind: k, plan: plan_id, next: 0, h: key_hash, object_region, field_region: None })
    }

    fn hash_with_hook(&mut self, obj: &ObjectRef, hook: Any, init: u64) -> Result<u64, Error> {
        let hook = Function::from_object(hook.get::<ObjectRef>()?)?;
        let o = Any::from_object(obj.clone());
        super::hook_callback::with_scoped_callback(self, hook_callback_body, |cb| {
            Ok(hook.call(&[o, Any::from(init as i64), Any::from_object(cb.as_object().clone())])?.get::<i64>()? as u64)
        })
    }

    /// The next child of `frame` to hash, entering a field's def region.
    fn next_child(&mut self, frame: &mut Frame) -> Result<Option<Any>, Error> {
        match &mut frame.task {
            Task::Hashed(_) => Ok(None),
            Task::Sequence { items, next, h } => {
                // Leaves are combined here, without a round through the
                // driver: long sequences of PODs and strings stay cheap.
                // The running hash and position stay in locals until the
                // loop ends (stores through the frame each element cost
                // more than the combining).
                let slice = items.as_slice();
                let (mut acc, mut i) = (*h, *next);
                let child = loop {
                    let Some(item) = slice.get(i) else { break None };
                    i += 1;
                    match leaf_hash(item) {
                        Some(lh) => acc = hash_combine(acc, lh),
                        None => break Some(item.clone()),
                    }
                };
                (*h, *next) = (acc, i);
                Ok(child)
            }
            Task::Map { items, next, h } => {
                // Entries whose keys tie are left out of the value hashes.
                while *next < items.len() {
                    let i = *next;
                    let mut j = i + 1;
                    while j < items.len() && items[j].0 == items[i].0 {
                        j += 1;
                    }
                    *h = hash_combine(*h, items[i].0);
                    *next = j;
                    if j == i + 1 {
                        match leaf_hash(&items[i].1) {
                            Some(vh) => *h = hash_combine(*h, vh),
                            None => return Ok(Some(items[i].1.clone())),
                        }
                    }
                }
                Ok(None)
            }
            Task::Fields { obj, plan, next, h, field_region, .. } => {
                // Leaf fields are combined here, as for sequences (a def
                // region only matters to objects).
                loop {
                    let Some(field) = self.plans.field(*plan, *next) else { return Ok(None) };
                    *next += 1;
                    let v = match super::read_field_in_place(obj, field) {
                        Some(v) => v,
                        None => super::read_field(obj, field)?,
                    };
                    if let Some(lh) = leaf_hash(&v) {
                        *h = hash_combine(*h, lh);
                        continue;
                    }
                    if let Some(region) = super::region_for_field(field.flags, self.region) {
                        *field_region = Some(std::mem::replace(&mut self.region, region));
                    }
                    return Ok(Some(v));
                }
            }
        }
    }

    /// Combine a child's hash into `frame`, leaving a field's def region.
    fn accept(&mut self, frame: &mut Frame, child: u64) {
        match &mut frame.task {
            Task::Hashed(_) => {}
            Task::Sequence { h, .. } | Task::Map { h, .. } => *h = hash_combine(*h, child),
            Task::Fields { h, field_region, .. } => {
                if let Some(saved) = field_region.take() {
                    self.region = saved;
                }
                *h = hash_combine(*h, child);
            }
        }
    }

    /// The hash of a frame whose children are all combined; leaves it.
    fn finish(&mut self, frame: Frame) -> Result<u64, Error> {
        let h = match frame.task {
            Task::Hashed(h) | Task::Sequence { h, .. } | Task::Map { h, .. } => h,
            Task::Fields { obj, kind: k, h, object_region, .. } => {
                self.region = object_region;
                self.finish_object(obj, k, h)
            }
        };
        self.leave(frame.cycle);
        Ok(h)
    }

    /// Undo what an open frame changed (after an error).
    fn abandon(&mut self, frame: Frame) {
        if let Task::Fields { object_region, .. } = frame.task {
            self.region = object_region;
        }
        self.leave(frame.cycle);
    }

    /// A hash for a map key that does not depend on where the key is met.
    fn order_independent_hash(&self, key: &Any) -> Option<u64> {
        match key.object_ptr() {
            None => Some(pod_hash(key)),
            Some(_) if key.view().str_bytes().is_some() => Some(pod_hash(key)),
            Some(_) if key.type_index() == ti::kTVMFFIBigInt => big_int_hash(key).ok(),
            Some(p) => self.memo.get(&(p as usize)).map(|(_, h)| *h),
        }
    }

    /// Shape, dtype and (unless skipped) the bytes, as TVM-FFI hashes them.
    fn hash_tensor(&self, t: &Tensor) -> Result<u64, Error> {
        let mut h = hash_combine(super::type_index_key_hash(ti::kTVMFFITensor), t.ndim() as u64);
        for d in t.shape() {
            h = hash_combine(h, *d as u64);
        }
        let dt = t.dtype();
        h = hash_combine(h, dt.code as u64 | (dt.bits as u64) << 8 | (dt.lanes as u64) << 16);
        if !self.skip_tensor_content {
            h = hash_combine(h, hash_bytes(super::tensor_content(t, "hash", "tensor")?));
        }
        Ok(h)
    }
}

/// What starting a value gave: its hash, a frame to work through, or the
/// fast path's open levels (in `handed_over`) to continue.
enum Started {
    Hashed(u64),
    Open(Frame),
    HandedOver,
}

/// `callback(value, init_hash, def_region_kind) -> int` for hooks: the
/// combination of `init_hash` with the value's hash (as a signed 64-bit
/// integer, the same bits).
fn hook_callback_body(hasher: &mut Hasher, args: &[AnyView<'_>]) -> Result<Any, Error> {
    let value = args.first().ok_or_else(|| Error::type_error("the __s_hash__ callback takes (value, init_hash, def_region_kind)"))?.to_owned()?;
    let init: i64 = arg(args, 1, "init_hash")?;
    let requested: i32 = if args.len() > 2 { arg(args, 2, "def_region_kind")? } else { def_region::NONE };
    let region = super::region_for_hook(requested, hasher.region);
    let saved = std::mem::replace(&mut hasher.region, region);
    let h = hasher.hash_any(&value);
    hasher.region = saved;
    Ok(Any::from(hash_combine(init as u64, h?) as i64))
}

pub(crate) fn globals() -> Vec<Global> {
    vec![(
        "ffi.StructuralHash",
        Function::from_closure(|args| {
            if args.is_empty() || args.len() > 3 {
                return Err(Error::type_error(format!(
                    "ffi.StructuralHash takes (value, map_free_vars=False, skip_tensor_content=False), got {} arguments",
                    args.len()
                )));
            }
            let flag = |i: usize, name: &str| if args.len() > i { arg::<bool>(args, i, name) } else { Ok(false) };
            let h = structural_hash(&args[0].to_owned()?, flag(1, "map_free_vars")?, flag(2, "skip_tensor_content")?)?;
            // Bit-cast: the full u64 range does not fit an FFI int otherwise.
            Ok(Any::from(h as i64))
        }),
    )]
}
