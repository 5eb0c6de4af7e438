//! String and Bytes values.
//!
//! Up to 7 bytes live inline in the Any (`ffi.SmallStr`, `ffi.SmallBytes`).
//! Longer ones are objects: the header, a `TVMFFIByteArray` pointing at the
//! characters, then the characters themselves, NUL-terminated, in the same
//! block. String and Bytes share this layout.

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIAnyValue, TVMFFIByteArray, TVMFFIObject};
use crate::types::byte_array::byte_slice;
use crate::object::{header_placeholder, ObjectError, ObjectPtr, ObjectType};

/// Longest content stored inline.
pub const MAX_SMALL_LEN: usize = 7;

/// The heap cell of String and Bytes.
#[repr(C)]
pub struct StringObj {
    header: TVMFFIObject,
    bytes: TVMFFIByteArray,
}

// SAFETY: immutable after construction; the bytes live in the same block.
unsafe impl Send for StringObj {}
// SAFETY: as above.
unsafe impl Sync for StringObj {}

// SAFETY: repr(C), header first.
unsafe impl ObjectType for StringObj {
    const TYPE_KEY: &'static str = "ffi.String";
    fn type_index() -> i32 {
        ti::kTVMFFIStr
    }
}

impl StringObj {
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: the byte array points into this object's own tail.
        unsafe { byte_slice(&self.bytes) }
    }
}

/// A short str (or bytes) value held inline (`ffi.SmallStr`,
/// `ffi.SmallBytes`; it holds no reference), or None when `content` is too
/// long for it.
pub fn small_str_or_bytes(content: &[u8], is_bytes: bool) -> Option<TVMFFIAny> {
    if content.len() > MAX_SMALL_LEN {
        return None;
    }
    let mut raw = TVMFFIAny {
        type_index: if is_bytes { ti::kTVMFFISmallBytes } else { ti::kTVMFFISmallStr },
        small_str_len: content.len() as u32,
        value: TVMFFIAnyValue { v_uint64: 0 },
    };
    // SAFETY: writing at most 7 bytes into the 8-byte payload (the 8th
    // stays 0 as a terminator).
    unsafe { raw.value.v_bytes[..content.len()].copy_from_slice(content) };
    Some(raw)
}

/// A str (or bytes) object holding `content` (NUL-terminated after it).
pub fn str_or_bytes_object(content: &[u8], is_bytes: bool) -> Result<ObjectPtr<StringObj>, ObjectError> {
    let index = if is_bytes { ti::kTVMFFIBytes } else { ti::kTVMFFIStr };
    let obj = StringObj { header: header_placeholder(), bytes: TVMFFIByteArray::EMPTY };
    // SAFETY: the tail (content + NUL) is written before the object escapes,
    // and StringObj needs no drop for it.
    let ptr = unsafe { ObjectPtr::new_with_type_index(obj, content.len() + 1, index)? };
    // SAFETY: we are the only owner; the tail follows the struct.
    unsafe {
        let cell = ptr.as_ptr();
        let tail = (cell as *mut u8).add(std::mem::size_of::<StringObj>());
        std::ptr::copy_nonoverlapping(content.as_ptr(), tail, content.len());
        *tail.add(content.len()) = 0;
        (*cell).bytes = TVMFFIByteArray { data: tail as *const _, size: content.len() };
    }
    Ok(ptr)
}

/// The content of a str/bytes value (inline, object, raw C string or byte
/// array pointer), or None for any other type.
///
/// # Safety
/// Whatever `v` refers to must stay alive for `'a`.
pub unsafe fn content_of<'a>(v: &TVMFFIAny) -> Option<&'a [u8]> {
    // SAFETY: reading the union per the type index; lifetimes per the caller.
    unsafe {
        match v.type_index {
            ti::kTVMFFISmallStr | ti::kTVMFFISmallBytes => {
                let len = (v.small_str_len as usize).min(MAX_SMALL_LEN);
                let p = std::ptr::addr_of!(v.value.v_bytes) as *const u8;
                Some(std::slice::from_raw_parts(p, len))
            }
            ti::kTVMFFIStr | ti::kTVMFFIBytes => {
                let cell = (v.value.v_obj as *const u8).add(std::mem::size_of::<TVMFFIObject>()) as *const TVMFFIByteArray;
                Some(byte_slice(&*cell))
            }
            ti::kTVMFFIRawStr => Some(std::ffi::CStr::from_ptr(v.value.v_c_str).to_bytes()),
            ti::kTVMFFIByteArrayPtr => Some(byte_slice(&*(v.value.v_ptr as *const TVMFFIByteArray))),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::any::Any;

    #[test]
    fn small_and_heap_strings_round_trip() {
        for s in ["", "abc", "1234567", "12345678", "a much longer string than seven bytes"] {
            let v = Any::string(s).unwrap();
            let small = s.len() <= MAX_SMALL_LEN;
            assert_eq!(v.type_index(), if small { ti::kTVMFFISmallStr } else { ti::kTVMFFIStr });
            assert_eq!(v.get::<String>().unwrap(), s);
        }
        let b = Any::bytes(b"\x00\x01binary\xff").unwrap();
        assert_eq!(b.type_index(), ti::kTVMFFIBytes);
        assert_eq!(b.get::<Vec<u8>>().unwrap(), b"\x00\x01binary\xff");
        assert!(b.get::<String>().unwrap_err().message().contains("expected str, got ffi.Bytes"));
    }
}
