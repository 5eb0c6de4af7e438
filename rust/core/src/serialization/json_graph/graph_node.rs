//! One node of a JSON graph being loaded, read with the checks a hostile
//! graph needs. A node must be an object with a string `type` naming a
//! registered type and, for every type but None, a `data` of the kind that
//! type reads: an integer, bool, float or string, an array of node indices,
//! or an object of fields. Every refusal is a ValueError naming the node's
//! index and type and the field that is wrong (`data`, `data[3]`,
//! `data.name`), never a panic or a silently wrong value: indices beyond 64
//! bits, negative or past the last node, and JSON null where a node index
//! belongs are refused; an `int` node's integer beyond 64 bits loads as a
//! BigInt, never as a float.

use crate::abi::type_index as ti;
use crate::values::any::Any;
use crate::containers::{Array, Map};
use crate::values::error::Error;
use crate::object::ObjectRef;
use crate::types::type_registry;

pub(super) fn invalid(msg: impl std::fmt::Display) -> Error {
    Error::value_error(format!("Invalid JSON Object Graph: {msg}"))
}

/// What a JSON value is, for messages.
pub(super) fn kind_of(v: &Any) -> String {
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

/// A node as read: its index, type and fields.
pub(super) struct GraphNode {
    pub(super) index: i64,
    pub(super) type_key: String,
    pub(super) type_index: i32,
    fields: Map,
}

impl GraphNode {
    /// Read node `index` (`raw` is its JSON value).
    pub(super) fn read(index: i64, raw: &Any) -> Result<GraphNode, Error> {
        let fields = raw
            .get::<ObjectRef>()
            .ok()
            .filter(|o| o.type_index() == ti::kTVMFFIMap)
            .and_then(|o| Map::from_object(o).ok())
            .ok_or_else(|| invalid(format!("node {index} must be an object with `type` and `data`, got {}", kind_of(raw))))?;
        let ty = fields
            .get(&Any::string("type")?)
            .ok_or_else(|| invalid(format!("node {index}: field `type` is missing")))?;
        let type_key = match ty.type_index() {
            ti::kTVMFFIStr | ti::kTVMFFISmallStr => ty.get::<String>()?,
            _ => return Err(invalid(format!("node {index}: field `type` must be a string, got {}", kind_of(&ty)))),
        };
        let type_index = type_registry::key_to_index(type_key.as_bytes()).ok_or_else(|| {
            // TVM-FFI's kind and text for an unknown key in a graph.
            Error::runtime_error(format!("Check failed: (it != type_key2index_.end()) is false: Cannot find type `{type_key}`"))
        })?;
        Ok(GraphNode { index, type_key, type_index, fields })
    }

    /// "node 3 (`ffi.Array`)", for messages.
    pub(super) fn what(&self) -> String {
        format!("node {} (`{}`)", self.index, self.type_key)
    }

    /// A refusal naming this node and `field`.
    pub(super) fn refuse(&self, field: &str, msg: impl std::fmt::Display) -> Error {
        invalid(format!("{}: field `{field}` {msg}", self.what()))
    }

    /// The node's `data`, which must be present and not None.
    pub(super) fn data(&self) -> Result<Any, Error> {
        match self.fields.get(&Any::string("data")?) {
            None => Err(self.refuse("data", "is missing")),
            Some(v) if v.is_none() => Err(self.refuse("data", "is None")),
            Some(v) => Ok(v),
        }
    }

    /// `data` as an integer: within 64 bits, or (when `big` allows) a BigInt.
    pub(super) fn data_int(&self, big: bool) -> Result<Any, Error> {
        let v = self.data()?;
        match v.type_index() {
            ti::kTVMFFIInt => Ok(v),
            ti::kTVMFFIBigInt if big => Ok(v),
            _ => Err(self.refuse("data", format!("must be an integer, got {}", kind_of(&v)))),
        }
    }

    pub(super) fn data_bool(&self) -> Result<bool, Error> {
        let v = self.data()?;
        match v.type_index() {
            ti::kTVMFFIBool => v.get::<bool>(),
            _ => Err(self.refuse("data", format!("must be a bool, got {}", kind_of(&v)))),
        }
    }

    pub(super) fn data_float(&self) -> Result<f64, Error> {
        let v = self.data()?;
        inline_float(&v).ok_or_else(|| self.refuse("data", format!("must be a number, got {}", kind_of(&v))))
    }

    pub(super) fn data_str(&self) -> Result<String, Error> {
        let v = self.data()?;
        match v.type_index() {
            ti::kTVMFFIStr | ti::kTVMFFISmallStr => v.get::<String>(),
            _ => Err(self.refuse("data", format!("must be a string, got {}", kind_of(&v)))),
        }
    }

    /// `data` as an array of integers within 64 bits (node indices or a
    /// shape's dims; indices are checked against the graph by the caller).
    pub(super) fn data_ints(&self) -> Result<Vec<i64>, Error> {
        let v = self.data()?;
        let items = v
            .get::<ObjectRef>()
            .ok()
            .filter(|o| o.type_index() == ti::kTVMFFIArray)
            .and_then(|o| Array::from_object(o).ok())
            .ok_or_else(|| self.refuse("data", format!("must be an array of integers, got {}", kind_of(&v))))?;
        items
            .iter()
            .enumerate()
            .map(|(j, x)| match x.type_index() {
                ti::kTVMFFIInt => x.get::<i64>(),
                _ => Err(self.refuse(&format!("data[{j}]"), format!("must be an integer, got {}", kind_of(x)))),
            })
            .collect()
    }

    /// `data` as an object of fields (a reflected object's data).
    pub(super) fn data_fields(&self) -> Result<Map, Error> {
        let v = self.data()?;
        v.get::<ObjectRef>()
            .ok()
            .filter(|o| o.type_index() == ti::kTVMFFIMap)
            .and_then(|o| Map::from_object(o).ok())
            .ok_or_else(|| self.refuse("data", format!("must be an object of fields, got {}", kind_of(&v))))
    }
}

/// A JSON number as a float (an integer converts; beyond 64 bits it does
/// not, rather than losing digits silently).
pub(super) fn inline_float(v: &Any) -> Option<f64> {
    match v.type_index() {
        ti::kTVMFFIFloat => v.get::<f64>().ok(),
        ti::kTVMFFIInt => v.get::<i64>().ok().map(|i| i as f64),
        _ => None,
    }
}
