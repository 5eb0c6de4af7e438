//! Writing a value's JSON graph: every value reached gets a node after the
//! nodes of its children, on an explicit stack of open containers and
//! objects (depth costs heap, not native stack); equal PODs and strings
//! and identical objects share one node, and a cycle is an error.

use std::collections::{HashMap, HashSet};

use crate::abi::type_index as ti;
use crate::values::any::Any;
use crate::containers::{Array, List, Map, Shape};
use crate::dataclass;
use crate::values::error::Error;
use crate::values::function::Function;
use crate::object::ObjectRef;
use crate::serialization::repr::dtype_text;
use crate::types::type_registry;

use super::base64_encode;
use super::graph_values::{array_of, map_of, obj_any};

#[derive(Hash, PartialEq, Eq)]
enum NodeKey {
    Pod(i32, u64),
    Str(Vec<u8>),
    Bytes(Vec<u8>),
    Object(usize),
}

struct Writer {
    nodes: Vec<Any>,
    index: HashMap<NodeKey, i64>,
    active: HashSet<usize>,
    /// Keeps serialized objects alive so their addresses stay unique.
    keep: Vec<ObjectRef>,
}

fn node_key(v: &Any) -> NodeKey {
    match v.type_index() {
        ti::kTVMFFIStr | ti::kTVMFFISmallStr => NodeKey::Str(v.view().str_bytes().unwrap_or_default().to_vec()),
        ti::kTVMFFIBytes | ti::kTVMFFISmallBytes => NodeKey::Bytes(v.view().str_bytes().unwrap_or_default().to_vec()),
        // SAFETY: POD payloads are 8 plain bytes.
        i => match v.object_ptr() {
            Some(p) => NodeKey::Object(p as usize),
            None => NodeKey::Pod(i, unsafe { v.as_raw().value.v_uint64 }),
        },
    }
}

impl Writer {
    /// The node index of `root`, writing the nodes of everything it
    /// reaches first, on an explicit stack of open containers and objects
    /// (depth costs heap, not native stack).
    fn node(&mut self, root: &Any) -> Result<i64, Error> {
        let mut stack: Vec<OpenNode> = Vec::new();
        let r = self.run(root, &mut stack);
        // After an error, nothing is being written any more.
        for open in stack {
            self.active.remove(&open.addr);
        }
        r
    }

    fn run(&mut self, root: &Any, stack: &mut Vec<OpenNode>) -> Result<i64, Error> {
        let mut done = match self.start(root)? {
            Started::Index(i) => return Ok(i),
            Started::Open(open) => {
                stack.push(open);
                None
            }
        };
        loop {
            let Some(top) = stack.last_mut() else {
                return Ok(done.expect("the root's index"));
            };
            if let Some(i) = done.take() {
                top.accept(i);
            }
            match self.next_child(top)? {
                Some(child) => match self.start(&child)? {
                    Started::Index(i) => done = Some(i),
                    Started::Open(open) => stack.push(open),
                },
                None => {
                    let open = stack.pop().expect("the frame read above");
                    done = Some(self.finish(open)?);
                }
            }
        }
    }

    /// Add a finished node for `value` (under `key`) and return its index.
    fn add(&mut self, key: NodeKey, node: Any) -> i64 {
        let i = self.nodes.len() as i64;
        self.nodes.push(node);
        self.index.insert(key, i);
        i
    }

    /// The index of a value already written or written whole here, or the
    /// open node of a container or object whose children come first.
    fn start(&mut self, v: &Any) -> Result<Started, Error> {
        let key = node_key(v);
        if let Some(i) = self.index.get(&key) {
            return Ok(Started::Index(*i));
        }
        if let Some(node) = leaf_node(v)? {
            if let Some(obj) = v.as_object() {
                self.keep.push(obj);
            }
            return Ok(Started::Index(self.add(key, node)));
        }
        let obj = v.as_object().expect("containers and objects are objects");
        let addr = obj.as_ptr() as usize;
        if !self.active.insert(addr) {
            let what = match v.type_index() {
                ti::kTVMFFIList => "a List",
                ti::kTVMFFIDict => "a Dict",
                _ => "a value",
            };
            return Err(Error::value_error(format!("Cycle detected during serialization: {what} contains itself")));
        }
        let children = match self.open(obj.clone()) {
            Ok(Some(children)) => children,
            Ok(None) => {
                // An object whose `__data_to_json__` hook writes its data.
                let data = self.hook_data(&obj);
                self.active.remove(&addr);
                let node = map_of(vec![("type", Any::string(&v.type_key())?), ("data", data?)])?;
                self.keep.push(obj);
                return Ok(Started::Index(self.add(key, node)));
            }
            Err(e) => {
                self.active.remove(&addr);
                return Err(e);
            }
        };
        Ok(Started::Open(OpenNode { value: v.clone(), key, addr, children, next: 0 }))
    }

    /// The children of a container or object to write first (None for an
    /// object whose `__data_to_json__` hook writes its data).
    fn open(&mut self, obj: ObjectRef) -> Result<Option<Children>, Error> {
        Ok(Some(match obj.type_index() {
            ti::kTVMFFIArray => Children::Indices(Array::from_object(obj)?.iter().cloned().collect(), Vec::new()),
            ti::kTVMFFIList => Children::Indices(List::from_object(obj)?.to_vec(), Vec::new()),
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                let map = crate::structural::MapLike::from_object(obj)?;
                Children::Indices(map.items().iter().flat_map(|(k, x)| [k.clone(), x.clone()]).collect(), Vec::new())
            }
            _ => {
                let index = obj.type_index();
                if crate::enum_type::is_enum_type(index) || crate::reflection::attr_columns::attr_value(index, b"__data_to_json__").is_some() {
                    return Ok(None);
                }
                let info = type_registry::type_info(index).ok_or_else(|| Error::type_error("unregistered type"))?;
                // SAFETY: non-NULL metadata records live for the process.
                let has_creator = (!info.metadata.is_null() && unsafe { (*info.metadata).creator.is_some() })
                    || crate::reflection::attr_columns::attr_value(index, b"__ffi_new__").is_some();
                if !has_creator {
                    return Err(Error::type_error(format!(
                        "Type `{}` does not support ToJSONGraph (no native creator or __ffi_new__ type attr)",
                        type_registry::type_key_of(index)
                    )));
                }
                Children::Fields { obj, fields: type_registry::all_fields(index), pairs: Vec::new() }
            }
        }))
    }

    fn hook_data(&self, obj: &ObjectRef) -> Result<Any, Error> {
        // An enum singleton is written as its canonical index.
        if crate::enum_type::is_enum_type(obj.type_index()) {
            return crate::enum_type::canonical_index(obj);
        }
        let hook = crate::reflection::attr_columns::attr_value(obj.type_index(), b"__data_to_json__")
            .ok_or_else(|| Error::runtime_error("the __data_to_json__ hook went away"))?;
        Function::from_object(hook.get::<ObjectRef>()?)?.call(&[Any::from_object(obj.clone())])
    }

    /// The next child of `open` that needs a node (fields stored inline are
    /// written into the object's data on the way).
    fn next_child(&mut self, open: &mut OpenNode) -> Result<Option<Any>, Error> {
        match &mut open.children {
            Children::Indices(items, _) => {
                let child = items.get(open.next).cloned();
                open.next += 1;
                Ok(child)
            }
            Children::Fields { obj, fields, pairs } => {
                while let Some(f) = fields.get(open.next) {
                    open.next += 1;
                    let name = Any::string(&crate::structural::field_name(f))?;
                    let v = dataclass::get_field(obj, f)?;
                    let inline = match f.field_static_type_index {
                        ti::kTVMFFINone => Any::none(),
                        ti::kTVMFFIBool | ti::kTVMFFIInt | ti::kTVMFFIFloat => v,
                        ti::kTVMFFIDataType => leaf_node(&v)?
                            .ok_or_else(|| Error::type_error("a DataType field holds a container"))?
                            .get::<ObjectRef>()
                            .and_then(Map::from_object)
                            .map(|m| m.get(&Any::string("data").unwrap()).unwrap_or_default())?,
                        _ => {
                            pairs.push((name, Any::none()));
                            return Ok(Some(v));
                        }
                    };
                    pairs.push((name, inline));
                }
                Ok(None)
            }
        }
    }

    /// Write the node of `open`, whose children all have nodes.
    fn finish(&mut self, open: OpenNode) -> Result<i64, Error> {
        self.active.remove(&open.addr);
        let data = match open.children {
            Children::Indices(_, indices) => array_of(indices)?,
            Children::Fields { pairs, .. } => obj_any(Map::new(pairs)?.into_object()),
        };
        let node = map_of(vec![("type", Any::string(&node_type(&open.value))?), ("data", data)])?;
        self.keep.push(open.value.as_object().expect("containers and objects are objects"));
        Ok(self.add(open.key, node))
    }
}

/// The node type of a container or object.
pub(super) fn node_type(v: &Any) -> String {
    match v.type_index() {
        ti::kTVMFFIArray => "ffi.Array".into(),
        ti::kTVMFFIList => "ffi.List".into(),
        _ => v.type_key(),
    }
}

/// The whole node of a value without children (None for containers and
/// reflected objects).
fn leaf_node(v: &Any) -> Result<Option<Any>, Error> {
    let raw = v.as_raw();
    let (ty, data): (String, Option<Any>) = match v.type_index() {
        ti::kTVMFFINone => ("None".into(), None),
        ti::kTVMFFIBool => ("bool".into(), Some(Any::from(v.get::<bool>()?))),
        ti::kTVMFFIInt => ("int".into(), Some(Any::from(v.get::<i64>()?))),
        ti::kTVMFFIFloat => ("float".into(), Some(Any::from(v.get::<f64>()?))),
        ti::kTVMFFIDataType => {
            // SAFETY: a DataType value carries v_dtype.
            let d = unsafe { raw.value.v_dtype };
            ("DataType".into(), Some(Any::string(&dtype_text(d.code, d.bits, d.lanes))?))
        }
        ti::kTVMFFIDevice => {
            // SAFETY: a Device value carries v_device.
            let d = unsafe { raw.value.v_device };
            ("Device".into(), Some(array_of(vec![Any::from(d.device_type as i64), Any::from(d.device_id as i64)])?))
        }
        ti::kTVMFFIStr | ti::kTVMFFISmallStr => ("ffi.String".into(), Some(Any::string(&v.get::<String>()?)?)),
        ti::kTVMFFIBytes | ti::kTVMFFISmallBytes => {
            ("ffi.Bytes".into(), Some(Any::string(&base64_encode(v.view().str_bytes().unwrap_or_default()))?))
        }
        ti::kTVMFFIShape => {
            let dims = Shape::from_object(v.as_object().expect("shape"))?.dims().iter().map(|d| Any::from(*d)).collect();
            ("ffi.Shape".into(), Some(array_of(dims)?))
        }
        ti::kTVMFFIArray | ti::kTVMFFIList | ti::kTVMFFIMap | ti::kTVMFFIDict => return Ok(None),
        i if crate::structural::is_object_index(i) => return Ok(None),
        _ => return Err(Error::runtime_error(format!("Cannot serialize type `{}`", v.type_key()))),
    };
    let mut pairs = vec![("type", Any::string(&ty)?)];
    if let Some(d) = data {
        pairs.push(("data", d));
    }
    map_of(pairs).map(Some)
}

/// What starting a value gave: its node index, or a node to work through.
enum Started {
    Index(i64),
    Open(OpenNode),
}

/// The children of an open node and what is known of them so far.
enum Children {
    /// Items (map keys and values alternating) and their node indices.
    Indices(Vec<Any>, Vec<Any>),
    /// Reflected fields and the object's data so far (a field written as a
    /// node has its index filled in when the node exists).
    Fields { obj: ObjectRef, fields: Vec<&'static crate::abi::TVMFFIFieldInfo>, pairs: Vec<(Any, Any)> },
}

/// A container or object whose children are being written.
struct OpenNode {
    value: Any,
    key: NodeKey,
    addr: usize,
    children: Children,
    next: usize,
}

impl OpenNode {
    /// Take the node index of the child last handed out.
    fn accept(&mut self, index: i64) {
        match &mut self.children {
            Children::Indices(_, indices) => indices.push(Any::from(index)),
            Children::Fields { pairs, .. } => {
                if let Some(last) = pairs.last_mut() {
                    last.1 = Any::from(index);
                }
            }
        }
    }
}

/// The graph of `value` as a JSON value (a Map), with optional metadata.
pub fn to_json_graph(value: &Any, metadata: &Any) -> Result<Any, Error> {
    let mut w = Writer { nodes: Vec::new(), index: HashMap::new(), active: HashSet::new(), keep: Vec::new() };
    let root = w.node(value)?;
    let mut pairs = vec![("root_index", Any::from(root)), ("nodes", array_of(std::mem::take(&mut w.nodes))?)];
    if !metadata.is_none() {
        pairs.push(("metadata", metadata.clone()));
    }
    map_of(pairs)
}

