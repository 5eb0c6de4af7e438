//! JSON object graphs (`ffi.ToJSONGraph`, `ffi.FromJSONGraph`,
//! `ffi.ToJSONGraphString`, `ffi.FromJSONGraphString`) in TVM-FFI's format,
//! so graphs written by either runtime load in the other:
//!
//! `{"root_index": i, "nodes": [...], "metadata": ...}` where each node is
//! `{"type": <type key>, "data": ...}`, children come before their parents,
//! and equal values (PODs and strings by value, objects by identity) share
//! one node. Data by type: `int`/`bool`/`float` the value, `ffi.String` the
//! text, `ffi.Bytes` base64, `ffi.Array`/`ffi.List` node indices,
//! `ffi.Map`/`ffi.Dict` alternating key/value indices, `ffi.Shape` the dims, `Device`
//! `[type, id]`, `DataType` its text, `None` nothing; reflected objects an
//! object of fields (int/bool/float/None-typed fields inline, others as node
//! indices), or whatever the type's `__data_to_json__` hook returns (read
//! back with `__data_from_json__`). A cycle (which the format cannot
//! express) is an error.

use std::collections::{HashMap, HashSet};

use crate::abi::{field_flag, type_index as ti, DLDataType, DLDevice};
use crate::any::Any;
use crate::containers::{Array, List, Map, Shape};
use crate::dataclass;
use crate::error::Error;
use crate::function::{arg, Function};
use crate::object::ObjectRef;
use crate::type_registry;

use super::repr::dtype_text;

pub use super::base64::{base64_decode, base64_encode};

fn parse_dtype(s: &str) -> Result<DLDataType, Error> {
    // The inverse of `dtype_text`: the core's parser, every code included.
    crate::tensor::dtype::from_str(s)
}

fn obj_any(o: ObjectRef) -> Any {
    Any::from_object(o)
}
fn map_of(pairs: Vec<(&str, Any)>) -> Result<Any, Error> {
    let pairs = pairs.into_iter().map(|(k, v)| Ok((Any::string(k)?, v))).collect::<Result<Vec<_>, Error>>()?;
    Ok(obj_any(Map::new(pairs)?.into_object()))
}
fn array_of(items: Vec<Any>) -> Result<Any, Error> {
    Ok(obj_any(Array::new(items)?.into_object()))
}

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
                if type_registry::attr_value(index, b"__data_to_json__").is_some() {
                    return Ok(None);
                }
                let info = type_registry::type_info(index).ok_or_else(|| Error::type_error("unregistered type"))?;
                // SAFETY: non-NULL metadata records live for the process.
                let has_creator = (!info.metadata.is_null() && unsafe { (*info.metadata).creator.is_some() })
                    || type_registry::attr_value(index, b"__ffi_new__").is_some();
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
        let hook = type_registry::attr_value(obj.type_index(), b"__data_to_json__")
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
fn node_type(v: &Any) -> String {
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

struct Reader {
    nodes: Vec<Any>,
    decoded: Vec<Option<Any>>,
    active: HashSet<i64>,
}

fn invalid(msg: impl std::fmt::Display) -> Error {
    Error::value_error(format!("Invalid JSON Object Graph: {msg}"))
}

fn field(node: &Map, name: &str) -> Result<Any, Error> {
    node.get(&Any::string(name)?).ok_or_else(|| invalid(format!("node has no `{name}`")))
}

fn index_list(data: &Any) -> Result<Vec<i64>, Error> {
    Array::from_object(data.get::<ObjectRef>()?)?.iter().map(|v| v.get::<i64>()).collect()
}

/// The node indices a node's data refers to (none for leaves and for
/// objects read by their `__data_from_json__` hook).
fn children_of(node: &Any) -> Result<Vec<i64>, Error> {
    let node = Map::from_object(node.get::<ObjectRef>().map_err(|_| invalid("a node is not an object"))?)?;
    let ty: String = field(&node, "type")?.get()?;
    let Some(index) = type_registry::key_to_index(ty.as_bytes()) else { return Ok(Vec::new()) };
    match index {
        ti::kTVMFFIArray | ti::kTVMFFIList => index_list(&field(&node, "data")?),
        ti::kTVMFFIMap | ti::kTVMFFIDict => {
            let idx = index_list(&field(&node, "data")?)?;
            if idx.len() % 2 != 0 {
                return Err(invalid(format!(
                    "Map/Dict data must contain an even number of [key, value] entries, got {}",
                    idx.len()
                )));
            }
            Ok(idx)
        }
        i if i >= ti::kTVMFFIStaticObjectEnd => {
            if type_registry::attr_value(i, b"__data_from_json__").is_some() {
                return Ok(Vec::new());
            }
            let Ok(fields) = field(&node, "data")?.get::<ObjectRef>().and_then(Map::from_object) else { return Ok(Vec::new()) };
            let mut out = Vec::new();
            for f in type_registry::all_fields(i) {
                let inline = matches!(
                    f.field_static_type_index,
                    ti::kTVMFFINone | ti::kTVMFFIBool | ti::kTVMFFIInt | ti::kTVMFFIFloat | ti::kTVMFFIDataType
                );
                if let (false, Some(raw)) = (inline, fields.get(&Any::string(&crate::structural::field_name(f))?)) {
                    out.push(raw.get::<i64>()?);
                }
            }
            Ok(out)
        }
        _ => Ok(Vec::new()),
    }
}

impl Reader {
    /// The value of node `i`. Its reachable nodes are decoded first, in a
    /// post-order found on an explicit stack (depth costs heap, not native
    /// stack), so each node is decoded when all its children exist.
    fn node(&mut self, i: i64) -> Result<Any, Error> {
        self.check_index(i)?;
        if let Some(v) = &self.decoded[i as usize] {
            return Ok(v.clone());
        }
        if let Err(e) = self.decode_reachable(i) {
            // After an error, nothing is being decoded any more.
            self.active.clear();
            return Err(e);
        }
        Ok(self.decoded[i as usize].clone().expect("the root was decoded"))
    }

    fn check_index(&self, i: i64) -> Result<(), Error> {
        if i < 0 || i as usize >= self.nodes.len() {
            return Err(invalid(format!("invalid node index {i}")));
        }
        Ok(())
    }

    fn decode_reachable(&mut self, root: i64) -> Result<(), Error> {
        // (node, children pushed): a node is expanded once, then decoded
        // when it comes back up; the expanded, unfinished nodes are the
        // current path, so meeting one again is a cycle.
        let mut stack: Vec<(i64, bool)> = vec![(root, false)];
        while let Some((i, expanded)) = stack.pop() {
            if self.decoded[i as usize].is_some() {
                continue;
            }
            if expanded {
                let node = self.nodes[i as usize].clone();
                let v = self.decode(&node)?;
                self.active.remove(&i);
                self.decoded[i as usize] = Some(v);
                continue;
            }
            if !self.active.insert(i) {
                return Err(invalid(format!("node {i} refers to itself")));
            }
            stack.push((i, true));
            let node = self.nodes[i as usize].clone();
            for c in children_of(&node)?.into_iter().rev() {
                self.check_index(c)?;
                if self.decoded[c as usize].is_none() {
                    stack.push((c, false));
                }
            }
        }
        Ok(())
    }

    fn decode(&mut self, node: &Any) -> Result<Any, Error> {
        let node = Map::from_object(node.get::<ObjectRef>().map_err(|_| invalid("a node is not an object"))?)?;
        let ty: String = field(&node, "type")?.get()?;
        let index = type_registry::key_to_index(ty.as_bytes())
            .ok_or_else(|| {
                // TVM-FFI's kind and text for an unknown key in a graph.
                Error::runtime_error(format!(
                    "Check failed: (it != type_key2index_.end()) is false: Cannot find type `{ty}`"
                ))
            })?;
        let data = || field(&node, "data");
        Ok(match index {
            ti::kTVMFFINone => Any::none(),
            ti::kTVMFFIBool => Any::from(data()?.get::<bool>()?),
            ti::kTVMFFIInt => Any::from(data()?.get::<i64>()?),
            ti::kTVMFFIFloat => Any::from(data()?.get::<f64>()?),
            ti::kTVMFFIDataType => Any::data_type(parse_dtype(&data()?.get::<String>()?)?),
            ti::kTVMFFIDevice => {
                let d = index_list(&data()?)?;
                if d.len() != 2 {
                    return Err(invalid(format!(
                        "Device data must be an array of [device_type, device_id], got {} element(s)",
                        d.len()
                    )));
                }
                Any::device(DLDevice { device_type: d[0] as _, device_id: d[1] as i32 })
            }
            ti::kTVMFFIStr => Any::string(&data()?.get::<String>()?)?,
            ti::kTVMFFIBytes => Any::bytes(&base64_decode(data()?.get::<String>()?.as_bytes())?)?,
            ti::kTVMFFIArray | ti::kTVMFFIList => {
                let items = index_list(&data()?)?.into_iter().map(|i| self.node(i)).collect::<Result<Vec<_>, _>>()?;
                if index == ti::kTVMFFIArray {
                    array_of(items)?
                } else {
                    obj_any(List::new(items)?.into_object())
                }
            }
            ti::kTVMFFIMap | ti::kTVMFFIDict => {
                // children_of checked the count before anything was decoded.
                let idx = index_list(&data()?)?;
                let mut pairs = Vec::with_capacity(idx.len() / 2);
                for kv in idx.chunks(2) {
                    pairs.push((self.node(kv[0])?, self.node(kv[1])?));
                }
                if index == ti::kTVMFFIDict {
                    obj_any(crate::containers::Dict::new(pairs)?.into_object())
                } else {
                    obj_any(Map::new(pairs)?.into_object())
                }
            }
            ti::kTVMFFIShape => {
                obj_any(Shape::new(&index_list(&data()?)?)?.into_object())
            }
            _ => self.decode_object(index, &data()?)?,
        })
    }

    fn decode_object(&mut self, index: i32, data: &Any) -> Result<Any, Error> {
        if let Some(hook) = type_registry::attr_value(index, b"__data_from_json__") {
            return Function::from_object(hook.get::<ObjectRef>()?)?.call(std::slice::from_ref(data));
        }
        let new = type_registry::attr_value(index, b"__ffi_new__").ok_or_else(|| {
            Error::type_error(format!(
                "Type `{}` does not support FromJSONGraph (no __ffi_new__ type attr)",
                type_registry::type_key_of(index)
            ))
        })?;
        let obj = Function::from_object(new.get::<ObjectRef>()?)?.call(&[])?.get::<ObjectRef>()?;
        let fields = Map::from_object(data.get::<ObjectRef>()?)?;
        for f in type_registry::all_fields(index) {
            let name = crate::structural::field_name(f);
            match fields.get(&Any::string(&name)?) {
                Some(raw) => {
                    let v = match f.field_static_type_index {
                        ti::kTVMFFINone => Any::none(),
                        ti::kTVMFFIBool => Any::from(raw.get::<bool>()?),
                        ti::kTVMFFIInt => Any::from(raw.get::<i64>()?),
                        ti::kTVMFFIFloat => Any::from(raw.get::<f64>()?),
                        ti::kTVMFFIDataType => Any::data_type(parse_dtype(&raw.get::<String>()?)?),
                        _ => self.node(raw.get::<i64>()?)?,
                    };
                    dataclass::set_field(&obj, f, v.as_raw())?;
                }
                None if f.flags & field_flag::kHasDefault != 0 => {
                    // SAFETY: the registry keeps default values alive.
                    let default = Any::from_view(&f.default_value_or_factory)?;
                    let v = if f.flags & field_flag::kDefaultFromFactory != 0 {
                        Function::from_object(default.get::<ObjectRef>()?)?.call(&[])?
                    } else {
                        default
                    };
                    dataclass::set_field(&obj, f, v.as_raw())?;
                }
                None => {
                    return Err(Error::type_error(format!(
                        "Required field `{name}` not set in type `{}`",
                        type_registry::type_key_of(index)
                    )))
                }
            }
        }
        Ok(Any::from_object(obj))
    }
}

/// The value a JSON graph (a Map) describes.
pub fn from_json_graph(graph: &Any) -> Result<Any, Error> {
    let top = graph
        .get::<ObjectRef>()
        .ok()
        .and_then(|o| Map::from_object(o).ok())
        .ok_or_else(|| Error::value_error("Invalid JSON Object Graph, expected an object"))?;
    let root = top
        .get(&Any::string("root_index")?)
        .and_then(|v| (v.type_index() == ti::kTVMFFIInt).then(|| v.get::<i64>().ok()).flatten())
        .ok_or_else(|| Error::value_error("Invalid JSON Object Graph, expected `root_index` integer field"))?;
    let nodes = top
        .get(&Any::string("nodes")?)
        .and_then(|v| v.get::<ObjectRef>().ok())
        .and_then(|o| Array::from_object(o).ok())
        .ok_or_else(|| Error::value_error("Invalid JSON Object Graph, expected `nodes` array field"))?;
    let nodes: Vec<Any> = nodes.iter().cloned().collect();
    let n = nodes.len();
    Reader { nodes, decoded: vec![None; n], active: HashSet::new() }.node(root)
}

pub(crate) fn globals() -> Vec<super::Global> {
    let metadata = |args: &[crate::any::AnyView<'_>]| args.get(1).map_or(Ok(Any::none()), |a| a.to_owned());
    vec![
        (
            "ffi.ToJSONGraph",
            Function::from_closure(move |args| to_json_graph(&arg::<Any>(args, 0, "value")?, &metadata(args)?)),
        ),
        (
            "ffi.ToJSONGraphString",
            Function::from_closure(move |args| {
                super::json::stringify_to_any(&to_json_graph(&arg::<Any>(args, 0, "value")?, &metadata(args)?)?, 0)
            }),
        ),
        ("ffi.FromJSONGraph", Function::from_closure(|args| from_json_graph(&arg::<Any>(args, 0, "graph")?))),
        (
            "ffi.FromJSONGraphString",
            Function::from_closure(|args| {
                from_json_graph(&super::json::parse(arg::<String>(args, 0, "text")?.as_bytes())?)
            }),
        ),
    ]
}
