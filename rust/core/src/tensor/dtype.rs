//! Data type strings: TVM-FFI's spelling of a `DLDataType` and its parser
//! (`TVMFFIDataTypeFromString` / `TVMFFIDataTypeToString`).
//!
//! The canonical form is `<name><bits>[x<lanes>]` (`float32`, `int8x4`),
//! with `bool` for 8-bit bools, `handle` for opaque handles (bits and lanes
//! are never printed), the empty string for `void`, the float8/6/4 families
//! by name alone (`float8_e4m3fn`, bits implied), scalable vectors as
//! `xvscalex<n>` (lanes stored as `-n` in 16 bits) and registered custom
//! types as `custom[<name>]`. The parser also takes TVM-FFI's short forms
//! (`i8`, `u8`, `f32`, `bf16`, `fp8_e4m3fn`, `f8_e5m2`, ...). Quirks of the
//! upstream parser are kept on purpose so both runtimes read every string
//! the same way: bits 0 keep the default (`int0` is `int32`), `handle64`
//! and `handlex2` print as `handle`, and lanes wrap to 16 bits.

use crate::abi::DLDataType;
use crate::values::any::Any;
use crate::values::error::Error;
use crate::values::function::Function;
use tether_sys::dlpack::dtype_code as code;

/// The name of each builtin type code, as printed before the bits.
/// `kDLComplex` has none: TVM-FFI neither prints nor parses complex types.
fn code_name(c: u8) -> Option<&'static str> {
    Some(match c {
        code::kDLInt => "int",
        code::kDLUInt => "uint",
        code::kDLFloat => "float",
        code::kDLOpaqueHandle => "handle",
        code::kDLBfloat => "bfloat",
        code::kDLBool => "bool",
        code::kDLFloat8_e3m4 => "float8_e3m4",
        code::kDLFloat8_e4m3 => "float8_e4m3",
        code::kDLFloat8_e4m3b11fnuz => "float8_e4m3b11fnuz",
        code::kDLFloat8_e4m3fn => "float8_e4m3fn",
        code::kDLFloat8_e4m3fnuz => "float8_e4m3fnuz",
        code::kDLFloat8_e5m2 => "float8_e5m2",
        code::kDLFloat8_e5m2fnuz => "float8_e5m2fnuz",
        code::kDLFloat8_e8m0fnu => "float8_e8m0fnu",
        code::kDLFloat6_e2m3fn => "float6_e2m3fn",
        code::kDLFloat6_e3m2fn => "float6_e3m2fn",
        code::kDLFloat4_e2m1fn => "float4_e2m1fn",
        _ => return None,
    })
}

/// Whether a producer's type code means something here: a builtin code
/// (complex included, which has no name) or one in the custom range.
pub(crate) fn is_known_code(c: u8) -> bool {
    c == code::kDLComplex || c >= code::kDLExtCustomBegin || code_name(c).is_some()
}

/// The global functions a custom-type registry (TVM's) provides.
const GET_CUSTOM_TYPE_NAME: &str = "dtype.get_custom_type_name";
const GET_CUSTOM_TYPE_CODE: &str = "dtype.get_custom_type_code";

fn required_global(name: &str) -> Result<Function, Error> {
    Function::get_global(name).ok_or_else(|| Error::value_error(format!("Function {name} not found")))
}

/// `TVMFFIDataTypeToString`.
pub fn to_string(dtype: DLDataType) -> Result<String, Error> {
    if dtype.code == code::kDLBool && dtype.bits == 8 && dtype.lanes == 1 {
        return Ok("bool".into());
    }
    if dtype.code == code::kDLOpaqueHandle && dtype.bits == 0 && dtype.lanes == 0 {
        return Ok(String::new());
    }
    let mut out = if dtype.code >= code::kDLExtCustomBegin {
        let name = required_global(GET_CUSTOM_TYPE_NAME)?.call(&[Any::from(dtype.code as i64)])?.get::<String>()?;
        format!("custom[{name}]")
    } else {
        code_name(dtype.code)
            .ok_or_else(|| Error::value_error(format!("DLDataType contains unknown type_code={}", dtype.code)))?
            .to_string()
    };
    if dtype.code == code::kDLOpaqueHandle {
        return Ok(out);
    }
    // Only the classic codes carry their bits in the name's suffix; the
    // float8/6/4 names (and custom types) imply them.
    if dtype.code < code::kDLFloat8_e3m4 && (dtype.code != code::kDLBool || dtype.bits != 8) {
        out.push_str(&dtype.bits.to_string());
    }
    let lanes = dtype.lanes as i16;
    if lanes > 1 {
        out.push_str(&format!("x{lanes}"));
    } else if lanes < -1 {
        out.push_str(&format!("xvscalex{}", -(lanes as i32)));
    }
    Ok(out)
}

/// `TVMFFIDataTypeFromString`.
pub fn from_str(s: &str) -> Result<DLDataType, Error> {
    if s.is_empty() || s == "void" {
        return Ok(DLDataType { code: code::kDLOpaqueHandle, bits: 0, lanes: 0 });
    }
    let normalized = normalize_alias(s);
    Parser { s: normalized.as_bytes(), text: &normalized }.parse()
}

/// Rewrite the short prefixes to the long ones; error messages quote the
/// rewritten string, as upstream's do.
fn normalize_alias(s: &str) -> String {
    let b = s.as_bytes();
    let digit_at = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let (long, short_len) = if b[0] == b'i' && digit_at(1) {
        ("int", 1)
    } else if b[0] == b'u' && digit_at(1) {
        ("uint", 1)
    } else if s.starts_with("bf") && digit_at(2) {
        ("bfloat", 2)
    } else if s.starts_with("fp8_") {
        ("float8_", 4)
    } else if s.starts_with("fp6_") {
        ("float6_", 4)
    } else if s.starts_with("fp4_") {
        ("float4_", 4)
    } else if b[0] == b'f' && digit_at(1) {
        ("float", 1)
    } else {
        return s.to_string();
    };
    format!("{long}{}", &s[short_len..])
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
}

impl Parser<'_> {
    fn unknown(&self) -> Error {
        Error::value_error(format!("unknown dtype `{}`", self.text))
    }

    fn parse(&self) -> Result<DLDataType, Error> {
        let t = self.text;
        let (dtype_code, default_bits, pos) = if t.starts_with("int") {
            (code::kDLInt, 32, 3)
        } else if t.starts_with("uint") {
            (code::kDLUInt, 32, 4)
        } else if t.starts_with("bool") {
            (code::kDLBool, 8, 4)
        } else if let Some(rest) = t.strip_prefix("float") {
            if rest.starts_with("8_") {
                return self.float8(7);
            } else if rest.starts_with("6_") {
                return self.float6(7);
            } else if rest.starts_with("4_") {
                return self.float4(7);
            }
            (code::kDLFloat, 32, 5)
        } else if t.starts_with("handle") {
            (code::kDLOpaqueHandle, 64, 6)
        } else if t.starts_with("bfloat") {
            (code::kDLBfloat, 16, 6)
        } else if t.starts_with("custom") {
            let (c, pos) = self.custom()?;
            (c, 32, pos)
        } else {
            return Err(self.unknown());
        };
        let mut pos = pos;
        let bits = self.digits(&mut pos)?;
        if bits > u8::MAX as u64 {
            return Err(Error::value_error(format!(
                "Bits value {bits} is out of range for uint8_t in dtype '{t}'"
            )));
        }
        let bits = if bits == 0 { default_bits } else { bits as u8 };
        let lanes = self.lanes(&mut pos, true)?;
        if pos != self.s.len() {
            return Err(self.unknown());
        }
        Ok(DLDataType { code: dtype_code, bits, lanes })
    }

    /// Decimal digits at `pos` (none reads as 0), at most `u32::MAX`.
    fn digits(&self, pos: &mut usize) -> Result<u64, Error> {
        let start = *pos;
        let mut value: Option<u64> = Some(0);
        while *pos < self.s.len() && self.s[*pos].is_ascii_digit() {
            value = value.and_then(|v| v.checked_mul(10)?.checked_add((self.s[*pos] - b'0') as u64));
            *pos += 1;
        }
        match value {
            Some(v) if v <= u32::MAX as u64 => Ok(v),
            _ => Err(Error::value_error(format!(
                "Integer value in dtype string '{}' is out of range for uint32_t",
                &self.text[start..*pos]
            ))),
        }
    }

    /// `x<n>` (or `xvscalex<n>` when scalable vectors are allowed); absent
    /// means 1 lane.
    fn lanes(&self, pos: &mut usize, allow_scalable: bool) -> Result<u16, Error> {
        let mut negate = false;
        if allow_scalable && self.s[*pos..].starts_with(b"xvscale") {
            negate = true;
            *pos += 7;
        }
        if *pos >= self.s.len() || self.s[*pos] != b'x' {
            return Ok(1);
        }
        *pos += 1;
        let start = *pos;
        let n = self.digits(pos)?;
        if *pos == start || n == 0 {
            return Err(Error::value_error(format!(
                "Invalid lanes specification in dtype '{}'. Lanes must be a positive integer.",
                self.text
            )));
        }
        if n > u16::MAX as u64 {
            return Err(Error::value_error(format!(
                "Lanes value {n} is out of range for uint16_t in dtype '{}'",
                self.text
            )));
        }
        // Scalable lanes are stored negated in the 16-bit field.
        Ok(if negate { (n as u16).wrapping_neg() } else { n as u16 })
    }

    /// Where `variant` ends if it appears at `offset` and is followed by
    /// the end, a lanes suffix, or (float4 only) an underscore.
    fn variant(&self, offset: usize, variant: &str, allow_underscore: bool) -> Option<usize> {
        let end = offset + variant.len();
        if self.s.get(offset..end)? != variant.as_bytes() {
            return None;
        }
        match self.s.get(end) {
            None | Some(b'x') => Some(end),
            Some(b'_') if allow_underscore => Some(end),
            _ => None,
        }
    }

    fn small_float(&self, mut pos: usize, dtype_code: u8, bits: u8, allow_underscore: bool) -> Result<DLDataType, Error> {
        if allow_underscore && self.s.get(pos) == Some(&b'_') {
            pos += 1;
        }
        let lanes = self.lanes(&mut pos, false)?;
        if pos != self.s.len() {
            return Err(self.unknown());
        }
        Ok(DLDataType { code: dtype_code, bits, lanes })
    }

    fn float8(&self, offset: usize) -> Result<DLDataType, Error> {
        // Longer names first: `e4m3fn` is a prefix of `e4m3fnuz`.
        const VARIANTS: [(&str, u8); 8] = [
            ("e4m3b11fnuz", code::kDLFloat8_e4m3b11fnuz),
            ("e4m3fnuz", code::kDLFloat8_e4m3fnuz),
            ("e4m3fn", code::kDLFloat8_e4m3fn),
            ("e5m2fnuz", code::kDLFloat8_e5m2fnuz),
            ("e8m0fnu", code::kDLFloat8_e8m0fnu),
            ("e3m4", code::kDLFloat8_e3m4),
            ("e4m3", code::kDLFloat8_e4m3),
            ("e5m2", code::kDLFloat8_e5m2),
        ];
        for (name, c) in VARIANTS {
            if let Some(end) = self.variant(offset, name, false) {
                return self.small_float(end, c, 8, false);
            }
        }
        Err(Error::value_error(format!("unknown float8 type `{}`", self.text)))
    }

    fn float6(&self, offset: usize) -> Result<DLDataType, Error> {
        for (name, c) in [("e2m3fn", code::kDLFloat6_e2m3fn), ("e3m2fn", code::kDLFloat6_e3m2fn)] {
            if let Some(end) = self.variant(offset, name, false) {
                return self.small_float(end, c, 6, false);
            }
        }
        Err(Error::value_error(format!("unknown float6 type `{}`", self.text)))
    }

    fn float4(&self, offset: usize) -> Result<DLDataType, Error> {
        match self.variant(offset, "e2m1fn", true) {
            Some(end) => self.small_float(end, code::kDLFloat4_e2m1fn, 4, true),
            None => Err(Error::value_error(format!("unknown float4 type `{}`", self.text))),
        }
    }

    /// `custom[<name>]`: the code comes from the custom-type registry.
    /// Returns the code and the position after the closing bracket.
    fn custom(&self) -> Result<(u8, usize), Error> {
        let t = self.text;
        if self.s.get(6) != Some(&b'[') {
            return Err(Error::value_error(format!("expected opening brace after 'custom' type in{t}")));
        }
        let close = t[7..]
            .find(']')
            .map(|i| i + 7)
            .ok_or_else(|| Error::value_error(format!("expected closing brace after 'custom' type in{t}")))?;
        let name = &t[7..close];
        let c = required_global(GET_CUSTOM_TYPE_CODE)?.call(&[Any::string(name)?])?.get::<i64>()?;
        Ok((c as u8, close + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(code: u8, bits: u8, lanes: u16) -> DLDataType {
        DLDataType { code, bits, lanes }
    }

    #[test]
    fn aliases_normalise_before_parsing() {
        assert_eq!(normalize_alias("i8"), "int8");
        assert_eq!(normalize_alias("f8_e5m2"), "float8_e5m2");
        assert_eq!(normalize_alias("fp4_e2m1fn"), "float4_e2m1fn");
        assert_eq!(normalize_alias("bf16"), "bfloat16");
        assert_eq!(normalize_alias("handle"), "handle");
    }

    #[test]
    fn scalable_lanes_are_stored_negated() {
        assert_eq!(from_str("int32xvscalex4").unwrap(), dt(0, 32, 65532));
        assert_eq!(to_string(dt(0, 32, 65532)).unwrap(), "int32xvscalex4");
    }
}
