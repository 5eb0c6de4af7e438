//! `Any` (owning) and `AnyView` (borrowing) over the ABI's `TVMFFIAny`,
//! with conversions to and from Rust values.
//!
//! Ownership rule: an owning `Any` holding an object type index owns one
//! strong reference on `v_obj`; every other type index holds plain data.
//! Small strings and bytes (up to 7 bytes) live inline in the payload.
//!
//! SAFETY invariants of this module: an `Any` whose type index is at least
//! `kTVMFFIStaticObjectBegin` has a non-NULL `v_obj` on which it owns one
//! strong reference; `small_str_len <= 7` for small strings and bytes.

use std::ffi::{c_void, CStr};
use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::abi::{type_index as ti, DLDataType, DLDevice, TVMFFIAny, TVMFFIAnyValue, TVMFFIByteArray, TVMFFIObject};
use crate::values::error::{byte_slice, Error};
use crate::object::{ObjectPtr, ObjectRef, ObjectType};
use crate::values::string;
use crate::types::type_registry::type_key_of;

/// An owned value of any FFI type.
#[repr(transparent)]
pub struct Any(TVMFFIAny);

// SAFETY: the payload is plain data or an object with atomic counts.
unsafe impl Send for Any {}
// SAFETY: as above.
unsafe impl Sync for Any {}

/// A borrowed value, as functions receive their arguments.
#[repr(transparent)]
#[derive(Clone, Copy)]
pub struct AnyView<'a>(TVMFFIAny, PhantomData<&'a ()>);

fn is_object_index(index: i32) -> bool {
    index >= ti::kTVMFFIStaticObjectBegin
}

fn pod(index: i32, value: TVMFFIAnyValue) -> TVMFFIAny {
    TVMFFIAny { type_index: index, small_str_len: 0, value }
}

impl Any {
    pub const fn none() -> Any {
        Any(TVMFFIAny::NONE)
    }

    /// Take ownership of a raw value (one strong reference if an object).
    ///
    /// # Safety
    /// `raw` must satisfy the module invariant and the caller must own it.
    pub unsafe fn from_raw_owned(raw: TVMFFIAny) -> Any {
        Any(raw)
    }

    /// Give up ownership of the raw value.
    pub fn into_raw(self) -> TVMFFIAny {
        let r = self.0;
        std::mem::forget(self);
        r
    }

    pub fn as_raw(&self) -> &TVMFFIAny {
        &self.0
    }

    pub fn view(&self) -> AnyView<'_> {
        AnyView(self.0, PhantomData)
    }

    pub fn type_index(&self) -> i32 {
        self.0.type_index
    }

    pub fn type_key(&self) -> String {
        type_key_of(self.0.type_index)
    }

    pub fn is_none(&self) -> bool {
        self.0.type_index == ti::kTVMFFINone
    }

    pub fn from_object(obj: ObjectRef) -> Any {
        let index = obj.type_index();
        Any(pod(index, TVMFFIAnyValue { v_obj: obj.into_raw() }))
    }

    pub fn opaque_ptr(p: *mut c_void) -> Any {
        if p.is_null() {
            return Any::none();
        }
        Any(pod(ti::kTVMFFIOpaquePtr, TVMFFIAnyValue { v_ptr: p }))
    }

    pub fn data_type(d: DLDataType) -> Any {
        // The payload's upper four bytes are zero, as TVM-FFI clears them:
        // equality and hashing of values read all eight.
        let mut value = TVMFFIAnyValue { v_int64: 0 };
        value.v_dtype = d;
        Any(pod(ti::kTVMFFIDataType, value))
    }

    pub fn device(d: DLDevice) -> Any {
        Any(pod(ti::kTVMFFIDevice, TVMFFIAnyValue { v_device: d }))
    }

    /// A string value (small inline, or a String object).
    pub fn string(s: &str) -> Result<Any, Error> {
        make_str_or_bytes(s.as_bytes(), false)
    }

    /// A bytes value (small inline, or a Bytes object).
    pub fn bytes(b: &[u8]) -> Result<Any, Error> {
        make_str_or_bytes(b, true)
    }

    /// `TVMFFIAnyViewToOwnedAny`: own whatever a view refers to.
    ///
    /// Raw C strings and byte-array pointers become String/Bytes values;
    /// objects gain a reference; an rvalue reference moves the object out of
    /// its slot.
    pub fn from_view(v: &TVMFFIAny) -> Result<Any, Error> {
        let index = v.type_index;
        // SAFETY: reading the payload union according to the type index.
        unsafe {
            match index {
                ti::kTVMFFIRawStr => {
                    if v.value.v_c_str.is_null() {
                        return Err(Error::value_error("raw string view holds a NULL pointer"));
                    }
                    let s = CStr::from_ptr(v.value.v_c_str);
                    make_str_or_bytes(s.to_bytes(), false)
                }
                ti::kTVMFFIByteArrayPtr => {
                    let p = v.value.v_ptr as *const TVMFFIByteArray;
                    if p.is_null() {
                        return Err(Error::value_error("byte array view holds a NULL pointer"));
                    }
                    make_str_or_bytes(byte_slice(&*p), true)
                }
                ti::kTVMFFIObjectRValueRef => {
                    let slot = v.value.v_ptr as *mut *mut TVMFFIObject;
                    if slot.is_null() {
                        return Err(Error::value_error("rvalue reference holds a NULL slot"));
                    }
                    let obj = std::ptr::replace(slot, std::ptr::null_mut());
                    match NonNull::new(obj) {
                        Some(o) => Ok(Any::from_object(ObjectRef::from_raw_owned(o))),
                        None => Err(Error::value_error("rvalue reference was already moved from")),
                    }
                }
                ti::kTVMFFISmallStr | ti::kTVMFFISmallBytes => {
                    if v.small_str_len > 7 {
                        return Err(Error::value_error(format!("small string length {} exceeds 7", v.small_str_len)));
                    }
                    Ok(Any(*v))
                }
                i if is_object_index(i) => match NonNull::new(v.value.v_obj) {
                    Some(o) => Ok(Any::from_object(ObjectRef::from_raw_borrowed(o))),
                    None => Err(Error::value_error(format!("value of type {} holds a NULL object", type_key_of(i)))),
                },
                ti::kTVMFFINone
                | ti::kTVMFFIInt
                | ti::kTVMFFIBool
                | ti::kTVMFFIFloat
                | ti::kTVMFFIOpaquePtr
                | ti::kTVMFFIDataType
                | ti::kTVMFFIDevice
                // As upstream, a DLTensor* stays a borrowed pointer: owning
                // the value does not keep the tensor alive.
                | ti::kTVMFFIDLTensorPtr => Ok(Any(pod(index, v.value))),
                _ => Err(Error::type_error(format!("unknown value type index {index}"))),
            }
        }
    }

    /// The object this value holds, taking over the value's reference (no
    /// count change); the value itself back when it holds no object.
    pub fn into_object(self) -> Result<ObjectRef, Any> {
        if !is_object_index(self.0.type_index) {
            return Err(self);
        }
        let raw = self.into_raw();
        // SAFETY: module invariant: object indices carry a live v_obj, and
        // the value owned one reference, now the ObjectRef's.
        Ok(unsafe { ObjectRef::from_raw_owned(NonNull::new_unchecked(raw.value.v_obj)) })
    }

    /// The object this value holds, with a new reference.
    pub fn as_object(&self) -> Option<ObjectRef> {
        if is_object_index(self.0.type_index) {
            // SAFETY: module invariant: object indices carry a live v_obj.
            Some(unsafe { ObjectRef::from_raw_borrowed(NonNull::new_unchecked(self.0.value.v_obj)) })
        } else {
            None
        }
    }

    /// Borrow the object pointer without touching counts.
    pub fn object_ptr(&self) -> Option<*mut TVMFFIObject> {
        // SAFETY: reading the union per the type index.
        is_object_index(self.0.type_index).then(|| unsafe { self.0.value.v_obj })
    }

    /// Same type and payload (strings and bytes compared by content).
    pub fn same_value(&self, other: &Any) -> bool {
        self.view().same_value(&other.view())
    }

    pub fn get<T: FromAny>(&self) -> Result<T, Error> {
        T::from_any(&self.0)
    }
}

impl Clone for Any {
    fn clone(&self) -> Self {
        if is_object_index(self.0.type_index) {
            // SAFETY: module invariant.
            unsafe { crate::object::inc_ref(self.0.value.v_obj) };
        }
        Any(self.0)
    }
}

impl Drop for Any {
    fn drop(&mut self) {
        if is_object_index(self.0.type_index) {
            // SAFETY: module invariant: we own this reference.
            unsafe { crate::object::dec_ref(self.0.value.v_obj) };
        }
    }
}

impl Default for Any {
    fn default() -> Self {
        Any::none()
    }
}

impl std::fmt::Debug for Any {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.view().fmt(f)
    }
}

impl<'a> AnyView<'a> {
    /// View a raw value for the lifetime `'a`.
    ///
    /// # Safety
    /// Whatever `raw` refers to must stay alive for `'a`.
    pub unsafe fn from_raw(raw: TVMFFIAny) -> Self {
        AnyView(raw, PhantomData)
    }

    /// View a raw argument array.
    ///
    /// # Safety
    /// `args` must point to `n` values alive for `'a` (or `n == 0`).
    pub unsafe fn slice_from_raw(args: *const TVMFFIAny, n: usize) -> &'a [AnyView<'a>] {
        if n == 0 || args.is_null() {
            &[]
        } else {
            // SAFETY: AnyView is repr(transparent) over TVMFFIAny.
            unsafe { std::slice::from_raw_parts(args as *const AnyView<'a>, n) }
        }
    }

    pub fn as_raw(&self) -> &TVMFFIAny {
        &self.0
    }

    pub fn type_index(&self) -> i32 {
        self.0.type_index
    }

    pub fn type_key(&self) -> String {
        type_key_of(self.0.type_index)
    }

    pub fn to_owned(&self) -> Result<Any, Error> {
        Any::from_view(&self.0)
    }

    pub fn get<T: FromAny>(&self) -> Result<T, Error> {
        T::from_any(&self.0)
    }

    /// The string or bytes content this value holds, if it is one. Borrowed
    /// from the view itself, not for 'a: a small string's bytes live inline
    /// in the view's own payload.
    pub fn str_bytes(&self) -> Option<&[u8]> {
        // SAFETY: the view keeps a heap string alive for 'a, which outlives
        // this borrow; a small string's bytes are inside `self.0`.
        unsafe { string::content_of(&self.0) }
    }

    pub fn same_value(&self, other: &AnyView<'_>) -> bool {
        if let (Some(a), Some(b)) = (self.str_bytes(), other.str_bytes()) {
            let a_is_bytes = matches!(self.0.type_index, ti::kTVMFFIBytes | ti::kTVMFFISmallBytes);
            let b_is_bytes = matches!(other.0.type_index, ti::kTVMFFIBytes | ti::kTVMFFISmallBytes);
            return a_is_bytes == b_is_bytes && a == b;
        }
        // SAFETY: both payloads are 8 plain bytes.
        self.0.type_index == other.0.type_index && unsafe { self.0.value.v_uint64 == other.0.value.v_uint64 }
    }
}

impl std::fmt::Debug for AnyView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: reading the union per the type index.
        unsafe {
            match self.0.type_index {
                ti::kTVMFFINone => write!(f, "None"),
                ti::kTVMFFIInt => write!(f, "{}", self.0.value.v_int64),
                ti::kTVMFFIBool => write!(f, "{}", self.0.value.v_int64 != 0),
                ti::kTVMFFIFloat => write!(f, "{}", self.0.value.v_float64),
                _ => match self.str_bytes() {
                    Some(b) => write!(f, "{:?}", String::from_utf8_lossy(b)),
                    None => write!(f, "<{} {:p}>", self.type_key(), self.0.value.v_ptr),
                },
            }
        }
    }
}

/// Conversion out of a value, with a TypeError naming both types on mismatch.
pub trait FromAny: Sized {
    /// Name used in error messages.
    const EXPECTED: &'static str;
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error>;
}

fn mismatch(expected: &str, v: &TVMFFIAny) -> Error {
    Error::type_error(format!("expected {expected}, got {}", type_key_of(v.type_index)))
}

impl FromAny for i64 {
    const EXPECTED: &'static str = "int";
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error> {
        match v.type_index {
            // SAFETY: int and bool carry v_int64.
            ti::kTVMFFIInt | ti::kTVMFFIBool => Ok(unsafe { v.value.v_int64 }),
            _ => Err(mismatch(Self::EXPECTED, v)),
        }
    }
}

impl FromAny for i32 {
    const EXPECTED: &'static str = "int";
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error> {
        let x = i64::from_any(v)?;
        i32::try_from(x).map_err(|_| Error::value_error(format!("{x} does not fit in a 32-bit int")))
    }
}

impl FromAny for f64 {
    const EXPECTED: &'static str = "float";
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error> {
        // SAFETY: reading the union per the type index.
        match v.type_index {
            ti::kTVMFFIFloat => Ok(unsafe { v.value.v_float64 }),
            // SAFETY: int and bool carry v_int64.
            ti::kTVMFFIInt | ti::kTVMFFIBool => Ok(unsafe { v.value.v_int64 } as f64),
            _ => Err(mismatch(Self::EXPECTED, v)),
        }
    }
}

impl FromAny for bool {
    const EXPECTED: &'static str = "bool";
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error> {
        match v.type_index {
            // SAFETY: int and bool carry v_int64.
            ti::kTVMFFIBool | ti::kTVMFFIInt => Ok(unsafe { v.value.v_int64 } != 0),
            _ => Err(mismatch(Self::EXPECTED, v)),
        }
    }
}

impl FromAny for String {
    const EXPECTED: &'static str = "str";
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error> {
        match v.type_index {
            ti::kTVMFFIStr | ti::kTVMFFISmallStr | ti::kTVMFFIRawStr => {
                // SAFETY: str values carry their content; the caller's view
                // keeps it alive during the copy.
                let b = unsafe { string::content_of(v) }.unwrap_or_default();
                String::from_utf8(b.to_vec()).map_err(|_| Error::value_error("string is not valid UTF-8"))
            }
            _ => Err(mismatch(Self::EXPECTED, v)),
        }
    }
}

impl FromAny for Vec<u8> {
    const EXPECTED: &'static str = "bytes";
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error> {
        match v.type_index {
            // SAFETY: as for String.
            ti::kTVMFFIBytes | ti::kTVMFFISmallBytes | ti::kTVMFFIByteArrayPtr => {
                Ok(unsafe { string::content_of(v) }.unwrap_or_default().to_vec())
            }
            _ => Err(mismatch(Self::EXPECTED, v)),
        }
    }
}

impl FromAny for ObjectRef {
    const EXPECTED: &'static str = "Object";
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error> {
        if is_object_index(v.type_index) {
            // SAFETY: object indices carry a live v_obj in a valid view.
            match NonNull::new(unsafe { v.value.v_obj }) {
                Some(p) => Ok(unsafe { ObjectRef::from_raw_borrowed(p) }),
                None => Err(Error::value_error("object value holds NULL")),
            }
        } else {
            Err(mismatch(Self::EXPECTED, v))
        }
    }
}

impl<T: ObjectType> FromAny for ObjectPtr<T> {
    const EXPECTED: &'static str = T::TYPE_KEY;
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error> {
        ObjectRef::from_any(v).map_err(|_| mismatch(T::TYPE_KEY, v))?.downcast::<T>().map_err(Error::from)
    }
}

impl<T: FromAny> FromAny for Option<T> {
    const EXPECTED: &'static str = T::EXPECTED;
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error> {
        if v.type_index == ti::kTVMFFINone {
            Ok(None)
        } else {
            T::from_any(v).map(Some)
        }
    }
}

impl FromAny for Any {
    const EXPECTED: &'static str = "Any";
    fn from_any(v: &TVMFFIAny) -> Result<Self, Error> {
        Any::from_view(v)
    }
}

impl From<i64> for Any {
    fn from(x: i64) -> Any {
        Any(pod(ti::kTVMFFIInt, TVMFFIAnyValue { v_int64: x }))
    }
}
impl From<i32> for Any {
    fn from(x: i32) -> Any {
        Any::from(x as i64)
    }
}
impl From<f64> for Any {
    fn from(x: f64) -> Any {
        Any(pod(ti::kTVMFFIFloat, TVMFFIAnyValue { v_float64: x }))
    }
}
impl From<bool> for Any {
    fn from(x: bool) -> Any {
        Any(pod(ti::kTVMFFIBool, TVMFFIAnyValue { v_int64: x as i64 }))
    }
}
impl From<()> for Any {
    fn from(_: ()) -> Any {
        Any::none()
    }
}
impl From<ObjectRef> for Any {
    fn from(o: ObjectRef) -> Any {
        Any::from_object(o)
    }
}
impl<T: ObjectType> From<ObjectPtr<T>> for Any {
    fn from(o: ObjectPtr<T>) -> Any {
        Any::from_object(o.into_object_ref())
    }
}
impl<T: Into<Any>> From<Option<T>> for Any {
    fn from(o: Option<T>) -> Any {
        o.map_or_else(Any::none, Into::into)
    }
}

/// Fallible conversion into a value (strings may need an allocation).
pub trait IntoAny {
    fn into_any(self) -> Result<Any, Error>;
}

impl<T: Into<Any>> IntoAny for T {
    fn into_any(self) -> Result<Any, Error> {
        Ok(self.into())
    }
}
impl IntoAny for &str {
    fn into_any(self) -> Result<Any, Error> {
        Any::string(self)
    }
}
impl IntoAny for String {
    fn into_any(self) -> Result<Any, Error> {
        Any::string(&self)
    }
}
impl IntoAny for &[u8] {
    fn into_any(self) -> Result<Any, Error> {
        Any::bytes(self)
    }
}

/// Make a str (or bytes) value: inline when short, an object otherwise.
pub fn make_str_or_bytes(content: &[u8], is_bytes: bool) -> Result<Any, Error> {
    if let Some(raw) = string::small_str_or_bytes(content, is_bytes) {
        // SAFETY: a small value holds no reference.
        return Ok(unsafe { Any::from_raw_owned(raw) });
    }
    Ok(Any::from_object(string::str_or_bytes_object(content, is_bytes)?.into_object_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_type_values_clear_the_payload_padding() {
        let v = Any::data_type(DLDataType { code: 0, bits: 32, lanes: 1 });
        // SAFETY: every payload is 8 readable bytes.
        assert_eq!(unsafe { v.as_raw().value.v_uint64 } >> 32, 0);
        assert!(v.same_value(&Any::data_type(DLDataType { code: 0, bits: 32, lanes: 1 })));
    }
}
