//! The core's function table: one `#[repr(C)]` struct holding a pointer to
//! every exported `TVMFFI*` function (then tether's own C entries, such as
//! `TetherFFISeqFromOwned`, `TetherFFIBacktraceResolve`), reached through the one uniquely named symbol
//! `tether_core_api_table`.
//!
//! Why a table: a process often already holds another library exporting the
//! same `TVMFFI*` names (another TVM-FFI runtime loaded with `RTLD_GLOBAL`).
//! The dynamic loader resolves a plain `TVMFFI*` reference against the global
//! scope first, so a direct reference may land in that other library. Nobody
//! else exports `tether_core_api_table`, so looking it up always finds
//! tether's core, and every call made through the table stays there.
//!
//! The layout is shared by the core, which fills it (`c_api::api_table`), and by
//! the `link` feature of this crate, which calls through it. Compatibility
//! rule: entries are only ever appended; `size` tells a caller how many the
//! core provides. Any other change (reordering, a changed signature) bumps
//! [`TETHER_CORE_API_VERSION`].

use std::ffi::{c_char, c_int, c_void};

use crate::abi::*;
use crate::dlpack::{
    DLManagedTensor, DLManagedTensorVersioned, DLPackManagedTensorAllocator, DLTensor, TVMFFIStreamHandle,
};

/// Bumped whenever the table changes other than by appending entries.
pub const TETHER_CORE_API_VERSION: u32 = 1;

/// Calls `$m!` with the signature of every function in the table, in table
/// order, so the struct and the `link` feature's wrappers come from one list.
macro_rules! with_core_api {
    ($m:ident) => {
        $m! {
            fn TVMFFIGetVersion(out_version: *mut TVMFFIVersion);
            fn TVMFFIObjectIncRef(obj: TVMFFIObjectHandle) -> c_int;
            fn TVMFFIObjectDecRef(obj: TVMFFIObjectHandle) -> c_int;
            fn TVMFFIObjectCreateOpaque(
                handle: *mut c_void,
                type_index: i32,
                deleter: Option<unsafe extern "C" fn(*mut c_void)>,
                out: *mut TVMFFIObjectHandle,
            ) -> c_int;
            fn TVMFFIGetCustomAllocator() -> *mut TVMFFICustomAllocator;
            fn TVMFFISetCustomAllocator(allocator: *mut TVMFFICustomAllocator) -> c_int;
            fn TVMFFITypeKeyToIndex(type_key: *const TVMFFIByteArray, out_tindex: *mut i32) -> c_int;
            fn TVMFFITypeGetOrAllocIndex(
                type_key: *const TVMFFIByteArray,
                static_type_index: i32,
                type_depth: i32,
                num_child_slots: i32,
                child_slots_can_overflow: i32,
                parent_type_index: i32,
            ) -> i32;
            fn TVMFFIGetTypeInfo(type_index: i32) -> *const TVMFFITypeInfo;
            fn TVMFFITypeRegisterField(type_index: i32, info: *const TVMFFIFieldInfo) -> c_int;
            fn TVMFFITypeRegisterMethod(type_index: i32, info: *const TVMFFIMethodInfo) -> c_int;
            fn TVMFFITypeRegisterMetadata(type_index: i32, metadata: *const TVMFFITypeMetadata) -> c_int;
            fn TVMFFITypeRegisterAttr(
                type_index: i32,
                attr_name: *const TVMFFIByteArray,
                attr_value: *const TVMFFIAny,
            ) -> c_int;
            fn TVMFFIGetTypeAttrColumn(attr_name: *const TVMFFIByteArray) -> *const TVMFFITypeAttrColumn;
            fn TVMFFIFunctionCreate(
                self_: *mut c_void,
                safe_call: Option<TVMFFISafeCallType>,
                deleter: Option<unsafe extern "C" fn(*mut c_void)>,
                out: *mut TVMFFIObjectHandle,
            ) -> c_int;
            fn TVMFFIFunctionCall(
                func: TVMFFIObjectHandle,
                args: *mut TVMFFIAny,
                num_args: i32,
                result: *mut TVMFFIAny,
            ) -> c_int;
            fn TVMFFIFunctionGetGlobal(name: *const TVMFFIByteArray, out: *mut TVMFFIObjectHandle) -> c_int;
            fn TVMFFIFunctionSetGlobal(name: *const TVMFFIByteArray, f: TVMFFIObjectHandle, allow_override: c_int) -> c_int;
            fn TVMFFIFunctionSetGlobalFromMethodInfo(method_info: *const TVMFFIMethodInfo, allow_override: c_int) -> c_int;
            fn TVMFFIAnyViewToOwnedAny(any_view: *const TVMFFIAny, out: *mut TVMFFIAny) -> c_int;
            fn TVMFFIErrorMoveFromRaised(result: *mut TVMFFIObjectHandle);
            fn TVMFFIErrorSetRaised(error: TVMFFIObjectHandle);
            fn TVMFFIErrorSetRaisedFromCStr(kind: *const c_char, message: *const c_char);
            fn TVMFFIErrorSetRaisedFromCStrParts(kind: *const c_char, message_parts: *const *const c_char, num_parts: i32);
            fn TVMFFIErrorCreate(
                kind: *const TVMFFIByteArray,
                message: *const TVMFFIByteArray,
                backtrace: *const TVMFFIByteArray,
                out: *mut TVMFFIObjectHandle,
            ) -> c_int;
            fn TVMFFIErrorCreateWithCauseAndExtraContext(
                kind: *const TVMFFIByteArray,
                message: *const TVMFFIByteArray,
                backtrace: *const TVMFFIByteArray,
                cause_chain: TVMFFIObjectHandle,
                extra_context: TVMFFIObjectHandle,
                out: *mut TVMFFIObjectHandle,
            ) -> c_int;
            fn TVMFFIBacktrace(
                filename: *const c_char,
                lineno: c_int,
                func: *const c_char,
                cross_ffi_boundary: c_int,
            ) -> *const TVMFFIByteArray;
            fn TVMFFIStringFromByteArray(input: *const TVMFFIByteArray, out: *mut TVMFFIAny) -> c_int;
            fn TVMFFIBytesFromByteArray(input: *const TVMFFIByteArray, out: *mut TVMFFIAny) -> c_int;
            fn TVMFFIHandleInitOnce(
                handle_addr: *mut *mut c_void,
                init_func: Option<unsafe extern "C" fn(*mut *mut c_void) -> c_int>,
            ) -> c_int;
            fn TVMFFIHandleDeinitOnce(
                handle_addr: *mut *mut c_void,
                deinit_func: Option<unsafe extern "C" fn(*mut c_void) -> c_int>,
            ) -> c_int;
            fn TVMFFITensorFromDLPack(
                from: *mut DLManagedTensor,
                require_alignment: i32,
                require_contiguous: i32,
                out: *mut TVMFFIObjectHandle,
            ) -> c_int;
            fn TVMFFITensorFromDLPackVersioned(
                from: *mut DLManagedTensorVersioned,
                require_alignment: i32,
                require_contiguous: i32,
                out: *mut TVMFFIObjectHandle,
            ) -> c_int;
            fn TVMFFITensorToDLPack(from: TVMFFIObjectHandle, out: *mut *mut DLManagedTensor) -> c_int;
            fn TVMFFITensorToDLPackVersioned(from: TVMFFIObjectHandle, out: *mut *mut DLManagedTensorVersioned) -> c_int;
            fn TVMFFITensorCreateUnsafeView(
                source: TVMFFIObjectHandle,
                prototype: *const DLTensor,
                out: *mut TVMFFIObjectHandle,
            ) -> c_int;
            fn TVMFFIDataTypeFromString(str: *const TVMFFIByteArray, out: *mut DLDataType) -> c_int;
            fn TVMFFIDataTypeToString(dtype: *const DLDataType, out: *mut TVMFFIAny) -> c_int;
            fn TVMFFIEnvSetStream(
                device_type: i32,
                device_id: i32,
                stream: TVMFFIStreamHandle,
                opt_out_original_stream: *mut TVMFFIStreamHandle,
            ) -> c_int;
            fn TVMFFIEnvGetStream(device_type: i32, device_id: i32) -> TVMFFIStreamHandle;
            fn TVMFFIEnvSetDLPackManagedTensorAllocator(
                allocator: DLPackManagedTensorAllocator,
                write_to_global_context: c_int,
                opt_out_original_allocator: *mut DLPackManagedTensorAllocator,
            ) -> c_int;
            fn TVMFFIEnvGetDLPackManagedTensorAllocator() -> DLPackManagedTensorAllocator;
            fn TVMFFIEnvTensorAlloc(prototype: *mut DLTensor, out: *mut TVMFFIObjectHandle) -> c_int;
            fn TVMFFIBigIntFromByteArray(input: *const TVMFFIByteArray, out: *mut TVMFFIAny) -> c_int;
            fn TVMFFIBigIntGetContentByteArray(value: *const TVMFFIAny) -> TVMFFIByteArray;
            fn TVMFFIEnvCheckSignals() -> c_int;
            fn TVMFFIEnvRegisterCAPI(name: *const c_char, symbol: *mut c_void) -> c_int;
            fn TVMFFIEnvModRegisterContextSymbol(name: *const c_char, symbol: *mut c_void) -> c_int;
            fn TVMFFIEnvModRegisterSystemLibSymbol(name: *const c_char, symbol: *mut c_void) -> c_int;
            fn TVMFFIEnvModLookupFromImports(
                library_ctx: TVMFFIObjectHandle,
                func_name: *const c_char,
                out: *mut TVMFFIObjectHandle,
            ) -> c_int;
            // tether's own entries (not TVM-FFI's ABI) follow.
            fn TetherFFISeqFromOwned(
                items: *mut TVMFFIAny,
                n: i64,
                type_index: i32,
                out: *mut TVMFFIObjectHandle,
            ) -> c_int;
            fn TetherFFIBacktraceResolve(text: *const TVMFFIByteArray, out: *mut TVMFFIByteArray) -> c_int;
            fn TetherFFIBacktraceAddBoundary(function: *const c_void) -> c_int;
        }
    };
}
// Used by the `link` feature's wrappers only.
#[allow(unused_imports)]
pub(crate) use with_core_api;

macro_rules! define_table {
    ($( fn $name:ident ( $( $arg:ident : $ty:ty ),* $(,)? ) $( -> $ret:ty )? ; )*) => {
        /// Pointers to every exported C ABI function of the core, returned by
        /// `tether_core_api_table()`. Field names are the C names.
        #[repr(C)]
        #[derive(Clone, Copy)]
        pub struct TetherCoreApiTable {
            /// [`TETHER_CORE_API_VERSION`] of the core that built the table.
            pub version: u32,
            /// `size_of::<TetherCoreApiTable>()` in the core that built it: a
            /// caller built against an older, shorter table checks `size >=`
            /// its own size.
            pub size: u32,
            $( pub $name: unsafe extern "C" fn($($ty),*) $(-> $ret)?, )*
        }
    };
}
with_core_api!(define_table);

/// Signature of the core's one uniquely named entry point.
pub type TetherCoreApiTableFn = unsafe extern "C" fn() -> *const TetherCoreApiTable;
