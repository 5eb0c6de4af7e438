//! Type-index allocation: which index a new type gets, and which indices it
//! keeps for its descendants.
//!
//! Code compiled against TVM-FFI's headers tests `IsInstance<T>()` inline.
//! When `T` declares `n` child slots, any index in `[index(T), index(T) + n]`
//! counts as `T` or one of its subtypes without asking the registry; only a
//! `T` that allows overflow goes on to read the ancestor table. So indices
//! are handed out as TVM-FFI's runtime hands them out, and the range a type
//! reserves never holds anything but the type and its descendants:
//!
//! * every type owns `n + 1` consecutive slots, its own index first;
//! * a dynamic type of `m` child slots takes the next `m + 1` unused slots of
//!   its parent's range while they fit;
//! * otherwise, when the parent allows overflow, it takes `m + 1` fresh
//!   slots after every index handed out so far; when it does not, the
//!   registration is refused (an error, never an abort);
//! * a type whose parent forbids overflow forbids it too.
//!
//! Static indices (the core's own types, and types registered at a fixed
//! index) lie below `kTVMFFIDynObjectBegin`, where the fresh-slot counter
//! never reaches; they take no slots from their parent, and their reserved
//! range may not overlap another type's.
//!
//! The registry (`type_registry`) keeps one [`Slots`] per type and one
//! [`IndexAllocator`]; both are only touched under its write lock.

use crate::abi::type_index as ti;

/// Indices stop here: the registry and the attribute columns are arrays
/// indexed by type index, so a type declaring an absurd number of child
/// slots is refused instead of making the next array grow to match it.
pub(crate) const INDEX_LIMIT: i32 = 1 << 24;

/// The slot range a type owns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slots {
    /// Slots the type owns: itself plus its declared child slots.
    pub(crate) reserved: i32,
    /// Leading slots of the range already taken (the type's own included).
    pub(crate) used: i32,
    /// Whether subtypes that do not fit may take fresh slots elsewhere.
    pub(crate) can_overflow: bool,
}

impl Slots {
    /// A new type's range: `num_child_slots` (checked by the caller) plus
    /// itself, of which only its own slot is taken.
    pub(crate) fn new(num_child_slots: i32, can_overflow: bool) -> Slots {
        Slots { reserved: num_child_slots + 1, used: 1, can_overflow }
    }

    /// The number of child slots the type declared.
    pub(crate) fn child_slots(&self) -> i32 {
        self.reserved - 1
    }
}

/// Whether a new type under `parent` may overflow: it may not when the
/// parent may not, whatever it asks for, since its subtypes are subtypes of
/// the parent too and the parent's headers would not look past its range.
pub(crate) fn inherited_overflow(parent: Option<&Slots>, requested: bool) -> bool {
    requested && parent.is_none_or(|p| p.can_overflow)
}

/// Reject a negative or oversized child-slot count.
pub(crate) fn check_child_slots(num_child_slots: i32) -> Result<(), String> {
    if !(0..INDEX_LIMIT).contains(&num_child_slots) {
        return Err(format!("num_child_slots must be in [0, {INDEX_LIMIT}), got {num_child_slots}"));
    }
    Ok(())
}

/// Why a dynamic index could not be allocated.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The parent's range is full and it forbids overflow.
    ParentFull { reserved: i32 },
    /// The index space is exhausted.
    OutOfIndices,
}

/// Hands out the fresh slots past every range allocated so far.
pub(crate) struct IndexAllocator {
    next_fresh: i32,
}

impl IndexAllocator {
    pub(crate) const fn new() -> IndexAllocator {
        IndexAllocator { next_fresh: ti::kTVMFFIDynObjectBegin }
    }

    /// The index of a new dynamic type of `num_child_slots` (checked) under
    /// the type at `parent_index` whose range is `parent`. On success the
    /// parent's range or the fresh-slot counter has moved past the new
    /// type's range; on refusal nothing has changed.
    pub(crate) fn alloc_child(
        &mut self,
        parent_index: i32,
        parent: &mut Slots,
        num_child_slots: i32,
    ) -> Result<i32, Refusal> {
        let need = num_child_slots + 1;
        if parent.used <= parent.reserved - need {
            let index = parent_index + parent.used;
            parent.used += need;
            return Ok(index);
        }
        if !parent.can_overflow {
            return Err(Refusal::ParentFull { reserved: parent.reserved });
        }
        let index = self.next_fresh;
        if index > INDEX_LIMIT - need {
            return Err(Refusal::OutOfIndices);
        }
        self.next_fresh += need;
        Ok(index)
    }
}

/// Check that a static registration at `index` with `num_child_slots`
/// lies wholly below the dynamic region. Checked before anything about the
/// types registered so far, so the answer for an index in the dynamic
/// region never depends on which dynamic types other threads made.
pub(crate) fn check_static_bounds(index: i32, num_child_slots: i32) -> Result<(), String> {
    let end = index as i64 + num_child_slots as i64 + 1;
    if end > ti::kTVMFFIDynObjectBegin as i64 {
        return Err(format!(
            "static type indices and their child slots must lie below {} (dynamic indices start there), got [{index}, {end})",
            ti::kTVMFFIDynObjectBegin
        ));
    }
    Ok(())
}

/// Check a static registration at `index` with `num_child_slots` (checked)
/// against the types registered so far, given as `(index, range)` pairs:
/// its whole range stays below the dynamic region, lies in no other type's
/// range, and holds no registered type.
pub(crate) fn check_static(
    index: i32,
    num_child_slots: i32,
    existing: impl Iterator<Item = (i32, Slots)>,
) -> Result<(), String> {
    check_static_bounds(index, num_child_slots)?;
    let end = index as i64 + num_child_slots as i64 + 1;
    for (other, slots) in existing {
        let other_end = other as i64 + slots.reserved as i64;
        if (other as i64) < end && (index as i64) < other_end {
            return Err(format!(
                "static range [{index}, {end}) overlaps the range [{other}, {other_end}) of type index {other}"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEGIN: i32 = ti::kTVMFFIDynObjectBegin;

    #[test]
    fn children_fill_the_parent_range_then_overflow() {
        let mut alloc = IndexAllocator::new();
        let mut object = Slots::new(0, true);
        let base = alloc.alloc_child(64, &mut object, 4).unwrap();
        assert_eq!(base, BEGIN);
        let mut base_slots = Slots::new(4, true);
        assert_eq!(alloc.alloc_child(base, &mut base_slots, 0), Ok(base + 1));
        assert_eq!(alloc.alloc_child(base, &mut base_slots, 1), Ok(base + 2));
        // An unrelated type lands after the base's whole range.
        assert_eq!(alloc.alloc_child(64, &mut object, 0), Ok(base + 5));
        assert_eq!(alloc.alloc_child(base, &mut base_slots, 0), Ok(base + 4));
        // Full: overflow to fresh slots.
        assert_eq!(alloc.alloc_child(base, &mut base_slots, 2), Ok(base + 6));
        assert_eq!(alloc.alloc_child(64, &mut object, 0), Ok(base + 9));
    }

    #[test]
    fn a_full_parent_that_forbids_overflow_refuses_and_stays_unchanged() {
        let mut alloc = IndexAllocator::new();
        let mut parent = Slots::new(2, false);
        assert_eq!(alloc.alloc_child(200, &mut parent, 3), Err(Refusal::ParentFull { reserved: 3 }));
        assert_eq!(parent, Slots::new(2, false));
        assert_eq!(alloc.alloc_child(200, &mut parent, 1), Ok(201));
        assert_eq!(alloc.alloc_child(200, &mut parent, 0), Err(Refusal::ParentFull { reserved: 3 }));
        assert_eq!(alloc.next_fresh, BEGIN);
    }

    #[test]
    fn overflow_is_inherited_as_forbidden() {
        let closed = Slots::new(3, false);
        let open = Slots::new(3, true);
        assert!(!inherited_overflow(Some(&closed), true));
        assert!(inherited_overflow(Some(&open), true));
        assert!(!inherited_overflow(Some(&open), false));
        assert!(inherited_overflow(None, true));
    }

    #[test]
    fn index_space_and_slot_counts_are_bounded() {
        assert!(check_child_slots(-1).is_err());
        assert!(check_child_slots(INDEX_LIMIT).is_err());
        assert!(check_child_slots(0).is_ok());
        let mut alloc = IndexAllocator::new();
        let mut object = Slots::new(0, true);
        assert_eq!(alloc.alloc_child(64, &mut object, INDEX_LIMIT - 1), Err(Refusal::OutOfIndices));
        assert_eq!(alloc.alloc_child(64, &mut object, 0), Ok(BEGIN));
    }

    #[test]
    fn static_ranges_stay_below_the_dynamic_region_and_apart() {
        let existing = [(64, Slots::new(0, true)), (100, Slots::new(3, false))];
        assert!(check_static(90, 0, existing.iter().copied()).is_ok());
        assert!(check_static(102, 0, existing.iter().copied()).is_err());
        assert!(check_static(98, 2, existing.iter().copied()).is_err());
        assert!(check_static(BEGIN - 1, 0, existing.iter().copied()).is_ok());
        assert!(check_static(BEGIN - 1, 1, existing.iter().copied()).is_err());
    }
}
