//! DLPack's C exchange tables (`type(x).__dlpack_c_exchange_api__`): looked
//! up once per producer type and cached for good, so a producer that
//! publishes one hands over its managed tensor without a capsule per call.
//!
//! SAFETY invariants of this module: a cached table pointer is either NULL
//! or a major-version-1 table its producer published, alive as long as the
//! type, which the cache keeps a reference to.

use std::collections::HashMap;
use std::ffi::{c_int, c_void, CStr};
use std::sync::Mutex;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;
use tether_sys::dlpack::{DLManagedTensorVersioned, DLPackVersion};

const EXCHANGE_API: &CStr = c"dlpack_exchange_api";

/// DLPack's `DLPackExchangeAPI` (major version 1).
#[repr(C)]
pub(crate) struct ExchangeApi {
    pub(super) version: DLPackVersion,
    prev_api: *mut c_void,
    managed_tensor_allocator: *mut c_void,
    pub(super) managed_tensor_from_py_object_no_sync:
        Option<unsafe extern "C" fn(py_object: *mut c_void, out: *mut *mut DLManagedTensorVersioned) -> c_int>,
    pub(super) managed_tensor_to_py_object_no_sync:
        Option<unsafe extern "C" fn(tensor: *mut DLManagedTensorVersioned, out_py_object: *mut *mut c_void) -> c_int>,
    dltensor_from_py_object_no_sync: *mut c_void,
    current_work_stream: *mut c_void,
}

/// The table a `torch.Tensor` type without one of its own stands for (a
/// PyTorch without the C exchange API): tensors go in through
/// `__dlpack__`, and results go back through `torch.from_dlpack` (see
/// `exchange_out`, which recognises this table by address), as TVM-FFI's
/// fallback for PyTorch does.
pub(crate) struct FallbackTable(pub(crate) ExchangeApi);
// SAFETY: immutable; its pointers are NULL.
unsafe impl Sync for FallbackTable {}

pub(crate) static TORCH_FALLBACK: FallbackTable = FallbackTable(ExchangeApi {
    version: DLPackVersion { major: 1, minor: 0 },
    prev_api: std::ptr::null_mut(),
    managed_tensor_allocator: std::ptr::null_mut(),
    managed_tensor_from_py_object_no_sync: None,
    managed_tensor_to_py_object_no_sync: None,
    dltensor_from_py_object_no_sync: std::ptr::null_mut(),
    current_work_stream: std::ptr::null_mut(),
});

/// Whether `tp` is `torch.Tensor` or a subclass (PyTorch imported).
fn is_torch_tensor_type(tp: &Bound<'_, PyType>) -> bool {
    let py = tp.py();
    let Ok(modules) = py.import("sys").and_then(|s| s.getattr("modules")) else { return false };
    let Ok(torch) = modules.get_item("torch") else { return false };
    let Ok(tensor) = torch.getattr("Tensor") else { return false };
    tensor.cast::<PyType>().is_ok_and(|t| tp.is_subclass(t).unwrap_or(false))
}

/// Per producer type: its exchange table, or NULL when it has none. Holds
/// a reference to each type so an address is never reused while cached.
/// Consulted for every tensor argument, so keyed by the type's address
/// with a multiplicative hash rather than the default SipHash (no keys
/// come from outside: they are addresses of live type objects).
struct ExchangeCache(HashMap<usize, (Py<PyType>, usize), std::hash::BuildHasherDefault<AddressHasher>>);

/// A hasher for object addresses (one `usize` per key).
#[derive(Default)]
struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn write_usize(&mut self, n: usize) {
        // Fibonacci hashing; addresses are 16-byte aligned, the high bits
        // of the product are well mixed.
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(32);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}
static EXCHANGE: Mutex<Option<ExchangeCache>> = Mutex::new(None);

pub(crate) fn exchange_api(obj: &Bound<'_, PyAny>) -> *const ExchangeApi {
    let tp = obj.get_type();
    let key = tp.as_ptr() as usize;
    let mut guard = EXCHANGE.lock().unwrap_or_else(|e| e.into_inner());
    let cache = guard.get_or_insert_with(|| ExchangeCache(HashMap::default()));
    if let Some((_, api)) = cache.0.get(&key) {
        return *api as *const ExchangeApi;
    }
    let api = tp
        .getattr("__dlpack_c_exchange_api__")
        .ok()
        .map(|cap| {
            // SAFETY: a capsule's pointer is read only under its own name.
            unsafe {
                if ffi::PyCapsule_IsValid(cap.as_ptr(), EXCHANGE_API.as_ptr()) == 1 {
                    ffi::PyCapsule_GetPointer(cap.as_ptr(), EXCHANGE_API.as_ptr()) as usize
                } else {
                    0
                }
            }
        })
        .unwrap_or(0);
    // Only major version 1 tables have the layout above.
    // SAFETY: a non-NULL table published by the producer lives as long as its type.
    let api = if api != 0 && unsafe { (*(api as *const ExchangeApi)).version.major } == 1 { api } else { 0 };
    let api = if api == 0 && is_torch_tensor_type(&tp) { &TORCH_FALLBACK.0 as *const ExchangeApi as usize } else { api };
    cache.0.insert(key, (tp.unbind(), api));
    api as *const ExchangeApi
}
