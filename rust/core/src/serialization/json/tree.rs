//! JSON as a flat document that borrows the text it was parsed from: what
//! the JSON graph loader reads, so loading a graph from text allocates FFI
//! values only for the values it returns, never for the graph's own node
//! objects. Every container's items sit contiguously in one vector (the
//! parser closes a container with its items on top of its value stack), so
//! a document is a handful of allocations whatever its size, and building,
//! converting and dropping it never recurse: a hostile 10^6-deep document
//! costs heap, not native stack. A graph given as FFI values
//! (`ffi.FromJSONGraph`) is read into the same form.

use std::borrow::Cow;

use crate::abi::type_index as ti;
use crate::containers::{Array, Map};
use crate::values::any::{make_str_or_bytes, Any};
use crate::values::error::Error;

use super::parser::{parse_with, Build};

/// A parsed document.
pub(crate) struct JsonDoc<'t> {
    text: &'t [u8],
    /// The bytes of strings that are not a slice of `text` (they had
    /// escapes, or came from FFI values).
    owned: Vec<u8>,
    /// The items of every array, and the keys and values (in turn) of
    /// every object.
    items: Vec<Node>,
    /// Values JSON has no form for: integers beyond 64 bits, and non-JSON
    /// values of a graph given as FFI values.
    others: Vec<Any>,
    root: Node,
}

/// A value as stored: 16 bytes, offsets in 32 bits (a document is at most
/// 4 GiB, so no offset into it or its vectors exceeds that). Every payload
/// is a whole 4- or 8-byte word at an aligned offset (a bool too), so that a
/// value moves as aligned words: with a one-byte payload the compiler
/// copies values in pieces at odd offsets, and reading those back stalls
/// store-to-load forwarding on every value the parser stacks.
#[derive(Clone, Copy)]
#[repr(u32)]
enum Node {
    Null,
    /// 0 or 1.
    Bool(u32),
    Int(i64),
    Float(f64),
    Text { start: u32, len: u32 },
    Owned { start: u32, len: u32 },
    Array { start: u32, len: u32 },
    /// `len` members, at `2 * len` items.
    Object { start: u32, len: u32 },
    Other(u32),
}

/// The most a document holds, in bytes of text (or of strings and items,
/// for one read from FFI values).
const MAX_DOCUMENT: usize = u32::MAX as usize;

fn offset(v: usize) -> Result<u32, ()> {
    u32::try_from(v).map_err(|_| ())
}

fn too_large() -> Error {
    Error::value_error(format!("a JSON document beyond {MAX_DOCUMENT} bytes cannot be read as a graph"))
}

/// One value of a document, to read.
#[derive(Clone, Copy)]
pub(crate) struct Json<'a> {
    doc: &'a JsonDoc<'a>,
    node: Node,
}

/// A value by kind, to match on.
pub(crate) enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a [u8]),
    Array(Items<'a>),
    Object(Members<'a>),
    Other(&'a Any),
}

/// The items of an array.
#[derive(Clone, Copy)]
pub(crate) struct Items<'a> {
    doc: &'a JsonDoc<'a>,
    start: usize,
    len: usize,
}

/// The members of an object, in text order.
#[derive(Clone, Copy)]
pub(crate) struct Members<'a> {
    doc: &'a JsonDoc<'a>,
    start: usize,
    len: usize,
}

impl<'a> Items<'a> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }
    pub(crate) fn get(&self, i: usize) -> Option<Json<'a>> {
        (i < self.len).then(|| Json { doc: self.doc, node: self.doc.items[self.start + i] })
    }
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = Json<'a>> + DoubleEndedIterator + 'a {
        let doc = self.doc;
        doc.items[self.start..self.start + self.len].iter().map(move |&node| Json { doc, node })
    }
}

impl<'a> Members<'a> {
    pub(crate) fn len(&self) -> usize {
        self.len
    }
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = (Json<'a>, Json<'a>)> + DoubleEndedIterator + 'a {
        let doc = self.doc;
        doc.items[self.start..self.start + 2 * self.len]
            .chunks_exact(2)
            .map(move |kv| (Json { doc, node: kv[0] }, Json { doc, node: kv[1] }))
    }
    /// The member `key` (the last one of that name, as a Map built from
    /// the members would keep).
    #[inline]
    pub(crate) fn get(&self, key: &[u8]) -> Option<Json<'a>> {
        let doc = self.doc;
        doc.items[self.start..self.start + 2 * self.len]
            .chunks_exact(2)
            .rev()
            .find(|kv| doc.str_of(kv[0]) == Some(key))
            .map(|kv| Json { doc, node: kv[1] })
    }
}

impl<'t> JsonDoc<'t> {
    #[inline]
    fn str_of(&self, node: Node) -> Option<&[u8]> {
        match node {
            Node::Text { start, len } => Some(&self.text[start as usize..(start + len) as usize]),
            Node::Owned { start, len } => Some(&self.owned[start as usize..(start + len) as usize]),
            _ => None,
        }
    }

    /// Parse JSON text.
    pub(crate) fn parse(text: &'t [u8]) -> Result<JsonDoc<'t>, Error> {
        if text.len() > MAX_DOCUMENT {
            return Err(too_large());
        }
        let mut doc = JsonDoc { text, owned: Vec::new(), items: Vec::new(), others: Vec::new(), root: Node::Null };
        doc.root = parse_with(text, DocBuilder { doc: &mut doc })?;
        Ok(doc)
    }

    /// The root value.
    pub(crate) fn root(&self) -> Json<'_> {
        Json { doc: self, node: self.root }
    }
}

impl JsonDoc<'static> {
    /// The document FFI values form: Maps as objects, Arrays as arrays,
    /// strings, numbers, bools and None as themselves, anything else kept
    /// as [`Value::Other`].
    pub(crate) fn from_any(root: &Any) -> Result<JsonDoc<'static>, Error> {
        enum Work {
            Visit(Any),
            Close { start: usize, object: bool },
        }
        let mut doc = JsonDoc { text: &[], owned: Vec::new(), items: Vec::new(), others: Vec::new(), root: Node::Null };
        let mut work = vec![Work::Visit(root.clone())];
        let mut values: Vec<Node> = Vec::new();
        while let Some(step) = work.pop() {
            let mut build = DocBuilder { doc: &mut doc };
            match step {
                Work::Close { start, object } => {
                    let node = if object { build.object(values.drain(start..)) } else { build.array(values.drain(start..)) };
                    values.push(node.map_err(|()| too_large())?);
                }
                Work::Visit(v) => match v.type_index() {
                    ti::kTVMFFINone => values.push(Node::Null),
                    ti::kTVMFFIBool => values.push(Node::Bool(v.get::<bool>()? as u32)),
                    ti::kTVMFFIInt => values.push(Node::Int(v.get::<i64>()?)),
                    ti::kTVMFFIFloat => values.push(Node::Float(v.get::<f64>()?)),
                    ti::kTVMFFIStr | ti::kTVMFFISmallStr => {
                        let bytes = v.view().str_bytes().unwrap_or_default().to_vec();
                        values.push(build.string(Cow::Owned(bytes)).map_err(|()| too_large())?);
                    }
                    ti::kTVMFFIArray => {
                        let items: Vec<Any> = Array::from_object(v.as_object().expect("an array"))?.iter().cloned().collect();
                        work.push(Work::Close { start: values.len(), object: false });
                        work.extend(items.into_iter().rev().map(Work::Visit));
                    }
                    ti::kTVMFFIMap => {
                        let members = Map::from_object(v.as_object().expect("a map"))?.items();
                        work.push(Work::Close { start: values.len(), object: true });
                        for (k, x) in members.into_iter().rev() {
                            work.push(Work::Visit(x));
                            work.push(Work::Visit(k));
                        }
                    }
                    _ => {
                        doc.others.push(v);
                        values.push(Node::Other(offset(doc.others.len() - 1).map_err(|()| too_large())?));
                    }
                },
            }
        }
        doc.root = values.pop().expect("the root's value");
        Ok(doc)
    }
}

impl<'a> Json<'a> {
    /// The value by kind.
    #[inline]
    pub(crate) fn value(&self) -> Value<'a> {
        let doc = self.doc;
        match self.node {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(b != 0),
            Node::Int(i) => Value::Int(i),
            Node::Float(f) => Value::Float(f),
            Node::Text { start, len } => Value::Str(&doc.text[start as usize..(start + len) as usize]),
            Node::Owned { start, len } => Value::Str(&doc.owned[start as usize..(start + len) as usize]),
            Node::Array { start, len } => Value::Array(Items { doc, start: start as usize, len: len as usize }),
            Node::Object { start, len } => Value::Object(Members { doc, start: start as usize, len: len as usize }),
            Node::Other(i) => Value::Other(&doc.others[i as usize]),
        }
    }

    /// The member `key` of an object (the last one of that name).
    pub(crate) fn member(&self, key: &[u8]) -> Option<Json<'a>> {
        match self.value() {
            Value::Object(members) => members.get(key),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn as_str(&self) -> Option<&'a [u8]> {
        self.doc.str_of(self.node)
    }

    /// What the value is, for messages.
    pub(crate) fn kind(&self) -> String {
        match self.value() {
            Value::Null => "None".into(),
            Value::Bool(_) => "a bool".into(),
            Value::Int(_) => "an integer".into(),
            Value::Float(_) => "a float".into(),
            Value::Str(_) => "a string".into(),
            Value::Array(_) => "an array".into(),
            Value::Object(_) => "an object".into(),
            Value::Other(a) if a.type_index() == ti::kTVMFFIBigInt => "an integer beyond 64 bits".into(),
            Value::Other(a) => format!("`{}`", a.type_key()),
        }
    }

    /// The FFI value of this value (objects as Maps, arrays as Arrays).
    pub(crate) fn to_any(&self) -> Result<Any, Error> {
        enum Step<'a> {
            Visit(Json<'a>),
            BuildArray(usize),
            BuildObject(usize),
        }
        let mut work = vec![Step::Visit(*self)];
        let mut out: Vec<Any> = Vec::new();
        while let Some(step) = work.pop() {
            match step {
                Step::Visit(v) => match v.value() {
                    Value::Null => out.push(Any::none()),
                    Value::Bool(b) => out.push(Any::from(b)),
                    Value::Int(i) => out.push(Any::from(i)),
                    Value::Float(f) => out.push(Any::from(f)),
                    Value::Str(s) => out.push(make_str_or_bytes(s, false)?),
                    Value::Other(a) => out.push(a.clone()),
                    Value::Array(items) => {
                        work.push(Step::BuildArray(items.len()));
                        work.extend(items.iter().rev().map(Step::Visit));
                    }
                    Value::Object(members) => {
                        work.push(Step::BuildObject(members.len()));
                        for (k, v) in members.iter().rev() {
                            work.push(Step::Visit(v));
                            work.push(Step::Visit(k));
                        }
                    }
                },
                Step::BuildArray(n) => {
                    let items = out.split_off(out.len() - n);
                    out.push(Any::from_object(Array::new(items)?.into_object()));
                }
                Step::BuildObject(n) => {
                    let mut flat = out.drain(out.len() - 2 * n..);
                    let mut pairs = Vec::with_capacity(n);
                    while let (Some(k), Some(v)) = (flat.next(), flat.next()) {
                        pairs.push((k, v));
                    }
                    drop(flat);
                    out.push(Any::from_object(Map::new(pairs)?.into_object()));
                }
            }
        }
        Ok(out.pop().expect("the root's value"))
    }
}

/// The parser's builder of a document: values are nodes, containers are
/// copied off the parser's value stack into the document's items.
struct DocBuilder<'d, 't> {
    doc: &'d mut JsonDoc<'t>,
}

impl<'t> Build<'t> for DocBuilder<'_, 't> {
    type Value = Node;
    fn null(&mut self) -> Node {
        Node::Null
    }
    fn bool(&mut self, v: bool) -> Node {
        Node::Bool(v as u32)
    }
    fn int(&mut self, v: i64) -> Node {
        Node::Int(v)
    }
    fn big_int(&mut self, text: &str) -> Result<Node, ()> {
        let v = crate::values::big_int::decimal::parse_decimal(text).map_err(|_| ())?;
        self.doc.others.push(v);
        Ok(Node::Other(offset(self.doc.others.len() - 1)?))
    }
    fn float(&mut self, v: f64) -> Node {
        Node::Float(v)
    }
    fn string(&mut self, bytes: Cow<'t, [u8]>) -> Result<Node, ()> {
        Ok(match bytes {
            Cow::Borrowed(s) => {
                // A slice of the text: its offset in it.
                let start = s.as_ptr() as usize - self.doc.text.as_ptr() as usize;
                Node::Text { start: offset(start)?, len: offset(s.len())? }
            }
            Cow::Owned(s) => {
                let start = self.doc.owned.len();
                self.doc.owned.try_reserve(s.len()).map_err(|_| ())?;
                self.doc.owned.extend_from_slice(&s);
                Node::Owned { start: offset(start)?, len: offset(s.len())? }
            }
        })
    }
    fn array(&mut self, items: std::vec::Drain<'_, Node>) -> Result<Node, ()> {
        let (start, len) = (offset(self.doc.items.len())?, offset(items.len())?);
        self.doc.items.extend_from_slice(items.as_slice());
        Ok(Node::Array { start, len })
    }
    fn object(&mut self, members: std::vec::Drain<'_, Node>) -> Result<Node, ()> {
        let (start, len) = (offset(self.doc.items.len())?, offset(members.len() / 2)?);
        self.doc.items.extend_from_slice(members.as_slice());
        Ok(Node::Object { start, len })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serialization::json::{parse, stringify};

    #[test]
    fn members_and_kinds() {
        let doc = JsonDoc::parse(br#"{"a": [1, 2.5, "x\n", null, true], "a": {"b": 12345678901234567890123}}"#).unwrap();
        let a = doc.root().member(b"a").expect("the last `a`");
        assert_eq!(a.kind(), "an object");
        assert_eq!(a.member(b"b").unwrap().kind(), "an integer beyond 64 bits");
        assert!(doc.root().member(b"zz").is_none());
    }

    #[test]
    fn deep_documents_build_and_convert_without_recursion() {
        let depth = 200_000;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let doc = JsonDoc::parse(text.as_bytes()).unwrap();
        let any = doc.root().to_any().unwrap();
        let back = JsonDoc::from_any(&any).unwrap();
        assert!(matches!(back.root().value(), Value::Array(items) if items.len() == 1));
    }

    #[test]
    fn text_and_ffi_values_agree() {
        let text = br#"{"k": [1, -2, 3.5, "s\u00e9", false, null, {}], "m": {"x": [[]]}, "big": -98765432109876543210}"#;
        let doc = JsonDoc::parse(text).unwrap();
        let any = doc.root().to_any().unwrap();
        let again = JsonDoc::from_any(&any).unwrap().root().to_any().unwrap();
        assert_eq!(stringify(&any, 0).unwrap(), stringify(&again, 0).unwrap());
        assert_eq!(stringify(&any, 0).unwrap(), stringify(&parse(text).unwrap(), 0).unwrap());
    }
}
