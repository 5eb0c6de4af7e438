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

use super::active_path::{can_close_cycle, ActivePath, AddressMap};
use super::hash_fast::FastHash;
use super::type_plan::{PlanId, TypePlans};
use super::{deep_stack, def_region, hash_bytes, hash_combine, kind, Global, MapLike, SeqItems};

/// The structural hash of `value`.
pub fn structural_hash(value: &Any, map_free_vars: bool, skip_tensor_content: bool) -> Result<u64, Error> {
    Hasher::new(map_free_vars, skip_tensor_content).hash_any(value)
}

pub(super) struct Hasher {
    pub(super) region: i32,
    pub(super) skip_tensor_content: bool,
    pub(super) free_var_counter: u64,
    pub(super) graph_node_counter: u64,
    /// Hashes of objects seen so far, keyed by address (the entry keeps the
    /// object alive so the address is not reused).
    pub(super) memo: AddressMap<(ObjectRef, u64)>,
    /// Kinds, key hashes, hooks and fields by type, looked up once.
    pub(super) plans: TypePlans,
    /// The nodes being hashed (cycle detection).
    pub(super) path: ActivePath,
    /// The shallowest path depth a back-reference pointed to since the
    /// innermost entered node was entered (usize::MAX when none).
    pub(super) shallowest_reference: usize,
    /// Frames the fast path handed over (innermost first) and the child
    /// it stopped at, when it stopped before a value it does not walk.
    pub(super) handed_over: Vec<Frame>,
    pub(super) handed_over_value: Option<Any>,
}

/// Seed of a back-reference's hash (the bytes of "backref").
pub(super) const BACK_REFERENCE_SEED: u64 = 0x6261_636b_7265_66;

/// Hash of a string or bytes content (heap and inline alike).
fn content_hash(index: i32, bytes: &[u8]) -> u64 {
    let class = if matches!(index, ti::kTVMFFIBytes | ti::kTVMFFISmallBytes) { ti::kTVMFFIBytes } else { ti::kTVMFFIStr };
    hash_combine(class as u64, hash_bytes(bytes))
}

/// Hash of a BigInt value: its canonical words as bytes, so aliases of one
/// value hash alike wherever they are met.
fn big_int_hash(value: &Any) -> Result<u64, Error> {
    let words = crate::structural::big_int_hooks::words_of(value.as_raw())?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    Ok(hash_combine(ti::kTVMFFIBigInt as u64, hash_bytes(&bytes)))
}

/// Hash of a POD value.
#[inline]
fn pod_hash(value: &Any) -> u64 {
    let raw = value.as_raw();
    // Inline bytes hash as upstream hashes them, by type and payload (bytes
    // of up to 7 bytes are always inline, so equal values still agree).
    if raw.type_index == ti::kTVMFFISmallBytes {
        // SAFETY: the payload of inline bytes is 8 plain bytes.
        return hash_combine(raw.type_index as u64, unsafe { raw.value.v_uint64 });
    }
    if let Some(b) = value.view().str_bytes() {
        return content_hash(raw.type_index, b);
    }
    // SAFETY: POD payloads are 8 plain bytes.
    let mut bits = unsafe { raw.value.v_uint64 };
    // SAFETY: as above.
    if raw.type_index == ti::kTVMFFIFloat && unsafe { raw.value.v_float64 }.is_nan() {
        bits = f64::NAN.to_bits();
    }
    hash_combine(raw.type_index as u64, bits)
}

/// The hash of a value hashed without descending (PODs, strings, bytes).
/// Always inlined, with ints (the common leaf of long sequences) hashed
/// right here: as a call per element it cost as much as the combining.
#[inline(always)]
pub(super) fn leaf_hash(value: &Any) -> Option<u64> {
    let raw = value.as_raw();
    if raw.type_index == ti::kTVMFFIInt {
        // SAFETY: an int's payload is 8 plain bytes.
        return Some(hash_combine(ti::kTVMFFIInt as u64, unsafe { raw.value.v_uint64 }));
    }
    let index = value.type_index();
    (!super::is_object_index(index) || matches!(index, ti::kTVMFFIStr | ti::kTVMFFIBytes)).then(|| pod_hash(value))
}

impl Hasher {
    fn new(map_free_vars: bool, skip_tensor_content: bool) -> Hasher {
        Hasher {
            region: if map_free_vars { def_region::PATTERN } else { def_region::NONE },
            skip_tensor_content,
            free_var_counter: 0,
            graph_node_counter: 0,
            memo: AddressMap::with_capacity_and_hasher(64, Default::default()),
            plans: TypePlans::new(b"__s_hash__"),
            path: ActivePath::default(),
            shallowest_reference: usize::MAX,
            handed_over: Vec::new(),
            handed_over_value: None,
        }
    }

    /// Whether the node entered at `depth` was hashed without pointing
    /// above itself, so its hash means the same wherever it is met.
    pub(super) fn self_contained(&self, depth: usize) -> bool {
        self.shallowest_reference >= depth
    }

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
        if super::equal_fast::enabled() {
            match self.fast_value(&value, 0)? {
                FastHash::Hashed(h) => return Ok(Started::Hashed(h)),
                FastHash::HandedOver => return Ok(Started::HandedOver),
                FastHash::NotWalked => {}
            }
        }
        let Ok(obj) = value.into_object() else { unreachable!("leaf_hash took every non-object") };
        let cycle = if can_close_cycle(index) {
            let addr = obj.as_ptr() as usize;
            if let Some(up) = self.path.enter_or_back_reference(addr) {
                let target = self.path.depth() - up;
                self.shallowest_reference = self.shallowest_reference.min(target);
                return Ok(Started::Hashed(hash_combine(BACK_REFERENCE_SEED, up as u64)));
            }
            let outer = std::mem::replace(&mut self.shallowest_reference, usize::MAX);
            Some((addr, outer))
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

    pub(super) fn leave(&mut self, cycle: Option<(usize, usize)>) {
        if let Some((addr, outer)) = cycle {
            self.path.leave(addr);
            self.shallowest_reference = self.shallowest_reference.min(outer);
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

    /// An object's hash from its fields' hash `fields` (its structural kind
    /// decides), memoised when it does not depend on where it was met.
    pub(super) fn finish_object(&mut self, obj: ObjectRef, k: i32, fields: u64) -> u64 {
        let addr = obj.as_ptr() as usize;
        let mut h = if k != kind::FREE_VAR {
            fields
        } else if self.region != def_region::NONE {
            let h = hash_combine(fields, self.free_var_counter);
            self.free_var_counter += 1;
            h
        } else {
            addr as u64
        };
        if k == kind::DAG_NODE {
            h = hash_combine(h, self.graph_node_counter);
            self.graph_node_counter += 1;
        }
        // The object itself is entered at the innermost depth.
        if self.self_contained(self.path.depth().saturating_sub(1)) {
            self.memo.insert(addr, (obj, h));
        }
        h
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

/// The work left on one open container or object.
pub(super) enum Task {
    /// Nothing to descend (a leaf, a memoised object, a hook's result).
    Hashed(u64),
    Sequence { items: SeqItems, next: usize, h: u64 },
    /// Entries sorted by key hash; `next` is the next group of equal keys.
    Map { items: Vec<(u64, Any)>, next: usize, h: u64 },
    /// Reflected fields; `object_region` is the region the object was met
    /// in, `field_region` the one to restore after the current field.
    Fields {
        obj: ObjectRef,
        kind: i32,
        plan: PlanId,
        next: usize,
        h: u64,
        object_region: i32,
        field_region: Option<i32>,
    },
}

pub(super) struct Frame {
    pub(super) task: Task,
    /// The address entered on the path and the shallowest back-reference
    /// seen outside this frame, when it can close a cycle.
    pub(super) cycle: Option<(usize, usize)>,
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
