//! `ffi.GetGlobalFuncMetadata`: metadata recorded by
//! `TVMFFIFunctionSetGlobalFromMethodInfo`, forgotten when the name is
//! registered again without metadata or removed, and TVM-FFI's error for
//! unknown names.

use tether_core::abi::{TVMFFIByteArray, TVMFFIMethodInfo};
use tether_core::c_api::TVMFFIFunctionSetGlobalFromMethodInfo;
use tether_core::values::error;
use tether_core::{Any, Function};

fn ba(s: &str) -> TVMFFIByteArray {
    TVMFFIByteArray { data: s.as_ptr() as *const _, size: s.len() }
}

fn metadata_of(name: &str) -> Result<String, tether_core::Error> {
    let get = Function::get_global("ffi.GetGlobalFuncMetadata").expect("builtin");
    get.call(&[Any::string(name)?])?.get::<String>()
}

fn register_with_metadata(name: &str, metadata: &str, allow_override: bool) -> i32 {
    let f = Function::from_closure(|_| Ok(Any::from(7i64))).unwrap();
    let method = Any::from_object(f.into_object());
    let info = TVMFFIMethodInfo { name: ba(name), doc: ba(""), metadata: ba(metadata), flags: 0, method: *method.as_raw() };
    // SAFETY: a valid method info whose byte arrays outlive the call.
    unsafe { TVMFFIFunctionSetGlobalFromMethodInfo(&info, allow_override as i32) }
}

#[test]
fn recorded_metadata_is_returned_for_the_registered_function() {
    let md = r#"{"type_schema":"{\"type\":\"ffi.Function\"}"}"#;
    assert_eq!(register_with_metadata("test_md.with", md, false), 0);
    assert_eq!(metadata_of("test_md.with").unwrap(), md);
    let called = Function::get_global("test_md.with").unwrap().call(&[]).unwrap();
    assert_eq!(called.get::<i64>().unwrap(), 7);
}

#[test]
fn plain_registration_has_empty_metadata_and_replaces_recorded_one() {
    assert_eq!(register_with_metadata("test_md.replaced", r#"{"a":1}"#, false), 0);
    let plain = Function::from_closure(|_| Ok(Any::none())).unwrap();
    Function::set_global("test_md.replaced", plain, true).unwrap();
    assert_eq!(metadata_of("test_md.replaced").unwrap(), "");
    assert!(Function::remove_global("test_md.replaced"));
    assert!(metadata_of("test_md.replaced").is_err());
}

#[test]
fn unknown_name_is_a_runtime_error_with_tvm_ffi_message() {
    let e = metadata_of("test_md.nope").unwrap_err();
    assert_eq!(e.kind(), "RuntimeError");
    assert_eq!(e.message(), "Global Function is not found: test_md.nope");
    let _ = error::take_raised_object();
}
