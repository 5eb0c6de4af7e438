//! The container algorithms behind the builtin `__s_mutate__` and
//! `__s_maybe_inplace_mutate__` hooks of Array, List, Map and Dict, as
//! steps of the mutation's work stack: copy-on-write over the elements (or
//! a map's values), or a uniquely owned container's slots rewritten in
//! place. The hooks themselves ([`crate::structural::container_hooks`]),
//! called by compiled code, run the same steps to completion.

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIObject, TVMFFISeqCell};
use crate::values::any::Any;
use crate::containers::map_cell::{CellRef, Kv, MapCell};
use crate::containers::{Array, Dict, List, Map};
use crate::values::error::Error;
use crate::structural::trampoline::{self, Step};

use super::attempt::attempt;
use super::protocol::{keeps, InplaceMode, Mutated, MutatorRef};

/// The sequence cell of an Array or List object (it follows the header).
///
/// # Safety
/// `obj` must be a live Array or List.
unsafe fn seq_cell(obj: *mut TVMFFIObject) -> *mut TVMFFISeqCell {
    // SAFETY: pointer arithmetic inside the object, per the caller.
    unsafe { (obj as *mut u8).add(std::mem::size_of::<TVMFFIObject>()) as *mut TVMFFISeqCell }
}

/// The children of a container, borrowed in place (as TVM-FFI reads them,
/// so that a child the container alone holds is seen as unique): a
/// sequence's elements, a map's values with their keys.
///
/// # Safety
/// `value` must be a live Array, List, Map or Dict, not changed while the
/// views are used.
unsafe fn borrowed_children(value: &TVMFFIAny) -> Vec<(Option<TVMFFIAny>, TVMFFIAny)> {
    // SAFETY: a live container per the caller.
    let obj = unsafe { value.value.v_obj };
    match value.type_index {
        ti::kTVMFFIArray | ti::kTVMFFIList => {
            // SAFETY: as above; `size` elements are stored at `data`.
            unsafe {
                let cell = seq_cell(obj);
                let items = (*cell).data as *const TVMFFIAny;
                (0..(*cell).size.max(0) as usize).map(|i| (None, *items.add(i))).collect()
            }
        }
        // SAFETY: live pairs of the live map.
        _ => CellRef(obj as *mut MapCell).pairs().into_iter().map(|kv| unsafe { (Some((*kv).key), (*kv).value) }).collect(),
    }
}

/// A container's children, borrowed in place (so a child the container
/// alone holds is seen as unique, as TVM-FFI's hooks see it).
type Children = Vec<(Option<TVMFFIAny>, TVMFFIAny)>;
type Rebuilt = Option<Vec<(Option<Any>, Any)>>;

fn owned((k, v): &(Option<TVMFFIAny>, TVMFFIAny)) -> Result<(Option<Any>, Any), Error> {
    Ok((k.as_ref().map(Any::from_view).transpose()?, Any::from_view(v)?))
}

/// What keeps a copied container's children alive while they are visited.
struct Held {
    /// The container itself.
    _container: Any,
    /// For a List or Dict, a reference to every child (and key) as well: callbacks
    /// run while the children are visited and may change such a container
    /// (one they can reach), which must not free a child the copy still
    /// reads. An Array or Map cannot change, so its children stay borrowed.
    _children: Vec<Any>,
}

/// Copy-on-write over a container's elements (or a map's values): the
/// container itself when every child is kept, else a new one.
///
/// # Safety
/// `value` must be a live Array, List, Map or Dict.
pub(crate) unsafe fn copy_step<'a>(m: &'a MutatorRef, value: TVMFFIAny) -> Step<'a, Mutated> {
    let container = attempt!(Any::from_view(&value));
    // SAFETY: per the caller; `container` holds the container while the
    // views are taken.
    let children = unsafe { borrowed_children(&value) };
    let mutable = matches!(value.type_index, ti::kTVMFFIList | ti::kTVMFFIDict);
    let held_children = if mutable {
        attempt!(children.iter().flat_map(|(k, v)| k.iter().chain(std::iter::once(v))).map(Any::from_view).collect())
    } else {
        Vec::new()
    };
    let index = value.type_index;
    copy_child(m, (index, Held { _container: container, _children: held_children }), children, 0, None)
}

fn copy_child<'a>(m: &'a MutatorRef, held: (i32, Held), children: Children, i: usize, out: Rebuilt) -> Step<'a, Mutated> {
    let Some(&(_, child)) = children.get(i) else {
        return Step::Done(rebuild(held.0, out));
    };
    m.mutate_step(child, InplaceMode::Disallow).then(move |r| {
        let r = attempt!(r);
        let out = match out {
            Some(mut o) => {
                let (k, v) = attempt!(owned(&children[i]));
                o.push((k, r.unwrap_or(v)));
                Some(o)
            }
            None if keeps(&r, &child) => None,
            None => {
                let mut o = attempt!(children[..i].iter().map(owned).collect::<Result<Vec<_>, Error>>());
                o.push((attempt!(owned(&children[i])).0, r.expect("changed")));
                Some(o)
            }
        };
        copy_child(m, held, children, i + 1, out)
    })
}

fn rebuild(index: i32, out: Rebuilt) -> Result<Mutated, Error> {
    let Some(items) = out else { return Ok(None) };
    let values = || items.iter().map(|(_, v)| v.clone()).collect::<Vec<Any>>();
    let pairs = || items.iter().map(|(k, v)| (k.clone().unwrap_or_default(), v.clone())).collect::<Vec<(Any, Any)>>();
    Ok(Some(match index {
        ti::kTVMFFIArray => Any::from_object(Array::new(values())?.into_object()),
        ti::kTVMFFIList => Any::from_object(List::new(values())?.into_object()),
        ti::kTVMFFIMap => Any::from_object(Map::new(pairs())?.into_object()),
        _ => Any::from_object(Dict::new(pairs())?.into_object()),
    }))
}

/// Replace a stored value in place, releasing the old one.
///
/// # Safety
/// `slot` must hold an owned value of an object nobody else is using.
unsafe fn replace_slot(slot: *mut TVMFFIAny, v: Any) {
    // SAFETY: per the caller; the old value's reference moves to `old`.
    let old = unsafe { std::ptr::replace(slot, v.into_raw()) };
    // SAFETY: as above.
    drop(unsafe { Any::from_raw_owned(old) });
}

/// Rewrite a uniquely owned container's children in place (each child in
/// place too when it is itself unique); always "unchanged".
///
/// # Safety
/// `value` must be a live Array, List, Map or Dict that nobody else
/// references, alive until the step is done.
pub(crate) unsafe fn in_place_step<'a>(m: &'a MutatorRef, value: TVMFFIAny) -> Step<'a, Mutated> {
    // SAFETY: a live container per the caller.
    let obj = unsafe { value.value.v_obj };
    match value.type_index {
        // SAFETY: a live, unshared Array or List per the caller.
        ti::kTVMFFIArray | ti::kTVMFFIList => unsafe { in_place_item(m, seq_cell(obj), 0) },
        _ => in_place_pair(m, CellRef(obj as *mut MapCell).pairs().into_iter()),
    }
}

/// Slot `i` of a sequence and the ones after it. The cell is re-read for
/// every element, as a callback may have changed the sequence.
///
/// # Safety
/// `cell` must be the cell of a live, unshared Array or List.
unsafe fn in_place_item<'a>(m: &'a MutatorRef, cell: *mut TVMFFISeqCell, i: i64) -> Step<'a, Mutated> {
    // SAFETY (every block below): the container is live and unshared per
    // the caller, and `i` is checked against the current size before its
    // slot is read or written.
    let size = move || unsafe { (*cell).size };
    let slot = move |i: i64| unsafe { ((*cell).data as *mut TVMFFIAny).add(i as usize) };
    if i >= size() {
        return Step::ok(None);
    }
    let item = unsafe { *slot(i) };
    m.mutate_step(item, InplaceMode::Allow).then(move |r| {
        let r = attempt!(r);
        if !keeps(&r, &item) && i < size() {
            unsafe { replace_slot(slot(i), r.expect("changed")) };
        }
        unsafe { in_place_item(m, cell, i + 1) }
    })
}

fn in_place_pair<'a>(m: &'a MutatorRef, mut pairs: std::vec::IntoIter<*mut Kv>) -> Step<'a, Mutated> {
    let Some(kv) = pairs.next() else { return Step::ok(None) };
    // SAFETY: live pairs of the uniquely owned map.
    let item = unsafe { (*kv).value };
    m.mutate_step(item, InplaceMode::Allow).then(move |r| {
        let r = attempt!(r);
        if !keeps(&r, &item) {
            // SAFETY: as above.
            unsafe { replace_slot(&mut (*kv).value, r.expect("changed")) };
        }
        in_place_pair(m, pairs)
    })
}

/// [`copy_step`] run to completion (the builtin `__s_mutate__` hook).
///
/// # Safety
/// As [`copy_step`].
pub(crate) unsafe fn mutate_container_copy(m: &MutatorRef, value: &TVMFFIAny) -> Result<Mutated, Error> {
    let _run = trampoline::enter("structural mutate")?;
    // SAFETY: per the caller.
    trampoline::run(unsafe { copy_step(m, *value) })
}

/// [`in_place_step`] run to completion (the builtin
/// `__s_maybe_inplace_mutate__` hook).
///
/// # Safety
/// As [`in_place_step`].
pub(crate) unsafe fn mutate_container_in_place(m: &MutatorRef, value: &TVMFFIAny) -> Result<Mutated, Error> {
    let _run = trampoline::enter("structural mutate")?;
    // SAFETY: per the caller.
    trampoline::run(unsafe { in_place_step(m, *value) })
}
