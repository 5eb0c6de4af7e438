//! A Rust library sharing a process with Python: it links the core shared
//! library through `tether-sys` (never the core's rlib), registers a global
//! function, and allocates its own object type through the allocator
//! registry. The Python tests load it with `tether.load_module`.

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

use tether_sys::abi::*;
use tether_sys::*;

#[repr(C)]
struct Counter {
    header: TVMFFIObject,
    value: i64,
}

fn counter_type_index() -> i32 {
    static INDEX: OnceLock<i32> = OnceLock::new();
    *INDEX.get_or_init(|| {
        let key = b"rust_plugin.Counter";
        let k = TVMFFIByteArray { data: key.as_ptr() as *const _, size: key.len() };
        // SAFETY: a valid key; registered as a direct child of ffi.Object.
        unsafe { TVMFFITypeGetOrAllocIndex(&k, -1, 1, 0, 0, type_index::kTVMFFIObject) }
    })
}

unsafe extern "C" fn counter_deleter(obj: *mut c_void, flags: c_int) {
    if flags & kTVMFFIObjectDeleterFlagBitMaskWeak != 0 {
        // SAFETY: allocated through the registry: the header precedes the body.
        unsafe {
            let header = &*(obj as *const TVMFFIObjectAllocHeader).sub(1);
            if let Some(free) = header.delete_space {
                free(obj);
            }
        }
    }
}

/// `make_counter(value)`: a Counter allocated through `TVMFFIGetCustomAllocator()`.
///
/// # Safety
/// Called by the core with the packed calling convention.
#[no_mangle]
pub unsafe extern "C" fn __tvm_ffi_make_counter(
    _self: *mut c_void,
    args: *const TVMFFIAny,
    n: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    // SAFETY: the calling convention gives `n` valid arguments and a result slot.
    unsafe {
        let value = if n >= 1 && (*args).type_index == type_index::kTVMFFIInt { (*args).value.v_int64 } else { 0 };
        let index = counter_type_index();
        let alloc = &*TVMFFIGetCustomAllocator();
        let Some(allocate) = alloc.allocate else { return -1 };
        let body = allocate(std::mem::size_of::<Counter>(), std::mem::align_of::<Counter>(), index, alloc.context) as *mut Counter;
        if body.is_null() {
            let kind = c"MemoryError";
            let msg = c"rust_plugin: allocation failed";
            TVMFFIErrorSetRaisedFromCStr(kind.as_ptr(), msg.as_ptr());
            return -1;
        }
        body.write(Counter {
            header: TVMFFIObject {
                combined_ref_count: 1 | (1 << 32),
                type_index: index,
                __padding: MARKER_REGISTRY_ALLOCATED,
                deleter: Some(counter_deleter),
            },
            value,
        });
        *result = TVMFFIAny { type_index: index, small_str_len: 0, value: TVMFFIAnyValue { v_obj: body as *mut TVMFFIObject } };
        0
    }
}

/// `counter_value(counter)`: read the value back natively.
///
/// # Safety
/// Called by the core with the packed calling convention.
#[no_mangle]
pub unsafe extern "C" fn __tvm_ffi_counter_value(
    _self: *mut c_void,
    args: *const TVMFFIAny,
    n: i32,
    result: *mut TVMFFIAny,
) -> c_int {
    // SAFETY: as above; the type index is checked before the cast.
    unsafe {
        if n != 1 || (*args).type_index != counter_type_index() {
            let kind = c"TypeError";
            let msg = c"counter_value expects one rust_plugin.Counter";
            TVMFFIErrorSetRaisedFromCStr(kind.as_ptr(), msg.as_ptr());
            return -1;
        }
        let c = (*args).value.v_obj as *const Counter;
        *result = TVMFFIAny { type_index: type_index::kTVMFFIInt, small_str_len: 0, value: TVMFFIAnyValue { v_int64: (*c).value } };
        0
    }
}
