//! `tvm::ffi::ModuleObj`'s vtable and `type_info`, exported under
//! TVM-FFI's names (`_ZTVN3tvm3ffi9ModuleObjE`, `_ZTIN3tvm3ffi9ModuleObjE`).
//!
//! Code compiled against TVM-FFI's headers that subclasses `ModuleObj`
//! references both: the base constructor it inlines stores the address of
//! the base vtable, and the subclass's `type_info` names the base's. The
//! compiler would emit them next to `ModuleObj`'s key function
//! (`ImportModule`), but C++ symbols compiled into the cdylib stay hidden
//! (see [`super::exports`]), so they are defined here, in Itanium C++ ABI
//! layout, and the C++ shim (`cxx/module_object.cc`) never defines the key
//! function, so that its own objects use this one vtable too.
//!
//! Layout (Itanium C++ ABI, 64-bit): a vtable is the offset to the top of
//! the object, the `type_info` pointer, then one entry per virtual function
//! in declaration order; objects point 16 bytes in. `ModuleObj` has a
//! non-polymorphic base (`Object`) at offset 8, so its `type_info` is a
//! `__vmi_class_type_info` with one public base at offset 8 (what GCC and
//! Clang emit for TVM-FFI's header, checked by compiling it).

use std::ffi::{c_char, c_void};

extern "C" {
    // libstdc++/libc++abi's type_info classes' vtables; type_info objects
    // point two entries in.
    static _ZTVN10__cxxabiv117__class_type_infoE: [*const c_void; 3];
    static _ZTVN10__cxxabiv121__vmi_class_type_infoE: [*const c_void; 3];
    fn __cxa_pure_virtual();
    // ModuleObj's default virtual functions (cxx/module_object.cc); only
    // their addresses are used.
    fn tether_shim_ModuleObj_default_GetPropertyMask();
    fn tether_shim_ModuleObj_default_ImplementsFunction();
    fn tether_shim_ModuleObj_default_GetFunctionDoc();
    fn tether_shim_ModuleObj_default_GetFunctionMetadata();
    fn tether_shim_ModuleObj_default_WriteToFile();
    fn tether_shim_ModuleObj_default_GetWriteFormats();
    fn tether_shim_ModuleObj_default_SaveToBytes();
    fn tether_shim_ModuleObj_default_InspectSource();
}

/// `__class_type_info`: a class without bases.
#[repr(C)]
pub struct ClassTypeInfo {
    vptr: *const c_void,
    name: *const c_char,
}

/// `__vmi_class_type_info` with one base.
#[repr(C)]
pub struct VmiClassTypeInfo {
    vptr: *const c_void,
    name: *const c_char,
    flags: u32,
    base_count: u32,
    base_type: *const ClassTypeInfo,
    /// The base's offset shifted left by 8, ORed with the flags
    /// (2 = public).
    offset_flags: isize,
}

type Slot = unsafe extern "C" fn();

/// The vtable group of a class with one vtable.
#[repr(C)]
pub struct ModuleObjVtable {
    offset_to_top: isize,
    type_info: *const VmiClassTypeInfo,
    /// `kind`, `GetPropertyMask`, `GetFunction`, `ImplementsFunction`,
    /// `GetFunctionDoc`, `GetFunctionMetadata`, `WriteToFile`,
    /// `GetWriteFormats`, `SaveToBytes`, `InspectSource`, `ImportModule`,
    /// `ClearImports`: TVM-FFI's declaration order.
    slots: [Slot; 12],
}

/// Read-only data made of addresses; `Sync` so it can be a `static`.
#[repr(transparent)]
pub struct Shared<T>(T);
// SAFETY: never written; the pointers are addresses of immutable data and
// functions.
unsafe impl<T> Sync for Shared<T> {}

static OBJECT_NAME: [u8; 18] = *b"N3tvm3ffi6ObjectE\0";
static MODULE_OBJ_NAME: [u8; 21] = *b"N3tvm3ffi9ModuleObjE\0";

/// `tvm::ffi::Object`'s type_info (vague linkage in TVM-FFI; private here:
/// type_info objects are compared by name).
static OBJECT_TYPE_INFO: Shared<ClassTypeInfo> = Shared(ClassTypeInfo {
    // SAFETY: only the address of the extern static is taken.
    vptr: unsafe { &raw const _ZTVN10__cxxabiv117__class_type_infoE[2] } as *const c_void,
    name: OBJECT_NAME.as_ptr() as *const c_char,
});

#[export_name = "_ZTIN3tvm3ffi9ModuleObjE"]
pub static MODULE_OBJ_TYPE_INFO: Shared<VmiClassTypeInfo> = Shared(VmiClassTypeInfo {
    // SAFETY: only the address of the extern static is taken.
    vptr: unsafe { &raw const _ZTVN10__cxxabiv121__vmi_class_type_infoE[2] } as *const c_void,
    name: MODULE_OBJ_NAME.as_ptr() as *const c_char,
    flags: 0,
    base_count: 1,
    base_type: &OBJECT_TYPE_INFO.0,
    offset_flags: (8 << 8) | 2,
});

#[export_name = "_ZTVN3tvm3ffi9ModuleObjE"]
pub static MODULE_OBJ_VTABLE: Shared<ModuleObjVtable> = Shared(ModuleObjVtable {
    offset_to_top: 0,
    type_info: &MODULE_OBJ_TYPE_INFO.0,
    slots: [
        __cxa_pure_virtual,
        tether_shim_ModuleObj_default_GetPropertyMask,
        __cxa_pure_virtual,
        tether_shim_ModuleObj_default_ImplementsFunction,
        tether_shim_ModuleObj_default_GetFunctionDoc,
        tether_shim_ModuleObj_default_GetFunctionMetadata,
        tether_shim_ModuleObj_default_WriteToFile,
        tether_shim_ModuleObj_default_GetWriteFormats,
        tether_shim_ModuleObj_default_SaveToBytes,
        tether_shim_ModuleObj_default_InspectSource,
        super::exports::module_obj_import_module,
        super::exports::module_obj_clear_imports,
    ],
});
