//! `TetherFFISeqFromOwned`: an Array or a List made from a buffer of owned
//! values in one call, taking them over (no reference counts move, nothing
//! is converted). Frontends converting a whole sequence (the Python
//! `Array(list)`) write each element once, as an owned value, into a
//! buffer of their own, instead of passing every element as an argument
//! view for `ffi.Array` to copy and count again. It is tether's own (not
//! part of TVM-FFI's ABI), reached through the API table only.

use std::ffi::c_int;

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIObjectHandle};
use crate::containers::{Array, List};
use crate::values::any::Any;
use crate::values::error::Error;

use super::checked_args::out_ptr;
use super::guard;

const NAME: &str = "TetherFFISeqFromOwned";

/// Make a `type_index` (`kTVMFFIArray` or `kTVMFFIList`) of the `n` owned
/// values at `items`, written to `*out` (a new reference). On success the
/// values belong to the new container and the caller must not release
/// them; on failure (a bad argument, a view kind among the values, memory)
/// nothing was taken and the caller still owns every value.
///
/// # Safety
/// `items` points at `n` initialised values the caller owns (when `n > 0`);
/// `out` is NULL or a valid output slot.
#[no_mangle]
pub unsafe extern "C" fn TetherFFISeqFromOwned(
    items: *mut TVMFFIAny,
    n: i64,
    type_index: i32,
    out: *mut TVMFFIObjectHandle,
) -> c_int {
    guard(NAME, || {
        let out = out_ptr(out, NAME)?;
        let n = usize::try_from(n).map_err(|_| Error::value_error(format!("{NAME}: negative length {n}")))?;
        if n > 0 && items.is_null() {
            return Err(Error::value_error(format!("{NAME}: items is NULL for {n} values")));
        }
        let slice: &[TVMFFIAny] = if n == 0 {
            &[]
        } else {
            // SAFETY: `n` initialised values at `items` (contract above).
            unsafe { std::slice::from_raw_parts(items, n) }
        };
        if let Some((i, v)) = slice.iter().enumerate().find(|(_, v)| !is_owned_kind(v)) {
            return Err(Error::type_error(format!(
                "{NAME}: value {i} has type index {}, which is a view, not an owned value",
                v.type_index
            )));
        }
        // SAFETY: checked above to be owned kinds; ownership moves into the
        // container only once it is built (the iterator is consumed by the
        // build, which cannot fail after it starts taking values).
        let take = || slice.iter().map(|v| unsafe { Any::from_raw_owned(*v) });
        let handle = match type_index {
            ti::kTVMFFIArray => Array::from_owned(n, take())?.into_object(),
            ti::kTVMFFIList => List::from_owned(n, take())?.into_object(),
            other => {
                return Err(Error::value_error(format!(
                    "{NAME}: type index {other} is neither an Array ({}) nor a List ({})",
                    ti::kTVMFFIArray,
                    ti::kTVMFFIList
                )))
            }
        };
        *out = handle.into_raw() as TVMFFIObjectHandle;
        Ok(())
    })
}

/// Whether `v` is a value a container may own: not one of the view kinds
/// (raw strings, byte-array and DLTensor pointers, rvalue references), and
/// an object kind only with an object.
fn is_owned_kind(v: &TVMFFIAny) -> bool {
    match v.type_index {
        ti::kTVMFFIRawStr | ti::kTVMFFIByteArrayPtr | ti::kTVMFFIObjectRValueRef | ti::kTVMFFIDLTensorPtr => false,
        // SAFETY: an object kind's payload is its pointer.
        i if i >= ti::kTVMFFIStaticObjectBegin => !unsafe { v.value.v_obj }.is_null(),
        i => i >= ti::kTVMFFINone,
    }
}
