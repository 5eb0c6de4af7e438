//! Values crossing the C ABI: [`Any`] owns one (the reference of an object
//! value), [`AnyView`] borrows one (an argument of a call). Both read the
//! payload by the value's type index; strings and bytes are read from the
//! small-value bytes or the object cell after the header.
//!
//! SAFETY invariants: an `Any` holds an owned value (a non-NULL object
//! pointer carries one strong reference; no raw C string or byte-array
//! pointer); an `AnyView<'a>` is a value kept alive by someone else for
//! `'a`.

use std::ffi::CStr;
use std::marker::PhantomData;
use std::ptr::NonNull;

use tether_sys::abi::{type_index as ti, DLDataType, DLDevice, TVMFFIAny, TVMFFIAnyValue, TVMFFIByteArray, TVMFFIObject};
use tether_sys::dlpack::DLTensor;

use super::error::Error;
use super::bytes::byte_slice;
use super::object::ObjectRef;
use super::type_table::type_key;
use crate::core_api::api;

const HEADER: usize = std::mem::size_of::<TVMFFIObject>();

fn pod(type_index: i32, value: TVMFFIAnyValue) -> TVMFFIAny {
    TVMFFIAny { type_index, small_str_len: 0, value }
}

/// An owned value.
pub struct Any(TVMFFIAny);

// SAFETY: an owned value is a POD payload or an object reference (see
// ObjectRef's Send/Sync).
unsafe impl Send for Any {}
// SAFETY: as above.
unsafe impl Sync for Any {}

impl Any {
    pub fn none() -> Any {
        Any(TVMFFIAny::NONE)
    }

    pub fn int(v: i64) -> Any {
        Any(pod(ti::kTVMFFIInt, TVMFFIAnyValue { v_int64: v }))
    }

    pub fn float(v: f64) -> Any {
        Any(pod(ti::kTVMFFIFloat, TVMFFIAnyValue { v_float64: v }))
    }

    pub fn bool(v: bool) -> Any {
        Any(pod(ti::kTVMFFIBool, TVMFFIAnyValue { v_int64: v as i64 }))
    }

    pub fn device(v: DLDevice) -> Any {
        let mut value = TVMFFIAnyValue { v_int64: 0 };
        value.v_device = v;
        Any(pod(ti::kTVMFFIDevice, value))
    }

    pub fn dtype(v: DLDataType) -> Any {
        let mut value = TVMFFIAnyValue { v_int64: 0 };
        value.v_dtype = v;
        Any(pod(ti::kTVMFFIDataType, value))
    }

    pub fn opaque_ptr(type_index: i32, p: *mut std::ffi::c_void) -> Any {
        Any(pod(type_index, TVMFFIAnyValue { v_ptr: p }))
    }

    pub fn object(o: ObjectRef) -> Any {
        let index = o.type_index();
        Any(pod(index, TVMFFIAnyValue { v_obj: o.into_raw() }))
    }

    /// A string (small or a String object, as the core decides).
    pub fn string(s: &str) -> Result<Any, Error> {
        let b = TVMFFIByteArray { data: s.as_ptr().cast(), size: s.len() };
        let mut out = TVMFFIAny::NONE;
        // SAFETY: valid input bytes and output slot; the result is owned.
        Error::check(unsafe { (api().TVMFFIStringFromByteArray)(&b, &mut out) })?;
        Ok(Any(out))
    }

    /// A bytes value (small or a Bytes object).
    pub fn bytes(s: &[u8]) -> Result<Any, Error> {
        let b = TVMFFIByteArray { data: s.as_ptr().cast(), size: s.len() };
        let mut out = TVMFFIAny::NONE;
        // SAFETY: valid input bytes and output slot; the result is owned.
        Error::check(unsafe { (api().TVMFFIBytesFromByteArray)(&b, &mut out) })?;
        Ok(Any(out))
    }

    /// Take over an owned raw value.
    ///
    /// # Safety
    /// `raw` is owned (module invariant) and nobody else releases it.
    pub unsafe fn from_raw_owned(raw: TVMFFIAny) -> Any {
        Any(raw)
    }

    pub fn into_raw(self) -> TVMFFIAny {
        let raw = self.0;
        std::mem::forget(self);
        raw
    }

    pub fn as_raw(&self) -> &TVMFFIAny {
        &self.0
    }

    pub fn view(&self) -> AnyView<'_> {
        AnyView { raw: self.0, _life: PhantomData }
    }

    pub fn type_index(&self) -> i32 {
        self.0.type_index
    }

    pub fn is_none(&self) -> bool {
        self.0.type_index == ti::kTVMFFINone
    }

    pub fn into_object(self) -> Option<ObjectRef> {
        if self.0.type_index < ti::kTVMFFIStaticObjectBegin {
            return None;
        }
        // SAFETY: an owned object value carries one reference, handed over.
        let p = unsafe { self.into_raw().value.v_obj };
        // SAFETY: as above.
        NonNull::new(p).map(|p| unsafe { ObjectRef::from_raw_owned(p) })
    }
}

impl Clone for Any {
    fn clone(&self) -> Self {
        if let Some(o) = self.view().object() {
            std::mem::forget(o); // its reference now belongs to the copy
        }
        Any(self.0)
    }
}

impl Drop for Any {
    fn drop(&mut self) {
        if self.0.type_index >= ti::kTVMFFIStaticObjectBegin {
            // SAFETY: an object value of an owned Any (module invariant).
            let p = unsafe { self.0.value.v_obj };
            if !p.is_null() {
                // SAFETY: we own one reference.
                unsafe { (api().TVMFFIObjectDecRef)(p.cast()) };
            }
        }
    }
}

/// A borrowed value.
#[derive(Clone, Copy)]
pub struct AnyView<'a> {
    raw: TVMFFIAny,
    _life: PhantomData<&'a TVMFFIAny>,
}

impl<'a> AnyView<'a> {
    /// A view of a value someone keeps alive for `'a`.
    ///
    /// # Safety
    /// `raw` is a valid value for `'a` (module invariant).
    pub unsafe fn from_raw(raw: &'a TVMFFIAny) -> AnyView<'a> {
        AnyView { raw: *raw, _life: PhantomData }
    }

    pub fn raw(&self) -> &TVMFFIAny {
        &self.raw
    }

    pub fn type_index(&self) -> i32 {
        self.raw.type_index
    }

    pub fn is_none(&self) -> bool {
        self.raw.type_index == ti::kTVMFFINone
    }

    /// The type key of the value, as errors name it (`ffi.SmallStr`, `int`, …).
    pub fn type_key(&self) -> String {
        type_key(self.raw.type_index)
    }

    /// An owned copy (raw strings become String objects).
    pub fn to_owned(&self) -> Result<Any, Error> {
        let mut out = TVMFFIAny::NONE;
        // SAFETY: a valid view and output slot; the result is owned.
        Error::check(unsafe { (api().TVMFFIAnyViewToOwnedAny)(&self.raw, &mut out) })?;
        Ok(Any(out))
    }

    pub fn int(&self) -> Option<i64> {
        match self.raw.type_index {
            // SAFETY: the payload of an int or bool value.
            ti::kTVMFFIInt | ti::kTVMFFIBool => Some(unsafe { self.raw.value.v_int64 }),
            _ => None,
        }
    }

    pub fn float(&self) -> Option<f64> {
        match self.raw.type_index {
            // SAFETY: the payload of a float value.
            ti::kTVMFFIFloat => Some(unsafe { self.raw.value.v_float64 }),
            ti::kTVMFFIInt | ti::kTVMFFIBool => self.int().map(|v| v as f64),
            _ => None,
        }
    }

    pub fn bool(&self) -> Option<bool> {
        self.int().map(|v| v != 0)
    }

    pub fn device(&self) -> Option<DLDevice> {
        // SAFETY: any 8 payload bytes are a valid DLDevice (two i32s).
        (self.raw.type_index == ti::kTVMFFIDevice).then_some(unsafe { self.raw.value.v_device })
    }

    pub fn dtype(&self) -> Option<DLDataType> {
        // SAFETY: any payload bytes are a valid DLDataType (plain integers).
        (self.raw.type_index == ti::kTVMFFIDataType).then_some(unsafe { self.raw.value.v_dtype })
    }

    /// The object of an object value (a new reference); None for NULL.
    pub fn object(&self) -> Option<ObjectRef> {
        if self.raw.type_index < ti::kTVMFFIStaticObjectBegin {
            return None;
        }
        // SAFETY: an object value kept alive for `'a` (module invariant).
        let p = unsafe { self.raw.value.v_obj };
        // SAFETY: as above.
        NonNull::new(p).map(|p| unsafe { ObjectRef::from_raw_borrowed(p) })
    }

    /// The object pointer of an object value, without a new reference.
    pub fn object_ptr(&self) -> Option<NonNull<TVMFFIObject>> {
        if self.raw.type_index < ti::kTVMFFIStaticObjectBegin {
            return None;
        }
        // SAFETY: the payload of an object value.
        NonNull::new(unsafe { self.raw.value.v_obj })
    }

    /// The DLTensor of a DLTensor pointer or a Tensor object (whose
    /// DLTensor follows the object header).
    pub fn dltensor(&self) -> Option<*mut DLTensor> {
        match self.raw.type_index {
            // SAFETY: the payload of a DLTensor pointer.
            ti::kTVMFFIDLTensorPtr => Some(unsafe { self.raw.value.v_ptr }.cast()),
            ti::kTVMFFITensor => self.object_ptr().map(|p| (p.as_ptr() as *mut u8).wrapping_add(HEADER).cast()),
            _ => None,
        }
    }

    /// The text of a string value (small, object or raw C string).
    pub fn str(&self) -> Option<String> {
        self.byte_content(ti::kTVMFFISmallStr, ti::kTVMFFIStr, ti::kTVMFFIRawStr)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// The content of a bytes value (small, object or byte-array pointer).
    pub fn bytes(&self) -> Option<Vec<u8>> {
        self.byte_content(ti::kTVMFFISmallBytes, ti::kTVMFFIBytes, ti::kTVMFFIByteArrayPtr)
    }

    fn byte_content(&self, small: i32, object: i32, raw: i32) -> Option<Vec<u8>> {
        let i = self.raw.type_index;
        if i == small {
            let n = (self.raw.small_str_len as usize).min(8);
            // SAFETY: a small value keeps its bytes in the payload.
            return Some(unsafe { self.raw.value.v_bytes }[..n].to_vec());
        }
        if i == object {
            let p = self.object_ptr()?;
            // SAFETY: a String/Bytes object: a byte array follows the header,
            // alive with the object (kept alive for `'a`).
            let b = unsafe { &*((p.as_ptr() as *const u8).add(HEADER) as *const TVMFFIByteArray) };
            return Some(byte_slice(b).to_vec());
        }
        if i == raw && raw == ti::kTVMFFIRawStr {
            // SAFETY: the payload of a raw string: a NUL-terminated C string.
            let p = unsafe { self.raw.value.v_c_str };
            // SAFETY: as above, alive for `'a`.
            return (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes().to_vec());
        }
        if i == raw {
            // SAFETY: the payload of a byte-array pointer.
            let p = unsafe { self.raw.value.v_ptr } as *const TVMFFIByteArray;
            // SAFETY: as above, alive for `'a`.
            return (!p.is_null()).then(|| byte_slice(unsafe { &*p }).to_vec());
        }
        None
    }
}
