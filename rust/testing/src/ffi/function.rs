//! FFI functions: Rust closures exposed through the packed calling
//! convention, calls of functions made anywhere in the process, and the
//! global registry.
//!
//! SAFETY invariants: the `self` pointer of a function made by
//! [`Function::from_closure`] is a `Box<Body>` owned by the function object
//! and freed by its deleter; the core calls `safe_call` with `num_args`
//! valid argument views and a result slot.

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;

use tether_sys::abi::{type_index as ti, TVMFFIAny, TVMFFIByteArray, TVMFFIFunctionCell, TVMFFIMethodInfo, TVMFFIObject};

use super::any::{Any, AnyView};
use super::bytes::byte_array;
use super::error::Error;
use super::object::ObjectRef;
use crate::core_api::api;

type Body = Box<dyn Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static>;

/// An `ffi.Function` object.
#[derive(Clone)]
pub struct Function(ObjectRef);

unsafe extern "C" fn call_body(handle: *mut c_void, args: *const TVMFFIAny, num_args: i32, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: `handle` is our boxed body and the arguments are valid views
    // for the call (module invariant).
    let (body, views) = unsafe {
        let body = &*(handle as *const Body);
        let raw = if num_args <= 0 || args.is_null() { &[][..] } else { std::slice::from_raw_parts(args, num_args as usize) };
        (body, raw.iter().map(|a| AnyView::from_raw(a)).collect::<Vec<_>>())
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| body(&views)))
        .unwrap_or_else(|_| Err(Error::new("InternalError", "a testing function panicked")));
    match outcome {
        Ok(v) => {
            // SAFETY: the core hands a writable result slot holding no value.
            unsafe { result.write(v.into_raw()) };
            0
        }
        Err(e) => {
            e.raise();
            -1
        }
    }
}

unsafe extern "C" fn drop_body(handle: *mut c_void) {
    // SAFETY: the box made in `from_closure`, freed once by the core.
    drop(unsafe { Box::from_raw(handle as *mut Body) });
}

impl Function {
    /// A function running `body` on its arguments.
    pub fn from_closure<F>(body: F) -> Result<Function, Error>
    where
        F: Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static,
    {
        let boxed: Box<Body> = Box::new(Box::new(body));
        let handle = Box::into_raw(boxed) as *mut c_void;
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: our trampoline and deleter for the box; on failure the
        // core does not take the box, so we free it.
        let rc = unsafe { (api().TVMFFIFunctionCreate)(handle, Some(call_body), Some(drop_body), &mut out) };
        if rc != 0 {
            // SAFETY: not taken by the core.
            unsafe { drop_body(handle) };
            return Err(Error::take_raised());
        }
        let p = NonNull::new(out as *mut TVMFFIObject).ok_or_else(|| Error::runtime_error("TVMFFIFunctionCreate returned NULL"))?;
        // SAFETY: a new function whose reference we own.
        Ok(Function(unsafe { ObjectRef::from_raw_owned(p) }))
    }

    /// The function an object is, if it is one.
    pub fn from_object(o: ObjectRef) -> Option<Function> {
        (o.type_index() == ti::kTVMFFIFunction).then_some(Function(o))
    }

    pub fn object(&self) -> &ObjectRef {
        &self.0
    }

    pub fn into_any(self) -> Any {
        Any::object(self.0)
    }

    /// Call with borrowed arguments: the function's `safe_call` directly,
    /// as TVM-FFI's C++ headers call it (native code calling native code
    /// does not go through `TVMFFIFunctionCall`, the entry other languages
    /// use, where backtraces stop).
    pub fn call_views(&self, args: &[AnyView<'_>]) -> Result<Any, Error> {
        let mut raw: Vec<TVMFFIAny> = args.iter().map(|a| *a.raw()).collect();
        let mut out = TVMFFIAny::NONE;
        let h = self.0.as_ptr();
        // SAFETY: a live object; a Function's cell follows its header.
        let safe_call = unsafe {
            ((*h).type_index == ti::kTVMFFIFunction)
                .then(|| (*((h as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFIFunctionCell)).safe_call)
                .flatten()
        };
        // SAFETY: a live function, argument views alive for the call and a
        // result slot; the result is owned.
        let rc = unsafe {
            match safe_call {
                Some(call) => call(h.cast(), raw.as_mut_ptr(), raw.len() as i32, &mut out),
                None => (api().TVMFFIFunctionCall)(h.cast(), raw.as_mut_ptr(), raw.len() as i32, &mut out),
            }
        };
        Error::check(rc)?;
        // SAFETY: the call wrote an owned value.
        Ok(unsafe { Any::from_raw_owned(out) })
    }

    /// Call with owned arguments (lent for the call).
    pub fn call(&self, args: &[Any]) -> Result<Any, Error> {
        let views: Vec<AnyView<'_>> = args.iter().map(Any::view).collect();
        self.call_views(&views)
    }

    /// The global function `name`, if registered.
    pub fn get_global(name: &str) -> Option<Function> {
        let n = TVMFFIByteArray { data: name.as_ptr().cast(), size: name.len() };
        let mut out: *mut c_void = std::ptr::null_mut();
        // SAFETY: a valid name and output slot; a found function comes with
        // a reference for us.
        let rc = unsafe { (api().TVMFFIFunctionGetGlobal)(&n, &mut out) };
        if rc != 0 {
            drop(Error::take_raised());
            return None;
        }
        // SAFETY: as above.
        NonNull::new(out as *mut TVMFFIObject).map(|p| Function(unsafe { ObjectRef::from_raw_owned(p) }))
    }

    /// The global function `name`, or an error naming it.
    pub fn get_global_required(name: &str) -> Result<Function, Error> {
        Function::get_global(name).ok_or_else(|| Error::value_error(format!("global function `{name}` is not registered")))
    }

    /// Register as the global `name` with its doc and metadata (JSON); an
    /// existing name is an error unless `allow_override`.
    pub fn register_global(&self, name: &str, doc: &str, metadata: &str, allow_override: bool) -> Result<(), Error> {
        // Lent to the registry for the call (it takes its own reference).
        let method = Any::object(self.0.clone());
        let info = TVMFFIMethodInfo {
            name: byte_array(name),
            doc: byte_array(doc),
            metadata: byte_array(metadata),
            flags: 0,
            method: *method.as_raw(),
        };
        // SAFETY: valid strings and a live function for the call.
        Error::check(unsafe { (api().TVMFFIFunctionSetGlobalFromMethodInfo)(&info, allow_override as c_int) })
    }
}
