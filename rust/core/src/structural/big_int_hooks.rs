//! The type attributes TVM-FFI registers for `ffi.BigInt`: final, no
//! structural kind of its own (the structural algorithms treat it as a
//! value), `__any_hash__`/`__any_equal__` as native pointers (so Map and
//! Dict keys, and compiled code probing them, compare values), the
//! dataclass hooks `__ffi_eq__`/`__ffi_hash__`/`__ffi_compare__`, and JSON
//! graph conversion to and from decimal text.

use std::cmp::Ordering;

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFITypeMetadata, TVMFFIByteArray};
use crate::values::any::{Any, AnyView};
use crate::values::error::Error;
use crate::values::function::{arg, Function};
use crate::reflection::native_hook::{expected_raw, pointer_value};
use crate::types::type_registry;

use crate::values::big_int::{content_words, decimal};

/// The words of an `int` or `ffi.BigInt` value, copied.
pub(crate) fn words_of(v: &TVMFFIAny) -> Result<Vec<i64>, Error> {
    // SAFETY: `v` is a valid value kept alive by the caller during the copy.
    unsafe { content_words(v) }.map(<[i64]>::to_vec).ok_or_else(|| {
        Error::type_error(format!("Cannot convert from type `{}` to `ffi.BigInt`", type_registry::type_key_of(v.type_index)))
    })
}

/// TVM-FFI's `BigInt::hash`: an int's own value, a BigInt's words hashed
/// as bytes.
pub(crate) fn value_hash(words: &[i64]) -> u64 {
    if let [w] = words {
        return *w as u64;
    }
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    crate::structural::hash_bytes(&bytes)
}

/// Signed order of two two's-complement word sequences of any lengths.
pub(crate) fn compare_words(a: &[i64], b: &[i64]) -> Ordering {
    let n = a.len().max(b.len()).max(1);
    let word = |w: &[i64], i: usize| -> i64 {
        match w.get(i) {
            Some(x) => *x,
            None if w.last().is_some_and(|t| *t < 0) => -1,
            None => 0,
        }
    };
    let top = word(a, n - 1).cmp(&word(b, n - 1));
    if top != Ordering::Equal {
        return top;
    }
    (0..n - 1).rev().map(|i| (word(a, i) as u64).cmp(&(word(b, i) as u64))).find(|o| *o != Ordering::Equal).unwrap_or(Ordering::Equal)
}

unsafe extern "C" fn any_hash_hook(value: *const TVMFFIAny) -> TVMFFIAny {
    // SAFETY: the caller passes a live value.
    expected_raw("ffi.BigInt.__any_hash__", || Ok(Any::from(value_hash(&words_of(unsafe { &*value })?) as i64)))
}

unsafe extern "C" fn any_equal_hook(lhs: *const TVMFFIAny, rhs: *const TVMFFIAny) -> TVMFFIAny {
    expected_raw("ffi.BigInt.__any_equal__", || {
        // SAFETY: the caller passes two live values.
        let (a, b) = unsafe { (words_of(&*lhs)?, words_of(&*rhs)?) };
        Ok(Any::from(compare_words(&a, &b) == Ordering::Equal))
    })
}

fn function(f: impl Fn(&[AnyView<'_>]) -> Result<Any, Error> + Send + Sync + 'static) -> Result<Any, Error> {
    Ok(Any::from_object(Function::from_closure(f)?.into_object()))
}

fn ordered(args: &[AnyView<'_>]) -> Result<Ordering, Error> {
    let (a, b) = (arg::<Any>(args, 0, "lhs")?, arg::<Any>(args, 1, "rhs")?);
    Ok(compare_words(&words_of(a.as_raw())?, &words_of(b.as_raw())?))
}

pub(crate) fn register() -> Result<(), Error> {
    let index = ti::kTVMFFIBigInt;
    type_registry::register_metadata(
        index,
        &TVMFFITypeMetadata {
            doc: TVMFFIByteArray::EMPTY,
            creator: None,
            total_size: std::mem::size_of::<crate::values::big_int::BigIntObj>() as i32,
            structural_eq_hash_kind: crate::reflection::structural_kind::UNSUPPORTED,
        },
    )?;
    let attrs: Vec<(&[u8], Any)> = vec![
        (b"__ffi_type_final__", Any::from(true)),
        (b"__any_hash__", pointer_value(any_hash_hook as *const _)),
        (b"__any_equal__", pointer_value(any_equal_hook as *const _)),
        (b"__ffi_eq__", function(|a| Ok(Any::from(ordered(a)? == Ordering::Equal)))?),
        (b"__ffi_compare__", function(|a| Ok(Any::from(ordered(a)? as i64)))?),
        (
            b"__ffi_hash__",
            function(|a| Ok(Any::from(value_hash(&words_of(arg::<Any>(a, 0, "value")?.as_raw())?) as i64)))?,
        ),
        (
            b"__data_to_json__",
            function(|a| Any::string(&decimal::to_decimal(&words_of(arg::<Any>(a, 0, "value")?.as_raw())?)))?,
        ),
        (b"__data_from_json__", function(|a| decimal::parse_decimal(&arg::<String>(a, 0, "data")?))?),
    ];
    for (name, value) in attrs {
        crate::reflection::attr_columns::register_attr(index, name, value.as_raw())?;
    }
    Ok(())
}
