//! tether-cxx-bridge: Rust and C++ written with tether's header-only layer,
//! in one process on one shared core.
//!
//! Rust calls the C++ half (`src/bridge.cc`) through `cxx`; the C++ side
//! allocates with `tether::make_object` (through the allocator registry,
//! where a counting allocator installed from C++ sees it). Rust sees those
//! objects through `tether-sys` (feature `link`: the shared core, reached
//! through its function table): their type, their reflected fields read
//! with the registry's getters, and their release. C++ calls back into Rust
//! functions registered as globals ([`register_global`]).
//!
//! SAFETY invariants of this module: an [`Object`] owns one strong
//! reference on a live object handle; field getters come from the type
//! registry and are called with the address of a field of a live object of
//! that type; a registered Rust global's `self_` is a leaked `Box` of its
//! closure, freed once by the core through [`drop_closure`].

use std::ffi::{c_void, CString};
use std::ptr;

use tether_sys::abi::{type_index as ti, TVMFFIAny, TVMFFIAnyValue, TVMFFIByteArray, TVMFFIObject};

#[cxx::bridge(namespace = "tether_bridge")]
pub mod ffi {
    unsafe extern "C++" {
        include!("tether-cxx-bridge/include/bridge.h");

        /// A new `bridge.Counter` made by C++'s `make_object`, as an owned handle.
        fn make_counter(value: i64, label: &str) -> usize;
        fn counter_type_index() -> i32;
        fn install_counting_allocator() -> Result<()>;
        fn restore_builtin_allocator() -> Result<()>;
        fn allocations() -> usize;
        fn frees() -> usize;
        /// C++ looks up the global `name` and calls it with `x`.
        fn call_global(name: &str, x: i64) -> Result<i64>;
        /// C++ calls the global `name` with a C++ function (x * factor) and `x`.
        fn call_global_with_callback(name: &str, factor: i64, x: i64) -> Result<i64>;
    }
}

/// An owned object handle (one strong reference), released on drop.
pub struct Object(*mut TVMFFIObject);

impl Object {
    /// Adopt an owned handle as C++ returns it.
    ///
    /// # Safety
    /// `handle` must be a live object on which the caller owns one strong reference.
    pub unsafe fn from_owned_handle(handle: usize) -> Object {
        Object(handle as *mut TVMFFIObject)
    }

    pub fn type_index(&self) -> i32 {
        // SAFETY: module invariant: a live object.
        unsafe { (*self.0).type_index }
    }

    pub fn type_key(&self) -> String {
        // SAFETY: the registry's type info lives for the process.
        unsafe {
            let info = tether_sys::TVMFFIGetTypeInfo(self.type_index());
            if info.is_null() {
                return String::new();
            }
            bytes(&(*info).type_key)
        }
    }

    /// Whether the object came from the allocator registry (so a frontend
    /// may read its allocation header).
    pub fn registry_allocated(&self) -> bool {
        // SAFETY: module invariant: a live object.
        unsafe { (*self.0).__padding & tether_sys::abi::MARKER_REGISTRY_ALLOCATED != 0 }
    }

    /// Reads the reflected field `name` through the registry's getter.
    pub fn field(&self, name: &str) -> Option<Value> {
        // SAFETY: the type info and its field records live for the process;
        // the getter is called on the field of this live object.
        unsafe {
            let info = tether_sys::TVMFFIGetTypeInfo(self.type_index());
            if info.is_null() {
                return None;
            }
            let fields = std::slice::from_raw_parts((*info).fields, (*info).num_fields as usize);
            let f = fields.iter().find(|f| bytes(&f.name) == name)?;
            let getter = f.getter?;
            let mut out = TVMFFIAny::NONE;
            if getter((self.0 as *mut u8).add(f.offset as usize) as *mut c_void, &mut out) != 0 {
                return None;
            }
            Some(Value::from_owned(out))
        }
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        // SAFETY: module invariant: we own one strong reference.
        unsafe { tether_sys::TVMFFIObjectDecRef(self.0 as *mut c_void) };
    }
}

/// The values a field reads as, for the tests' purposes.
#[derive(Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Str(String),
    Other(i32),
}

impl Value {
    /// # Safety
    /// `v` must be an owned value; it is consumed.
    unsafe fn from_owned(v: TVMFFIAny) -> Value {
        // SAFETY: per the caller; the union member read matches type_index.
        unsafe {
            match v.type_index {
                ti::kTVMFFIInt => Value::Int(v.value.v_int64),
                ti::kTVMFFISmallStr => {
                    Value::Str(String::from_utf8_lossy(&v.value.v_bytes[..v.small_str_len as usize]).into_owned())
                }
                ti::kTVMFFIStr => {
                    let cell = (v.value.v_obj as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFIByteArray;
                    let s = bytes(&*cell);
                    tether_sys::TVMFFIObjectDecRef(v.value.v_obj as *mut c_void);
                    Value::Str(s)
                }
                other => {
                    if other >= ti::kTVMFFIStaticObjectBegin {
                        tether_sys::TVMFFIObjectDecRef(v.value.v_obj as *mut c_void);
                    }
                    Value::Other(other)
                }
            }
        }
    }
}

/// # Safety
/// `b` must describe readable bytes.
unsafe fn bytes(b: &TVMFFIByteArray) -> String {
    // SAFETY: per the caller.
    String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(b.data as *const u8, b.size) }).into_owned()
}

type IntFn = Box<dyn Fn(&[i64], &dyn Fn(usize, i64) -> Result<i64, String>) -> Result<i64, String> + Send + Sync>;

unsafe extern "C" fn call_closure(self_: *mut c_void, args: *const TVMFFIAny, num_args: i32, result: *mut TVMFFIAny) -> i32 {
    // SAFETY: module invariant for `self_`; the caller passes `num_args` values.
    let (f, args) = unsafe { (&*(self_ as *const IntFn), std::slice::from_raw_parts(args, num_args.max(0) as usize)) };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut ints = Vec::with_capacity(args.len());
        let mut funcs = Vec::new();
        for (i, a) in args.iter().enumerate() {
            match a.type_index {
                // SAFETY: an int value.
                ti::kTVMFFIInt => ints.push(unsafe { a.value.v_int64 }),
                // SAFETY: a Function object handle, borrowed for the call.
                ti::kTVMFFIFunction => funcs.push(unsafe { a.value.v_obj }),
                other => return Err(format!("argument {i}: expected int or Function, got type index {other}")),
            }
        }
        let call_back = |which: usize, x: i64| -> Result<i64, String> {
            let func = *funcs.get(which).ok_or("no such callback")?;
            let mut arg = TVMFFIAny { type_index: ti::kTVMFFIInt, small_str_len: 0, value: TVMFFIAnyValue { v_int64: x } };
            let mut out = TVMFFIAny::NONE;
            // SAFETY: a live Function held by our caller for the call.
            if unsafe { tether_sys::TVMFFIFunctionCall(func as *mut c_void, &mut arg, 1, &mut out) } != 0 {
                return Err("callback failed".into());
            }
            // SAFETY: an owned result; only ints are expected back.
            unsafe { (out.type_index == ti::kTVMFFIInt).then(|| out.value.v_int64).ok_or("callback returned no int".into()) }
        };
        f(&ints, &call_back)
    }));
    match outcome {
        Ok(Ok(v)) => {
            // SAFETY: the caller's result slot.
            unsafe { *result = TVMFFIAny { type_index: ti::kTVMFFIInt, small_str_len: 0, value: TVMFFIAnyValue { v_int64: v } } };
            0
        }
        Ok(Err(message)) => raise("ValueError", &message),
        Err(_) => raise("RuntimeError", "a Rust global panicked"),
    }
}

fn raise(kind: &str, message: &str) -> i32 {
    let kind = CString::new(kind).unwrap_or_default();
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: NUL-terminated strings, copied by the core.
    unsafe { tether_sys::TVMFFIErrorSetRaisedFromCStr(kind.as_ptr(), message.as_ptr()) };
    -1
}

unsafe extern "C" fn drop_closure(self_: *mut c_void) {
    // SAFETY: module invariant: the Box leaked by `register_global`, freed once.
    drop(unsafe { Box::from_raw(self_ as *mut IntFn) });
}

/// Registers a Rust function over ints as the global `name`. It receives
/// the int arguments and a way to call the Function arguments (by position
/// among them); an `Err` reaches the caller as a ValueError.
pub fn register_global<F>(name: &str, f: F) -> Result<(), String>
where
    F: Fn(&[i64], &dyn Fn(usize, i64) -> Result<i64, String>) -> Result<i64, String> + Send + Sync + 'static,
{
    let boxed: Box<IntFn> = Box::new(Box::new(f));
    let self_ = Box::into_raw(boxed) as *mut c_void;
    let mut handle: *mut c_void = ptr::null_mut();
    // SAFETY: a valid safe-call function and deleter for `self_`.
    if unsafe { tether_sys::TVMFFIFunctionCreate(self_, Some(call_closure), Some(drop_closure), &mut handle) } != 0 {
        // SAFETY: creation failed, so the core did not take `self_`.
        unsafe { drop_closure(self_) };
        return Err(format!("creating {name} failed"));
    }
    let n = TVMFFIByteArray { data: name.as_ptr() as *const _, size: name.len() };
    // SAFETY: a live Function handle we own; the registry takes its own reference.
    let rc = unsafe { tether_sys::TVMFFIFunctionSetGlobal(&n, handle, 0) };
    // SAFETY: we own the reference TVMFFIFunctionCreate returned.
    unsafe { tether_sys::TVMFFIObjectDecRef(handle) };
    if rc != 0 {
        return Err(format!("registering {name} failed"));
    }
    Ok(())
}
