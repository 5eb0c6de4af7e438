//! JSON text to and from FFI values, as TVM-FFI's `json::Parse` and
//! `json::Stringify` (`ffi.json.Parse`, `ffi.json.Stringify`).
//!
//! Values: objects become Maps (string keys, later duplicates win), arrays
//! Arrays, integers that fit 64 bits ints (others and anything with `.`/`e`
//! floats), plus `true`/`false`/`null` and the extensions `NaN`,
//! `Infinity`, `-Infinity`. Errors are ValueErrors worded as upstream's
//! (Python's `json` wording): `Expecting value: line 1 column 1 (char 0)`.
//!
//! Output: compact, or indented by `indent` spaces; integral floats keep a
//! `.0` so ints and floats survive a round trip, other floats print 17
//! significant digits; strings escape `"`, `\`, `/`, control characters and
//! DEL and pass other bytes through. Arrays, Lists and Maps (string keys)
//! are accepted; a List that contains itself is an error.
//!
//! The parser ([`parser`], generic over what it builds) and the writer keep
//! their open containers on explicit stacks (on the caller's thread), so
//! nesting depth is bounded by memory. [`tree`] is the flat form the
//! JSON graph loader reads.

mod ffi_values;
pub(crate) mod parser;
pub(crate) mod tree;

use crate::abi::type_index as ti;
use crate::values::any::Any;
use crate::containers::{Array, List, Map};
use crate::values::error::Error;
use crate::values::any::make_str_or_bytes;

use super::c_number_format::{one_decimal, round_trip_g};

/// Parse JSON text (`ffi.json.Parse`).
pub fn parse(text: &[u8]) -> Result<Any, Error> {
    parser::parse_with(text, ffi_values::FfiValues)
}

// ---------------------------------------------------------------- writing

/// TVM-FFI's `EscapeStringJSON`: the quoted, escaped form of `s`.
pub fn escape_string(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            c if c < 0x20 || c == 0x7f => out.extend_from_slice(format!("\\u{:04x}", c).as_bytes()),
            c => out.push(c),
        }
    }
    out.push(b'"');
}

/// A float as upstream's writer prints it.
pub fn format_float(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v < 0.0 { "-Infinity" } else { "Infinity" }.into()
    } else if v.abs() < (1u64 << 53) as f64 && v.fract() == 0.0 {
        one_decimal(v.trunc())
    } else {
        round_trip_g(v)
    }
}

fn too_large() -> Error {
    Error::new("MemoryError", "the indented JSON text would not fit in memory (indent too large)")
}

struct Writer {
    indent: usize,
    level: usize,
    out: Vec<u8>,
    active_lists: std::collections::HashSet<usize>,
}

impl Writer {
    /// A newline and the current indentation. The room is reserved first,
    /// so an absurd indent is a MemoryError rather than an aborted process.
    fn newline(&mut self) -> Result<(), Error> {
        let need = self.level.checked_add(1).ok_or_else(too_large)?;
        self.out.try_reserve(need).map_err(|_| too_large())?;
        self.out.push(b'\n');
        self.out.extend(std::iter::repeat(b' ').take(self.level));
        Ok(())
    }

    fn enter(&mut self) -> Result<(), Error> {
        self.level = self.level.checked_add(self.indent).ok_or_else(too_large)?;
        Ok(())
    }

    /// Write `root`: containers are opened onto an explicit stack of
    /// frames and their items written one at a time, so nesting depth costs
    /// heap memory, not native stack.
    fn write(&mut self, root: &Any) -> Result<(), Error> {
        let mut stack: Vec<OpenContainer> = Vec::new();
        if let Some(frame) = self.open(root)? {
            stack.push(frame);
        }
        while let Some(top) = stack.last_mut() {
            let i = top.next;
            let value = match &top.items {
                Items::Sequence(items) => items.get(i).cloned().map(|v| (None, v)),
                Items::Object(entries) => entries.get(i).cloned().map(|(k, v)| (Some(k), v)),
            };
            let Some((key, value)) = value else {
                let frame = stack.pop().expect("the frame read above");
                self.close(frame)?;
                continue;
            };
            top.next += 1;
            if i != 0 {
                self.out.push(b',');
            }
            if self.indent != 0 {
                self.newline()?;
            }
            if let Some(k) = key {
                if !matches!(k.type_index(), ti::kTVMFFIStr | ti::kTVMFFISmallStr) {
                    return Err(Error::value_error(format!("Expect key to be string, got `{}`", k.type_key())));
                }
                escape_string(k.view().str_bytes().unwrap_or_default(), &mut self.out);
                self.out.push(b':');
                if self.indent != 0 {
                    self.out.push(b' ');
                }
            }
            if let Some(frame) = self.open(&value)? {
                stack.push(frame);
            }
        }
        Ok(())
    }

    /// Write a scalar whole, or the opening of a container (returned as
    /// the frame whose items are still to be written).
    fn open(&mut self, v: &Any) -> Result<Option<OpenContainer>, Error> {
        match v.type_index() {
            ti::kTVMFFINone => self.out.extend_from_slice(b"null"),
            ti::kTVMFFIBool => self.out.extend_from_slice(if v.get::<bool>()? { b"true" } else { b"false" }),
            ti::kTVMFFIInt => self.out.extend_from_slice(v.get::<i64>()?.to_string().as_bytes()),
            ti::kTVMFFIBigInt => {
                // SAFETY: a BigInt's words live in the object `v` holds.
                let words = unsafe { crate::values::big_int::content_words(v.as_raw()) }.unwrap_or(&[]);
                self.out.extend_from_slice(crate::values::big_int::decimal::to_decimal(words).as_bytes());
            }
            ti::kTVMFFIFloat => self.out.extend_from_slice(format_float(v.get::<f64>()?).as_bytes()),
            ti::kTVMFFIStr | ti::kTVMFFISmallStr => escape_string(v.view().str_bytes().unwrap_or_default(), &mut self.out),
            ti::kTVMFFIArray => {
                let items: Vec<Any> = Array::from_object(v.as_object().expect("array"))?.iter().cloned().collect();
                return self.open_container(Items::Sequence(items), None).map(Some);
            }
            ti::kTVMFFIList => {
                let obj = v.as_object().expect("list");
                let addr = obj.as_ptr() as usize;
                if !self.active_lists.insert(addr) {
                    return Err(Error::value_error("Cycle detected: List contains itself"));
                }
                let items = List::from_object(obj)?.to_vec();
                return self.open_container(Items::Sequence(items), Some(addr)).map(Some);
            }
            ti::kTVMFFIMap => {
                let map = Map::from_object(v.as_object().expect("map"))?;
                return self.open_container(Items::Object(map.items()), None).map(Some);
            }
            _ => return Err(Error::value_error(format!("Unsupported type: `{}`", v.type_key()))),
        }
        Ok(None)
    }

    fn open_container(&mut self, items: Items, list: Option<usize>) -> Result<OpenContainer, Error> {
        self.out.push(if matches!(items, Items::Sequence(_)) { b'[' } else { b'{' });
        self.enter()?;
        Ok(OpenContainer { items, next: 0, list })
    }

    fn close(&mut self, frame: OpenContainer) -> Result<(), Error> {
        if self.indent != 0 {
            self.level -= self.indent;
            self.newline()?;
        }
        self.out.push(if matches!(frame.items, Items::Sequence(_)) { b']' } else { b'}' });
        if let Some(addr) = frame.list {
            self.active_lists.remove(&addr);
        }
        Ok(())
    }
}

/// The items of a container being written.
enum Items {
    Sequence(Vec<Any>),
    Object(Vec<(Any, Any)>),
}

/// A container whose opening is written and whose items from `next` on are
/// not; `list` is the address of a List to leave when it closes.
struct OpenContainer {
    items: Items,
    next: usize,
    list: Option<usize>,
}

/// JSON text of `value` (`ffi.json.Stringify`); `indent` 0 is compact.
pub fn stringify(value: &Any, indent: usize) -> Result<Vec<u8>, Error> {
    let mut w = Writer { indent, level: 0, out: Vec::new(), active_lists: std::collections::HashSet::new() };
    w.write(value)?;
    Ok(w.out)
}

/// `stringify` as a String value.
pub fn stringify_to_any(value: &Any, indent: usize) -> Result<Any, Error> {
    make_str_or_bytes(&stringify(value, indent)?, false)
}
