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
//! The parser and the writer keep their open containers on explicit stacks
//! (on the caller's thread), so nesting depth is bounded by memory.

use crate::abi::type_index as ti;
use crate::values::any::Any;
use crate::containers::{Array, List, Map};
use crate::values::error::Error;
use crate::values::any::make_str_or_bytes;

use super::c_number_format::{one_decimal, round_trip_g};

// ---------------------------------------------------------------- parsing

enum Open {
    Array(Vec<Any>),
    Object(Vec<(Any, Any)>, Any),
}

struct Parser<'a> {
    text: &'a [u8],
    cur: usize,
    line: usize,
    line_begin: usize,
    error: Option<String>,
}

type Step<T> = Result<T, ()>;

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.cur).copied()
    }

    fn skip_spaces(&mut self) {
        while let Some(c) = self.peek() {
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            if c == b'\n' {
                self.line += 1;
                self.line_begin = self.cur + 1;
            }
            self.cur += 1;
        }
    }

    fn match_literal(&mut self, lit: &[u8]) -> bool {
        for &b in lit {
            if self.peek() != Some(b) {
                return false;
            }
            self.cur += 1;
        }
        true
    }

    fn fail<T>(&mut self, prefix: &str) -> Step<T> {
        let column = self.cur.saturating_sub(self.line_begin) + 1;
        self.error = Some(format!("{prefix}: line {} column {column} (char {})", self.line, self.cur));
        Err(())
    }

    fn fail_at<T>(&mut self, pos: usize, prefix: &str) -> Step<T> {
        self.cur = pos;
        self.fail(prefix)
    }

    fn string_value(bytes: &[u8]) -> Step<Any> {
        make_str_or_bytes(bytes, false).map_err(|_| ())
    }

    /// A string starting at the current `"`.
    fn next_string(&mut self) -> Step<Any> {
        let start = self.cur;
        self.cur += 1;
        while let Some(c) = self.peek() {
            if c == b'"' {
                let v = Self::string_value(&self.text[start + 1..self.cur]);
                self.cur += 1;
                return v;
            }
            if c < b' ' || c == b'\\' {
                return self.next_string_escaped(start);
            }
            self.cur += 1;
        }
        self.fail_at(start, "Unterminated string starting at")
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = (self.peek()? as char).to_digit(16)?;
            v = v * 16 + d;
            self.cur += 1;
        }
        Some(v)
    }

    fn next_string_escaped(&mut self, start: usize) -> Step<Any> {
        let mut out: Vec<u8> = self.text[start + 1..self.cur].to_vec();
        while let Some(c) = self.peek() {
            if c < b' ' {
                return self.fail("Invalid control character at");
            }
            if c == b'"' {
                self.cur += 1;
                return Self::string_value(&out);
            }
            if c != b'\\' {
                out.push(c);
                self.cur += 1;
                continue;
            }
            self.cur += 1;
            let simple = match self.peek() {
                Some(b'"') => Some(b'"'),
                Some(b'\\') => Some(b'\\'),
                Some(b'/') => Some(b'/'),
                Some(b'b') => Some(0x08),
                Some(b'f') => Some(0x0c),
                Some(b'n') => Some(b'\n'),
                Some(b'r') => Some(b'\r'),
                Some(b't') => Some(b'\t'),
                Some(b'u') => None,
                _ => return self.fail("Invalid \\escape"),
            };
            if let Some(b) = simple {
                out.push(b);
                self.cur += 1;
                continue;
            }
            let escape = self.cur;
            self.cur += 1;
            let Some(first) = self.hex4() else { return self.fail_at(escape, "Invalid \\uXXXX escape") };
            let code = if (0xD800..=0xDFFF).contains(&first) {
                if first >= 0xDC00 || !self.match_literal(b"\\u") {
                    return self.fail_at(escape, "Invalid surrogate pair of \\uXXXX escapes");
                }
                let second_pos = self.cur;
                let Some(second) = self.hex4() else { return self.fail_at(second_pos, "Invalid \\uXXXX escape") };
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return self.fail_at(second_pos, "Invalid surrogate pair of \\uXXXX escapes");
                }
                ((first - 0xD800) << 10) + (second - 0xDC00) + 0x10000
            } else {
                first
            };
            let ch = char::from_u32(code).expect("surrogates handled above");
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        }
        self.fail_at(start, "Unterminated string starting at")
    }

    fn next_number(&mut self) -> Step<Any> {
        let start = self.cur;
        let mut buf = String::new();
        let mut maybe_int = true;
        match self.peek() {
            Some(b'-') => {
                buf.push('-');
                self.cur += 1;
                if self.peek() == Some(b'I') {
                    return if self.match_literal(b"Infinity") {
                        Ok(Any::from(f64::NEG_INFINITY))
                    } else {
                        self.fail_at(start, "Expecting value")
                    };
                }
            }
            Some(b'I') => {
                return if self.match_literal(b"Infinity") { Ok(Any::from(f64::INFINITY)) } else { self.fail_at(start, "Expecting value") };
            }
            Some(b'N') => {
                return if self.match_literal(b"NaN") { Ok(Any::from(f64::NAN)) } else { self.fail_at(start, "Expecting value") };
            }
            _ => {}
        }
        while let Some(c) = self.peek() {
            if !(c.is_ascii_digit() || matches!(c, b'e' | b'E' | b'+' | b'-' | b'.')) {
                break;
            }
            if matches!(c, b'.' | b'e' | b'E') {
                maybe_int = false;
            }
            buf.push(c as char);
            self.cur += 1;
        }
        if buf.is_empty() {
            return self.fail("Expecting value");
        }
        if maybe_int {
            if let Ok(v) = buf.parse::<i64>() {
                return Ok(Any::from(v));
            }
            // An integer beyond 64 bits stays an integer (a BigInt), never a
            // float; literals longer than CPython's default limit for int
            // text are refused (their conversion is quadratic in length).
            let digits = buf.trim_start_matches(['-', '+']);
            if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
                if digits.len() > MAX_INT_DIGITS {
                    return self.fail_at(start, "Integer literal exceeds the limit of 4300 digits");
                }
                return match crate::values::big_int::decimal::parse_decimal(&buf) {
                    Ok(v) => Ok(v),
                    Err(_) => self.fail_at(start, "Expecting value"),
                };
            }
        }
        match buf.parse::<f64>() {
            // strtod reports overflow as an error; so does upstream.
            Ok(v) if v.is_finite() => Ok(Any::from(v)),
            _ => self.fail_at(start, "Expecting value"),
        }
    }

    /// A scalar, or None after opening a container (pushed on `stack`).
    fn start_value(&mut self, stack: &mut Vec<Open>) -> Step<Option<Any>> {
        self.skip_spaces();
        let start = self.cur;
        match self.peek() {
            None => self.fail("Expecting value"),
            Some(b'{') => {
                self.cur += 1;
                self.skip_spaces();
                match self.peek() {
                    None => self.fail("Expecting property name enclosed in double quotes"),
                    Some(b'}') => {
                        self.cur += 1;
                        Ok(Some(empty_map()?))
                    }
                    Some(_) => {
                        let key = self.object_key()?;
                        stack.push(Open::Object(Vec::new(), key));
                        Ok(None)
                    }
                }
            }
            Some(b'[') => {
                self.cur += 1;
                self.skip_spaces();
                match self.peek() {
                    None => self.fail("Expecting value"),
                    Some(b']') => {
                        self.cur += 1;
                        Ok(Some(array(Vec::new())?))
                    }
                    Some(_) => {
                        stack.push(Open::Array(Vec::new()));
                        Ok(None)
                    }
                }
            }
            Some(b'"') => self.next_string().map(Some),
            Some(c @ (b't' | b'f' | b'n')) => {
                self.cur += 1;
                let (rest, v): (&[u8], Any) = match c {
                    b't' => (b"rue", Any::from(true)),
                    b'f' => (b"alse", Any::from(false)),
                    _ => (b"ull", Any::none()),
                };
                if self.match_literal(rest) {
                    Ok(Some(v))
                } else {
                    self.fail_at(start, "Expecting value")
                }
            }
            Some(_) => self.next_number().map(Some),
        }
    }

    /// `"key" :` at the current position (spaces before it skipped).
    fn object_key(&mut self) -> Step<Any> {
        if self.peek() != Some(b'"') {
            return self.fail("Expecting property name enclosed in double quotes");
        }
        let key = self.next_string()?;
        self.skip_spaces();
        if self.peek() != Some(b':') {
            return self.fail("Expecting ':' delimiter");
        }
        self.cur += 1;
        Ok(key)
    }

    fn parse(&mut self) -> Step<Any> {
        let mut stack: Vec<Open> = Vec::new();
        'values: loop {
            let Some(mut value) = self.start_value(&mut stack)? else { continue };
            loop {
                match stack.last_mut() {
                    None => {
                        self.skip_spaces();
                        if self.peek().is_some() {
                            return self.fail("Extra data");
                        }
                        return Ok(value);
                    }
                    Some(Open::Array(items)) => {
                        items.push(value);
                        self.skip_spaces();
                        match self.peek() {
                            Some(b',') => {
                                self.cur += 1;
                                self.skip_spaces();
                                if self.peek().is_none() {
                                    return self.fail("Syntax error near");
                                }
                                continue 'values;
                            }
                            Some(b']') => {
                                self.cur += 1;
                                let Some(Open::Array(items)) = stack.pop() else { unreachable!() };
                                value = array(items)?;
                            }
                            _ => return self.fail("Expecting ',' delimiter"),
                        }
                    }
                    Some(Open::Object(pairs, key)) => {
                        pairs.push((std::mem::take(key), value));
                        self.skip_spaces();
                        match self.peek() {
                            Some(b'}') => {
                                self.cur += 1;
                                let Some(Open::Object(pairs, _)) = stack.pop() else { unreachable!() };
                                value = Map::new(pairs).map(|m| Any::from_object(m.into_object())).map_err(|_| ())?;
                            }
                            Some(b',') => {
                                self.cur += 1;
                                self.skip_spaces();
                                if self.peek().is_none() {
                                    return self.fail("Syntax error near");
                                }
                                *key = self.object_key()?;
                                continue 'values;
                            }
                            _ => return self.fail("Expecting ',' delimiter"),
                        }
                    }
                }
            }
        }
    }
}

fn array(items: Vec<Any>) -> Step<Any> {
    Array::new(items).map(|a| Any::from_object(a.into_object())).map_err(|_| ())
}

fn empty_map() -> Step<Any> {
    Map::new(Vec::new()).map(|m| Any::from_object(m.into_object())).map_err(|_| ())
}

/// Parse JSON text (`ffi.json.Parse`).
pub fn parse(text: &[u8]) -> Result<Any, Error> {
    let mut p = Parser { text, cur: 0, line: 1, line_begin: 0, error: None };
    match p.parse() {
        Ok(v) => Ok(v),
        Err(()) => Err(Error::value_error(p.error.unwrap_or_else(|| "out of memory while parsing JSON".into()))),
    }
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

/// Digits an integer literal may have (CPython's default `int` text limit).
const MAX_INT_DIGITS: usize = 4300;

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
