//! The general `testing.*` globals: upstream's (`testing.echo`,
//! `testing.apply`, `testing.nop`, `testing.test_raise_error`,
//! `testing.add_one`, `testing.run_check_signal`, the C symbols of an
//! add-one function, the containers holding tensors, …) and the helpers
//! tether's own suites use (`testing.apply_n`, `testing.raise_error`).

use std::ffi::{c_int, c_void};

use tether_sys::abi::TVMFFIAny;

use crate::core_api::api;
use crate::ffi::containers;
use crate::ffi::object::strong_count;
use crate::ffi::{Any, AnyView, Error, Function};
use crate::registration::{def, def_packed, note};
use crate::sig::{array, function_schema, list, map, metadata, optional, Ty};

fn function_arg(args: &[AnyView<'_>], i: usize, what: &str) -> Result<Function, Error> {
    args.get(i)
        .and_then(|a| a.object())
        .and_then(Function::from_object)
        .ok_or_else(|| Error::type_error(format!("{what}: argument #{i} must be a function")))
}

/// `__add_one_c_symbol`: the packed calling convention, `x + 1`.
unsafe extern "C" fn add_one_c_symbol(_handle: *mut c_void, args: *const TVMFFIAny, num_args: i32, result: *mut TVMFFIAny) -> c_int {
    // SAFETY: the calling convention gives `num_args` valid views.
    let x = (num_args >= 1 && !args.is_null()).then(|| unsafe { AnyView::from_raw(&*args) }).and_then(|a| a.int());
    match x {
        Some(x) => {
            // SAFETY: the caller's result slot.
            unsafe { result.write(Any::int((x as i32).wrapping_add(1) as i64).into_raw()) };
            0
        }
        None => {
            Error::type_error("add_one expects one int").raise();
            -1
        }
    }
}

/// The MLIR-style entry: `packed_args` points at the addresses of the
/// handle, the arguments, their count, the result and the return code.
unsafe extern "C" fn mlir_add_one_c_symbol(packed_args: *mut *mut c_void) {
    // SAFETY: the five slots of the MLIR packed convention, each the
    // address of the value named.
    unsafe {
        let handle = *(*packed_args.add(0) as *mut *mut c_void);
        let args = *(*packed_args.add(1) as *mut *const TVMFFIAny);
        let num_args = *(*packed_args.add(2) as *mut i32);
        let result = *(*packed_args.add(3) as *mut *mut TVMFFIAny);
        let rc = *packed_args.add(4) as *mut c_int;
        *rc = add_one_c_symbol(handle, args, num_args, result);
    }
}

/// `testing.apply(f, *args)`: `f(*args)`. Named as upstream's testing
/// library names it, so backtraces through it read the same.
#[allow(non_snake_case)]
#[inline(never)]
fn TestApply(args: &[AnyView<'_>]) -> Result<Any, Error> {
    function_arg(args, 0, "testing.apply")?.call_views(&args[1..])
}

pub fn register() -> Result<(), Error> {
    let tensor = crate::sig::tensor;
    def("testing.test_raise_error", vec![Ty::Str, Ty::Str], Ty::Void, |a| {
        let kind = a[0].view().str().unwrap_or_default();
        let message = a[1].view().str().unwrap_or_default();
        Err(Error::New { kind, message, frame: Some("TestRaiseError") })
    })?;
    def("testing.add_one", vec![Ty::Int], Ty::Int, |a| Ok(Any::int(a[0].view().int().unwrap_or(0) + 1)))?;
    def_packed("testing.nop", |_| Ok(Any::none()))?;
    def_packed("testing.echo", |args| args.first().map_or(Ok(Any::none()), |a| a.to_owned()))?;
    def_packed("testing.apply", TestApply)?;
    def("testing.run_check_signal", vec![Ty::Int], Ty::Void, |a| {
        for _ in 0..a[0].view().int().unwrap_or(0) {
            // SAFETY: no arguments; nonzero means an error is raised.
            if unsafe { (api().TVMFFIEnvCheckSignals)() } != 0 {
                return Err(Error::take_raised());
            }
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
        println!("Function finished without catching signal");
        Ok(Any::none())
    })?;
    // The count the caller's references make: read from the borrowed
    // argument, so the call itself adds none.
    let use_count = Function::from_closure(|args: &[AnyView<'_>]| {
        let sig = "`testing.object_use_count(0: ffi.Object) -> int`";
        if args.len() != 1 {
            return Err(Error::type_error(format!(
                "Mismatched number of arguments when calling: {sig}. Expected 1 but got {} arguments",
                args.len()
            )));
        }
        match args[0].object_ptr() {
            Some(p) => Ok(Any::int(strong_count(p))),
            None => Err(Error::type_error(format!(
                "Mismatched type on argument #0 when calling: {sig}. Expected `ffi.Object` but got `{}`",
                args[0].type_key()
            ))),
        }
    });
    let meta = metadata(&function_schema(&[crate::sig::any_object()], &Ty::Int), "");
    note("testing.object_use_count", use_count.and_then(|f| f.register_global("testing.object_use_count", "", &meta, false)))?;
    def("testing.get_add_one_c_symbol", vec![], Ty::Int, |_| Ok(Any::int(add_one_c_symbol as *const () as usize as i64)))?;
    def("testing.get_mlir_add_one_c_symbol", vec![], Ty::Int, |_| Ok(Any::int(mlir_add_one_c_symbol as *const () as usize as i64)))?;
    def("testing.optional_tensor_view_has_value", vec![optional(Ty::DLTensorPtr)], Ty::Bool, |a| Ok(Any::bool(!a[0].is_none())))?;

    // Containers holding tensors, for the DLPack container conversions.
    let s = |t: &str| Any::string(t);
    def("testing.make_array_with_tensor", vec![tensor()], array(Ty::Any), |a| containers::array(&a))?;
    def("testing.make_array_with_mixed", vec![tensor(), Ty::Int], array(Ty::Any), move |a| {
        containers::array(&[a[0].clone(), a[1].clone(), s("hello")?])
    })?;
    def("testing.make_nested_array_with_tensor", vec![tensor()], array(Ty::Any), |a| {
        let inner = containers::array(&[a[0].clone(), Any::int(42)])?;
        containers::array(&[inner, a[0].clone()])
    })?;
    def("testing.make_list_with_tensor", vec![tensor(), Ty::Int], list(Ty::Any), |a| containers::list(&a))?;
    def("testing.make_map_with_tensor", vec![tensor()], map(Ty::Str, Ty::Any), move |a| {
        containers::map(&[(s("tensor")?, a[0].clone()), (s("value")?, Any::int(42)), (s("name")?, s("test")?)])
    })?;
    def("testing.make_dict_with_tensor", vec![tensor()], crate::sig::dict(Ty::Str, Ty::Any), move |a| {
        containers::dict(&[(s("tensor")?, a[0].clone()), (s("value")?, Any::int(42))])
    })?;
    def("testing.make_empty_array_with_tensor_input", vec![tensor()], array(Ty::Any), |_| containers::array(&[]))?;
    def("testing.make_nested_map_with_tensor", vec![tensor(), tensor()], map(Ty::Str, Ty::Any), move |a| {
        let arr = containers::array(&[a[0].clone(), a[1].clone()])?;
        let inner = containers::map(&[(s("t")?, a[0].clone())])?;
        containers::map(&[(s("array")?, arr), (s("map")?, inner), (s("scalar")?, Any::int(99))])
    })?;

    // tether's own helpers.
    def_packed("testing.apply_n", |args| {
        let f = function_arg(args, 0, "testing.apply_n")?;
        let n = args.get(1).and_then(|a| a.int()).ok_or_else(|| Error::type_error("testing.apply_n: argument #1 (n) must be an int"))?;
        let mut last = Any::none();
        for _ in 0..n {
            last = f.call_views(&args[2..])?;
        }
        Ok(last)
    })?;
    def("testing.raise_error", vec![Ty::Str, Ty::Str], Ty::Void, |a| {
        Err(Error::new(&a[0].view().str().unwrap_or_default(), a[1].view().str().unwrap_or_default()))
    })?;

    let name = c"__tvm_ffi_testing.add_one";
    // SAFETY: a NUL-terminated name and the address of a function that
    // lives as long as this library.
    Error::check(unsafe { (api().TVMFFIEnvModRegisterSystemLibSymbol)(name.as_ptr(), add_one_c_symbol as *mut c_void) })?;
    Ok(())
}
