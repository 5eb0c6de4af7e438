//! What a structural walk needs to know about an object's type, looked up
//! once per type and run instead of once per object: the structural kind
//! (with its errors), the type key hash, the type's custom hook
//! (`__s_hash__` or `__s_equal__`), and the reflected fields that take part
//! (those not flagged `SEqHashIgnore`, ancestors' first). Reading these from
//! the registry costs a lock, an allocation and a string hash each time; a
//! tree of a thousand nodes of one type needs them once.
//!
//! A run keeps the plans it met for its whole length (type attributes
//! registered while it runs are seen by the next one), and only successful
//! lookups are kept, so a type that fails fails at every object as before.
//! Runs share their plans through a process-wide cache that the type
//! table's generation invalidates: a small comparison repeated many times
//! (a common pattern) looks its types up once, not once per call.

use std::sync::Arc;

use crate::abi::{field_flag, TVMFFIFieldInfo};
use crate::dataclass::native_field::{in_place_kind, InPlace};
use crate::values::any::Any;
use crate::values::error::Error;
use crate::object::ObjectRef;
use crate::types::type_facts_cache::{IndexMap, TypeFactsCache};
use crate::types::type_registry;

/// The structural facts of one type.
pub(crate) struct TypePlan {
    pub(crate) kind: i32,
    /// `type_key_hash` of the type key (objects' hashes start from it).
    pub(crate) key_hash: u64,
    /// The type's value of the cache's hook attribute, when set.
    pub(crate) hook: Option<Any>,
    /// Fields compared and hashed, in declaration order.
    pub(crate) fields: Vec<&'static TVMFFIFieldInfo>,
    /// Where and how each of `fields` is read in place (None: through its
    /// getter), for the walks' fast paths.
    pub(crate) reads: Vec<FieldRead>,
}

/// A field's offset in its object and how it is stored there.
#[derive(Clone, Copy)]
pub(crate) struct FieldRead {
    pub(crate) offset: usize,
    pub(crate) in_place: Option<InPlace>,
    /// The field's flags (its def region).
    pub(crate) flags: i64,
}

// SAFETY: a plan's field records are the type table's, which are never
// changed or freed once registered (outgrown arrays are retired, not
// dropped), so reading them from any thread is sound; the hook is an Any,
// itself Send and Sync.
unsafe impl Send for TypePlan {}
// SAFETY: as above.
unsafe impl Sync for TypePlan {}

/// Plans by type index, for one run; [`PlanId`]s index into it.
pub(crate) struct TypePlans {
    hook_attr: &'static [u8],
    plans: Vec<Arc<TypePlan>>,
    /// The type index of each plan, searched in order while there are few
    /// (most runs meet a handful of types, and a map would cost an
    /// allocation per run).
    indices: Vec<i32>,
    /// Plans by type index, once there are more than [`LINEAR_PLANS`].
    by_index: IndexMap<i32, PlanId>,
    /// The last type looked up (a run mostly meets one type many times
    /// in a row).
    last: Option<(i32, PlanId)>,
}

/// Types a run looks up by linear search before it builds a map.
const LINEAR_PLANS: usize = 16;

/// Plans of earlier runs, by (type index, address of the hook attribute's
/// name: each walk names its attribute by one static string).
static SHARED: TypeFactsCache<(i32, usize), TypePlan> = TypeFactsCache::new();

/// Plans this thread took from [`SHARED`] lately, with the type table's
/// generation they belong to: a run of a few objects (a common pattern,
/// repeated many times) finds its types here without the shared lock.
type Recent = (u64, Vec<((i32, usize), Arc<TypePlan>)>);

thread_local! {
    static RECENT: std::cell::RefCell<Recent> = const { std::cell::RefCell::new((0, Vec::new())) };
}

/// Plans [`RECENT`] keeps per thread.
const RECENT_PLANS: usize = 32;

/// The plan of `obj`'s type: a shared one of the current type table, else
/// made now.
fn shared_plan(obj: &ObjectRef, hook_attr: &'static [u8]) -> Result<Arc<TypePlan>, Error> {
    let key = (obj.type_index(), hook_attr.as_ptr() as usize);
    // Read before the table, as the shared cache does: a plan made across a
    // change is labelled with the older generation.
    let generation = type_registry::generation();
    let hit = RECENT.with_borrow(|(g, plans)| {
        (*g == generation).then(|| plans.iter().find(|(k, _)| *k == key).map(|(_, p)| p.clone())).flatten()
    });
    if let Some(plan) = hit {
        return Ok(plan);
    }
    let plan = SHARED.get_or_make(key, || make_plan(obj, hook_attr))?;
    RECENT.with_borrow_mut(|(g, plans)| {
        if *g != generation || plans.len() >= RECENT_PLANS {
            *g = generation;
            plans.clear();
        }
        plans.push((key, plan.clone()));
    });
    Ok(plan)
}

fn make_plan(obj: &ObjectRef, hook_attr: &'static [u8]) -> Result<TypePlan, Error> {
    let info = super::type_info_of(obj)?;
    let kind = super::structural_kind(info)?;
    let key_hash = super::type_key_hash(type_registry::type_key_of(info.type_index).as_bytes());
    let hook = crate::reflection::attr_columns::attr_value(info.type_index, hook_attr);
    let fields: Vec<&'static TVMFFIFieldInfo> = type_registry::all_fields(info.type_index)
        .into_iter()
        .filter(|f| f.flags & field_flag::kSEqHashIgnore == 0)
        .collect();
    let reads = fields.iter().map(|f| FieldRead { offset: f.offset as usize, in_place: in_place_kind(f), flags: f.flags }).collect();
    Ok(TypePlan { kind, key_hash, hook, fields, reads })
}

/// A plan's position in its [`TypePlans`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct PlanId(usize);

/// Field `field` of `obj` through its getter (for fields not read in
/// place, [`FieldRead::in_place`] None): an owned value, or, when the
/// getter fails, a value of type index [`GETTER_FAILED`] with the error
/// left raised. Kept out of line and returned in registers, so the fast
/// paths' loops over in-place reads stay as tight as without it.
///
/// # Safety
/// `obj` is a live object of a type `field` belongs to, held by the caller.
#[inline(never)]
#[cold]
pub(crate) unsafe fn read_by_getter(field: &TVMFFIFieldInfo, obj: *mut crate::abi::TVMFFIObject) -> crate::abi::TVMFFIAny {
    let failed = crate::abi::TVMFFIAny { type_index: GETTER_FAILED, ..crate::abi::TVMFFIAny::NONE };
    let Some(getter) = field.getter else {
        crate::values::error::set_raised(Error::attribute_error("field has no getter"));
        return failed;
    };
    let mut out = crate::abi::TVMFFIAny::NONE;
    // SAFETY: per the caller, the field is inside the live object; the
    // getter writes an owned value.
    if unsafe { getter((obj as *mut u8).add(field.offset as usize) as *mut std::ffi::c_void, &mut out) } != 0 {
        return failed;
    }
    out
}

/// The type index [`read_by_getter`] reports a failed getter
/// with (no value has it).
pub(crate) const GETTER_FAILED: i32 = i32::MIN;

/// The owned value of a [`read_by_getter`] result, or the error
/// the getter raised.
#[inline(always)]
pub(crate) fn getter_result(raw: crate::abi::TVMFFIAny) -> Result<Any, Error> {
    if raw.type_index == GETTER_FAILED {
        return Err(crate::values::error::take_raised_or_unknown(-1));
    }
    // SAFETY: getters hand back an owned value.
    Ok(unsafe { Any::from_raw_owned(raw) })
}

impl TypePlans {
    /// An empty cache whose plans carry the `hook_attr` type attribute.
    pub(crate) fn new(hook_attr: &'static [u8]) -> TypePlans {
        TypePlans { hook_attr, plans: Vec::new(), indices: Vec::new(), by_index: IndexMap::default(), last: None }
    }

    /// The plan of `obj`'s type (an error for unregistered types and types
    /// without a structural kind).
    #[inline(always)]
    pub(crate) fn of(&mut self, obj: &ObjectRef) -> Result<PlanId, Error> {
        let index = obj.type_index();
        if let Some((i, id)) = self.last {
            if i == index {
                return Ok(id);
            }
        }
        self.of_other(obj, index)
    }

    #[inline(never)]
    fn of_other(&mut self, obj: &ObjectRef, index: i32) -> Result<PlanId, Error> {
        let known = if self.plans.len() <= LINEAR_PLANS {
            self.indices.iter().position(|&i| i == index).map(PlanId)
        } else {
            self.by_index.get(&index).copied()
        };
        let id = match known {
            Some(id) => id,
            None => {
                let plan = shared_plan(obj, self.hook_attr)?;
                let id = PlanId(self.plans.len());
                self.plans.push(plan);
                self.indices.push(index);
                if self.plans.len() > LINEAR_PLANS {
                    if self.by_index.is_empty() {
                        self.by_index.extend(self.indices.iter().enumerate().map(|(k, &i)| (i, PlanId(k))));
                    } else {
                        self.by_index.insert(index, id);
                    }
                }
                id
            }
        };
        self.last = Some((index, id));
        Ok(id)
    }

    pub(crate) fn get(&self, id: PlanId) -> &TypePlan {
        &self.plans[id.0]
    }

    /// Field `i` of plan `id`, None past the last.
    #[inline]
    pub(crate) fn field(&self, id: PlanId, i: usize) -> Option<&'static TVMFFIFieldInfo> {
        self.plans[id.0].fields.get(i).copied()
    }
}
