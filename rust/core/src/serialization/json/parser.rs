//! The JSON text parser, generic over what it builds: FFI values for
//! `ffi.json.Parse` ([`super::ffi_values`]), or the borrowed tree the graph
//! loader reads without allocating FFI containers ([`super::tree`]). Errors
//! are worded as upstream's (Python's `json` wording): `Expecting value:
//! line 1 column 1 (char 0)`. Open containers are kept on an explicit stack
//! (on the caller's thread), so nesting depth is bounded by memory.

use std::borrow::Cow;

use crate::values::error::Error;

/// What the parser builds values with. Strings borrow the text when they
/// have no escapes; `Err(())` from a builder is reported as out of memory
/// unless it set a message.
pub(crate) trait Build<'t> {
    type Value;
    fn null(&mut self) -> Self::Value;
    fn bool(&mut self, v: bool) -> Self::Value;
    fn int(&mut self, v: i64) -> Self::Value;
    /// An integer literal beyond 64 bits (decimal digits, maybe signed).
    fn big_int(&mut self, text: &str) -> Result<Self::Value, ()>;
    fn float(&mut self, v: f64) -> Self::Value;
    fn string(&mut self, bytes: Cow<'t, [u8]>) -> Result<Self::Value, ()>;
    fn array(&mut self, items: std::vec::Drain<'_, Self::Value>) -> Result<Self::Value, ()>;
    /// An object's members in text order (later duplicates win), as
    /// key, value, key, value, ...
    fn object(&mut self, members: std::vec::Drain<'_, Self::Value>) -> Result<Self::Value, ()>;
}

/// Digits an integer literal may have (CPython's default `int` text limit).
const MAX_INT_DIGITS: usize = 4300;


/// An open container: where its items start on the value stack, and
/// whether it is an object (whose items are keys and values in turn).
struct Open {
    start: usize,
    object: bool,
}

struct Parser<'t, B: Build<'t>> {
    text: &'t [u8],
    build: B,
    cur: usize,
    line: usize,
    line_begin: usize,
    error: Option<String>,
}

type Step<T> = Result<T, ()>;

impl<'t, B: Build<'t>> Parser<'t, B> {
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

    /// A string starting at the current `"`.
    fn next_string(&mut self) -> Step<B::Value> {
        let start = self.cur;
        self.cur += 1;
        while let Some(c) = self.peek() {
            if c == b'"' {
                let text: &'t [u8] = self.text;
                let v = self.build.string(Cow::Borrowed(&text[start + 1..self.cur]));
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

    fn next_string_escaped(&mut self, start: usize) -> Step<B::Value> {
        let mut out: Vec<u8> = self.text[start + 1..self.cur].to_vec();
        while let Some(c) = self.peek() {
            if c < b' ' {
                return self.fail("Invalid control character at");
            }
            if c == b'"' {
                self.cur += 1;
                return self.build.string(Cow::Owned(out));
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

    fn next_number(&mut self) -> Step<B::Value> {
        let start = self.cur;
        let mut maybe_int = true;
        match self.peek() {
            Some(b'-') => {
                self.cur += 1;
                if self.peek() == Some(b'I') {
                    return if self.match_literal(b"Infinity") {
                        Ok(self.build.float(f64::NEG_INFINITY))
                    } else {
                        self.fail_at(start, "Expecting value")
                    };
                }
            }
            Some(b'I') => {
                return if self.match_literal(b"Infinity") { Ok(self.build.float(f64::INFINITY)) } else { self.fail_at(start, "Expecting value") };
            }
            Some(b'N') => {
                return if self.match_literal(b"NaN") { Ok(self.build.float(f64::NAN)) } else { self.fail_at(start, "Expecting value") };
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
            self.cur += 1;
        }
        if maybe_int {
            if let Some(v) = small_int(&self.text[start..self.cur]) {
                return Ok(self.build.int(v));
            }
        }
        // Only ASCII digits, signs, `.`, `e` and `E` were taken.
        let Ok(buf) = std::str::from_utf8(&self.text[start..self.cur]) else { return self.fail_at(start, "Expecting value") };
        if buf.is_empty() {
            return self.fail("Expecting value");
        }
        if maybe_int {
            if let Ok(v) = buf.parse::<i64>() {
                return Ok(self.build.int(v));
            }
            // An integer beyond 64 bits stays an integer (a BigInt), never a
            // float; literals longer than CPython's default limit for int
            // text are refused (their conversion is quadratic in length).
            let digits = buf.trim_start_matches(['-', '+']);
            if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
                if digits.len() > MAX_INT_DIGITS {
                    return self.fail_at(start, "Integer literal exceeds the limit of 4300 digits");
                }
                return match self.build.big_int(buf) {
                    Ok(v) => Ok(v),
                    Err(_) => self.fail_at(start, "Expecting value"),
                };
            }
        }
        match buf.parse::<f64>() {
            // strtod reports overflow as an error; so does upstream.
            Ok(v) if v.is_finite() => Ok(self.build.float(v)),
            _ => self.fail_at(start, "Expecting value"),
        }
    }

    /// A scalar, or None after opening a container (pushed on `stack`).
    fn start_value(&mut self, stack: &mut Vec<Open>, values: &mut Vec<B::Value>) -> Step<Option<B::Value>> {
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
                        Ok(Some(self.build.object(values.drain(values.len()..))?))
                    }
                    Some(_) => {
                        let key = self.object_key()?;
                        stack.push(Open { start: values.len(), object: true });
                        values.push(key);
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
                        Ok(Some(self.build.array(values.drain(values.len()..))?))
                    }
                    Some(_) => {
                        stack.push(Open { start: values.len(), object: false });
                        Ok(None)
                    }
                }
            }
            Some(b'"') => self.next_string().map(Some),
            Some(c @ (b't' | b'f' | b'n')) => {
                self.cur += 1;
                let rest: &[u8] = match c {
                    b't' => b"rue",
                    b'f' => b"alse",
                    _ => b"ull",
                };
                if self.match_literal(rest) {
                    Ok(Some(match c {
                        b't' => self.build.bool(true),
                        b'f' => self.build.bool(false),
                        _ => self.build.null(),
                    }))
                } else {
                    self.fail_at(start, "Expecting value")
                }
            }
            Some(_) => self.next_number().map(Some),
        }
    }

    /// `"key" :` at the current position (spaces before it skipped).
    fn object_key(&mut self) -> Step<B::Value> {
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

    fn parse(&mut self) -> Step<B::Value> {
        // Open containers, and the items read so far of all of them (each
        // container's items on top of its parent's): one stack for the
        // whole document rather than a buffer per container.
        let mut stack: Vec<Open> = Vec::new();
        let mut values: Vec<B::Value> = Vec::new();
        'values: loop {
            let Some(mut value) = self.start_value(&mut stack, &mut values)? else { continue };
            loop {
                let Some(open) = stack.last() else {
                    self.skip_spaces();
                    if self.peek().is_some() {
                        return self.fail("Extra data");
                    }
                    return Ok(value);
                };
                let (start, object) = (open.start, open.object);
                values.push(value);
                self.skip_spaces();
                match self.peek() {
                    Some(b',') => {
                        self.cur += 1;
                        self.skip_spaces();
                        if self.peek().is_none() {
                            return self.fail("Syntax error near");
                        }
                        if object {
                            let key = self.object_key()?;
                            values.push(key);
                        }
                        continue 'values;
                    }
                    Some(b']') if !object => {
                        self.cur += 1;
                        stack.pop();
                        value = self.build.array(values.drain(start..))?;
                    }
                    Some(b'}') if object => {
                        self.cur += 1;
                        stack.pop();
                        value = self.build.object(values.drain(start..))?;
                    }
                    _ => return self.fail("Expecting ',' delimiter"),
                }
            }
        }
    }
}

/// The common case of an integer literal: an optional `-` and at most 18
/// digits, which cannot overflow 64 bits. Anything else is left to the
/// general path.
fn small_int(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(c - b'0');
    }
    Some(if negative { -v } else { v })
}

/// Parse JSON text with `build`.
pub(crate) fn parse_with<'t, B: Build<'t>>(text: &'t [u8], build: B) -> Result<B::Value, Error> {
    let mut p = Parser { text, build, cur: 0, line: 1, line_begin: 0, error: None };
    match p.parse() {
        Ok(v) => Ok(v),
        Err(()) => Err(Error::value_error(p.error.unwrap_or_else(|| "out of memory while parsing JSON".into()))),
    }
}
