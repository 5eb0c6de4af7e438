//! The core's one uniquely named entry point, `tether_core_api_table()`: a
//! pointer to a static table of every exported `TVMFFI*` function (layout in
//! `tether_sys::api_table`).
//!
//! Users that must reach *this* core whatever else the process loaded (the
//! Python extension, Rust libraries through `tether-sys`) fetch the table
//! once and call through it instead of referencing the `TVMFFI*` names,
//! which the dynamic loader may bind to another library exporting them. The
//! entries are the functions of [`crate::c_api`] themselves, so both paths
//! run the same code; the struct literal below fails to compile if the table
//! gains an entry the core does not provide.

use std::mem::size_of;

use tether_sys::api_table::{TetherCoreApiTable, TETHER_CORE_API_VERSION};

use crate::c_api;

static TABLE: TetherCoreApiTable = TetherCoreApiTable {
    version: TETHER_CORE_API_VERSION,
    size: size_of::<TetherCoreApiTable>() as u32,
    TVMFFIGetVersion: c_api::TVMFFIGetVersion,
    TVMFFIObjectIncRef: c_api::TVMFFIObjectIncRef,
    TVMFFIObjectDecRef: c_api::TVMFFIObjectDecRef,
    TVMFFIObjectCreateOpaque: c_api::TVMFFIObjectCreateOpaque,
    TVMFFIGetCustomAllocator: c_api::TVMFFIGetCustomAllocator,
    TVMFFISetCustomAllocator: c_api::TVMFFISetCustomAllocator,
    TVMFFITypeKeyToIndex: c_api::TVMFFITypeKeyToIndex,
    TVMFFITypeGetOrAllocIndex: c_api::TVMFFITypeGetOrAllocIndex,
    TVMFFIGetTypeInfo: c_api::TVMFFIGetTypeInfo,
    TVMFFITypeRegisterField: c_api::TVMFFITypeRegisterField,
    TVMFFITypeRegisterMethod: c_api::TVMFFITypeRegisterMethod,
    TVMFFITypeRegisterMetadata: c_api::TVMFFITypeRegisterMetadata,
    TVMFFITypeRegisterAttr: c_api::TVMFFITypeRegisterAttr,
    TVMFFIGetTypeAttrColumn: c_api::TVMFFIGetTypeAttrColumn,
    TVMFFIFunctionCreate: c_api::TVMFFIFunctionCreate,
    TVMFFIFunctionCall: c_api::TVMFFIFunctionCall,
    TVMFFIFunctionGetGlobal: c_api::TVMFFIFunctionGetGlobal,
    TVMFFIFunctionSetGlobal: c_api::TVMFFIFunctionSetGlobal,
    TVMFFIFunctionSetGlobalFromMethodInfo: c_api::TVMFFIFunctionSetGlobalFromMethodInfo,
    TVMFFIAnyViewToOwnedAny: c_api::TVMFFIAnyViewToOwnedAny,
    TVMFFIErrorMoveFromRaised: c_api::TVMFFIErrorMoveFromRaised,
    TVMFFIErrorSetRaised: c_api::TVMFFIErrorSetRaised,
    TVMFFIErrorSetRaisedFromCStr: c_api::TVMFFIErrorSetRaisedFromCStr,
    TVMFFIErrorSetRaisedFromCStrParts: c_api::TVMFFIErrorSetRaisedFromCStrParts,
    TVMFFIErrorCreate: c_api::TVMFFIErrorCreate,
    TVMFFIErrorCreateWithCauseAndExtraContext: c_api::TVMFFIErrorCreateWithCauseAndExtraContext,
    TVMFFIBacktrace: c_api::TVMFFIBacktrace,
    TVMFFIStringFromByteArray: c_api::TVMFFIStringFromByteArray,
    TVMFFIBytesFromByteArray: c_api::TVMFFIBytesFromByteArray,
    TVMFFIHandleInitOnce: c_api::TVMFFIHandleInitOnce,
    TVMFFIHandleDeinitOnce: c_api::TVMFFIHandleDeinitOnce,
    TVMFFITensorFromDLPack: c_api::TVMFFITensorFromDLPack,
    TVMFFITensorFromDLPackVersioned: c_api::TVMFFITensorFromDLPackVersioned,
    TVMFFITensorToDLPack: c_api::TVMFFITensorToDLPack,
    TVMFFITensorToDLPackVersioned: c_api::TVMFFITensorToDLPackVersioned,
    TVMFFITensorCreateUnsafeView: c_api::TVMFFITensorCreateUnsafeView,
    TVMFFIDataTypeFromString: c_api::TVMFFIDataTypeFromString,
    TVMFFIDataTypeToString: c_api::TVMFFIDataTypeToString,
    TVMFFIEnvSetStream: c_api::TVMFFIEnvSetStream,
    TVMFFIEnvGetStream: c_api::TVMFFIEnvGetStream,
    TVMFFIEnvSetDLPackManagedTensorAllocator: c_api::TVMFFIEnvSetDLPackManagedTensorAllocator,
    TVMFFIEnvGetDLPackManagedTensorAllocator: c_api::TVMFFIEnvGetDLPackManagedTensorAllocator,
    TVMFFIEnvTensorAlloc: c_api::TVMFFIEnvTensorAlloc,
    TVMFFIBigIntFromByteArray: c_api::TVMFFIBigIntFromByteArray,
    TVMFFIBigIntGetContentByteArray: c_api::TVMFFIBigIntGetContentByteArray,
    TVMFFIEnvCheckSignals: c_api::TVMFFIEnvCheckSignals,
    TVMFFIEnvRegisterCAPI: c_api::TVMFFIEnvRegisterCAPI,
    TVMFFIEnvModRegisterContextSymbol: c_api::TVMFFIEnvModRegisterContextSymbol,
    TVMFFIEnvModRegisterSystemLibSymbol: c_api::TVMFFIEnvModRegisterSystemLibSymbol,
    TVMFFIEnvModLookupFromImports: c_api::TVMFFIEnvModLookupFromImports,
    TetherFFISeqFromOwned: c_api::TetherFFISeqFromOwned,
    TetherFFIBacktraceResolve: c_api::TetherFFIBacktraceResolve,
    TetherFFIBacktraceAddBoundary: c_api::TetherFFIBacktraceAddBoundary,
};

/// The core's function table: static, immutable, valid while the library
/// is loaded.
#[no_mangle]
pub extern "C" fn tether_core_api_table() -> *const TetherCoreApiTable {
    &TABLE
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_sys::abi::{TVMFFIByteArray, TVMFFIObjectHandle, TVMFFIVersion, VERSION};

    #[test]
    fn table_describes_itself_and_reaches_the_core() {
        // SAFETY: the entry point returns the static table.
        let t = unsafe { &*tether_core_api_table() };
        assert_eq!(t.version, TETHER_CORE_API_VERSION);
        assert_eq!(t.size as usize, size_of::<TetherCoreApiTable>());
        let mut v = TVMFFIVersion::default();
        // SAFETY: a valid output slot.
        unsafe { (t.TVMFFIGetVersion)(&mut v) };
        assert_eq!(v, VERSION);
        let name = TVMFFIByteArray::from_slice(b"ffi.Array");
        let mut f: TVMFFIObjectHandle = std::ptr::null_mut();
        // SAFETY: a valid name and output slot; we own the returned reference.
        unsafe {
            assert_eq!((t.TVMFFIFunctionGetGlobal)(&name, &mut f), 0);
            assert!(!f.is_null());
            assert_eq!((t.TVMFFIObjectDecRef)(f), 0);
        }
    }
}
