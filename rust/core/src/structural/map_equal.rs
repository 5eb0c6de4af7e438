//! Comparing two maps, one of the structural equality walk's tasks: every lhs pair's
//! key is looked up on the rhs (mapped through the free-variable binding
//! first) and the values compared, leaves in place and other values as a
//! pair for the driver. A Map, which never changes, is walked in place by
//! position; a Dict from a snapshot. Two Maps of one size built alike hold
//! their keys in the same order, so an int or string key that equals the
//! rhs key at the same position takes its value without a lookup.

use crate::abi::type_index as ti;
use crate::containers::map::MapPos;
use crate::values::any::Any;
use crate::values::error::Error;

use crate::structural::access_path::AccessStep;
use crate::structural::MapLike;
use crate::structural::leaf_equal::leaf_equal;

/// What the map task needs of the walk it is part of: the free-variable
/// binding keys map through, and the access steps to a difference when
/// tracing.
pub(crate) trait MapBinding {
    fn map_through(&self, key: &Any, lhs_to_rhs: bool) -> Any;
    fn tracing(&self) -> bool;
    fn push_steps(&mut self, l: Result<AccessStep, Error>, r: Result<AccessStep, Error>) -> Result<(), Error>;
}

/// What the map task asks for next: a pair of values to compare, or its
/// result.
pub(crate) enum MapStep {
    Pair(Any, Any),
    Decided(bool),
}

/// Comparing two maps; `keys` are the (lhs, mapped) keys of the values
/// being compared.
pub(crate) struct MapTask {
    walk: Walk,
    /// Where the rhs walk is when both sides are Maps of one size (else
    /// None).
    b_pos: Option<MapPos>,
    a: MapLike,
    b: MapLike,
    pub(crate) keys: Option<(Any, Any)>,
}

/// How the lhs pairs are walked: a Map in place, a Dict from a snapshot
/// with the index of the next pair.
enum Walk {
    InPlace(MapPos),
    Snapshot(Vec<(Any, Any)>, usize),
}

/// Map keys whose positional match stands for a lookup: ints and strings
/// (compared by value, bound to nothing).
fn is_plain_key(key: &Any) -> bool {
    matches!(key.type_index(), ti::kTVMFFIInt | ti::kTVMFFIStr | ti::kTVMFFISmallStr)
}

impl MapTask {
    pub(crate) fn new(a: MapLike, b: MapLike) -> MapTask {
        // A Map (immutable) is walked in place, a Dict (which may change
        // meanwhile) from a snapshot. Two Maps of one size: the rhs is
        // walked alongside, for the positional match in `next`.
        let walk = match &a {
            MapLike::Map(m) => Walk::InPlace(m.first()),
            MapLike::Dict(d) => Walk::Snapshot(d.items(), 0),
        };
        let b_pos = match (&a, &b) {
            (MapLike::Map(_), MapLike::Map(bm)) if a.len() == b.len() => Some(bm.first()),
            _ => None,
        };
        MapTask { walk, b_pos, a, b, keys: None }
    }
}

impl MapTask {
    /// The next pair of values to compare, or the result (a missing key,
    /// a leaf value that differs, or every value equal).
    pub(crate) fn next(&mut self, cx: &mut impl MapBinding) -> Result<MapStep, Error> {
        let MapTask { walk, b_pos, a, b, keys } = self;
        loop {
            let (k, v) = match (&mut *walk, &*a) {
                (Walk::InPlace(pos), MapLike::Map(am)) => match am.pair_at(*pos) {
                    Some((k, v, after)) => {
                        *pos = after;
                        (k, v)
                    }
                    None => break,
                },
                (Walk::Snapshot(items, next), _) => match items.get(*next) {
                    Some((k, v)) => {
                        *next += 1;
                        (k, v)
                    }
                    None => break,
                },
                (Walk::InPlace(_), MapLike::Dict(_)) => unreachable!("a Dict is walked from a snapshot"),
            };
            // Maps built alike hold their keys in the same order: an
            // int or string key equal to the rhs key at the same
            // position is the one a lookup would find (keys are
            // unique, and such keys map through no binding), so its
            // value is taken without hashing the key.
            let mut positional = None;
            if let (Some(pos), MapLike::Map(bm)) = (b_pos.as_mut(), &*b) {
                match bm.pair_at(*pos) {
                    Some((bk, bv, after)) => {
                        *pos = after;
                        if is_plain_key(k) && leaf_equal(k, bk) == Some(true) {
                            positional = Some(bv.clone());
                        }
                    }
                    None => *b_pos = None,
                }
            }
            let (rk, rv) = match positional {
                Some(rv) => (k.clone(), rv),
                None => {
                    let rk = cx.map_through(k, true);
                    let Some(rv) = b.get(&rk) else {
                        if cx.tracing() {
                            cx.push_steps(AccessStep::map_item(k.clone()), AccessStep::map_item_missing(rk))?;
                        }
                        return Ok(MapStep::Decided(false));
                    };
                    (rk, rv)
                }
            };
            // Leaf values are decided here, as for sequences.
            match leaf_equal(v, &rv) {
                Some(true) => {}
                Some(false) => {
                    if cx.tracing() {
                        cx.push_steps(AccessStep::map_item(k.clone()), AccessStep::map_item(rk))?;
                    }
                    return Ok(MapStep::Decided(false));
                }
                None => {
                    *keys = Some((k.clone(), rk));
                    return Ok(MapStep::Pair(v.clone(), rv));
                }
            }
        }
        if a.len() == b.len() {
            return Ok(MapStep::Decided(true));
        }
        for (k, _) in b.items().iter() {
            let lk = cx.map_through(k, false);
            if a.get(&lk).is_none() {
                if cx.tracing() {
                    cx.push_steps(AccessStep::map_item_missing(lk), AccessStep::map_item(k.clone()))?;
                }
                break;
            }
        }
        Ok(MapStep::Decided(false))
    }
}
