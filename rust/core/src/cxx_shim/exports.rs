//! The exported C++ symbols, under TVM-FFI's Itanium-mangled names (the
//! names `nm -D libtvm_ffi.so` lists), each a tail jump to the shim's
//! implementation of the same C++ signature (`tether_shim_*` in
//! `cxx/library_surface.cc`).
//!
//! Why trampolines: rustc links a cdylib with a version script that keeps
//! only Rust-defined symbols global, so C++ functions compiled into the
//! library would stay hidden, and the linker refuses a second version
//! script. A naked function defined here is exported like any Rust symbol;
//! it jumps before touching a register or the stack, so the callee sees
//! the caller's arguments, hidden result pointer (x86-64 `rdi`, AArch64
//! `x8`) and return address exactly as the caller set them. Itanium C++
//! ABI targets only (MSVC mangles differently); x86-64 and AArch64.

mod shim {
    // Only their addresses are used, as jump targets.
    extern "C" {
        pub fn tether_shim_StructuralEqual_Equal();
        pub fn tether_shim_StructuralEqual_GetFirstMismatch();
        pub fn tether_shim_StructuralHash_Hash();
        pub fn tether_shim_json_Parse();
        pub fn tether_shim_json_Stringify();
        pub fn tether_shim_ReprPrint();
        pub fn tether_shim_DeepCopy();
        pub fn tether_shim_ToJSONGraph();
        pub fn tether_shim_FromJSONGraph();
        pub fn tether_shim_Module_LoadFromFile();
        pub fn tether_shim_Module_VisitContextSymbols();
        pub fn tether_shim_ModuleObj_GetFunction();
        pub fn tether_shim_ModuleObj_ClearImports();
        pub fn tether_shim_ModuleObj_ImportModule();
        pub fn tether_shim_ModuleObj_GetFunctionDoc();
        pub fn tether_shim_ModuleObj_ImplementsFunction();
        pub fn tether_shim_ModuleObj_GetFunctionMetadata();
        pub fn tether_shim_RecursiveHash();
        pub fn tether_shim_RecursiveEq();
        pub fn tether_shim_RecursiveLt();
        pub fn tether_shim_RecursiveLe();
        pub fn tether_shim_RecursiveGt();
        pub fn tether_shim_RecursiveGe();
        pub fn tether_shim_VisitErrorContext_FindAccessPaths();
    }
}

macro_rules! trampolines {
    ($( $mangled:literal => $export:ident = $shim:ident; )*) => {
        $(
            #[unsafe(naked)]
            #[export_name = $mangled]
            pub unsafe extern "C" fn $export() {
                #[cfg(target_arch = "x86_64")]
                core::arch::naked_asm!("jmp {}", sym shim::$shim);
                #[cfg(target_arch = "aarch64")]
                core::arch::naked_asm!("b {}", sym shim::$shim);
            }
        )*
    };
}

trampolines! {
    "_ZN3tvm3ffi15StructuralEqual5EqualERKNS0_3AnyES4_bb" => structural_equal = tether_shim_StructuralEqual_Equal;
    "_ZN3tvm3ffi15StructuralEqual16GetFirstMismatchERKNS0_3AnyES4_bb" => first_mismatch = tether_shim_StructuralEqual_GetFirstMismatch;
    "_ZN3tvm3ffi14StructuralHash4HashERKNS0_3AnyEbb" => structural_hash = tether_shim_StructuralHash_Hash;
    "_ZN3tvm3ffi4json5ParseERKNS0_6StringEPS2_" => json_parse = tether_shim_json_Parse;
    "_ZN3tvm3ffi4json9StringifyERKNS0_3AnyERKNS0_8OptionalIivEE" => json_stringify = tether_shim_json_Stringify;
    "_ZN3tvm3ffi9ReprPrintERKNS0_3AnyE" => repr_print = tether_shim_ReprPrint;
    "_ZN3tvm3ffi8DeepCopyERKNS0_3AnyE" => deep_copy = tether_shim_DeepCopy;
    "_ZN3tvm3ffi11ToJSONGraphERKNS0_3AnyES3_" => to_json_graph = tether_shim_ToJSONGraph;
    "_ZN3tvm3ffi13FromJSONGraphERKNS0_3AnyE" => from_json_graph = tether_shim_FromJSONGraph;
    "_ZN3tvm3ffi6Module12LoadFromFileERKNS0_6StringE" => module_load_from_file = tether_shim_Module_LoadFromFile;
    "_ZN3tvm3ffi6Module19VisitContextSymbolsERKNS0_13TypedFunctionIFvNS0_6StringEPvEEE" => module_visit_context_symbols = tether_shim_Module_VisitContextSymbols;
    "_ZN3tvm3ffi9ModuleObj11GetFunctionERKNS0_6StringEb" => module_obj_get_function = tether_shim_ModuleObj_GetFunction;
    "_ZN3tvm3ffi9ModuleObj12ClearImportsEv" => module_obj_clear_imports = tether_shim_ModuleObj_ClearImports;
    "_ZN3tvm3ffi9ModuleObj12ImportModuleERKNS0_6ModuleE" => module_obj_import_module = tether_shim_ModuleObj_ImportModule;
    "_ZN3tvm3ffi9ModuleObj14GetFunctionDocERKNS0_6StringEb" => module_obj_get_function_doc = tether_shim_ModuleObj_GetFunctionDoc;
    "_ZN3tvm3ffi9ModuleObj18ImplementsFunctionERKNS0_6StringEb" => module_obj_implements_function = tether_shim_ModuleObj_ImplementsFunction;
    "_ZN3tvm3ffi9ModuleObj19GetFunctionMetadataERKNS0_6StringEb" => module_obj_get_function_metadata = tether_shim_ModuleObj_GetFunctionMetadata;
    "_ZN3tvm3ffi13RecursiveHashERKNS0_3AnyE" => recursive_hash = tether_shim_RecursiveHash;
    "_ZN3tvm3ffi11RecursiveEqERKNS0_3AnyES3_" => recursive_eq = tether_shim_RecursiveEq;
    "_ZN3tvm3ffi11RecursiveLtERKNS0_3AnyES3_" => recursive_lt = tether_shim_RecursiveLt;
    "_ZN3tvm3ffi11RecursiveLeERKNS0_3AnyES3_" => recursive_le = tether_shim_RecursiveLe;
    "_ZN3tvm3ffi11RecursiveGtERKNS0_3AnyES3_" => recursive_gt = tether_shim_RecursiveGt;
    "_ZN3tvm3ffi11RecursiveGeERKNS0_3AnyES3_" => recursive_ge = tether_shim_RecursiveGe;
    "_ZN3tvm3ffi17VisitErrorContext15FindAccessPathsERKNS0_9ObjectRefERKS1_b" => find_access_paths = tether_shim_VisitErrorContext_FindAccessPaths;
}
