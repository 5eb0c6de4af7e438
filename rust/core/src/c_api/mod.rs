//! The exported C ABI (`TVMFFI*` symbols) and the API table: the top layer,
//! with `cxx_shim`. It may name every layer below, and no layer below names
//! it. The ABI groups (`big_int`, `dlpack`, `env`, `module`) share the
//! panic guard (`guard`) and the argument checks (`checked_args`), never
//! this module.
//!
//! Every entry point validates its arguments, catches Rust panics, and
//! reports failures through the thread-local raised error with a nonzero
//! return; none of them aborts the process on bad input.
//!
//! SAFETY contract shared by every function here: pointers the caller
//! passes are either NULL (checked, reported as an error) or valid for the
//! access the ABI documents; handles are live objects on which the caller
//! holds a reference.

use std::ffi::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::abi::*;
use crate::object::alloc_header;
use crate::values::any::Any;
use crate::containers::OpaqueObj;
use crate::values::backtrace;
use crate::values::error::{self, Error, ErrorObj};
use crate::values::function::Function;
use crate::object::{self, ObjectRef};
use crate::types::type_registry;

pub mod api_table;
mod big_int;
mod checked_args;
mod guard;
mod dlpack;
mod env;
mod module;
mod sequence;
pub use big_int::*;
pub use dlpack::*;
pub use env::*;
pub use module::*;
pub use sequence::*;

use checked_args::{bytes, cstr_lossy, handle, non_null, out_ptr, utf8};
pub(crate) use guard::guard;

#[no_mangle]
pub unsafe extern "C" fn TVMFFIGetVersion(out_version: *mut TVMFFIVersion) {
    // SAFETY: NULL or a valid output slot (module contract).
    if let Some(v) = unsafe { out_version.as_mut() } {
        *v = VERSION;
    }
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIObjectIncRef(obj: TVMFFIObjectHandle) -> c_int {
    guard("TVMFFIObjectIncRef", || {
        let p = handle(obj, "TVMFFIObjectIncRef")?;
        // SAFETY: live object per the contract.
        unsafe { object::inc_ref(p.as_ptr()) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIObjectDecRef(obj: TVMFFIObjectHandle) -> c_int {
    guard("TVMFFIObjectDecRef", || {
        let p = handle(obj, "TVMFFIObjectDecRef")?;
        // SAFETY: the caller gives up one reference it owns.
        unsafe { object::dec_ref(p.as_ptr()) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIObjectCreateOpaque(
    handle: *mut c_void,
    type_index: i32,
    deleter: Option<unsafe extern "C" fn(*mut c_void)>,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    guard("TVMFFIObjectCreateOpaque", || {
        let out = out_ptr(out, "TVMFFIObjectCreateOpaque")?;
        *out = OpaqueObj::create(handle, type_index, deleter)?.into_raw() as TVMFFIObjectHandle;
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn TVMFFIGetCustomAllocator() -> *mut TVMFFICustomAllocator {
    alloc_header::current_allocator()
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFISetCustomAllocator(allocator: *mut TVMFFICustomAllocator) -> c_int {
    // SAFETY: the caller promises the entry outlives the process.
    guard("TVMFFISetCustomAllocator", || unsafe { alloc_header::set_allocator(allocator) }.map_err(Error::from))
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFITypeKeyToIndex(type_key: *const TVMFFIByteArray, out_tindex: *mut i32) -> c_int {
    guard("TVMFFITypeKeyToIndex", || {
        let key = bytes(type_key, "TVMFFITypeKeyToIndex", "type_key")?;
        let out = out_ptr(out_tindex, "TVMFFITypeKeyToIndex")?;
        *out = type_registry::key_to_index(key).ok_or_else(|| {
            Error::key_error(format!("type key {:?} is not registered", String::from_utf8_lossy(key)))
        })?;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFITypeGetOrAllocIndex(
    type_key: *const TVMFFIByteArray,
    static_type_index: i32,
    type_depth: i32,
    num_child_slots: i32,
    child_slots_can_overflow: i32,
    parent_type_index: i32,
) -> i32 {
    let mut result = -1;
    let rc = guard("TVMFFITypeGetOrAllocIndex", || {
        let key = bytes(type_key, "TVMFFITypeGetOrAllocIndex", "type_key")?;
        if parent_type_index == -2 {
            result = type_registry::key_to_index(key).unwrap_or(-2);
            return Ok(());
        }
        if let Some(i) = type_registry::key_to_index(key) {
            result = i;
            return Ok(());
        }
        let expected_depth = if parent_type_index == -1 {
            0
        } else {
            type_registry::type_info(parent_type_index)
                .ok_or_else(|| {
                    Error::value_error(format!(
                        "TVMFFITypeGetOrAllocIndex: unknown parent type index {parent_type_index} for {:?}",
                        String::from_utf8_lossy(key)
                    ))
                })?
                .type_depth
                + 1
        };
        if type_depth != expected_depth {
            return Err(Error::value_error(format!(
                "TVMFFITypeGetOrAllocIndex: {:?} declares depth {type_depth} but its parent implies {expected_depth}",
                String::from_utf8_lossy(key)
            )));
        }
        result = type_registry::get_or_alloc_index_slots(
            key,
            static_type_index,
            num_child_slots,
            child_slots_can_overflow != 0,
            parent_type_index,
        )?;
        Ok(())
    });
    if rc == 0 {
        result
    } else {
        -1
    }
}

#[no_mangle]
pub extern "C" fn TVMFFIGetTypeInfo(type_index: i32) -> *const TVMFFITypeInfo {
    type_registry::type_info(type_index).map_or(std::ptr::null(), |i| i as *const TVMFFITypeInfo)
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFITypeRegisterField(type_index: i32, info: *const TVMFFIFieldInfo) -> c_int {
    guard("TVMFFITypeRegisterField", || {
        let info = non_null(info, "TVMFFITypeRegisterField", "field info")?;
        bytes(&info.name, "TVMFFITypeRegisterField", "field name")?;
        crate::reflection::type_members::register_field(type_index, info)
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFITypeRegisterMethod(type_index: i32, info: *const TVMFFIMethodInfo) -> c_int {
    guard("TVMFFITypeRegisterMethod", || {
        let info = non_null(info, "TVMFFITypeRegisterMethod", "method info")?;
        bytes(&info.name, "TVMFFITypeRegisterMethod", "method name")?;
        crate::reflection::type_members::register_method(type_index, info)
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFITypeRegisterMetadata(type_index: i32, metadata: *const TVMFFITypeMetadata) -> c_int {
    guard("TVMFFITypeRegisterMetadata", || {
        type_registry::register_metadata(type_index, non_null(metadata, "TVMFFITypeRegisterMetadata", "metadata")?)
            .map_err(Error::from)
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFITypeRegisterAttr(
    type_index: i32,
    attr_name: *const TVMFFIByteArray,
    attr_value: *const TVMFFIAny,
) -> c_int {
    guard("TVMFFITypeRegisterAttr", || {
        let name = bytes(attr_name, "TVMFFITypeRegisterAttr", "attr_name")?;
        let value = non_null(attr_value, "TVMFFITypeRegisterAttr", "attr_value")?;
        crate::reflection::attr_columns::register_attr(type_index, name, value)
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIGetTypeAttrColumn(attr_name: *const TVMFFIByteArray) -> *const TVMFFITypeAttrColumn {
    match bytes(attr_name, "TVMFFIGetTypeAttrColumn", "attr_name") {
        Ok(name) => crate::reflection::attr_columns::attr_column(name).map_or(std::ptr::null(), |c| c as *const _),
        Err(_) => std::ptr::null(),
    }
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIFunctionCreate(
    self_: *mut c_void,
    safe_call: Option<TVMFFISafeCallType>,
    deleter: Option<unsafe extern "C" fn(*mut c_void)>,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    guard("TVMFFIFunctionCreate", || {
        let out = out_ptr(out, "TVMFFIFunctionCreate")?;
        let call = safe_call.ok_or_else(|| Error::value_error("TVMFFIFunctionCreate: safe_call is NULL"))?;
        *out = Function::from_extern(self_, call, deleter)?.into_object().into_raw() as TVMFFIObjectHandle;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIFunctionCall(
    func: TVMFFIObjectHandle,
    args: *mut TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    let mut call: Option<TVMFFISafeCallType> = None;
    let rc = guard("TVMFFIFunctionCall", || {
        let f = handle(func, "TVMFFIFunctionCall")?;
        // SAFETY: live object per the contract.
        let index = unsafe { (*f.as_ptr()).type_index };
        if index != type_index::kTVMFFIFunction {
            return Err(Error::type_error(format!(
                "TVMFFIFunctionCall: expected ffi.Function, got {}",
                type_registry::type_key_of(index)
            )));
        }
        if num_args < 0 || (num_args > 0 && args.is_null()) {
            return Err(Error::value_error(format!("TVMFFIFunctionCall: bad arguments ({num_args} at {args:p})")));
        }
        out_ptr(result, "TVMFFIFunctionCall")?;
        // SAFETY: the cell follows the header of every Function object.
        let cell = unsafe { &*((f.as_ptr() as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFIFunctionCell) };
        call = Some(cell.safe_call.ok_or_else(|| Error::runtime_error("TVMFFIFunctionCall: function has no safe_call"))?);
        Ok(())
    });
    match (rc, call) {
        // The callee follows the same convention: its return code and raised
        // error pass straight through.
        // SAFETY: arguments validated above.
        // Kept out of tail position (black_box), so this function's frame
        // stays on the stack for backtraces to stop at.
        (0, Some(call)) => std::hint::black_box(unsafe { call(func, args, num_args, result) }),
        _ => -1,
    }
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIFunctionGetGlobal(name: *const TVMFFIByteArray, out: *mut TVMFFIObjectHandle) -> c_int {
    guard("TVMFFIFunctionGetGlobal", || {
        let name = bytes(name, "TVMFFIFunctionGetGlobal", "name")?;
        let out = out_ptr(out, "TVMFFIFunctionGetGlobal")?;
        *out = std::str::from_utf8(name)
            .ok()
            .and_then(Function::get_global)
            .map_or(std::ptr::null_mut(), |f| f.into_object().into_raw() as TVMFFIObjectHandle);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIFunctionSetGlobal(
    name: *const TVMFFIByteArray,
    f: TVMFFIObjectHandle,
    allow_override: c_int,
) -> c_int {
    guard("TVMFFIFunctionSetGlobal", || {
        let name = utf8(bytes(name, "TVMFFIFunctionSetGlobal", "name")?, "TVMFFIFunctionSetGlobal", "name")?;
        let f = handle(f, "TVMFFIFunctionSetGlobal")?;
        // SAFETY: live object; we take our own reference.
        let f = Function::from_object(unsafe { ObjectRef::from_raw_borrowed(f) })?;
        Function::set_global(name, f, allow_override != 0)
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIFunctionSetGlobalFromMethodInfo(
    method_info: *const TVMFFIMethodInfo,
    allow_override: c_int,
) -> c_int {
    guard("TVMFFIFunctionSetGlobalFromMethodInfo", || {
        let info = non_null(method_info, "TVMFFIFunctionSetGlobalFromMethodInfo", "method info")?;
        let name = utf8(
            bytes(&info.name, "TVMFFIFunctionSetGlobalFromMethodInfo", "name")?,
            "TVMFFIFunctionSetGlobalFromMethodInfo",
            "name",
        )?;
        let f = Any::from_view(&info.method)?
            .as_object()
            .ok_or_else(|| Error::type_error("TVMFFIFunctionSetGlobalFromMethodInfo: method is not an object"))?;
        let metadata = bytes(&info.metadata, "TVMFFIFunctionSetGlobalFromMethodInfo", "metadata")?;
        let metadata = utf8(metadata, "TVMFFIFunctionSetGlobalFromMethodInfo", "metadata")?;
        let f = Function::from_object(f)?;
        Function::set_global(name, f.clone(), allow_override != 0)?;
        crate::values::function_metadata::record(name, &f, metadata);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIAnyViewToOwnedAny(any_view: *const TVMFFIAny, out: *mut TVMFFIAny) -> c_int {
    guard("TVMFFIAnyViewToOwnedAny", || {
        let v = non_null(any_view, "TVMFFIAnyViewToOwnedAny", "any_view")?;
        let out = out_ptr(out, "TVMFFIAnyViewToOwnedAny")?;
        *out = Any::from_view(v)?.into_raw();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIErrorMoveFromRaised(result: *mut TVMFFIObjectHandle) {
    // SAFETY: NULL or a valid output slot (module contract).
    if let Some(out) = unsafe { result.as_mut() } {
        *out = error::take_raised_object().map_or(std::ptr::null_mut(), |o| o.into_raw() as TVMFFIObjectHandle);
    }
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIErrorSetRaised(error: TVMFFIObjectHandle) {
    let r = catch_unwind(AssertUnwindSafe(|| match NonNull::new(error as *mut TVMFFIObject) {
        // SAFETY: live object; the slot takes its own reference.
        Some(p) if unsafe { (*p.as_ptr()).type_index } == type_index::kTVMFFIError => {
            error::set_raised_object(unsafe { ObjectRef::from_raw_borrowed(p) })
        }
        Some(p) => error::set_raised(Error::type_error(format!(
            "TVMFFIErrorSetRaised: expected ffi.Error, got {}",
            // SAFETY: a live object per the module contract.
            type_registry::type_key_of(unsafe { (*p.as_ptr()).type_index })
        ))),
        None => error::set_raised(Error::value_error("TVMFFIErrorSetRaised: error handle is NULL")),
    }));
    drop(r);
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIErrorSetRaisedFromCStr(kind: *const c_char, message: *const c_char) {
    error::set_raised(Error::new(cstr_lossy(kind), cstr_lossy(message)));
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIErrorSetRaisedFromCStrParts(
    kind: *const c_char,
    message_parts: *const *const c_char,
    num_parts: i32,
) {
    let mut msg = String::new();
    if !message_parts.is_null() {
        for i in 0..num_parts.max(0) as usize {
            // SAFETY: `num_parts` entries per the contract.
            let part = unsafe { *message_parts.add(i) };
            if !part.is_null() {
                msg.push_str(&cstr_lossy(part));
            }
        }
    }
    error::set_raised(Error::new(cstr_lossy(kind), msg));
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIErrorCreate(
    kind: *const TVMFFIByteArray,
    message: *const TVMFFIByteArray,
    backtrace: *const TVMFFIByteArray,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    // SAFETY: forwarding the same contract.
    unsafe { TVMFFIErrorCreateWithCauseAndExtraContext(kind, message, backtrace, std::ptr::null_mut(), std::ptr::null_mut(), out) }
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIErrorCreateWithCauseAndExtraContext(
    kind: *const TVMFFIByteArray,
    message: *const TVMFFIByteArray,
    backtrace: *const TVMFFIByteArray,
    cause_chain: TVMFFIObjectHandle,
    extra_context: TVMFFIObjectHandle,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    const F: &str = "TVMFFIErrorCreate";
    guard(F, || {
        let out = out_ptr(out, F)?;
        let k = bytes(kind, F, "kind")?;
        let m = bytes(message, F, "message")?;
        let b = if backtrace.is_null() { &[][..] } else { bytes(backtrace, F, "backtrace")? };
        // SAFETY: live objects per the contract; the error takes its own references.
        let borrow = |h: TVMFFIObjectHandle| NonNull::new(h as *mut TVMFFIObject).map(|p| unsafe { ObjectRef::from_raw_borrowed(p) });
        let e = ErrorObj::create_with(k, m, b, borrow(cause_chain), borrow(extra_context))?;
        *out = e.into_object_ref().into_raw() as TVMFFIObjectHandle;
        Ok(())
    })
}

/// The calling thread's backtrace up to the FFI boundary (or the whole
/// stack with `cross_ffi_boundary`), at most `TVM_TRACEBACK_LIMIT` frames,
/// the caller's frame named by `filename`/`lineno`/`func` when given. The
/// native frames are addresses until the text is read through tether
/// (`values::backtrace`), so raising costs no symbol lookup.
#[no_mangle]
pub unsafe extern "C" fn TVMFFIBacktrace(
    filename: *const c_char,
    lineno: c_int,
    func: *const c_char,
    cross_ffi_boundary: c_int,
) -> *const TVMFFIByteArray {
    thread_local! {
        static LAST: std::cell::RefCell<(String, TVMFFIByteArray)> =
            const { std::cell::RefCell::new((String::new(), TVMFFIByteArray::EMPTY)) };
    }
    register_call_boundary();
    let file = (!filename.is_null()).then(|| cstr_lossy(filename));
    let func = (!func.is_null()).then(|| cstr_lossy(func));
    let explicit = match (&file, &func) {
        (Some(file), Some(func)) => Some((file.as_str(), lineno, func.as_str())),
        _ => None,
    };
    let req = backtrace::Request { explicit, stop_at_boundary: cross_ffi_boundary == 0 };
    // Leave out this function's frame (and, with an explicit frame, its
    // caller's, which that line replaces).
    let entry = TVMFFIBacktrace as *const () as usize;
    let text = catch_unwind(|| backtrace::capture(&req, entry, 0)).unwrap_or_default();
    LAST.with(|l| {
        let mut l = l.borrow_mut();
        l.0 = text;
        l.1 = TVMFFIByteArray::from_slice(l.0.as_bytes());
        // The thread-local outlives this call; valid until the next call.
        &l.1 as *const TVMFFIByteArray
    })
}

/// `TVMFFIFunctionCall` is where another language enters native code, so a
/// backtrace taken below it stops there (as upstream's does).
pub fn register_call_boundary() {
    static ONCE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        let _ = backtrace::add_boundary_function(TVMFFIFunctionCall as *const () as usize);
    });
}

/// `text` with its native frames resolved to files, lines and function
/// names, in `*out`: tether's own thread-local buffer, valid until the
/// calling thread's next call. Text without unresolved frames comes back
/// unchanged (bytes that are not UTF-8 as U+FFFD).
#[no_mangle]
pub unsafe extern "C" fn TetherFFIBacktraceResolve(text: *const TVMFFIByteArray, out: *mut TVMFFIByteArray) -> c_int {
    const F: &str = "TetherFFIBacktraceResolve";
    thread_local! {
        static LAST: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    guard(F, || {
        let input = bytes(text, F, "text")?;
        let out = out_ptr(out, F)?;
        // Bytes that are not UTF-8 (a foreign file name) become U+FFFD.
        let input = String::from_utf8_lossy(input);
        let resolved = backtrace::resolve(&input).into_owned();
        LAST.with(|l| {
            let mut l = l.borrow_mut();
            *l = resolved;
            *out = TVMFFIByteArray::from_slice(l.as_bytes());
        });
        Ok(())
    })
}

/// Mark the function starting at `function` as an FFI boundary: backtraces
/// taken in code it calls stop at its frame. For frontends that call a
/// Function's `safe_call` directly rather than through `TVMFFIFunctionCall`.
#[no_mangle]
pub unsafe extern "C" fn TetherFFIBacktraceAddBoundary(function: *const c_void) -> c_int {
    const F: &str = "TetherFFIBacktraceAddBoundary";
    guard(F, || {
        register_call_boundary();
        backtrace::add_boundary_function(function as usize).map_err(|e| Error::value_error(format!("{F}: {e}")))
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIStringFromByteArray(input: *const TVMFFIByteArray, out: *mut TVMFFIAny) -> c_int {
    guard("TVMFFIStringFromByteArray", || {
        let b = bytes(input, "TVMFFIStringFromByteArray", "input")?;
        *out_ptr(out, "TVMFFIStringFromByteArray")? = crate::values::any::make_str_or_bytes(b, false)?.into_raw();
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn TVMFFIBytesFromByteArray(input: *const TVMFFIByteArray, out: *mut TVMFFIAny) -> c_int {
    guard("TVMFFIBytesFromByteArray", || {
        let b = bytes(input, "TVMFFIBytesFromByteArray", "input")?;
        *out_ptr(out, "TVMFFIBytesFromByteArray")? = crate::values::any::make_str_or_bytes(b, true)?.into_raw();
        Ok(())
    })
}

// The handle slot is shared between threads that race to initialise it;
// it is only ever accessed atomically here, as TVM-FFI does.
static INIT_ONCE_LOCK: parking_lot::Mutex<()> = parking_lot::const_mutex(());

/// Initialise `*handle_addr` once: a fast acquire-load when it is set, else
/// `init_func` under a process-wide lock. As in TVM-FFI, a nonzero return
/// of `init_func` passes through unchanged (its raised error stays), and an
/// init function that reports success but yields NULL is an error.
///
/// # Safety
/// The module contract; `handle_addr` is shared only through these two
/// functions.
#[no_mangle]
pub unsafe extern "C" fn TVMFFIHandleInitOnce(
    handle_addr: *mut *mut c_void,
    init_func: Option<unsafe extern "C" fn(*mut *mut c_void) -> c_int>,
) -> c_int {
    let mut init_rc = 0;
    let rc = guard("TVMFFIHandleInitOnce", || {
        out_ptr(handle_addr, "TVMFFIHandleInitOnce")?;
        // SAFETY: non-NULL, aligned pointer slot the caller shares only
        // through these functions (module contract).
        let slot = unsafe { AtomicPtr::from_ptr(handle_addr) };
        if !slot.load(Ordering::Acquire).is_null() {
            return Ok(());
        }
        let init = init_func.ok_or_else(|| Error::value_error("TVMFFIHandleInitOnce: init_func is NULL"))?;
        let _g = INIT_ONCE_LOCK.lock();
        if !slot.load(Ordering::Acquire).is_null() {
            return Ok(());
        }
        let mut result: *mut c_void = std::ptr::null_mut();
        // SAFETY: the caller's init function.
        init_rc = unsafe { init(&mut result) };
        if init_rc != 0 {
            return Ok(());
        }
        if result.is_null() {
            return Err(Error::runtime_error("TVMFFIHandleInitOnce: init_func must return a non-NULL handle"));
        }
        slot.store(result, Ordering::Release);
        Ok(())
    });
    if rc != 0 {
        rc
    } else {
        init_rc
    }
}

/// Take `*handle_addr` (atomically swapping in NULL) and, if it was set,
/// hand it to `deinit_func`. As in TVM-FFI the slot is cleared before the
/// call, so a failing deinit still leaves it NULL and is not retried; its
/// return code and raised error pass through.
///
/// # Safety
/// As [`TVMFFIHandleInitOnce`].
#[no_mangle]
pub unsafe extern "C" fn TVMFFIHandleDeinitOnce(
    handle_addr: *mut *mut c_void,
    deinit_func: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
) -> c_int {
    let mut deinit_rc = 0;
    let rc = guard("TVMFFIHandleDeinitOnce", || {
        out_ptr(handle_addr, "TVMFFIHandleDeinitOnce")?;
        let deinit = deinit_func.ok_or_else(|| Error::value_error("TVMFFIHandleDeinitOnce: deinit_func is NULL"))?;
        // SAFETY: as in `TVMFFIHandleInitOnce`.
        let slot = unsafe { AtomicPtr::from_ptr(handle_addr) };
        let old = slot.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: the caller's deinit function for the handle it made.
            deinit_rc = unsafe { deinit(old) };
        }
        Ok(())
    });
    if rc != 0 {
        rc
    } else {
        deinit_rc
    }
}
