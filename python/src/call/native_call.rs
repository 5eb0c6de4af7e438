//! Python calling native functions: arguments as borrowed views, the GIL
//! released around the native part, the result back through the one return
//! path.
//!
//! SAFETY invariants of this module: every function runs with the GIL held;
//! argument pointers are kept alive by the caller (a vectorcall's array or a
//! tuple) for the whole call; a wrapper's `borrows` count is raised for
//! every call passing its handle as a view and lowered after it.

use std::ffi::{c_int, c_void};
use std::ptr;
use std::sync::atomic::Ordering;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::ffi;
use tether_sys::abi::{type_index as ti, TVMFFIAny, TVMFFIAnyValue, TVMFFIFunctionCell, TVMFFIObject};
use tether_sys::*;

use crate::convert::arg_buffer::{keep, take_kept, Shared, StackVec};
use crate::convert::dlpack::exchange_out::{convert_back, note_wrapper_argument, CallScope};
use crate::convert::error_bridge::check;
use crate::convert::ffi_to_py::any_to_py;
use crate::convert::owned_any::OwnedAny;
use crate::convert::py_to_ffi::plain_value_ptr;
use crate::convert::py_to_ffi::py_to_any;
use crate::convert::py_to_ffi::py_to_any_other;
use crate::convert::registry;
use crate::convert::wrapper_access::handle_of;
use crate::convert::wrapper_access::type_name;
use crate::tie::{exit_park, release_pool};
use crate::tie::tie_state::{self, CObject};
use crate::convert::error_bridge::result_into_ptr;

/// Call an FFI function with Python arguments, releasing the GIL for the
/// native part.
///
/// Wrappers cross as borrowed views (no reference count touched, as
/// TVM-FFI passes `AnyView`s): the argument tuple keeps each wrapper alive
/// and the wrapper's `borrows` count keeps its handle from being moved out
/// by another thread meanwhile. Arguments made with `x._move()` cross as
/// rvalue references to `x`'s handle slot; the binding is Moving during the
/// call and settles afterwards whether or not the callee took the handle.
/// Every conversion that can fail happens before any of this state changes.
pub fn call_function(py: Python<'_>, f: *mut TVMFFIObject, args: &Bound<'_, PyTuple>, release_gil: bool) -> PyResult<Py<PyAny>> {
    // SAFETY: a tuple's items, alive as long as the tuple.
    let items = unsafe { std::slice::from_raw_parts((*(args.as_ptr() as *mut ffi::PyTupleObject)).ob_item.as_ptr(), args.len()) };
    call_function_args(py, f, items, release_gil)
}

/// [`call_function`] on borrowed argument pointers (a vectorcall's array
/// or a tuple's items), which the caller keeps alive for the call.
pub fn call_function_args(py: Python<'_>, f: *mut TVMFFIObject, args: &[*mut ffi::PyObject], release_gil: bool) -> PyResult<Py<PyAny>> {
    let r = call_function_raw(py, f, args, release_gil);
    if r.is_null() {
        Err(PyErr::fetch(py))
    } else {
        // SAFETY: a new reference.
        Ok(unsafe { Bound::from_owned_ptr(py, r).unbind() })
    }
}

/// [`call_function_args`] for a C entry point: a new reference, or NULL
/// with the Python exception set (the common call never builds a
/// `PyResult`, whose moves cost as much as the rest of the wrapping).
///
/// `release_gil`: whether the GIL is given away while the native function
/// runs (the Function wrapper's `release_gil`).
pub fn call_function_raw(py: Python<'_>, f: *mut TVMFFIObject, args: &[*mut ffi::PyObject], release_gil: bool) -> *mut ffi::PyObject {
    // Moves are rare and need the general path's bookkeeping; they are
    // found before anything is converted, so no argument is converted twice
    // (a conversion can have effects: a DLPack capsule is consumed).
    // SAFETY: the arguments are live (per the caller).
    if args.len() <= INLINE_ARGS && !args.iter().any(|&p| unsafe { crate::convert::rvalue_ref::is_rvalue_ref_ptr(p) }) {
        return call_without_moves(py, f, args, release_gil);
    }
    result_into_ptr(py, call_general(py, f, args, release_gil))
}

/// The most arguments [`call_without_moves`] takes.
const INLINE_ARGS: usize = 8;

/// The common call: up to [`INLINE_ARGS`] arguments, none of them a move.
/// It is [`call_general`] without the bookkeeping moves need: views on the
/// stack, uninitialised until written, and which of them are owned in a
/// bit mask. Plain values (None, an exact int that fits, a float, a bool)
/// and wrappers are checked first and cross as views; anything else is
/// converted by `py_to_any_other` into an owned value, released after the
/// call (or at once when a later conversion fails, before any state
/// changed).
fn call_without_moves(py: Python<'_>, f: *mut TVMFFIObject, args: &[*mut ffi::PyObject], release_gil: bool) -> *mut ffi::PyObject {
    let mut views = InlineViews { views: [std::mem::MaybeUninit::uninit(); INLINE_ARGS], owned: 0 };
    let mut borrowed = [std::mem::MaybeUninit::<*mut CObject>::uninit(); INLINE_ARGS];
    let mut n_borrowed = 0;
    let scope = CallScope::enter();
    for (i, &p) in args.iter().enumerate() {
        // SAFETY: the caller keeps every argument alive for the call; a
        // wrapper has the CObject layout.
        let v = unsafe {
            if let Some(v) = plain_value_ptr(p) {
                v
            } else if registry::is_wrapper_ptr(py, p) {
                let h = match handle_of(&pyo3::Borrowed::from_ptr(py, p)) {
                    Ok(h) => h,
                    Err(e) => return result_into_ptr(py, Err(e)), // moved from
                };
                borrowed[n_borrowed].write(p as *mut CObject);
                n_borrowed += 1;
                note_wrapper_argument(p);
                TVMFFIAny { type_index: (*h).type_index, small_str_len: 0, value: TVMFFIAnyValue { v_obj: h } }
            } else if let Some(h) = crate::convert::dlpack::tensor_import::TensorTypeMemo::convert_ndarray_arg(py, p) {
                if h.is_null() {
                    return ptr::null_mut(); // the exception is set
                }
                views.owned |= 1 << i;
                TVMFFIAny { type_index: ti::kTVMFFITensor, small_str_len: 0, value: TVMFFIAnyValue { v_obj: h } }
            } else {
                match py_to_any_other(py, &pyo3::Borrowed::from_ptr(py, p)) {
                    Ok(v) => {
                        views.owned |= 1 << i;
                        v.into_raw()
                    }
                    Err(e) => return result_into_ptr(py, Err(e)),
                }
            }
        };
        views.views[i].write(v);
    }
    let api = scope.arguments_done();
    // SAFETY: the first `n_borrowed` entries were written above.
    let borrowed = unsafe { std::slice::from_raw_parts(borrowed.as_ptr() as *const *mut CObject, n_borrowed) };
    // SAFETY: GIL held; the wrappers are alive (the caller holds them).
    unsafe {
        for &b in borrowed {
            borrow(b);
        }
    }
    let mut result = TVMFFIAny::NONE;
    let call = NativeCall { f, args: views.views.as_mut_ptr() as *mut TVMFFIAny, n: args.len() as i32, result: &mut result };
    let rc = call.run(py, release_gil);
    // SAFETY: GIL held; pairs with the increments above.
    unsafe {
        for &b in borrowed {
            unborrow(b);
        }
    }
    views.release(); // in place: dropping the struct by value would copy it
    if rc != 0 {
        return result_into_ptr(py, Err(crate::convert::error_bridge::take_ffi_error(py)));
    }
    // SAFETY: GIL held; we own the result.
    let r = unsafe { result_to_py(py, result) };
    if api == 0 || r.is_null() {
        return r;
    }
    // SAFETY: a new reference.
    result_into_ptr(py, convert_back(py, api, unsafe { Bound::from_owned_ptr(py, r).unbind() }))
}

/// An owned call result as a new reference (NULL with the exception set):
/// plain values directly, everything else through `any_to_py`.
///
/// # Safety
/// GIL held; the caller owns `result`.
unsafe fn result_to_py(py: Python<'_>, result: TVMFFIAny) -> *mut ffi::PyObject {
    // SAFETY: per the caller; the union is read per the type index.
    unsafe {
        match result.type_index {
            ti::kTVMFFINone => {
                let none = ffi::Py_None();
                ffi::Py_INCREF(none);
                none
            }
            ti::kTVMFFIInt => ffi::PyLong_FromLongLong(result.value.v_int64),
            ti::kTVMFFIFloat => ffi::PyFloat_FromDouble(result.value.v_float64),
            ti::kTVMFFIBool => ffi::PyBool_FromLong((result.value.v_int64 != 0) as _),
            _ => result_into_ptr(py, any_to_py(py, OwnedAny(result))),
        }
    }
}

/// The argument views of [`call_without_moves`]; bit `i` of `owned` says
/// view `i` was written and holds a reference of ours, released on drop.
struct InlineViews {
    views: [std::mem::MaybeUninit<TVMFFIAny>; INLINE_ARGS],
    owned: u8,
}

impl InlineViews {
    /// Release the owned views (once: their bits are cleared).
    fn release(&mut self) {
        let mut owned = std::mem::take(&mut self.owned);
        while owned != 0 {
            let i = owned.trailing_zeros() as usize;
            owned &= owned - 1;
            // SAFETY: an owned view is written before its bit is set.
            drop(OwnedAny(unsafe { self.views[i].assume_init() }));
        }
    }
}

impl Drop for InlineViews {
    fn drop(&mut self) {
        self.release();
    }
}

/// A running call passes `o`'s handle as a view: it must not be moved out
/// meanwhile. The count changes only with the GIL held (an attached thread
/// state on free-threaded builds, where other threads' calls change it
/// concurrently, hence the atomic increment there); with the GIL a load and
/// a store suffice, sparing a locked instruction per wrapper argument.
///
/// # Safety
/// GIL held; `o` a live wrapper. Pair with [`unborrow`].
#[inline]
unsafe fn borrow(o: *mut CObject) {
    // SAFETY: per the caller.
    let b = unsafe { &(*o).borrows };
    #[cfg(Py_GIL_DISABLED)]
    b.fetch_add(1, Ordering::AcqRel);
    #[cfg(not(Py_GIL_DISABLED))]
    b.store(b.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

/// Undo [`borrow`] once the call returned.
///
/// # Safety
/// GIL held; pairs with an earlier [`borrow`] of `o`.
#[inline]
unsafe fn unborrow(o: *mut CObject) {
    // SAFETY: per the caller.
    let b = unsafe { &(*o).borrows };
    #[cfg(Py_GIL_DISABLED)]
    b.fetch_sub(1, Ordering::AcqRel);
    #[cfg(not(Py_GIL_DISABLED))]
    b.store(b.load(Ordering::Relaxed) - 1, Ordering::Relaxed);
}

/// Any call: arguments converted into owned values where needed, moves.
fn call_general(py: Python<'_>, f: *mut TVMFFIObject, args: &[*mut ffi::PyObject], release_gil: bool) -> PyResult<Py<PyAny>> {
    // Views and which of them we own (released by the guard), inline for
    // up to 8 arguments.
    if i32::try_from(args.len()).is_err() {
        return Err(PyValueError::new_err(format!("too many arguments for one call: {}", args.len())));
    }
    let mut views = ArgViews::for_args(args.len());
    let mut borrowed: StackVec<*mut CObject, 8> = StackVec::new(ptr::null_mut());
    let mut moved: Vec<(usize, Bound<'_, PyAny>, *mut TVMFFIObject)> = Vec::new();
    let scope = CallScope::enter();
    for &p in args {
        // SAFETY: the caller keeps every argument alive for the call.
        let a = unsafe { pyo3::Borrowed::from_ptr(py, p) };
        let a: &Bound<'_, PyAny> = &a;
        // SAFETY: a live object.
        if let Some(v) = unsafe { plain_value_ptr(p) } {
            views.push(v, false);
        } else if registry::is_wrapper(a) {
            let h = handle_of(a)?;
            // SAFETY: live handle; the wrapper owns +1 for the whole call.
            let index = unsafe { (*h).type_index };
            views.push(TVMFFIAny { type_index: index, small_str_len: 0, value: TVMFFIAnyValue { v_obj: h } }, false);
            borrowed.push(a.as_ptr() as *mut CObject);
            // SAFETY: a live wrapper.
            unsafe { note_wrapper_argument(p) };
        } else if let Some(r) = crate::convert::rvalue_ref::as_rvalue_ref(a) {
            let target = r.get().target.bind(py).clone();
            let h = handle_of(&target)?;
            moved.push((views.views.len(), target, h));
            views.push(TVMFFIAny::NONE, false); // filled in once nothing can fail
        } else {
            let v = py_to_any(py, a)?;
            views.push(v.into_raw(), true);
        }
    }
    let api = scope.arguments_done();
    let borrowed = borrowed.as_slice();
    for (_, target, _) in &moved {
        let o = target.as_ptr() as *mut CObject;
        // SAFETY: RValueRef only holds wrappers (checked at construction).
        if borrowed.contains(&o) || unsafe { (*o).borrows.load(std::sync::atomic::Ordering::Acquire) } > 0 {
            return Err(PyValueError::new_err(format!(
                "cannot move a {} object that is also passed by reference (in this call or one still running)",
                type_name(target)
            )));
        }
    }
    if moved.iter().enumerate().any(|(i, (_, t, _))| moved[..i].iter().any(|(_, u, _)| u.is(t))) {
        return Err(PyValueError::new_err("the same object is moved twice in one call"));
    }
    // SAFETY: GIL held; the wrappers are alive (the tuple holds them) and
    // own +1 on their handles, which stays so until the settling below.
    unsafe {
        for &b in borrowed {
            borrow(b);
        }
        for (i, target, h) in &moved {
            tie_state::begin_move(*h, target.as_ptr());
            let slot = ptr::addr_of_mut!((*(target.as_ptr() as *mut CObject)).chandle);
            views.views.as_mut_slice()[*i] = TVMFFIAny {
                type_index: ti::kTVMFFIObjectRValueRef,
                small_str_len: 0,
                value: TVMFFIAnyValue { v_ptr: slot as *mut c_void },
            };
        }
    }
    let mut result = TVMFFIAny::NONE;
    // The GIL is released only around the native call; callbacks into
    // Python take it back through `py_safe_call`.
    let slice = views.views.as_mut_slice();
    let call = NativeCall { f, args: slice.as_mut_ptr(), n: slice.len() as i32, result: &mut result };
    let rc = call.run(py, release_gil);
    // SAFETY: GIL held; pairs with the state changes above.
    unsafe {
        for (_, target, h) in &moved {
            tie_state::end_move(*h, target.as_ptr());
        }
        for &b in borrowed {
            unborrow(b);
        }
    }
    drop(views);
    check(py, rc)?;
    convert_back(py, api, any_to_py(py, OwnedAny(result))?)
}

/// A call's argument views; the ones converted for the call are owned and
/// released on drop.
struct ArgViews {
    views: StackVec<TVMFFIAny, 8>,
    owned: StackVec<bool, 8>,
}

thread_local! {
    /// The heap buffers of the last long argument list on this thread
    /// (views and their owned flags), kept for the next one.
    static SPILL_VIEWS: std::cell::Cell<Option<Vec<TVMFFIAny>>> = const { std::cell::Cell::new(None) };
    static SPILL_OWNED: std::cell::Cell<Option<Vec<bool>>> = const { std::cell::Cell::new(None) };
}
/// The large spill buffers kept for the process.
static SHARED_VIEWS: Shared<TVMFFIAny> = Shared::new();
static SHARED_OWNED: Shared<bool> = Shared::new();

impl ArgViews {
    /// Buffers for `n` arguments: inline ones for a few, else the thread's
    /// kept spill (a call made while another runs on this thread, from a
    /// callback, finds none and allocates its own).
    fn for_args(n: usize) -> ArgViews {
        if n <= 8 {
            return ArgViews { views: StackVec::new(TVMFFIAny::NONE), owned: StackVec::new(false) };
        }
        ArgViews {
            views: StackVec::with_spill(TVMFFIAny::NONE, take_kept(&SPILL_VIEWS, &SHARED_VIEWS, n)),
            owned: StackVec::with_spill(false, take_kept(&SPILL_OWNED, &SHARED_OWNED, n)),
        }
    }

    fn push(&mut self, v: TVMFFIAny, owned: bool) {
        self.views.push(v);
        self.owned.push(owned);
    }
}

impl Drop for ArgViews {
    fn drop(&mut self) {
        for (v, &owned) in self.views.as_slice().iter().zip(self.owned.as_slice()) {
            if owned {
                drop(OwnedAny(*v));
            }
        }
        keep(&SPILL_VIEWS, &SHARED_VIEWS, self.views.take_spill());
        keep(&SPILL_OWNED, &SHARED_OWNED, self.owned.take_spill());
    }
}

/// One native call, made with the GIL released unless the Function asks
/// to keep it (`release_gil = False`).
struct NativeCall {
    f: *mut TVMFFIObject,
    args: *mut TVMFFIAny,
    n: i32,
    result: *mut TVMFFIAny,
}

/// Native backtraces taken in a call made from Python stop at
/// [`NativeCall::run`], which calls `safe_call` directly, as they stop at
/// `TVMFFIFunctionCall`: the frames above it are the interpreter's.
pub fn register_backtrace_boundary(py: Python<'_>) -> PyResult<()> {
    let run: for<'py> fn(NativeCall, Python<'py>, bool) -> c_int = NativeCall::run;
    // SAFETY: the address of a function of this library, which lives as
    // long as the process keeps the extension.
    let rc = unsafe { tether_sys::TetherFFIBacktraceAddBoundary(run as *const c_void) };
    check(py, rc)
}

impl NativeCall {
    /// Run the call, giving the GIL away meanwhile if `release_gil`. Not
    /// pyo3's `Python::detach`: a daemon thread taking the GIL back at
    /// interpreter exit must park in `exit_park`'s frame rather than be
    /// unwound through Rust frames. Python code this thread runs meanwhile
    /// (callbacks, deleters) takes the GIL itself (`tether_park_callback`,
    /// `exit_park::gil_ensure`), which also works when it was kept. Never
    /// inlined: its frame is where native backtraces stop.
    #[inline(never)]
    fn run(self, _py: Python<'_>, release_gil: bool) -> c_int {
        // SAFETY: the GIL is held (the token proves it) and, if given away,
        // taken back on this thread before returning; the pointers are
        // valid (see the Send impl).
        unsafe {
            // A Function's cell follows its header (the C ABI's layout;
            // TVM-FFI's headers call `safe_call` from it inline too): call
            // it directly. `TVMFFIFunctionCall` would check the handle, the
            // arguments and the result slot, all valid here, and then make
            // this very call. Anything unexpected takes it, to raise.
            let direct = if !self.f.is_null() && (*self.f).type_index == ti::kTVMFFIFunction {
                let cell = &*((self.f as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFIFunctionCell);
                cell.safe_call.filter(|_| !self.result.is_null() && self.n >= 0 && (self.n == 0 || !self.args.is_null()))
            } else {
                None
            };
            let ts = if release_gil { ffi::PyEval_SaveThread() } else { ptr::null_mut() };
            let rc = match direct {
                Some(call) => call(self.f as *mut c_void, self.args, self.n, self.result),
                None => TVMFFIFunctionCall(self.f as *mut c_void, self.args, self.n, self.result),
            };
            if release_gil {
                exit_park::restore_thread(ts);
            }
            // Releases other threads parked meanwhile (GIL held again).
            release_pool::drain_with_gil();
            rc
        }
    }
}
