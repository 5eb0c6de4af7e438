//! What the core's type table says about a type index: its type
//! information, its type key, the index registered for a key, and whether
//! one type is an instance of another (by the ancestors the core records).

use tether_sys::abi::{TVMFFIByteArray, TVMFFITypeInfo};

use super::bytes::bytes_to_string;
use super::error::Error;
use crate::core_api::api;

/// The core's type information for `type_index`, if it has any.
pub fn type_info(type_index: i32) -> Option<&'static TVMFFITypeInfo> {
    // SAFETY: the core returns NULL or a record it keeps for the process.
    unsafe { (api().TVMFFIGetTypeInfo)(type_index).as_ref() }
}

/// The type key of `type_index` (`<type N>` for an unknown index).
pub fn type_key(type_index: i32) -> String {
    match type_info(type_index) {
        Some(info) => bytes_to_string(&info.type_key),
        None => format!("<type {type_index}>"),
    }
}

/// The index registered for `key`, if any.
pub fn type_index_of(key: &str) -> Option<i32> {
    let name = TVMFFIByteArray { data: key.as_ptr().cast(), size: key.len() };
    let mut out = -1;
    // SAFETY: a valid key and output slot.
    let rc = unsafe { (api().TVMFFITypeKeyToIndex)(&name, &mut out) };
    if rc != 0 {
        // The core raised "no such type"; it is not an error here.
        drop(Error::take_raised());
        return None;
    }
    Some(out)
}

/// Whether an object of `index` is an instance of `target` (itself or a
/// descendant), by the ancestors the core records.
pub fn is_instance(index: i32, target: i32) -> bool {
    if index == target {
        return true;
    }
    let (Some(info), Some(target_info)) = (type_info(index), type_info(target)) else {
        return false;
    };
    let depth = target_info.type_depth;
    if depth >= info.type_depth || info.type_ancestors.is_null() {
        return false;
    }
    // SAFETY: `type_ancestors` has `type_depth` entries, each a record the
    // core keeps for the process; `depth < type_depth`.
    let ancestor = unsafe { (*info.type_ancestors.add(depth as usize)).as_ref() };
    ancestor.is_some_and(|a| a.type_index == target)
}
