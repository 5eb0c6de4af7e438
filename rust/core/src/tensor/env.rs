//! The execution environment of TVM-FFI's `c_env_api.h`: the current
//! stream per device and the DLPack tensor allocator kernels allocate
//! through (`TVMFFIEnvTensorAlloc`).
//!
//! As upstream: streams are thread-local, keyed by (device type, device id)
//! and unset (NULL) until a thread sets them; the allocator is thread-local
//! with a process-wide fallback that `write_to_global_context` also sets,
//! and reading it prefers the thread's own. Streams are carried, never used.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::values::error::{self, Error};
use crate::tensor::Tensor;
use tether_sys::dlpack::{
    DLManagedTensorVersioned, DLPackManagedTensorAllocator, DLPackManagedTensorAllocatorFn, DLTensor, TVMFFIStreamHandle,
};

thread_local! {
    static STREAMS: RefCell<HashMap<(i32, i32), usize>> = RefCell::new(HashMap::new());
    static LOCAL_ALLOCATOR: Cell<DLPackManagedTensorAllocator> = const { Cell::new(None) };
}

/// The process-wide allocator, as a function address (0 = none).
static GLOBAL_ALLOCATOR: AtomicUsize = AtomicUsize::new(0);

/// `TVMFFIEnvSetStream`: set this thread's stream for a device and return
/// the one it replaces.
pub fn set_stream(device_type: i32, device_id: i32, stream: TVMFFIStreamHandle) -> Result<TVMFFIStreamHandle, Error> {
    if device_type < 0 || device_id < 0 {
        return Err(Error::value_error(format!(
            "TVMFFIEnvSetStream: device ({device_type}, {device_id}) has a negative type or id"
        )));
    }
    let old = STREAMS.with(|s| s.borrow_mut().insert((device_type, device_id), stream as usize));
    Ok(old.unwrap_or(0) as TVMFFIStreamHandle)
}

/// `TVMFFIEnvGetStream`: this thread's stream for a device (NULL if unset).
pub fn get_stream(device_type: i32, device_id: i32) -> TVMFFIStreamHandle {
    STREAMS
        .try_with(|s| s.borrow().get(&(device_type, device_id)).copied().unwrap_or(0))
        .unwrap_or(0) as TVMFFIStreamHandle
}

/// `TVMFFIEnvSetDLPackManagedTensorAllocator`: set this thread's allocator
/// (and the process-wide one too when asked); returns the thread's previous
/// allocator (not the process-wide one, as upstream).
pub fn set_allocator(allocator: DLPackManagedTensorAllocator, write_to_global: bool) -> DLPackManagedTensorAllocator {
    if write_to_global {
        GLOBAL_ALLOCATOR.store(allocator.map_or(0, |f| f as usize), Ordering::Release);
    }
    LOCAL_ALLOCATOR.with(|a| a.replace(allocator))
}

/// `TVMFFIEnvGetDLPackManagedTensorAllocator`: the thread's allocator, or
/// the process-wide one.
pub fn get_allocator() -> DLPackManagedTensorAllocator {
    if let Some(local) = LOCAL_ALLOCATOR.try_with(Cell::get).ok().flatten() {
        return Some(local);
    }
    let f = GLOBAL_ALLOCATOR.load(Ordering::Acquire);
    // SAFETY: only addresses of allocator functions (or 0) are stored.
    (f != 0).then(|| unsafe { std::mem::transmute::<usize, DLPackManagedTensorAllocatorFn>(f) })
}

/// The `SetError` the allocator reports through: it raises the error on
/// the calling thread, where `env_tensor_alloc` picks it up.
unsafe extern "C" fn set_error(_ctx: *mut c_void, kind: *const c_char, message: *const c_char) {
    let text = |p: *const c_char, default: &str| {
        if p.is_null() {
            default.to_string()
        } else {
            // SAFETY: a NUL-terminated string from the allocator.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    error::set_raised(Error::new(text(kind, "RuntimeError"), text(message, "")));
}

/// Why [`env_tensor_alloc`] failed: either an error of ours, or the
/// allocator's own failure, already raised with its return code.
pub enum AllocFailure {
    Error(Error),
    Raised(i32),
}

/// `TVMFFIEnvTensorAlloc`: allocate through the environment's allocator
/// and wrap the result in a Tensor that calls its deleter when it dies.
///
/// # Safety
/// `prototype` must be a valid `DLTensor` (only dtype, ndim, shape and
/// device are read, by the allocator).
pub unsafe fn env_tensor_alloc(prototype: *mut DLTensor) -> Result<Tensor, AllocFailure> {
    let alloc = get_allocator().ok_or_else(|| {
        AllocFailure::Error(Error::runtime_error(
            "TVMFFIEnvTensorAlloc: allocator is nullptr, likely because TVMFFIEnvSetDLPackManagedTensorAllocator has not been called.",
        ))
    })?;
    let mut out: *mut DLManagedTensorVersioned = std::ptr::null_mut();
    // SAFETY: the registered allocator with a valid prototype and out slot.
    let rc = unsafe { alloc(prototype, &mut out, std::ptr::null_mut(), Some(set_error)) };
    if rc != 0 {
        return Err(AllocFailure::Raised(rc));
    }
    let managed = NonNull::new(out).ok_or_else(|| {
        AllocFailure::Error(Error::runtime_error("TVMFFIEnvTensorAlloc: failed to allocate a tensor from the allocator"))
    })?;
    // SAFETY: the allocator handed us a managed tensor we now own.
    unsafe { Tensor::adopt_allocated(managed) }.map_err(AllocFailure::Error)
}
