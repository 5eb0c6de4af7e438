//! DLPack import (`TVMFFITensorFromDLPack` / `...Versioned`) of a tensor
//! description read from fuzz bytes: ndim, shape, strides, dtype, device,
//! byte offset, flags and the alignment/contiguity requests are arbitrary;
//! the data pointer is a real buffer. Import either fails with an error
//! (leaving the producer's tensor with the producer, deleter not called) or
//! adopts it (deleter called exactly once when the last reference goes);
//! an adopted tensor's metadata reads back as given and it exports back
//! to DLPack. The content is never read: the producer's description, not
//! the core, vouches for the buffer's extent.

#![no_main]

use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use libfuzzer_sys::fuzz_target;
use tether_core::abi::{DLDataType, DLDevice, TVMFFIObject, TVMFFIObjectHandle};
use tether_core::c_api::{TVMFFIObjectDecRef, TVMFFITensorFromDLPack, TVMFFITensorFromDLPackVersioned};
use tether_core::values::error::take_raised;
use tether_core::Tensor;
use tether_sys::dlpack::{DLManagedTensor, DLManagedTensorVersioned, DLPackVersion, DLTensor};

static DELETED: AtomicUsize = AtomicUsize::new(0);

/// What the producer owns for one tensor.
struct Producer {
    _data: Vec<u64>,
    _shape: Vec<i64>,
    _strides: Option<Vec<i64>>,
}

unsafe extern "C" fn legacy_deleter(m: *mut DLManagedTensor) {
    // SAFETY: made by `fuzz_target!` below as a Box; DLPack calls this once.
    unsafe {
        let m = Box::from_raw(m);
        drop(Box::from_raw(m.manager_ctx as *mut Producer));
    }
    DELETED.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn versioned_deleter(m: *mut DLManagedTensorVersioned) {
    // SAFETY: as in `legacy_deleter`.
    unsafe {
        let m = Box::from_raw(m);
        drop(Box::from_raw(m.manager_ctx as *mut Producer));
    }
    DELETED.fetch_add(1, Ordering::SeqCst);
}

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        let n = N.min(self.0.len());
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        out
    }
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.take())
    }
    /// Small values most of the time (so some tensors are valid), any value
    /// sometimes.
    fn extent(&mut self) -> i64 {
        match self.u8() % 4 {
            0 => self.i64(),
            _ => (self.u8() % 9) as i64 - 1,
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let mode = b.u8();
    let ndim_byte = b.u8();
    let ndim: i32 = if ndim_byte & 0x80 != 0 { b.i64() as i32 } else { (ndim_byte % 6) as i32 };
    // A producer's shape (and strides) hold `ndim` extents: the core cannot
    // check that, so the arrays are that long whenever the core may read
    // them (ndim up to its limit, 2^16); the first eight extents come from
    // the input, the rest are 1.
    let axes = if (0..=1 << 16).contains(&ndim) { ndim as usize } else { 8 };
    let fuzzed = |b: &mut Bytes| -> Vec<i64> { (0..axes).map(|i| if i < 8 { b.extent() } else { 1 }).collect() };
    let mut shape: Vec<i64> = fuzzed(&mut b);
    let mut strides: Option<Vec<i64>> = (mode & 1 != 0).then(|| fuzzed(&mut b));
    let dtype = DLDataType { code: b.u8(), bits: b.u8(), lanes: u16::from_le_bytes(b.take()) };
    let device = DLDevice { device_type: (b.u8() % 20) as i32, device_id: b.u8() as i32 - 1 };
    let byte_offset = if mode & 2 != 0 { b.i64() as u64 } else { (b.u8() % 64) as u64 };
    let flags = b.i64() as u64;
    let align = [0, 1, 8, 64, 3][(b.u8() % 5) as usize];
    let contiguous = b.u8() & 1;
    let versioned = mode & 4 != 0;
    let null_data = mode & 8 != 0;

    let mut buffer = vec![0u64; 512];
    let dl = DLTensor {
        data: if null_data { ptr::null_mut() } else { buffer.as_mut_ptr() as *mut c_void },
        device,
        ndim,
        dtype,
        shape: if shape.is_empty() { ptr::null_mut() } else { shape.as_mut_ptr() },
        strides: strides.as_mut().map_or(ptr::null_mut(), |s| s.as_mut_ptr()),
        byte_offset,
    };
    let given_shape = shape.clone();
    let producer = Box::into_raw(Box::new(Producer { _data: buffer, _shape: shape, _strides: strides })) as *mut c_void;
    let before = DELETED.load(Ordering::SeqCst);
    let mut out: TVMFFIObjectHandle = ptr::null_mut();
    // SAFETY: each managed tensor is a Box we made, with a deleter that frees
    // it; on failure ownership stays here and we call the deleter ourselves.
    let rc = unsafe {
        if versioned {
            let m = Box::into_raw(Box::new(DLManagedTensorVersioned {
                version: DLPackVersion { major: 1, minor: 1 },
                manager_ctx: producer,
                deleter: Some(versioned_deleter),
                flags,
                dl_tensor: dl,
            }));
            let rc = TVMFFITensorFromDLPackVersioned(m, align, contiguous as i32, &mut out);
            if rc != 0 {
                versioned_deleter(m);
            }
            rc
        } else {
            let m = Box::into_raw(Box::new(DLManagedTensor { dl_tensor: dl, manager_ctx: producer, deleter: Some(legacy_deleter) }));
            let rc = TVMFFITensorFromDLPack(m, align, contiguous as i32, &mut out);
            if rc != 0 {
                legacy_deleter(m);
            }
            rc
        }
    };
    if rc != 0 {
        take_raised().expect("a refused tensor raises an error");
        assert_eq!(DELETED.load(Ordering::SeqCst), before + 1, "a refused tensor's deleter ran before ours");
        return;
    }
    assert_eq!(DELETED.load(Ordering::SeqCst), before, "an adopted tensor was deleted early");
    {
        // SAFETY: `out` is a live tensor we hold one reference to.
        let t = unsafe { Tensor::from_raw_borrowed(ptr::NonNull::new(out as *mut TVMFFIObject).expect("a tensor")) }.expect("a Tensor");
        assert_eq!(t.ndim(), ndim);
        assert_eq!(t.shape(), &given_shape[..]);
        assert_eq!(t.dtype().bits, dtype.bits);
        assert_eq!(t.byte_offset(), byte_offset);
        let _ = (t.numel(), t.is_contiguous(), t.is_aligned(64));
        // Export and release through the exported deleter.
        let back = t.to_dlpack_versioned();
        // SAFETY: a managed tensor the core made; its deleter releases it.
        unsafe { ((*back).deleter.expect("a deleter"))(back) };
    }
    // SAFETY: we own the reference import gave us.
    assert_eq!(unsafe { TVMFFIObjectDecRef(out) }, 0);
    assert_eq!(DELETED.load(Ordering::SeqCst), before + 1, "an adopted tensor's deleter did not run once");
});
