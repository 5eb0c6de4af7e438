//! One node of a JSON graph being loaded, read with the checks a hostile
//! graph needs. A node must be an object with a string `type` naming a
//! registered type and, for every type but None, a `data` of the kind that
//! type reads: an integer, bool, float or string, an array of node indices,
//! or an object of fields. Every refusal is a ValueError naming the node's
//! index and type and the field that is wrong (`data`, `data[3]`,
//! `data.name`), never a panic or a silently wrong value: indices beyond 64
//! bits, negative or past the last node, and JSON null where a node index
//! belongs are refused; an `int` node's integer beyond 64 bits loads as a
//! BigInt, never as a float. Nodes are read from the borrowed JSON tree
//! ([`Json`]), so a node costs no FFI allocation of its own.

use crate::abi::type_index as ti;
use crate::serialization::json::tree::{Json, Members, Value};
use crate::values::any::Any;
use crate::values::error::Error;

pub(super) fn invalid(msg: impl std::fmt::Display) -> Error {
    Error::value_error(format!("Invalid JSON Object Graph: {msg}"))
}

/// What a JSON value is, for messages.
pub(super) fn kind_of(v: &Json<'_>) -> String {
    v.kind()
}

/// What a loaded FFI value is, for messages.
pub(super) fn kind_of_value(v: &Any) -> String {
    match v.type_index() {
        ti::kTVMFFINone => "None".into(),
        ti::kTVMFFIBool => "a bool".into(),
        ti::kTVMFFIInt => "an integer".into(),
        ti::kTVMFFIBigInt => "an integer beyond 64 bits".into(),
        ti::kTVMFFIFloat => "a float".into(),
        ti::kTVMFFIStr | ti::kTVMFFISmallStr => "a string".into(),
        ti::kTVMFFIArray => "an array".into(),
        ti::kTVMFFIMap => "an object".into(),
        _ => format!("`{}`", v.type_key()),
    }
}

/// A node as read: its index, type and JSON value.
pub(super) struct GraphNode<'a> {
    pub(super) index: i64,
    pub(super) type_key: &'a [u8],
    pub(super) type_index: i32,
    /// The node's `data` member, if it has one.
    data: Option<Json<'a>>,
}

impl<'a> GraphNode<'a> {
    /// Read node `index` (`raw` is its JSON value); `type_index_of` finds
    /// a type key's index.
    pub(super) fn read(index: i64, raw: Json<'a>, type_index_of: impl FnOnce(&'a [u8]) -> Option<i32>) -> Result<Self, Error> {
        let Value::Object(members) = raw.value() else {
            return Err(invalid(format!("node {index} must be an object with `type` and `data`, got {}", kind_of(&raw))));
        };
        let ty = members.get(b"type").ok_or_else(|| invalid(format!("node {index}: field `type` is missing")))?;
        let type_key = ty
            .as_str()
            .ok_or_else(|| invalid(format!("node {index}: field `type` must be a string, got {}", kind_of(&ty))))?;
        let type_index = type_index_of(type_key).ok_or_else(|| {
            // TVM-FFI's kind and text for an unknown key in a graph.
            Error::runtime_error(format!(
                "Check failed: (it != type_key2index_.end()) is false: Cannot find type `{}`",
                String::from_utf8_lossy(type_key)
            ))
        })?;
        Ok(GraphNode { index, type_key, type_index, data: members.get(b"data") })
    }

    /// The type key as text, for messages.
    pub(super) fn type_name(&self) -> std::borrow::Cow<'a, str> {
        String::from_utf8_lossy(self.type_key)
    }

    /// "node 3 (`ffi.Array`)", for messages.
    pub(super) fn what(&self) -> String {
        format!("node {} (`{}`)", self.index, self.type_name())
    }

    /// A refusal naming this node and `field`.
    pub(super) fn refuse(&self, field: &str, msg: impl std::fmt::Display) -> Error {
        invalid(format!("{}: field `{field}` {msg}", self.what()))
    }

    /// The node's `data`, which must be present and not None.
    pub(super) fn data(&self) -> Result<Json<'a>, Error> {
        match self.data {
            None => Err(self.refuse("data", "is missing")),
            Some(v) if matches!(v.value(), Value::Null) => Err(self.refuse("data", "is None")),
            Some(v) => Ok(v),
        }
    }

    /// `data` as an integer: within 64 bits, or (when `big` allows) a BigInt.
    pub(super) fn data_int(&self, big: bool) -> Result<Any, Error> {
        let v = self.data()?;
        match v.value() {
            Value::Int(i) => Ok(Any::from(i)),
            Value::Other(a) if big && a.type_index() == ti::kTVMFFIBigInt => Ok(a.clone()),
            _ => Err(self.refuse("data", format!("must be an integer, got {}", kind_of(&v)))),
        }
    }

    pub(super) fn data_bool(&self) -> Result<bool, Error> {
        let v = self.data()?;
        match v.value() {
            Value::Bool(b) => Ok(b),
            _ => Err(self.refuse("data", format!("must be a bool, got {}", kind_of(&v)))),
        }
    }

    pub(super) fn data_float(&self) -> Result<f64, Error> {
        let v = self.data()?;
        inline_float(&v).ok_or_else(|| self.refuse("data", format!("must be a number, got {}", kind_of(&v))))
    }

    /// `data` as the bytes of a string.
    pub(super) fn data_str(&self) -> Result<&'a [u8], Error> {
        let v = self.data()?;
        v.as_str().ok_or_else(|| self.refuse("data", format!("must be a string, got {}", kind_of(&v))))
    }

    /// `data` as UTF-8 text.
    pub(super) fn data_text(&self) -> Result<&'a str, Error> {
        std::str::from_utf8(self.data_str()?).map_err(|_| self.refuse("data", "must be UTF-8 text"))
    }

    /// `data` as an array of integers within 64 bits (node indices or a
    /// shape's dims; indices are checked against the graph by the caller).
    pub(super) fn data_ints(&self) -> Result<Vec<i64>, Error> {
        self.check_ints()?;
        Ok(self.checked_ints().collect())
    }

    /// Check that `data` is an array of integers, as [`Self::data_ints`]
    /// reads it, without collecting them; their count.
    pub(super) fn check_ints(&self) -> Result<usize, Error> {
        let v = self.data()?;
        let Value::Array(items) = v.value() else {
            return Err(self.refuse("data", format!("must be an array of integers, got {}", kind_of(&v))));
        };
        for (j, x) in items.iter().enumerate() {
            if !matches!(x.value(), Value::Int(_)) {
                return Err(self.refuse(&format!("data[{j}]"), format!("must be an integer, got {}", kind_of(&x))));
            }
        }
        Ok(items.len())
    }

    /// The integers of an array `data` that [`Self::check_ints`] has
    /// already checked.
    pub(super) fn checked_ints(&self) -> impl ExactSizeIterator<Item = i64> + 'a {
        let Some(Value::Array(items)) = self.data.map(|d| d.value()) else {
            unreachable!("data_ints checked that data is an array")
        };
        items.iter().map(|x| match x.value() {
            Value::Int(i) => i,
            _ => unreachable!("data_ints checked every item"),
        })
    }

    /// `data` as an object of fields (a reflected object's data).
    pub(super) fn data_fields(&self) -> Result<Members<'a>, Error> {
        let v = self.data()?;
        match v.value() {
            Value::Object(members) => Ok(members),
            _ => Err(self.refuse("data", format!("must be an object of fields, got {}", kind_of(&v)))),
        }
    }
}

/// A JSON number as a float (an integer converts; beyond 64 bits it does
/// not, rather than losing digits silently).
pub(super) fn inline_float(v: &Json<'_>) -> Option<f64> {
    match v.value() {
        Value::Float(f) => Some(f),
        Value::Int(i) => Some(i as f64),
        _ => None,
    }
}
