//! The exported functions of libtether_core (see `cpp/include/tether/c_api.h`
//! for their contracts).

use std::ffi::{c_char, c_int, c_void};

use crate::abi::*;

#[link(name = "tether_core")]
extern "C" {
    pub fn TVMFFIGetVersion(out_version: *mut TVMFFIVersion);
    pub fn TVMFFIObjectIncRef(obj: TVMFFIObjectHandle) -> c_int;
    pub fn TVMFFIObjectDecRef(obj: TVMFFIObjectHandle) -> c_int;
    pub fn TVMFFIObjectCreateOpaque(
        handle: *mut c_void,
        type_index: i32,
        deleter: Option<unsafe extern "C" fn(*mut c_void)>,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFIGetCustomAllocator() -> *mut TVMFFICustomAllocator;
    pub fn TVMFFISetCustomAllocator(allocator: *mut TVMFFICustomAllocator) -> c_int;
    pub fn TVMFFITypeKeyToIndex(type_key: *const TVMFFIByteArray, out_tindex: *mut i32) -> c_int;
    pub fn TVMFFITypeGetOrAllocIndex(
        type_key: *const TVMFFIByteArray,
        static_type_index: i32,
        type_depth: i32,
        num_child_slots: i32,
        child_slots_can_overflow: i32,
        parent_type_index: i32,
    ) -> i32;
    pub fn TVMFFIGetTypeInfo(type_index: i32) -> *const TVMFFITypeInfo;
    pub fn TVMFFITypeRegisterField(type_index: i32, info: *const TVMFFIFieldInfo) -> c_int;
    pub fn TVMFFITypeRegisterMethod(type_index: i32, info: *const TVMFFIMethodInfo) -> c_int;
    pub fn TVMFFITypeRegisterMetadata(type_index: i32, metadata: *const TVMFFITypeMetadata) -> c_int;
    pub fn TVMFFITypeRegisterAttr(type_index: i32, attr_name: *const TVMFFIByteArray, attr_value: *const TVMFFIAny) -> c_int;
    pub fn TVMFFIGetTypeAttrColumn(attr_name: *const TVMFFIByteArray) -> *const TVMFFITypeAttrColumn;
    pub fn TVMFFIFunctionCreate(
        self_: *mut c_void,
        safe_call: Option<TVMFFISafeCallType>,
        deleter: Option<unsafe extern "C" fn(*mut c_void)>,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFIFunctionCall(func: TVMFFIObjectHandle, args: *mut TVMFFIAny, num_args: i32, result: *mut TVMFFIAny) -> c_int;
    pub fn TVMFFIFunctionGetGlobal(name: *const TVMFFIByteArray, out: *mut TVMFFIObjectHandle) -> c_int;
    pub fn TVMFFIFunctionSetGlobal(name: *const TVMFFIByteArray, f: TVMFFIObjectHandle, allow_override: c_int) -> c_int;
    pub fn TVMFFIFunctionSetGlobalFromMethodInfo(method_info: *const TVMFFIMethodInfo, allow_override: c_int) -> c_int;
    pub fn TVMFFIAnyViewToOwnedAny(any_view: *const TVMFFIAny, out: *mut TVMFFIAny) -> c_int;
    pub fn TVMFFIErrorMoveFromRaised(result: *mut TVMFFIObjectHandle);
    pub fn TVMFFIErrorSetRaised(error: TVMFFIObjectHandle);
    pub fn TVMFFIErrorSetRaisedFromCStr(kind: *const c_char, message: *const c_char);
    pub fn TVMFFIErrorSetRaisedFromCStrParts(kind: *const c_char, message_parts: *const *const c_char, num_parts: i32);
    pub fn TVMFFIErrorCreate(
        kind: *const TVMFFIByteArray,
        message: *const TVMFFIByteArray,
        backtrace: *const TVMFFIByteArray,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFIErrorCreateWithCauseAndExtraContext(
        kind: *const TVMFFIByteArray,
        message: *const TVMFFIByteArray,
        backtrace: *const TVMFFIByteArray,
        cause_chain: TVMFFIObjectHandle,
        extra_context: TVMFFIObjectHandle,
        out: *mut TVMFFIObjectHandle,
    ) -> c_int;
    pub fn TVMFFIBacktrace(filename: *const c_char, lineno: c_int, func: *const c_char, cross_ffi_boundary: c_int) -> *const TVMFFIByteArray;
    pub fn TVMFFIStringFromByteArray(input: *const TVMFFIByteArray, out: *mut TVMFFIAny) -> c_int;
    pub fn TVMFFIBytesFromByteArray(input: *const TVMFFIByteArray, out: *mut TVMFFIAny) -> c_int;
    pub fn TVMFFIHandleInitOnce(handle_addr: *mut *mut c_void, init_func: Option<unsafe extern "C" fn(*mut *mut c_void) -> c_int>) -> c_int;
    pub fn TVMFFIHandleDeinitOnce(handle_addr: *mut *mut c_void, deinit_func: Option<unsafe extern "C" fn(*mut c_void) -> c_int>) -> c_int;
}
