//! The module-tree format libraries embed as `__tvm_ffi__library_bin`
//! (import tree CSR, then per module a kind and its bytes): arbitrary
//! blobs give a module tree or an error. A loader for kind "fuzz" is
//! registered so well-formed blobs reach the import-tree wiring.

#![no_main]

use std::sync::Once;

use libfuzzer_sys::fuzz_target;
use tether_core::module::module_tree_from_library_bin;
use tether_core::module::system_lib;
use tether_core::{Any, Function};

static LOADER: Once = Once::new();

fuzz_target!(|data: &[u8]| {
    LOADER.call_once(|| {
        let loader = Function::from_closure(|args| {
            let bytes: Vec<u8> = args[0].get()?;
            let prefix = format!("fuzz{}.", bytes.len());
            Ok(Any::from_object(system_lib(&prefix)?.into_object()))
        })
        .expect("a loader function");
        Function::set_global("ffi.Module.load_from_bytes.fuzz", loader, true).expect("the loader registers");
    });
    let _ = module_tree_from_library_bin(data);
});
