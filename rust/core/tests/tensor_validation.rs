//! What `TVMFFITensorFromDLPack*` checks in a producer's tensor before it
//! becomes a Tensor: the data type's code, bits and lanes, the extents, the
//! memory the strides address, the byte offset and the data pointer. Each
//! refusal is a ValueError naming the field, and the managed tensor stays
//! the caller's (its deleter not run); the read-only flag of an accepted one
//! is exported again.

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use tether_core::abi::{DLDataType, DLDevice, TVMFFIObjectHandle};
use tether_core::c_api::*;
use tether_core::values::error::take_raised;
use tether_sys::dlpack::*;

// Deletions of the tensors made by `managed`: one counter per test
// thread (the tests run in parallel), reached through `manager_ctx`.
thread_local! {
    static DELETED: AtomicUsize = const { AtomicUsize::new(0) };
}

fn deleted() -> usize {
    DELETED.with(|d| d.load(Ordering::SeqCst))
}

unsafe extern "C" fn count_deletion(m: *mut DLManagedTensorVersioned) {
    // SAFETY: `manager_ctx` is the creating thread's counter, which lives
    // as long as that thread; deleters here run on it.
    unsafe { (*((*m).manager_ctx as *const AtomicUsize)).fetch_add(1, Ordering::SeqCst) };
}

/// A versioned managed tensor over `data` (float32 unless changed), shape
/// and strides borrowed from the caller, who keeps them alive.
fn managed(data: &mut [f32], shape: &mut [i64], strides: Option<&mut [i64]>) -> DLManagedTensorVersioned {
    DLManagedTensorVersioned {
        version: DLPackVersion { major: 1, minor: 0 },
        manager_ctx: DELETED.with(|d| d as *const AtomicUsize as *mut c_void),
        deleter: Some(count_deletion),
        flags: 0,
        dl_tensor: DLTensor {
            data: data.as_mut_ptr() as *mut c_void,
            device: DLDevice { device_type: device_type::kDLCPU, device_id: 0 },
            ndim: shape.len() as i32,
            dtype: DLDataType { code: 2, bits: 32, lanes: 1 },
            shape: shape.as_mut_ptr(),
            strides: strides.map_or(ptr::null_mut(), |s| s.as_mut_ptr()),
            byte_offset: 0,
        },
    }
}

/// The ValueError message for `m`, checking the tensor stayed the caller's.
fn refusal(m: &mut DLManagedTensorVersioned) -> String {
    let before = deleted();
    let mut out: TVMFFIObjectHandle = ptr::null_mut();
    // SAFETY: a managed tensor we own, alive for the call.
    let rc = unsafe { TVMFFITensorFromDLPackVersioned(m, 0, 0, &mut out) };
    assert_ne!(rc, 0, "accepted a malformed tensor");
    assert!(out.is_null());
    assert_eq!(deleted(), before, "a refused tensor's deleter ran");
    let e = take_raised().expect("an error was raised");
    assert_eq!(e.kind(), "ValueError", "{}", e.message());
    e.message().to_string()
}

#[test]
fn each_malformed_field_is_refused_by_name() {
    let mut data = [0f32; 6];
    let cases: &[(&str, fn(&mut DLManagedTensorVersioned), &str)] = &[
        ("bits 0", |m| m.dl_tensor.dtype.bits = 0, "has no bits or no lanes"),
        ("lanes 0", |m| m.dl_tensor.dtype.lanes = 0, "has no bits or no lanes"),
        ("unknown code", |m| m.dl_tensor.dtype.code = 100, "data type code 100 is unknown"),
        ("NULL data", |m| m.dl_tensor.data = ptr::null_mut(), "data is NULL for a tensor of 6 elements"),
        ("byte_offset", |m| m.dl_tensor.byte_offset = u64::MAX - 4, "byte_offset"),
        ("ndim", |m| m.dl_tensor.ndim = -2, "ndim -2 is outside"),
    ];
    for (what, spoil, expected) in cases {
        let mut shape = [2i64, 3];
        let mut m = managed(&mut data, &mut shape, None);
        spoil(&mut m);
        let message = refusal(&mut m);
        assert!(message.contains(expected), "{what}: {message}");
    }
    let mut shape = [2i64, -3];
    assert!(refusal(&mut managed(&mut data, &mut shape, None)).contains("extent -3 of axis 1 is negative"));
    let mut shape = [1i64 << 40, 1 << 40];
    assert!(refusal(&mut managed(&mut data, &mut shape, None)).contains("element count of shape"));
}

#[test]
fn strides_addressing_past_the_address_space_are_refused() {
    let mut data = [0f32; 6];
    for strides in [[1i64 << 62, 1], [-(1i64 << 62), 1], [i64::MIN, 1], [1, 1i64 << 61]] {
        let mut shape = [2i64, 3];
        let mut strides = strides;
        let message = refusal(&mut managed(&mut data, &mut shape, Some(&mut strides)));
        assert!(message.contains("memory addressed by shape [2, 3] and strides"), "{strides:?}: {message}");
    }
    // The addressed bytes fit on their own but not after the byte offset.
    let mut shape = [2i64, 3];
    let mut strides = [1i64 << 40, 1];
    let mut m = managed(&mut data, &mut shape, Some(&mut strides));
    m.dl_tensor.byte_offset = u64::MAX - (1 << 42);
    assert!(refusal(&mut m).contains("memory addressed"));
}

#[test]
fn accepted_tensors_keep_their_read_only_flag_and_odd_but_valid_layouts() {
    let mut data = [0f32; 6];
    let accept = |m: &mut DLManagedTensorVersioned| -> TVMFFIObjectHandle {
        let mut out: TVMFFIObjectHandle = ptr::null_mut();
        // SAFETY: a managed tensor we own; the Tensor owns it on success.
        assert_eq!(unsafe { TVMFFITensorFromDLPackVersioned(m, 0, 0, &mut out) }, 0);
        out
    };
    let release = |h: TVMFFIObjectHandle| {
        // SAFETY: the reference `accept` returned.
        assert_eq!(unsafe { TVMFFIObjectDecRef(h) }, 0);
    };
    // Negative and zero strides within range, read-only.
    let mut shape = [2i64, 3];
    let mut strides = [-3i64, 0];
    let mut m = managed(&mut data, &mut shape, Some(&mut strides));
    m.dl_tensor.byte_offset = 12;
    m.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    let before = deleted();
    let h = accept(&mut m);
    let mut out: *mut DLManagedTensorVersioned = ptr::null_mut();
    // SAFETY: a live Tensor handle; the export is deleted once below.
    unsafe {
        assert_eq!(TVMFFITensorToDLPackVersioned(h, &mut out), 0);
        assert_eq!((*out).flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
        ((*out).deleter.unwrap())(out);
    }
    release(h);
    assert_eq!(deleted(), before + 1);
    // No elements: no data needed, and the strides address nothing.
    let mut shape = [0i64, 5];
    let mut strides = [i64::MAX, i64::MIN];
    let mut m = managed(&mut data, &mut shape, Some(&mut strides));
    m.dl_tensor.data = ptr::null_mut();
    release(accept(&mut m));
    // Complex and custom codes are known.
    for code in [5u8, 129] {
        let mut shape = [3i64];
        let mut m = managed(&mut data, &mut shape, None);
        m.dl_tensor.dtype.code = code;
        release(accept(&mut m));
    }
}
