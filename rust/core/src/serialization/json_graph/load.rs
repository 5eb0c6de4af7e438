//! Loading a JSON graph: the value of the root node, with every node it
//! reaches decoded after its children in a post-order found on an explicit
//! stack (depth costs heap, not native stack). Nodes are read and checked
//! by [`super::graph_node`]; here the references between them are: every
//! child index must name an existing node, and a node that reaches itself
//! (directly or round a longer cycle) is refused, naming the node and the
//! field that closes the cycle. A reflected object's fields are checked
//! against their declared types: a field of a registered class takes only
//! instances of it (None is left to the field's own setter, which knows
//! whether it is optional).
//!
//! Text is parsed into the borrowed [`Json`] tree and read from there, so
//! only the values the graph describes become FFI objects; a graph given
//! as FFI values is read into the same tree first.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::abi::{field_flag, type_index as ti, DLDevice, TVMFFIFieldInfo};
use crate::serialization::json::tree::{Items, Json, JsonDoc, Value};
use crate::values::any::{make_str_or_bytes, Any};
use crate::containers::{Array, Dict, List, Map, Shape};
use crate::dataclass;
use crate::values::error::Error;
use crate::values::function::Function;
use crate::object::ObjectRef;
use crate::types::type_registry;

use super::graph_node::{inline_float, invalid, kind_of, kind_of_value, GraphNode};
use super::base64_decode;
use super::graph_values::obj_any;

/// Where a node refers to a child, for messages.
#[derive(Clone, Copy)]
enum Slot {
    Item(usize),
    Field(&'static TVMFFIFieldInfo),
}

impl Slot {
    fn name(self) -> String {
        match self {
            Slot::Item(j) => format!("data[{j}]"),
            Slot::Field(f) => format!("data.{}", crate::structural::field_name(f)),
        }
    }
}

/// Fields stored inline in an object's data rather than as node indices.
fn is_inline(f: &TVMFFIFieldInfo) -> bool {
    matches!(
        f.field_static_type_index,
        ti::kTVMFFINone | ti::kTVMFFIBool | ti::kTVMFFIInt | ti::kTVMFFIFloat | ti::kTVMFFIDataType
    )
}

/// What loading needs to know about a reflected type, looked up once per
/// load rather than once per node (each lookup takes the registry's lock
/// and hashes a name).
struct TypeFacts {
    enum_type: bool,
    int_enum: bool,
    data_hook: Option<Any>,
    new: Option<Any>,
    fields: Vec<FieldFacts>,
}

struct FieldFacts {
    info: &'static TVMFFIFieldInfo,
    name: String,
    /// `data.<name>`, for messages.
    label: String,
}

impl TypeFacts {
    fn of(index: i32) -> Result<TypeFacts, Error> {
        let fields = type_registry::all_fields(index)
            .into_iter()
            .map(|info| {
                let name = crate::structural::field_name(info);
                Ok(FieldFacts { info, label: format!("data.{name}"), name })
            })
            .collect::<Result<_, Error>>()?;
        Ok(TypeFacts {
            enum_type: crate::enum_type::is_enum_type(index),
            int_enum: crate::enum_type::is_int_enum_type(index),
            data_hook: crate::reflection::attr_columns::attr_value(index, b"__data_from_json__"),
            new: crate::reflection::attr_columns::attr_value(index, b"__ffi_new__"),
            fields,
        })
    }

    fn uses_data_hook(&self) -> bool {
        self.enum_type || self.data_hook.is_some()
    }
}

/// The type keys a graph names, with their indices: the few most recent
/// in a list compared byte by byte, the rest in a map.
#[derive(Default)]
struct TypeKeys<'a> {
    recent: Vec<(&'a [u8], i32)>,
    more: HashMap<&'a [u8], i32>,
}

impl<'a> TypeKeys<'a> {
    const RECENT: usize = 8;

    fn index_of(&mut self, key: &'a [u8]) -> Option<i32> {
        if let Some(&(_, index)) = self.recent.iter().find(|(k, _)| *k == key) {
            return Some(index);
        }
        if let Some(&index) = self.more.get(key) {
            return Some(index);
        }
        let index = type_registry::key_to_index(key)?;
        if self.recent.len() < Self::RECENT {
            self.recent.push((key, index));
        } else {
            self.more.insert(key, index);
        }
        Some(index)
    }
}

struct Reader<'a> {
    nodes: Items<'a>,
    decoded: Vec<Option<Any>>,
    /// Nodes expanded and not yet decoded (the current path), as read.
    active: Vec<Option<GraphNode<'a>>>,
    types: RefCell<HashMap<i32, Rc<TypeFacts>>>,
    /// Type keys met so far and their indices (the registry's lookup takes
    /// its lock; a graph names few types many times).
    type_keys: TypeKeys<'a>,
}

impl<'a> Reader<'a> {
    fn node_at(&mut self, i: i64) -> Result<GraphNode<'a>, Error> {
        let keys = &mut self.type_keys;
        GraphNode::read(i, self.nodes.get(i as usize).expect("indices are checked against the graph"), |key| keys.index_of(key))
    }

    fn facts(&self, index: i32) -> Result<Rc<TypeFacts>, Error> {
        if let Some(f) = self.types.borrow().get(&index) {
            return Ok(f.clone());
        }
        let f = Rc::new(TypeFacts::of(index)?);
        self.types.borrow_mut().insert(index, f.clone());
        Ok(f)
    }

    /// Check every child of `node` (in order; the first bad one is the
    /// error) and push those not yet decoded onto `stack`, the first child
    /// on top. Nothing is allocated per node.
    fn push_children(&self, node: &GraphNode<'a>, stack: &mut Vec<(i64, bool)>) -> Result<(), Error> {
        let mark = stack.len();
        let mut visit = |c: i64, slot: Slot| -> Result<(), Error> {
            self.check_child(node, c, slot)?;
            if self.decoded[c as usize].is_none() {
                stack.push((c, false));
            }
            Ok(())
        };
        match node.type_index {
            ti::kTVMFFIArray | ti::kTVMFFIList | ti::kTVMFFIMap | ti::kTVMFFIDict => {
                let n = node.check_ints()?;
                if matches!(node.type_index, ti::kTVMFFIMap | ti::kTVMFFIDict) && n % 2 != 0 {
                    return Err(invalid(format!(
                        "{}: Map/Dict data must contain an even number of [key, value] entries, got {}",
                        node.what(),
                        n
                    )));
                }
                for (j, c) in node.checked_ints().enumerate() {
                    visit(c, Slot::Item(j))?;
                }
            }
            i if i >= ti::kTVMFFIStaticObjectEnd && !self.facts(i)?.uses_data_hook() => {
                let data = node.data_fields()?;
                for f in &self.facts(i)?.fields {
                    if is_inline(f.info) {
                        continue;
                    }
                    let slot = Slot::Field(f.info);
                    if let Some(raw) = data.get(f.name.as_bytes()) {
                        match raw.value() {
                            Value::Int(c) => visit(c, slot)?,
                            _ => return Err(node.refuse(&slot.name(), format!("must be a node index, got {}", kind_of(&raw)))),
                        }
                    }
                }
            }
            _ => {}
        }
        stack[mark..].reverse();
        Ok(())
    }

    fn check_child(&self, node: &GraphNode<'a>, child: i64, slot: Slot) -> Result<(), Error> {
        if child < 0 || child as usize >= self.nodes.len() {
            return Err(node.refuse(
                &slot.name(),
                format!("refers to node {child}, which does not exist (the graph has {} nodes)", self.nodes.len()),
            ));
        }
        if self.active[child as usize].is_some() {
            return Err(if child == node.index {
                node.refuse(&slot.name(), "refers to the node itself")
            } else {
                node.refuse(&slot.name(), format!("refers to node {child}, which contains this node (a cycle)"))
            });
        }
        Ok(())
    }

    /// Decode `root` and every node it reaches, children first.
    fn decode_reachable(&mut self, root: i64) -> Result<(), Error> {
        // (node, children pushed): a node is expanded once, then decoded
        // when it comes back up.
        let mut stack: Vec<(i64, bool)> = vec![(root, false)];
        while let Some((i, expanded)) = stack.pop() {
            if self.decoded[i as usize].is_some() {
                continue;
            }
            if expanded {
                // Off the path once decoded (an error ends the load).
                let node = self.active[i as usize].take().expect("an expanded node is on the path");
                self.decoded[i as usize] = Some(self.decode(&node)?);
                continue;
            }
            if self.active[i as usize].is_some() {
                // Pushed twice by one parent and expanded meanwhile: the
                // second entry waits for the first.
                continue;
            }
            let node = self.node_at(i)?;
            self.active[i as usize] = Some(node);
            stack.push((i, true));
            let node = self.active[i as usize].as_ref().expect("entered above");
            self.push_children(node, &mut stack)?;
        }
        Ok(())
    }

    /// The decoded value of a child (decoded before its parent).
    fn child(&self, c: i64) -> Any {
        self.decoded[c as usize].clone().expect("children are decoded before their parents")
    }

    fn decode(&self, node: &GraphNode<'a>) -> Result<Any, Error> {
        Ok(match node.type_index {
            ti::kTVMFFINone => Any::none(),
            ti::kTVMFFIBool => Any::from(node.data_bool()?),
            // An integer beyond 64 bits stays an integer (a BigInt).
            ti::kTVMFFIInt => node.data_int(true)?,
            ti::kTVMFFIFloat => Any::from(node.data_float()?),
            ti::kTVMFFIDataType => Any::data_type(
                crate::tensor::dtype::from_str(node.data_text()?).map_err(|e| node.refuse("data", e.message()))?,
            ),
            ti::kTVMFFIDevice => {
                let d = node.data_ints()?;
                let [device_type, device_id] = d[..] else {
                    return Err(invalid(format!(
                        "{}: Device data must be an array of [device_type, device_id], got {} element(s)",
                        node.what(),
                        d.len()
                    )));
                };
                let narrow = |v: i64, j: usize| {
                    i32::try_from(v).map_err(|_| node.refuse(&format!("data[{j}]"), format!("{v} is out of the 32-bit range")))
                };
                Any::device(DLDevice { device_type: narrow(device_type, 0)? as _, device_id: narrow(device_id, 1)? })
            }
            // A str node is text: the saver writes it back as JSON text.
            ti::kTVMFFIStr => make_str_or_bytes(node.data_text()?.as_bytes(), false)?,
            ti::kTVMFFIBytes => Any::bytes(&base64_decode(node.data_str()?).map_err(|e| node.refuse("data", e.message()))?)?,
            ti::kTVMFFIArray | ti::kTVMFFIList => {
                let ints = node.checked_ints();
                if node.type_index == ti::kTVMFFIArray {
                    // Written straight into the Array's storage.
                    obj_any(Array::from_owned(ints.len(), ints.map(|c| self.child(c)))?.into_object())
                } else {
                    obj_any(List::new(ints.map(|c| self.child(c)).collect())?.into_object())
                }
            }
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                // push_children checked the count before anything was decoded.
                let mut ints = node.checked_ints();
                let mut pairs = Vec::with_capacity(ints.len() / 2);
                while let (Some(k), Some(v)) = (ints.next(), ints.next()) {
                    pairs.push((self.child(k), self.child(v)));
                }
                if node.type_index == ti::kTVMFFIDict {
                    obj_any(Dict::new(pairs)?.into_object())
                } else {
                    obj_any(Map::new(pairs)?.into_object())
                }
            }
            ti::kTVMFFIShape => obj_any(Shape::new(&node.data_ints()?).map_err(|e| node.refuse("data", e.message()))?.into_object()),
            i if i >= ti::kTVMFFIStaticObjectBegin => self.decode_object(node)?,
            _ => return Err(invalid(format!("{}: values of this type cannot be loaded from a graph", node.what()))),
        })
    }

    fn decode_object(&self, node: &GraphNode<'a>) -> Result<Any, Error> {
        let index = node.type_index;
        let facts = self.facts(index)?;
        // An enum node names its singleton by canonical index.
        if facts.enum_type {
            let key = if facts.int_enum { node.data_int(false)? } else { make_str_or_bytes(node.data_str()?, false)? };
            return crate::enum_type::get_by_index(index, &key).map(Any::from_object);
        }
        if let Some(hook) = &facts.data_hook {
            return Function::from_object(hook.get::<ObjectRef>()?)?.call(&[node.data()?.to_any()?]);
        }
        let new = facts.new.as_ref().ok_or_else(|| {
            Error::type_error(format!(
                "Type `{}` does not support FromJSONGraph (no __ffi_new__ type attr; node {})",
                type_registry::type_key_of(index),
                node.index
            ))
        })?;
        let data = node.data_fields()?;
        let obj = Function::from_object(new.get::<ObjectRef>()?)?.call(&[])?.get::<ObjectRef>()?;
        for f in &facts.fields {
            let v = match data.get(f.name.as_bytes()) {
                Some(raw) => self.field_value(node, f.info, &f.label, &raw)?,
                None if f.info.flags & field_flag::kHasDefault != 0 => {
                    // SAFETY: the registry keeps default values alive.
                    let default = Any::from_view(&f.info.default_value_or_factory)?;
                    if f.info.flags & field_flag::kDefaultFromFactory != 0 {
                        Function::from_object(default.get::<ObjectRef>()?)?.call(&[])?
                    } else {
                        default
                    }
                }
                None => {
                    return Err(Error::type_error(format!(
                        "Required field `{}` not set in type `{}` (node {})",
                        f.name,
                        node.type_name(),
                        node.index
                    )))
                }
            };
            dataclass::set_field(&obj, f.info, v.as_raw()).map_err(|e| {
                Error::new(e.kind(), format!("Invalid JSON Object Graph: {}: field `{}`: {}", node.what(), f.label, e.message()))
            })?;
        }
        Ok(Any::from_object(obj))
    }

    /// A field's value: inline data by its static type, else the decoded
    /// node it names, checked against a declared class.
    fn field_value(&self, node: &GraphNode<'a>, f: &TVMFFIFieldInfo, field: &str, raw: &Json<'a>) -> Result<Any, Error> {
        let wrong = |want: &str| node.refuse(field, format!("must be {want}, got {}", kind_of(raw)));
        Ok(match f.field_static_type_index {
            ti::kTVMFFINone => Any::none(),
            ti::kTVMFFIBool => match raw.value() {
                Value::Bool(b) => Any::from(b),
                _ => return Err(wrong("a bool")),
            },
            ti::kTVMFFIInt => match raw.value() {
                Value::Int(i) => Any::from(i),
                _ => return Err(wrong("an integer within 64 bits")),
            },
            ti::kTVMFFIFloat => Any::from(inline_float(raw).ok_or_else(|| wrong("a number"))?),
            ti::kTVMFFIDataType => match raw.as_str().and_then(|s| std::str::from_utf8(s).ok()) {
                Some(text) => Any::data_type(crate::tensor::dtype::from_str(text).map_err(|e| node.refuse(field, e.message()))?),
                None => return Err(wrong("a data type string")),
            },
            declared => {
                // push_children checked the index and decoded the node.
                let Value::Int(c) = raw.value() else { unreachable!("push_children read every node-index field as an integer") };
                let v = self.child(c);
                if declared >= ti::kTVMFFIStaticObjectEnd
                    && !v.is_none()
                    && !(v.type_index() >= ti::kTVMFFIStaticObjectBegin && type_registry::is_instance(v.type_index(), declared))
                {
                    return Err(Error::type_error(format!(
                        "Invalid JSON Object Graph: {}: field `{field}` must be a `{}`, got {}",
                        node.what(),
                        type_registry::type_key_of(declared),
                        kind_of_value(&v)
                    )));
                }
                v
            }
        })
    }
}

/// The value a JSON graph (a Map) describes.
pub fn from_json_graph(graph: &Any) -> Result<Any, Error> {
    if graph.type_index() != ti::kTVMFFIMap {
        return Err(Error::value_error("Invalid JSON Object Graph, expected an object"));
    }
    from_json_doc(JsonDoc::from_any(graph)?.root())
}

/// The value the JSON text of a graph describes (`ffi.FromJSONGraphString`).
pub fn from_json_graph_text(text: &[u8]) -> Result<Any, Error> {
    from_json_doc(JsonDoc::parse(text)?.root())
}

fn from_json_doc(top: Json<'_>) -> Result<Any, Error> {
    if !matches!(top.value(), Value::Object(_)) {
        return Err(Error::value_error("Invalid JSON Object Graph, expected an object"));
    }
    let root = match top.member(b"root_index").map(|v| v.value()) {
        Some(Value::Int(i)) => i,
        _ => return Err(Error::value_error("Invalid JSON Object Graph, expected `root_index` integer field")),
    };
    let nodes = match top.member(b"nodes").map(|v| v.value()) {
        Some(Value::Array(nodes)) => nodes,
        _ => return Err(Error::value_error("Invalid JSON Object Graph, expected `nodes` array field")),
    };
    if root < 0 || root as usize >= nodes.len() {
        return Err(invalid(format!("invalid node index {root}")));
    }
    let n = nodes.len();
    let mut reader = Reader {
        nodes,
        decoded: vec![None; n],
        active: (0..n).map(|_| None).collect(),
        types: RefCell::new(HashMap::new()),
        type_keys: TypeKeys::default(),
    };
    reader.decode_reachable(root)?;
    Ok(reader.child(root))
}
