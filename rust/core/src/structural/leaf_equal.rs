//! Structural equality of the values decided without descending: values
//! of different types (inline and heap strings or bytes compare by
//! content), PODs (every NaN equals every NaN), strings and bytes. The
//! equality walk and its map task both decide leaves here, in place.

use crate::abi::type_index as ti;
use crate::values::any::Any;

fn is_str(index: i32) -> bool {
    matches!(index, ti::kTVMFFIStr | ti::kTVMFFISmallStr)
}
fn is_bytes(index: i32) -> bool {
    matches!(index, ti::kTVMFFIBytes | ti::kTVMFFISmallBytes)
}

/// The result for a pair decided without descending: different types,
/// PODs, strings and bytes (None for other objects of one type).
#[inline(always)]
pub(crate) fn leaf_equal(lhs: &Any, rhs: &Any) -> Option<bool> {
    let (li, ri) = (lhs.type_index(), rhs.type_index());
    if li != ri {
        if (is_str(li) && is_str(ri)) || (is_bytes(li) && is_bytes(ri)) {
            return Some(lhs.view().str_bytes() == rhs.view().str_bytes());
        }
        return Some(false);
    }
    if !super::is_object_index(li) {
        let (l, r) = (lhs.as_raw(), rhs.as_raw());
        // SAFETY: POD payloads are 8 plain bytes.
        unsafe {
            if li == ti::kTVMFFIFloat && l.value.v_float64.is_nan() {
                return Some(r.value.v_float64.is_nan());
            }
            return Some(l.small_str_len == r.small_str_len && l.value.v_int64 == r.value.v_int64);
        }
    }
    if matches!(li, ti::kTVMFFIStr | ti::kTVMFFIBytes) {
        return Some(lhs.view().str_bytes() == rhs.view().str_bytes());
    }
    None
}

