//! Rust calling C++ (tether's header-only layer) through cxx, and C++
//! calling back into Rust globals, on one shared core.

use std::sync::Mutex;

use tether_cxx_bridge::{ffi, register_global, Object, Value};

// The allocator is process-wide: tests that make objects run one at a time
// so the counting test sees only its own.
static ALLOCATOR: Mutex<()> = Mutex::new(());

#[test]
fn rust_sees_objects_cpp_made_and_their_reflected_fields() {
    let _g = ALLOCATOR.lock().unwrap();
    // SAFETY: make_counter returns an owned handle.
    let c = unsafe { Object::from_owned_handle(ffi::make_counter(5, "a counter with a long label")) };
    assert_eq!(c.type_index(), ffi::counter_type_index());
    assert_eq!(c.type_key(), "bridge.Counter");
    assert!(c.registry_allocated());
    assert_eq!(c.field("value"), Some(Value::Int(5)));
    assert_eq!(c.field("label"), Some(Value::Str("a counter with a long label".into())));
    assert_eq!(c.field("no_such_field"), None);
}

#[test]
fn cpp_allocations_are_counted_by_an_allocator_cpp_installed() {
    let _g = ALLOCATOR.lock().unwrap();
    ffi::install_counting_allocator().unwrap();
    // SAFETY: make_counter returns an owned handle.
    let objects: Vec<Object> = (0..3).map(|i| unsafe { Object::from_owned_handle(ffi::make_counter(i, "x")) }).collect();
    // The short label is an inline string: one block per Counter.
    assert_eq!(ffi::allocations(), 3);
    assert_eq!(ffi::frees(), 0);
    assert!(objects.iter().all(Object::registry_allocated));
    drop(objects); // Rust's release runs the C++ deleter, which returns each block
    assert_eq!(ffi::frees(), 3);
    ffi::restore_builtin_allocator().unwrap();
}

#[test]
fn cpp_calls_rust_globals_and_rust_errors_come_back() {
    let _g = ALLOCATOR.lock().unwrap();
    register_global("bridge.rust_square", |ints, _| Ok(ints[0] * ints[0])).unwrap();
    assert_eq!(ffi::call_global("bridge.rust_square", 12).unwrap(), 144);

    register_global("bridge.rust_refuses", |ints, _| Err(format!("{} is not welcome", ints[0]))).unwrap();
    let err = ffi::call_global("bridge.rust_refuses", 7).unwrap_err();
    assert_eq!(err.what(), "ValueError: 7 is not welcome");

    let err = ffi::call_global("bridge.nobody", 1).unwrap_err();
    assert_eq!(err.what(), "ValueError: Function bridge.nobody not found");
}

#[test]
fn rust_calls_back_into_a_cpp_function_cpp_passed() {
    let _g = ALLOCATOR.lock().unwrap();
    register_global("bridge.rust_apply_plus_one", |ints, call| Ok(call(0, ints[0])? + 1)).unwrap();
    assert_eq!(ffi::call_global_with_callback("bridge.rust_apply_plus_one", 3, 10).unwrap(), 31);
}
