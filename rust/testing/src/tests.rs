//! Unit tests: the library's constructor has run in the test binary too
//! (it links the shared core), so these check what it registered, through
//! the core's C ABI.

use crate::ffi::{containers, Any, Function};

fn call(name: &str, args: &[Any]) -> Result<Any, crate::ffi::Error> {
    Function::get_global(name).unwrap_or_else(|| panic!("{name} is registered")).call(args)
}

#[test]
fn everything_registered_at_load() {
    let err = crate::load::tether_testing_load_error();
    // SAFETY: NULL or a NUL-terminated message the library keeps.
    assert!(err.is_null(), "load error: {:?}", unsafe { std::ffi::CStr::from_ptr(err) });
}

#[test]
fn globals_behave_as_upstream() {
    assert_eq!(call("testing.add_one", &[Any::int(41)]).unwrap().view().int(), Some(42));
    assert_eq!(call("testing.echo", &[Any::string("hi").unwrap()]).unwrap().view().str().as_deref(), Some("hi"));
    assert!(call("testing.nop", &[Any::int(1)]).unwrap().is_none());
    let err = call("testing.add_one", &[Any::float(1.5)]).err().unwrap();
    assert_eq!(err.kind(), "TypeError");
    assert_eq!(
        err.message(),
        "Mismatched type on argument #0 when calling: `testing.add_one(0: int) -> int`. Expected `int` but got `float`"
    );
    let err = call("testing.test_raise_error", &[Any::string("ValueError").unwrap(), Any::string("boom").unwrap()]).err().unwrap();
    assert_eq!((err.kind(), err.message()), ("ValueError".to_string(), "boom".to_string()));
    let add = Function::get_global("testing.add_one").unwrap().into_any();
    assert_eq!(call("testing.apply", &[add.clone(), Any::int(1)]).unwrap().view().int(), Some(2));
    assert_eq!(call("testing.apply_n", &[add, Any::int(3), Any::int(1)]).unwrap().view().int(), Some(2));
}

#[test]
fn registering_an_existing_name_is_refused() {
    let f = Function::from_closure(|_| Ok(Any::none())).unwrap();
    let err = f.register_global("testing.echo", "", "", false).expect_err("testing.echo exists");
    assert!(err.message().contains("testing.echo"), "{}", err.message());
}

#[test]
fn int_pair_fields_method_and_sum() {
    let ctor = crate::ffi::type_table::type_index_of("testing.TestIntPair").expect("registered");
    let pair = call("ffi.MakeObjectFromPackedArgs", &[Any::string("testing.TestIntPair").unwrap(), Any::string("a").unwrap(), Any::int(3), Any::string("b").unwrap(), Any::int(4)]).unwrap();
    assert_eq!(pair.type_index(), ctor);
    assert_eq!(call("testing.TestIntPairSum", std::slice::from_ref(&pair)).unwrap().view().int(), Some(7));
    let o = pair.clone().into_object().unwrap();
    assert_eq!(crate::reflect::get_field(&o, "a").unwrap().view().int(), Some(3));
    let err = call("testing.TestIntPairSum", &[Any::int(1)]).err().unwrap();
    assert!(err.message().contains("Expected `testing.TestIntPair` but got `int`"), "{}", err.message());
}

#[test]
fn containers_with_tensor_inputs_check_types() {
    let err = call("testing.make_array_with_tensor", &[Any::int(1)]).err().unwrap();
    assert!(err.message().contains("Expected `ffi.Tensor` but got `int`"), "{}", err.message());
    let arr = containers::array(&[Any::int(1), Any::int(2)]).unwrap();
    assert_eq!(call("testing.schema_id_arr_int", &[arr]).unwrap().type_index(), tether_sys::abi::type_index::kTVMFFIArray);
    let bad = containers::array(&[Any::string("a").unwrap()]).unwrap();
    let err = call("testing.schema_id_arr_int", &[bad]).err().unwrap();
    assert!(err.message().ends_with("Expected `Array<int>` but got `Array[index 0: ffi.SmallStr]`"), "{}", err.message());
}

#[test]
fn native_enum_variants_share_the_cores_state() {
    use crate::ffi::type_table::type_index_of;
    use crate::reflect::enum_state::{get_by_index, normalize_payload};

    let variant = type_index_of("testing.TestEnumVariant").expect("registered");
    let alpha = call("testing.enum_variant_get", &[Any::string("Alpha").unwrap()]).unwrap().into_object().unwrap();
    let beta = get_by_index(variant, &Any::int(1)).unwrap();
    assert_eq!(alpha.type_index(), variant);
    assert!(get_by_index(variant, &Any::string("Beta").unwrap()).unwrap().same_as(&beta));
    assert!(!alpha.same_as(&beta));
    // The core's JSON graph writes the singleton as its string index.
    let text = call("ffi.ToJSONGraphString", &[Any::object(beta.clone()), Any::none()]).unwrap().view().str().unwrap();
    assert!(text.contains("testing.TestEnumVariant") && text.contains("\"Beta\""), "{text}");
    let back = call("ffi.FromJSONGraphString", &[Any::string(&text).unwrap()]).unwrap().into_object().unwrap();
    assert!(back.same_as(&beta));
    let err = call("testing.enum_variant_get", &[Any::string("Gamma").unwrap()]).err().unwrap();
    assert_eq!((err.kind(), err.message()), ("ValueError".to_string(), "Enum `testing.TestEnumVariant` has no instance with index Gamma".to_string()));
    // A payload enum type without variants names no singleton by payload;
    // a plain enum takes no payloads at all.
    let int_enum = type_index_of("testing.TestCxxIntEnum").expect("registered");
    let refused = normalize_payload(int_enum, &Any::int(12345).view()).err().unwrap();
    assert!(refused.message().starts_with("type conversion failed for testing.TestCxxIntEnum: expected testing.TestCxxIntEnum, got int"), "{}", refused.message());
    assert!(normalize_payload(variant, &Any::int(0).view()).unwrap().is_none());
    assert!(normalize_payload(int_enum, &Any::string("x").unwrap().view()).unwrap().is_none());
}
