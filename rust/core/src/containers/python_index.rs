//! Python-style indices into the sequence containers: a negative index
//! counts from the end, and one out of range is an IndexError naming it.

use crate::values::error::Error;

/// Resolve a Python-style index (negative counts from the end).
pub(crate) fn resolve_index(i: i64, len: usize, what: &str) -> Result<usize, Error> {
    let len_i = len as i64;
    let j = if i < 0 { i + len_i } else { i };
    if j < 0 || j >= len_i {
        return Err(Error::index_error(format!("{what} index {i} out of range for length {len}")));
    }
    Ok(j as usize)
}
