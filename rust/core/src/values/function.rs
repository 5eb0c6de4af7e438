//! Function objects over the packed safe-call convention, and the global
//! function registry.
//!
//! A Function object is the header, the ABI's `TVMFFIFunctionCell`, then
//! what it calls: either a C callback with its own `self` pointer and
//! deleter (`TVMFFIFunctionCreate`) or a Rust closure. The cell's
//! `safe_call` is always [`trampoline`], which receives the Function object
//! itself as its handle.

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};


use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIFunctionCell, TVMFFIObject, TVMFFISafeCallType};
use crate::values::any::{Any, AnyView};
use crate::values::error::{self, Error};
use crate::object::{header_placeholder, ObjectPtr, ObjectRef, ObjectType};

/// The signature of a Rust function body.
pub type NativeFn = dyn Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync;

enum Body {
    Extern { self_: *mut c_void, safe_call: TVMFFISafeCallType, deleter: Option<unsafe extern "C" fn(*mut c_void)> },
    Native(Box<NativeFn>),
}

/// The Function object.
#[repr(C)]
pub struct FunctionObj {
    header: TVMFFIObject,
    cell: TVMFFIFunctionCell,
    body: Body,
}

// SAFETY: native bodies are Send + Sync; extern bodies are C callbacks whose
// `self` the ABI requires to be callable from any thread.
unsafe impl Send for FunctionObj {}
// SAFETY: as above.
unsafe impl Sync for FunctionObj {}

// SAFETY: repr(C), header first.
unsafe impl ObjectType for FunctionObj {
    const TYPE_KEY: &'static str = "ffi.Function";
    fn type_index() -> i32 {
        ti::kTVMFFIFunction
    }
}

impl Drop for FunctionObj {
    fn drop(&mut self) {
        if let Body::Extern { self_, deleter: Some(d), .. } = self.body {
            // SAFETY: the C side handed us `self_` with this deleter.
            unsafe { d(self_) }
        }
    }
}

/// Render a panic payload for an error message.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

unsafe extern "C" fn trampoline(handle: *mut c_void, args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: installed only on FunctionObj; the caller keeps it alive.
    let f = unsafe { &*(handle as *const FunctionObj) };
    match &f.body {
        // SAFETY: forwarding the caller's arguments to the C callback.
        Body::Extern { self_, safe_call, .. } => unsafe { safe_call(*self_, args, n, result) },
        Body::Native(body) => {
            // SAFETY: the caller passes `n` valid views alive for the call.
            let views = unsafe { AnyView::slice_from_raw(args, n.max(0) as usize) };
            match catch_unwind(AssertUnwindSafe(|| body(views))) {
                Ok(Ok(v)) => {
                    if !result.is_null() {
                        // SAFETY: the result slot is the caller's, set to None.
                        unsafe { *result = v.into_raw() };
                    }
                    0
                }
                Ok(Err(e)) => {
                    error::set_raised(e);
                    -1
                }
                Err(p) => {
                    error::set_raised(match p.downcast::<Error>() {
                        // An error thrown through code that cannot return it.
                        Ok(e) => *e,
                        Err(p) => Error::runtime_error(format!("panic in function: {}", panic_message(&*p))),
                    });
                    -1
                }
            }
        }
    }
}

/// An owning handle to a Function object.
#[derive(Clone)]
pub struct Function(pub(crate) ObjectRef);

impl Function {
    /// Wrap a Rust closure.
    pub fn from_closure<F>(f: F) -> Result<Function, Error>
    where
        F: Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static,
    {
        Self::make(Body::Native(Box::new(f)))
    }

    /// Wrap a C callback (`TVMFFIFunctionCreate`); `deleter(self_)` runs when
    /// the function dies.
    pub fn from_extern(
        self_: *mut c_void,
        safe_call: TVMFFISafeCallType,
        deleter: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> Result<Function, Error> {
        match Self::make(Body::Extern { self_, safe_call, deleter: None }) {
            Ok(f) => {
                // Attach the deleter only once the object exists, so a failed
                // allocation leaves `self_` with the caller.
                // SAFETY: we hold the only reference; nothing reads body yet.
                unsafe {
                    let obj = f.0.as_ptr() as *mut FunctionObj;
                    if let Body::Extern { deleter: d, .. } = &mut (*obj).body {
                        *d = deleter;
                    }
                }
                Ok(f)
            }
            Err(e) => Err(e),
        }
    }

    fn make(body: Body) -> Result<Function, Error> {
        let obj = ObjectPtr::new(FunctionObj {
            header: header_placeholder(),
            cell: TVMFFIFunctionCell { safe_call: Some(trampoline), cpp_call: std::ptr::null_mut() },
            body,
        })?;
        Ok(Function(obj.into_object_ref()))
    }

    /// View an object as a Function (TypeError if it is not one).
    pub fn from_object(obj: ObjectRef) -> Result<Function, Error> {
        if obj.type_index() == ti::kTVMFFIFunction {
            Ok(Function(obj))
        } else {
            Err(Error::type_error(format!(
                "expected ffi.Function, got {}",
                crate::types::type_registry::type_key_of(obj.type_index())
            )))
        }
    }

    pub fn as_object(&self) -> &ObjectRef {
        &self.0
    }

    pub fn into_object(self) -> ObjectRef {
        self.0
    }

    /// Call with owned arguments.
    pub fn call(&self, args: &[Any]) -> Result<Any, Error> {
        // SAFETY: Any is repr(transparent) over TVMFFIAny; args stay alive.
        unsafe { call_raw(self.0.as_ptr(), args.as_ptr() as *const TVMFFIAny, args.len() as i32) }
    }

    /// Call with views.
    pub fn call_views(&self, args: &[AnyView<'_>]) -> Result<Any, Error> {
        // SAFETY: AnyView is repr(transparent) over TVMFFIAny.
        unsafe { call_raw(self.0.as_ptr(), args.as_ptr() as *const TVMFFIAny, args.len() as i32) }
    }
}

/// Call any Function object's safe-call entry, turning failures into errors.
///
/// # Safety
/// `func` must be a live Function object and `args` must point to `n` valid
/// values (or `n == 0`).
pub unsafe fn call_raw(func: *mut TVMFFIObject, args: *const TVMFFIAny, n: i32) -> Result<Any, Error> {
    // SAFETY: the cell follows the header in every Function object.
    let cell = unsafe { &*((func as *mut u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFIFunctionCell) };
    let safe_call = cell.safe_call.ok_or_else(|| Error::runtime_error("function object has no safe_call"))?;
    let mut result = TVMFFIAny::NONE;
    // SAFETY: per the caller.
    let rc = unsafe { safe_call(func as *mut c_void, args, n, &mut result) };
    if rc == 0 {
        // SAFETY: on success the callee handed us an owned result.
        Ok(unsafe { Any::from_raw_owned(result) })
    } else {
        Err(error::take_raised_or_unknown(rc))
    }
}

/// Read argument `i` as a `T`, with an error that names the argument.
pub fn arg<T: crate::values::any::FromAny>(args: &[AnyView<'_>], i: usize, name: &str) -> Result<T, Error> {
    let v = args
        .get(i)
        .ok_or_else(|| Error::type_error(format!("missing argument {i} ({name}): got {} arguments", args.len())))?;
    v.get::<T>().map_err(|e| Error::new(e.kind(), format!("argument {i} ({name}): {}", e.message())))
}

/// Check an exact argument count.
pub fn expect_args(args: &[AnyView<'_>], n: usize, func: &str) -> Result<(), Error> {
    if args.len() != n {
        return Err(Error::type_error(format!("{func} expects {n} arguments, got {}", args.len())));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closures_call_and_report_errors() {
        let add = Function::from_closure(|args| {
            expect_args(args, 2, "add")?;
            Ok(Any::from(arg::<i64>(args, 0, "a")? + arg::<i64>(args, 1, "b")?))
        })
        .unwrap();
        assert_eq!(add.call(&[Any::from(2i64), Any::from(40i64)]).unwrap().get::<i64>().unwrap(), 42);
        let e = add.call(&[Any::from(1i64)]).unwrap_err();
        assert_eq!(e.kind(), "TypeError");
        assert!(e.message().contains("add expects 2 arguments, got 1"));
        let e = add.call(&[Any::from(1i64), Any::string("x").unwrap()]).unwrap_err();
        assert!(e.message().contains("argument 1 (b): expected int, got ffi.SmallStr"), "{}", e.message());
    }

    #[test]
    fn panics_become_errors() {
        let f = Function::from_closure(|_| panic!("boom")).unwrap();
        let e = f.call(&[]).unwrap_err();
        assert!(e.message().contains("boom"));
    }

    #[test]
    fn global_registry_lists_and_removes() {
        Function::register_global("test.fn.g1", |_| Ok(Any::from(1i64))).unwrap();
        assert!(Function::register_global("test.fn.g1", |_| Ok(Any::none())).is_err());
        let lister = Function::get_global("ffi.FunctionListGlobalNamesFunctor").unwrap();
        let functor = Function::from_object(lister.call(&[]).unwrap().as_object().unwrap()).unwrap();
        let n = functor.call(&[Any::from(-1i64)]).unwrap().get::<i64>().unwrap();
        let names: Vec<String> =
            (0..n).map(|i| functor.call(&[Any::from(i)]).unwrap().get::<String>().unwrap()).collect();
        assert!(names.contains(&"test.fn.g1".to_string()));
        assert!(Function::remove_global("test.fn.g1"));
        assert!(Function::get_global("test.fn.g1").is_none());
    }
}
