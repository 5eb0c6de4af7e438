//! The wrapper/handle state machine (see the project's tying design).
//!
//! Each handle has a *binding* (one word: Detached, Active `W`, Inactive,
//! InTransit or Moving; see [`crate::tie::binding`]), kept in front of the
//! object's block when the Python allocator made it, or in the side table
//! otherwise. This module holds every transition: the wrapper slots
//! (`tp_alloc`, `tp_dealloc`, `tp_free`) and the end of a teardown
//! that keeps the wrapper's memory (`settle_teardown`), the one return path
//! ([`make_ret_object`]), and moves.
//!
//! Moving marks a canonical wrapper whose handle is being passed by move
//! (`x._move()`) to a call that runs without the GIL: the callee may take
//! the handle out of W at any moment, so a lookup meanwhile gets a fresh,
//! unbound wrapper rather than W, and never binds a second canonical one.
//! The mover holds a weak reference on the handle for the whole call, so
//! the binding stays readable until it settles.
//!
//! Python-side transitions run with the GIL held. A header word may also be
//! changed by the block's `delete_space` on any thread, hence the InTransit
//! handshake between `settle_teardown` and `delete_space` (compare-and-swap on the
//! atomic word). Side-table bindings have no such handshake: the table pins
//! their storage, and dead entries are swept with the GIL.
//!
//! Lean wrapper classes (no instance `__dict__`, no slots of their own:
//! the wrapper holds no Python reference but its type) are not GC types:
//! [`install_slots`] clears the flag CPython gives every class, sparing each
//! wrapper the collector's header. Classes that add storage stay GC types.
//! Every step that differs (untracking, re-tracking, freeing) asks the
//! wrapper's type ([`is_gc_type`]), whose flag never changes once it has
//! instances. Which types may keep their memory is decided here
//! ([`eligible`]); freeing and reviving kept memory is in
//! [`crate::tie::kept_memory`]. The set-up of `tether.Function` wrappers
//! that `tp_alloc` runs comes from the call layer through
//! [`crate::tie::function_init`].
//!
//! SAFETY invariants of this module:
//! - `CObject.chandle` is NULL or a handle on which the wrapper owns +1;
//! - kept (Inactive) wrapper memory is an allocation of its type's kind (GC
//!   or plain), untracked, with refcount 0, owning one reference to its
//!   heap type, and is freed exactly once: revived in place, or discarded
//!   by `delete_space` / the side table's sweep with the GIL, or left to the
//!   OS after interpreter exit.

use std::ffi::c_void;
use std::ptr;

use pyo3::ffi;
use tether_sys::abi::TVMFFIObject;
use tether_sys::TVMFFIObjectDecRef;

use crate::tie::binding::{load_unlocked, Binding, Locked, INACTIVE, MOVING, TAGS, TRANSIT};
use crate::tie::kept_memory::{clear_finalized, discard_kept, free_memory, is_gc_type, revive};
use crate::tie::{handle_pin, py_allocator, tying_lock};

/// The C layout of every wrapper: the Python header, the handle, how many
/// running calls borrow the handle (passed as a view, not a reference: such
/// a handle must not be moved out meanwhile), and the weak-reference list.
/// 40 bytes on 64-bit GIL builds, which CPython's allocator rounds to 48;
/// lean classes add no GC header in front.
#[repr(C)]
pub struct CObject {
    pub ob_base: ffi::PyObject,
    pub chandle: *mut TVMFFIObject,
    pub borrows: std::sync::atomic::AtomicUsize,
    /// Weak references to this wrapper (`tp_weaklistoffset` points here, so
    /// every wrapper class supports weakrefs without a `__dict__`).
    pub weaklist: *mut ffi::PyObject,
}

// ---- wrapper slots ----------------------------------------------------------

/// `tp_alloc` of every wrapper type: a generic allocation, prepared for
/// try-incref (and, for functions, their vectorcall entry) before any
/// binding can name it.
pub unsafe extern "C" fn tp_alloc(tp: *mut ffi::PyTypeObject, nitems: ffi::Py_ssize_t) -> *mut ffi::PyObject {
    // SAFETY: the generic allocation for this type.
    unsafe {
        let obj = ffi::PyType_GenericAlloc(tp, nitems);
        if !obj.is_null() {
            tying_lock::enable_try_incref(obj);
            super::function_init::init_function_object(obj, tp);
        }
        obj
    }
}

/// `tp_dealloc` of the wrapper base type (subclasses reach it through
/// CPython's `subtype_dealloc`).
#[allow(unpredictable_function_pointer_comparisons)]
pub unsafe extern "C" fn tp_dealloc(obj: *mut ffi::PyObject) {
    // SAFETY: `obj` is a dying wrapper (layout CObject); module invariants.
    unsafe {
        let tp = ffi::Py_TYPE(obj);
        if is_gc_type(tp) {
            ffi::PyObject_GC_UnTrack(obj as *mut c_void);
        }
        let o = obj as *mut CObject;
        super::exchange_tags::forget(obj);
        // Weak references die with the wrapper's Python life. Their
        // callbacks run first, while the binding still names this wrapper:
        // its count is zero, so a callback (or another thread) fetching the
        // object fails try-incref and binds a new wrapper, which the
        // decision below then finds canonical. Running no Python code
        // between InTransit and its settling keeps that window short and free of
        // anything a waiting lookup could hold (see `settled`).
        if !(*o).weaklist.is_null() {
            ffi::PyObject_ClearWeakRefs(obj);
        }
        let h = (*o).chandle;
        // The handle whose binding is InTransit naming this wrapper, once
        // its memory is to be kept: the teardown settles it below.
        let mut pending: *mut TVMFFIObject = ptr::null_mut();
        if !h.is_null() {
            let b = Binding::of(h);
            // No lookup can take a reference any more (try-incref fails
            // once the count reached zero): decide under the binding.
            let held = b.lock();
            (*o).chandle = ptr::null_mut();
            if held.word() == obj as usize {
                if eligible(tp) {
                    // Keep the memory for revival. The binding is InTransit
                    // until `settle_teardown` (and, for a header word, the
                    // handshake with delete_space): meanwhile a lookup on
                    // another thread waits in `settled`.
                    pending = h;
                    held.publish(obj as usize | INACTIVE | TRANSIT);
                } else {
                    held.publish(0);
                }
            }
        }
        if !h.is_null() {
            TVMFFIObjectDecRef(h as *mut c_void);
        }
        // An eligible type frees through our `tp_free`, so settling the
        // teardown here stands in for that call.
        let kept = if pending.is_null() {
            if let Some(free) = (*tp).tp_free {
                free(obj as *mut c_void);
            }
            false
        } else {
            settle_teardown(obj, pending)
        };
        // Every instance of a heap type owns a reference to it, released
        // here (our base is a heap type, so CPython's subtype_dealloc leaves
        // that to us) — unless the memory was kept, which keeps the type.
        if ffi::PyType_GetFlags(tp) & ffi::Py_TPFLAGS_HEAPTYPE != 0 && !kept {
            ffi::Py_DECREF(tp as *mut ffi::PyObject);
        }
    }
}

/// `tp_free` of every wrapper type: memory that is not kept for revival
/// (teardowns that keep it go through `settle_teardown`).
pub unsafe extern "C" fn tp_free(p: *mut c_void) {
    // SAFETY: `p` is a wrapper at the end of its dealloc.
    unsafe { free_memory(p as *mut ffi::PyObject) }
}

/// The Python half of the handshake, at the end of a teardown that left
/// `h`'s binding InTransit naming `obj`: keep `obj`'s memory (Inactive) if
/// the handle outlived our DecRef, else free it (and the handle's block,
/// whose `delete_space` deferred to us). Returns whether it was kept.
///
/// # Safety
/// GIL held; called once by `obj`'s `tp_dealloc` after it published
/// Inactive|InTransit on `h`'s binding and released its reference on `h`.
unsafe fn settle_teardown(obj: *mut ffi::PyObject, h: *mut TVMFFIObject) -> bool {
    // SAFETY: per the caller; module invariants.
    unsafe {
        if !py_allocator::is_ours(h) {
            // A side-table binding: the table's pin keeps `h`'s storage.
            let b = Binding::Side(h);
            let held = b.lock();
            if handle_pin::contents_dead(h) {
                // Our DecRef was the last: nothing to revive for.
                held.publish(0);
                free_memory(obj);
                return false;
            }
            let settled = held.word() & !TRANSIT;
            held.publish(settled);
            return true;
        }
        let w = py_allocator::word(h);
        let mut cur = load_unlocked(w);
        loop {
            if cur & TRANSIT == 0 {
                // The handle died during our DecRef and deferred to us.
                free_memory(obj);
                py_allocator::free_deferred_block(h);
                return false;
            }
            match w.compare_exchange(cur, cur & !TRANSIT, std::sync::atomic::Ordering::AcqRel, std::sync::atomic::Ordering::Acquire) {
                // Inactive: keep the memory for revival.
                Ok(_) => return true,
                Err(_) => cur = load_unlocked(w),
            }
        }
    }
}

/// Whether instances of `tp` hold no Python reference but their type:
/// its base is such a class (or the native base) and it adds no storage
/// (no slots, no instance dict, no managed dict or weak-reference list).
///
/// # Safety
/// `tp` must be a live type object.
unsafe fn is_lean(tp: *mut ffi::PyTypeObject) -> bool {
    // CPython's managed dict and weak-reference flags (3.11 and 3.12 on),
    // spelled out: the constants exist only for those versions.
    const MANAGED_STORAGE: std::ffi::c_ulong = (1 << 3) | (1 << 4);
    // SAFETY: reading slots of live types.
    unsafe {
        let base = (*tp).tp_base;
        !base.is_null()
            && !is_gc_type(base)
            && (*tp).tp_basicsize == (*base).tp_basicsize
            && (*tp).tp_itemsize == 0
            && (*tp).tp_dictoffset == 0
            && ffi::PyType_GetFlags(tp) & MANAGED_STORAGE == 0
    }
}

/// Make `tp` (a subclass of the wrapper base) use our slots, and make it a
/// non-GC type if it is lean ([`is_lean`]).
///
/// CPython makes every class a GC type, because an instance may be stored
/// on its own class: a lean wrapper's only reference is to its class, so
/// such a cycle (a class attribute holding an instance, the class then
/// dropped) is the one thing the collector no longer breaks; classes live
/// as long as their registration anyway. A class that adds a `__dict__` or
/// slots stays a GC type and its cycles are collected as usual.
///
/// # Safety
/// `tp` must be a type whose instances have the CObject layout, with no
/// instances yet (called when the class is created).
#[allow(unpredictable_function_pointer_comparisons)]
pub unsafe fn install_slots(tp: *mut ffi::PyTypeObject) {
    // SAFETY: writing slots of a non-static type before instances that
    // depend on them exist (called when the class is created).
    unsafe {
        // Once installed, the flags stay: a second call may meet instances.
        let first = (*tp).tp_free != Some(tp_free as unsafe extern "C" fn(*mut c_void));
        (*tp).tp_alloc = Some(tp_alloc);
        (*tp).tp_free = Some(tp_free);
        if first && is_gc_type(tp) && is_lean(tp) {
            tying_lock::clear_type_flags(tp, ffi::Py_TPFLAGS_HAVE_GC);
        }
        ffi::PyType_Modified(tp);
    }
}

// ---- the one return path ----------------------------------------------------

/// The wrapper for a handle the caller owns (+1), creating, reusing or
/// reviving it; the +1 moves into the wrapper or is dropped.
///
/// Returns a new reference, or NULL with a Python exception set.
///
/// # Safety
/// GIL held; `h` live with +1 owned by the caller; `cls` a wrapper type
/// (slots installed) whose instances fit `h`'s type.
#[allow(unpredictable_function_pointer_comparisons)]
pub unsafe fn make_ret_object(h: *mut TVMFFIObject, cls: *mut ffi::PyTypeObject) -> *mut ffi::PyObject {
    // SAFETY: GIL held (an attached thread state on free-threaded builds);
    // module invariants. Nothing calls Python code while a binding is held.
    unsafe {
        let b = Binding::of(h);
        let mut discard: *mut ffi::PyObject = ptr::null_mut();
        {
            let held = settled(&b);
            let cur = held.word();
            if cur != 0 && cur & TAGS == 0 && tying_lock::try_incref(cur as *mut ffi::PyObject) {
                // Active: the canonical wrapper already owns +1.
                let obj = cur as *mut ffi::PyObject;
                drop(held);
                TVMFFIObjectDecRef(h as *mut c_void);
                return obj;
            }
            if cur & MOVING != 0 {
                // The canonical wrapper's handle is being moved into a call:
                // hand out a fresh wrapper and bind nothing.
                drop(held);
                return fresh_wrapper(h, cls);
            }
            if cur & TAGS == INACTIVE {
                let kept = (cur & !TAGS) as *mut ffi::PyObject;
                // Kept memory holds a reference to its type, so comparing
                // ob_type is sound (the class cannot have been replaced).
                if (*kept).ob_type == cls && (*cls).tp_alloc == Some(tp_alloc) && clear_finalized(kept) {
                    // Reviving runs no Python code (no allocation).
                    let obj = revive(kept, cls);
                    (*(obj as *mut CObject)).chandle = h;
                    held.publish(obj as usize);
                    return obj;
                }
                // The class for this type changed: drop the kept memory.
                held.publish(0);
                discard = kept;
            }
            // Otherwise Detached or a wrapper whose teardown has begun: a
            // new wrapper, bound below.
        }
        if !discard.is_null() {
            discard_kept(discard);
        }
        // Allocating may run Python code (a collection), so it happens
        // outside the lock, and the binding is checked again afterwards.
        let obj = fresh_wrapper(h, cls);
        if obj.is_null() {
            return obj;
        }
        let held = settled(&b);
        let cur = held.word();
        if cur & TAGS == INACTIVE {
            // A teardown settled meanwhile and kept its memory: the new
            // wrapper takes over (the kept memory is freed below).
            held.publish(obj as usize);
            discard_kept((cur & !TAGS) as *mut ffi::PyObject);
            return obj;
        }
        if cur == 0 {
            held.publish(obj as usize);
        } else if cur & TAGS == 0 {
            if tying_lock::try_incref(cur as *mut ffi::PyObject) {
                // Another wrapper was bound meanwhile: it stays the one.
                drop(held);
                ffi::Py_DECREF(obj);
                return cur as *mut ffi::PyObject;
            }
            // The bound wrapper is being torn down: its teardown will find
            // it is no longer canonical.
            held.publish(obj as usize);
        }
        // Moving (InTransit cannot be seen here, see `settled`): the new
        // wrapper stays unbound.
        obj
    }
}

/// Hold the binding once no teardown is half done on it (InTransit: the
/// dying wrapper's `tp_dealloc` has published its decision and its
/// `settle_teardown` has not settled it yet); the guard reads the settled word.
///
/// That window runs no Python code and takes no lock a lookup can hold
/// while waiting here (weakref callbacks run before it; the handle
/// reference it drops is not the last, since the waiting lookup owns one),
/// so on a free-threaded build the wait ends as soon as the tearing-down
/// thread is scheduled; waiting gives the thread state away meanwhile (a
/// stop-the-world collection can proceed). With the GIL the window cannot
/// be observed by another thread, nor by this one (no code runs inside it).
///
/// # Safety
/// GIL held; `b` is the binding of a live handle.
unsafe fn settled<'b, 'a>(b: &'b Binding<'a>) -> Locked<'b, 'a> {
    loop {
        let held = b.lock();
        if held.word() & TRANSIT == 0 || cfg!(not(Py_GIL_DISABLED)) {
            return held;
        }
        drop(held);
        // SAFETY: GIL held, per the caller; taken back before continuing.
        unsafe {
            let ts = ffi::PyEval_SaveThread();
            std::thread::yield_now();
            crate::tie::exit_park::restore_thread(ts);
        }
    }
}

/// A new wrapper of `cls` owning the caller's +1 on `h`, bound to nothing
/// and never canonical: its death releases the +1 and leaves the binding
/// alone (the wrapper a `String`/`Bytes` value keeps). A new reference, or
/// NULL with the Python exception set (the +1 released).
///
/// # Safety
/// As for [`make_ret_object`].
pub unsafe fn untied_wrapper(h: *mut TVMFFIObject, cls: *mut ffi::PyTypeObject) -> *mut ffi::PyObject {
    // SAFETY: per the caller.
    unsafe { fresh_wrapper(h, cls) }
}

/// A new wrapper of `cls` owning the caller's +1 on `h`, not bound.
///
/// # Safety
/// As for [`make_ret_object`].
unsafe fn fresh_wrapper(h: *mut TVMFFIObject, cls: *mut ffi::PyTypeObject) -> *mut ffi::PyObject {
    // SAFETY: per the caller.
    unsafe {
        let alloc = (*cls).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
        let obj = alloc(cls, 0);
        if obj.is_null() {
            TVMFFIObjectDecRef(h as *mut c_void);
            return ptr::null_mut();
        }
        (*(obj as *mut CObject)).chandle = h;
        obj
    }
}

// ---- moves ----------------------------------------------------------------------

/// Before `obj`'s handle is passed by move to a call that runs without the
/// GIL: pin the handle's storage (a weak reference) and, if `obj` is its
/// canonical wrapper, mark the binding Moving.
///
/// # Safety
/// GIL held; `obj` is a live wrapper owning +1 on `h`. Pair with [`end_move`].
pub unsafe fn begin_move(h: *mut TVMFFIObject, obj: *mut ffi::PyObject) {
    // SAFETY: per the caller; module invariants.
    unsafe {
        handle_pin::pin(h);
        let b = Binding::of(h);
        let held = b.lock();
        if held.word() == obj as usize {
            held.publish(obj as usize | MOVING);
        }
    }
}

/// After the call: if the callee left the handle in `obj`, `obj` is
/// canonical again; if it took it, the binding is cleared. Then the pin
/// is dropped (which may free the storage).
///
/// # Safety
/// GIL held; pairs with [`begin_move`] for the same `h` and `obj`.
pub unsafe fn end_move(h: *mut TVMFFIObject, obj: *mut ffi::PyObject) {
    // SAFETY: per the caller; the pin keeps the word readable.
    unsafe {
        let b = Binding::of(h);
        let held = b.lock();
        let taken = (*(obj as *mut CObject)).chandle.is_null();
        let cur = held.word();
        if cur == obj as usize | MOVING {
            held.publish(if taken { 0 } else { obj as usize });
        } else if cur == 0 && !taken {
            held.publish(obj as usize);
        } else {
            drop(held);
        }
        handle_pin::unpin(h);
    }
}

/// The callee side of a move: take the handle out of an rvalue-reference
/// slot. If the slot is the handle field of the wrapper whose move is in
/// flight (Moving), that wrapper stops being canonical here, so the
/// wrapper made for the taken handle can become the canonical one.
///
/// # Safety
/// GIL held; `slot` is a valid rvalue-reference slot.
pub unsafe fn take_moved(slot: *mut *mut TVMFFIObject) -> *mut TVMFFIObject {
    // SAFETY: per the caller; the taken +1 keeps `h` (and its binding) alive.
    unsafe {
        let h = ptr::replace(slot, ptr::null_mut());
        if !h.is_null() {
            let b = Binding::of(h);
            let held = b.lock();
            let cur = held.word();
            let owner = (cur & !TAGS) as *mut CObject;
            if cur & MOVING != 0 && ptr::addr_of_mut!((*owner).chandle) == slot {
                held.publish(0);
            }
        }
        h
    }
}

/// Replace `from` with `to` in `h`'s binding, if it holds `from`.
///
/// # Safety
/// GIL held; `h` live.
unsafe fn rebind(h: *mut TVMFFIObject, from: usize, to: usize) {
    // SAFETY: per the caller.
    let b = unsafe { Binding::of(h) };
    let held = b.lock();
    if held.word() == from {
        held.publish(to);
    }
}

/// Bind `obj` as the canonical wrapper of `h` if it has none (construction
/// by handle, pickle, a move that the callee did not consume).
///
/// # Safety
/// GIL held; `obj` is a live wrapper owning +1 on `h`.
pub unsafe fn bind_if_detached(h: *mut TVMFFIObject, obj: *mut ffi::PyObject) {
    // SAFETY: per the caller.
    unsafe { rebind(h, 0, obj as usize) }
}

/// A handle moving from wrapper `from` to the handle-less wrapper `to`
/// (`Object.__move_handle_from__`): `to` takes over the binding if `from`
/// held it, or becomes canonical if the handle had no wrapper. Returns
/// false, changing nothing, while `from`'s handle is being moved into a
/// running call (Moving). Set `to`'s handle before and clear `from`'s
/// after, so no lookup finds a canonical wrapper without a handle.
///
/// # Safety
/// GIL held; `from` is a live wrapper owning +1 on `h`; `to` a live
/// wrapper whose handle field already holds `h`.
pub unsafe fn move_binding(h: *mut TVMFFIObject, from: *mut ffi::PyObject, to: *mut ffi::PyObject) -> bool {
    // SAFETY: per the caller; module invariants.
    unsafe {
        let b = Binding::of(h);
        let held = settled(&b);
        let cur = held.word();
        if cur == from as usize | MOVING {
            return false;
        }
        if cur == from as usize || cur == 0 {
            held.publish(to as usize);
        }
        true
    }
}

/// Re-initialisation (`__init__` run again on a live wrapper): `obj` is
/// about to give up `h` for a new handle, so its binding to `h` is cleared
/// if it holds one; `h` gets a fresh wrapper if it is returned later.
/// Returns false, changing nothing, while `obj`'s handle is being moved
/// into a running call (Moving).
///
/// # Safety
/// GIL held; `obj` is a live wrapper owning +1 on `h`.
pub unsafe fn release_binding(h: *mut TVMFFIObject, obj: *mut ffi::PyObject) -> bool {
    // SAFETY: per the caller; module invariants.
    unsafe {
        let b = Binding::of(h);
        let held = settled(&b);
        let cur = held.word();
        if cur == obj as usize | MOVING {
            return false;
        }
        if cur == obj as usize {
            held.publish(0);
        }
        true
    }
}

/// Before a wrapper's handle is moved out: unbind it if canonical.
///
/// # Safety
/// GIL held; `obj` is a live wrapper owning +1 on `h`.
pub unsafe fn detach(h: *mut TVMFFIObject, obj: *mut ffi::PyObject) {
    // SAFETY: per the caller.
    unsafe { rebind(h, obj as usize, 0) }
}

/// The state of `h`'s binding, the wrapper it names, and whether it lives
/// in the side table (for tests and debugging).
///
/// # Safety
/// GIL held; `h` live.
pub unsafe fn state_of(h: *mut TVMFFIObject) -> (&'static str, usize, bool) {
    // SAFETY: per the caller.
    let b = unsafe { Binding::of(h) };
    let cur = b.lock().word();
    let name = match cur & TAGS {
        _ if cur == 0 => "Detached",
        0 => "Active",
        INACTIVE => "Inactive",
        MOVING => "Moving",
        _ => "InTransit",
    };
    (name, cur & !TAGS, b.is_side())
}

/// Whether wrappers of `tp` may keep their memory for revival.
///
/// Instance dicts and `__del__` are no obstacle: by the time our
/// `tp_dealloc` runs, CPython's `subtype_dealloc` has run the finalizer and
/// cleared the dict and slots, and revival clears the finalized mark (GC
/// types; CPython marks no other object finalized). Only the legacy
/// `tp_del` (no PEP 442 bookkeeping) keeps a type out.
///
/// # Safety
/// `tp` must be a live type object.
#[allow(unpredictable_function_pointer_comparisons)]
pub unsafe fn eligible(tp: *mut ffi::PyTypeObject) -> bool {
    // SAFETY: reading type slots.
    unsafe {
        (*tp).tp_free == Some(tp_free) && (*tp).tp_del.is_none()
    }
}
