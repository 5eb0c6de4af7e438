//! The internal C interface between the core and its C++ shim
//! (`rust/core/cxx/library_surface.cc`), which provides the C++ entry
//! points of TVM-FFI's library (`tvm::ffi::StructuralEqual::Equal`,
//! `tvm::ffi::json::Parse`, …) to code compiled against TVM-FFI's headers.
//! It sits with `c_api` at the top layer and may name every layer below.
//!
//! Contract of every `tether_cxx_*` function here: TVM-FFI's packed
//! safe-call convention — `args` points at `num_args` borrowed values,
//! `result` at a slot that receives an owned value; the return is 0, or
//! nonzero with the error raised (the shim rethrows it as
//! `tvm::ffi::Error`). Arguments are positional and fixed per function
//! (documented on each); these names are not part of the public ABI and
//! may change with the shim. [`exports`] holds the exported C++ symbols.
//!
//! SAFETY contract: as in [`crate::c_api`], pointers are valid for the
//! access the convention implies.

use std::ffi::c_int;

use crate::abi::TVMFFIAny;
use crate::values::any::{Any, AnyView};
use crate::c_api::guard;
use crate::containers::Array;
use crate::values::error::Error;
use crate::values::function::{arg, expect_args};
use crate::serialization::{deep_copy, json, json_graph, repr};
use crate::structural::visit_error_context::{find_access_paths, VisitErrorContext};
use crate::structural::{equal, hash, recursive_compare, recursive_hash};

#[cfg(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(target_env = "msvc")
))]
mod exports;
#[cfg(all(
    any(target_arch = "x86_64", target_arch = "aarch64"),
    not(target_env = "msvc")
))]
mod module_vtable;
pub mod module;

/// Run `body` over the borrowed arguments and store its value in `result`.
unsafe fn bridge(
    name: &str,
    args: *const TVMFFIAny,
    num_args: i32,
    result: *mut TVMFFIAny,
    body: impl FnOnce(&[AnyView<'_>]) -> Result<Any, Error>,
) -> c_int {
    guard(name, || {
        if result.is_null() || (args.is_null() && num_args > 0) || num_args < 0 {
            return Err(Error::value_error(format!("{name}: invalid arguments")));
        }
        // SAFETY: `num_args` borrowed values per the module contract.
        let views = unsafe { AnyView::slice_from_raw(args, num_args as usize) };
        let value = body(views)?;
        // SAFETY: a writable slot per the module contract.
        unsafe { *result = value.into_raw() };
        Ok(())
    })
}

/// (lhs, rhs, map_free_vars: bool, skip_tensor_content: bool) -> bool
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_structural_equal(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("StructuralEqual::Equal", args, n, result, |a| {
        expect_args(a, 4, "StructuralEqual::Equal")?;
        let eq = equal::structural_equal(&a[0].to_owned()?, &a[1].to_owned()?, arg(a, 2, "map_free_vars")?, arg(a, 3, "skip_tensor_content")?)?;
        Ok(Any::from(eq))
    })
}

/// (lhs, rhs, map_free_vars: bool, skip_tensor_content: bool) -> None or
/// a two-element Array of access paths (lhs, rhs)
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_first_mismatch(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("StructuralEqual::GetFirstMismatch", args, n, result, |a| {
        expect_args(a, 4, "StructuralEqual::GetFirstMismatch")?;
        let found = equal::first_mismatch(&a[0].to_owned()?, &a[1].to_owned()?, arg(a, 2, "map_free_vars")?, arg(a, 3, "skip_tensor_content")?)?;
        match found {
            None => Ok(Any::none()),
            Some((l, r)) => Ok(Any::from_object(
                Array::new(vec![Any::from_object(l.into_object()), Any::from_object(r.into_object())])?.into_object(),
            )),
        }
    })
}

/// (value, map_free_vars: bool, skip_tensor_content: bool) -> int (the
/// u64 hash's bits)
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_structural_hash(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("StructuralHash::Hash", args, n, result, |a| {
        expect_args(a, 3, "StructuralHash::Hash")?;
        let h = hash::structural_hash(&a[0].to_owned()?, arg(a, 1, "map_free_vars")?, arg(a, 2, "skip_tensor_content")?)?;
        Ok(Any::from(h as i64))
    })
}

/// (text: str) -> the parsed value; a syntax error is a ValueError
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_json_parse(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("json::Parse", args, n, result, |a| {
        expect_args(a, 1, "json::Parse")?;
        let text = a[0].str_bytes().ok_or_else(|| Error::type_error(format!("json::Parse expects str, got {}", a[0].type_key())))?;
        json::parse(text)
    })
}

/// (value, indent: None or int) -> str
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_json_stringify(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("json::Stringify", args, n, result, |a| {
        expect_args(a, 2, "json::Stringify")?;
        let indent: Option<i64> = arg(a, 1, "indent")?;
        json::stringify_to_any(&a[0].to_owned()?, indent.unwrap_or(0).max(0) as usize)
    })
}

/// (value) -> str
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_repr_print(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("ReprPrint", args, n, result, |a| {
        expect_args(a, 1, "ReprPrint")?;
        Any::string(&repr::repr_print(&a[0].to_owned()?)?)
    })
}

/// (value) -> a deep copy
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_deep_copy(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("DeepCopy", args, n, result, |a| {
        expect_args(a, 1, "DeepCopy")?;
        deep_copy::deep_copy(&a[0].to_owned()?)
    })
}

/// (value, metadata) -> the JSON object graph
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_to_json_graph(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("ToJSONGraph", args, n, result, |a| {
        expect_args(a, 2, "ToJSONGraph")?;
        json_graph::to_json_graph(&a[0].to_owned()?, &a[1].to_owned()?)
    })
}

/// (graph) -> the value it describes
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_from_json_graph(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("FromJSONGraph", args, n, result, |a| {
        expect_args(a, 1, "FromJSONGraph")?;
        json_graph::from_json_graph(&a[0].to_owned()?)
    })
}

/// (lhs, rhs, eq_only: bool) -> int (the three-way result; with eq_only,
/// values without an order are unequal instead of an error)
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_recursive_compare(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("RecursiveCompare", args, n, result, |a| {
        expect_args(a, 3, "RecursiveCompare")?;
        let (l, r) = (a[0].to_owned()?, a[1].to_owned()?);
        let c = if arg::<bool>(a, 2, "eq_only")? {
            if recursive_compare::recursive_eq(&l, &r)? { 0 } else { 1 }
        } else {
            recursive_compare::recursive_compare(&l, &r)?
        };
        Ok(Any::from(c as i64))
    })
}

/// (value) -> int
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_recursive_hash(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("RecursiveHash", args, n, result, |a| {
        expect_args(a, 1, "RecursiveHash")?;
        Ok(Any::from(recursive_hash::recursive_hash(&a[0].to_owned()?)?))
    })
}

/// (root: object, context: ffi.VisitErrorContext, allow_prefix_match:
/// bool) -> Array of access paths
#[no_mangle]
pub unsafe extern "C" fn tether_cxx_find_access_paths(args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int {
    bridge("VisitErrorContext::FindAccessPaths", args, n, result, |a| {
        expect_args(a, 3, "VisitErrorContext::FindAccessPaths")?;
        let root = a[0].get::<Option<crate::object::ObjectRef>>()?
            .ok_or_else(|| Error::value_error("VisitErrorContext::FindAccessPaths: root is a null ObjectRef"))?;
        let context = a[1].get::<Option<crate::object::ObjectRef>>()?
            .ok_or_else(|| Error::value_error("VisitErrorContext::FindAccessPaths: visit_context is a null ObjectRef"))?;
        let paths = find_access_paths(&root, &VisitErrorContext::from_object(context)?, arg(a, 2, "allow_prefix_match")?)?;
        Ok(Any::from_object(Array::new(paths.into_iter().map(|p| Any::from_object(p.into_object())).collect())?.into_object()))
    })
}
