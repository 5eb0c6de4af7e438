//! Python exceptions into the FFI: an Error whose extra context carries
//! the exception itself (as an `ffi.OpaquePyObject`), so it round-trips
//! unchanged, put into the FFI's raised slot or returned as an object.
//!
//! An exception raised into native code gets the backtrace of where it
//! has been, as upstream records it: its Python traceback (the native
//! frames of an FFI error it came from are already in it, as frames), most
//! recent call first, then the native frames between this crossing and the
//! FFI boundary above (addresses, resolved when read; the nearest
//! [`CROSSING_NATIVE_LINES`] of them). An FFI error the
//! exception carries (`__tvm_ffi_error__`) has each crossing's part added
//! to its text, so it reads the whole path when it reaches Python again.
//!
//! Cost stays bounded however deep the recursion an error unwinds through
//! (each level a crossing): a crossing reads only the traceback entries
//! added since the exception's previous crossing (the entry it ended at is
//! kept on the exception), at most `TVM_TRACEBACK_LIMIT` of them, and a
//! carried error's text grows only while it stays within
//! [`CARRIED_LINES_MAX`] lines. An error re-raised through every level of a deep
//! recursion becomes a new Python exception at each level (its text turned
//! into frames each time), so that text must stay short for errors to stay
//! cheap.

use std::ffi::{c_void, CString};
use std::ptr;

use pyo3::prelude::*;
use tether_sys::abi::{TVMFFIByteArray, TVMFFIObject};
use tether_sys::*;

use crate::convert::error_bridge::check;
use crate::convert::error_cell::{error_backtrace_lines, error_backtrace_raw, error_update_backtrace};
use crate::convert::opaque_cell::opaque_from_object;
use crate::convert::python_hooks;
use crate::tie::exit_park;

/// Put a Python exception into the FFI's raised slot.
pub fn raise_into_ffi(py: Python<'_>, e: PyErr) {
    let value = e.into_value(py);
    let exc = value.bind(py);
    let (mut backtrace, lines) = crossing_backtrace(exc);
    if let Ok(carried) = exc.getattr(pyo3::intern!(py, "__tvm_ffi_error__")) {
        // Only an FFI Error has a backtrace to add to; anything else is left.
        if error_backtrace_lines(&carried).is_ok_and(|n| n + lines <= frame_limit().min(CARRIED_LINES_MAX)) {
            let _ = error_update_backtrace(&carried, &backtrace, true);
        }
        // The error raised here reads as the carried one: the traceback
        // this crossing saw repeats the carried error's own frames.
        if let Ok(text) = error_backtrace_raw(&carried) {
            backtrace = text;
        }
    }
    match error_with_backtrace(py, exc, &backtrace) {
        Ok(err) => {
            // SAFETY: SetRaised takes its own reference; we drop ours.
            unsafe {
                TVMFFIErrorSetRaised(err as *mut c_void);
                TVMFFIObjectDecRef(err as *mut c_void);
            }
        }
        Err(_) => {
            let k = CString::new("RuntimeError").unwrap();
            let m = CString::new("a Python exception could not be converted to an FFI error").unwrap();
            // SAFETY: NUL-terminated strings.
            unsafe { TVMFFIErrorSetRaisedFromCStr(k.as_ptr(), m.as_ptr()) };
        }
    }
}

/// The part of an exception's backtrace this crossing adds, and its line
/// count: the traceback entries added since its previous crossing (all of
/// them at the first, the innermost `TVM_TRACEBACK_LIMIT` kept), most
/// recent call first, then the native frames up to the FFI boundary.
fn crossing_backtrace(exc: &Bound<'_, PyAny>) -> (String, usize) {
    let py = exc.py();
    let limit = frame_limit();
    let mark_name = pyo3::intern!(py, "__tether_backtrace_mark__");
    // The traceback entry the previous crossing started at, by address (an
    // int, so the exception still pickles): it stays in the chain, alive.
    let mark: Option<usize> = exc.getattr(mark_name).ok().and_then(|m| m.extract().ok());
    let mut entries = std::collections::VecDeque::new();
    if let Ok(head) = exc.getattr(pyo3::intern!(py, "__traceback__")) {
        let mut tb = head.clone();
        // A traceback is a finite chain; the bound only guards against a
        // hostile object posing as one.
        for _ in 0..10_000_000 {
            if tb.is_none() || mark == Some(tb.as_ptr() as usize) {
                break;
            }
            let entry = (|| -> PyResult<String> {
                let code = tb.getattr("tb_frame")?.getattr("f_code")?;
                let file: String = code.getattr("co_filename")?.extract()?;
                let name: String = code.getattr("co_name")?.extract()?;
                let line: i64 = tb.getattr("tb_lineno")?.extract().unwrap_or(0);
                Ok(format!("  File \"{file}\", line {line}, in {name}\n"))
            })();
            match (entry, tb.getattr("tb_next")) {
                (Ok(l), Ok(next)) => {
                    entries.push_back(l);
                    if entries.len() > limit {
                        entries.pop_front();
                    }
                    tb = next;
                }
                _ => break,
            }
        }
        // The next crossing reads only what is added before this entry.
        let _ = exc.setattr(mark_name, head.as_ptr() as usize);
    }
    let lines = entries.len();
    let mut text: String = entries.into_iter().rev().collect();
    // SAFETY: no explicit frame; the core returns a byte array valid until
    // this thread's next backtrace call, copied out at once.
    let native = unsafe { TVMFFIBacktrace(ptr::null(), 0, ptr::null(), 0) };
    if !native.is_null() {
        // SAFETY: as above.
        let native = unsafe { crate::convert::registry::bytes_to_string(&*native) };
        // The frames that called the callback; deeper native recursion
        // above them says little and would be repeated at every level.
        let kept: Vec<&str> = native.split_inclusive('\n').take(CROSSING_NATIVE_LINES).collect();
        text.push_str(&kept.concat());
        return (text, lines + kept.len());
    }
    (text, lines)
}

/// The most lines crossings add to a carried error's text (or
/// `TVM_TRACEBACK_LIMIT`, when lower).
const CARRIED_LINES_MAX: usize = 64;
/// The native frames a crossing records: those nearest the callback.
const CROSSING_NATIVE_LINES: usize = 16;

/// `TVM_TRACEBACK_LIMIT` as the process started (upstream's 512 when unset).
fn frame_limit() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| std::env::var("TVM_TRACEBACK_LIMIT").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(512))
}

/// An Error object for a Python exception; the exception itself rides in
/// `extra_context` so it comes back as the very same exception.
pub fn error_from_exception(py: Python<'_>, exc: &Bound<'_, PyAny>) -> PyResult<*mut TVMFFIObject> {
    error_with_backtrace(py, exc, "")
}

fn error_with_backtrace(py: Python<'_>, exc: &Bound<'_, PyAny>, backtrace: &str) -> PyResult<*mut TVMFFIObject> {
    let kind = match python_hooks::hooks(py) {
        Some(h) => exit_park::call_py(h.error_kind.bind(py), (exc,), None)?.extract::<String>()?,
        None => exc.get_type().name()?.to_string(),
    };
    let message = exc.str().map(|s| s.to_string()).unwrap_or_default();
    let ctx = opaque_from_object(py, exc)?;
    let k = TVMFFIByteArray { data: kind.as_ptr() as *const _, size: kind.len() };
    let m = TVMFFIByteArray { data: message.as_ptr() as *const _, size: message.len() };
    let b = TVMFFIByteArray { data: backtrace.as_ptr() as *const _, size: backtrace.len() };
    let mut out: *mut c_void = ptr::null_mut();
    // SAFETY: valid arrays; the error takes its own reference on `ctx`.
    let rc = unsafe {
        TVMFFIErrorCreateWithCauseAndExtraContext(&k, &m, &b, ptr::null_mut(), ctx as *mut c_void, &mut out)
    };
    // SAFETY: drop our reference on the context either way.
    unsafe { TVMFFIObjectDecRef(ctx as *mut c_void) };
    check(py, rc)?;
    Ok(out as *mut TVMFFIObject)
}
