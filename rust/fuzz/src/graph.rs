//! Object graphs built from fuzz bytes, for the target that compares the
//! fast paths of structural equality and hashing with the walk
//! (`structural_fast_path`). Besides the leaves and containers of
//! [`crate::build`] it makes instances of reflected object types laid out
//! as Python's `py_class` lays them out (`AllocPyClassType` +
//! `RegisterPyClassFields`: Any, int, float, bool and object fields read in
//! place), one of every structural kind (tree node, free variable, DAG
//! node, constant tree node, unique instance), a subclass, a type whose
//! first field opens a def region and whose last is ignored, and a
//! `tether.dataclass.RegisterType` type (its getters are not read in
//! place, so the fast path hands it to the walk). Values are shared
//! (pushed twice, or stored in several places), chained deep (past the
//! fast path's native depth), and closed into cycles through object
//! fields, Lists and Dicts. Every mutable container and object made is
//! remembered so its links can be cut when the value is dropped (a cycle
//! would otherwise leak and trip LeakSanitizer).

use std::sync::OnceLock;

use tether_core::abi::{field_flag, type_index as ti};
use tether_core::dataclass::py_class_fields::{alloc_type, register_fields};
use tether_core::dataclass::{self, FieldKind, FieldSpec};
use tether_core::types::type_registry;
use tether_core::{Any, Array, Dict, Error, Function, List, Map, ObjectRef};

/// Items a single container opcode may take from the stack.
const MAX_TAKE: usize = 8;
/// Links a single chain opcode may add (the fast path recurses 48 levels
/// natively, then hands the rest to the walk).
const MAX_CHAIN: usize = 600;

/// The object types the graphs are made of, registered once per process.
pub struct Types {
    /// Tree node: `a: Any, b: Any, n: int, x: float, flag: bool, child: Optional[Tree]`.
    pub tree: i32,
    /// Tree node deriving from `tree`, adding `c: Any`.
    pub sub: i32,
    /// Free variable: `hint: Any`.
    pub var: i32,
    /// DAG node: `a: Any, b: Any`.
    pub dag: i32,
    /// Constant tree node: `a: Any`.
    pub konst: i32,
    /// Unique instance: `a: Any`.
    pub unique: i32,
    /// Tree node: `var: Any` (a simple def region), `body: Any`, `note: Any` (ignored).
    pub bind: i32,
    /// Tree node registered by `tether.dataclass.RegisterType`: `a: Any, b: Any`.
    pub slot: i32,
}

/// One `RegisterPyClassFields` record.
fn record(name: &str, flags: i64, static_index: i32, size: i64, alignment: i64, offset: i64) -> Result<Any, Error> {
    let items = vec![
        Any::string(name)?,
        Any::none(),
        Any::string("")?,
        Any::from(flags | field_flag::kWritable),
        Any::from(static_index as i64),
        Any::from(size),
        Any::from(alignment),
        Any::from(offset),
        Any::none(),
        Any::none(),
    ];
    Ok(Any::from_object(Array::new(items)?.into_object()))
}

fn any_field(name: &str, offset: i64) -> Result<Any, Error> {
    record(name, 0, ti::kTVMFFIAny, 16, 8, offset)
}

fn py_class(key: &str, parent: i32, kind: i64, total: i64, records: Vec<Any>) -> Result<i32, Error> {
    let index = alloc_type(key, parent)?;
    register_fields(index, &Array::new(records)?, total, kind)?;
    Ok(index)
}

fn register() -> Result<Types, Error> {
    let obj = ti::kTVMFFIObject;
    // Offsets after the 24-byte object header, as the frontend lays them out.
    let tree_index = alloc_type("fuzz.graph.Tree", obj)?;
    let tree_fields = vec![
        any_field("a", 24)?,
        any_field("b", 40)?,
        record("n", 0, ti::kTVMFFIInt, 8, 8, 56)?,
        record("x", 0, ti::kTVMFFIFloat, 8, 8, 64)?,
        record("flag", 0, ti::kTVMFFIBool, 1, 1, 72)?,
        record("child", 0, tree_index, 8, 8, 80)?,
    ];
    register_fields(tree_index, &Array::new(tree_fields)?, 88, 1)?;
    let sub = py_class("fuzz.graph.Sub", tree_index, 1, 104, vec![any_field("c", 88)?])?;
    let var = py_class("fuzz.graph.Var", obj, 2, 40, vec![any_field("hint", 24)?])?;
    let dag = py_class("fuzz.graph.Dag", obj, 3, 56, vec![any_field("a", 24)?, any_field("b", 40)?])?;
    let konst = py_class("fuzz.graph.Const", obj, 4, 40, vec![any_field("a", 24)?])?;
    let unique = py_class("fuzz.graph.Unique", obj, 5, 40, vec![any_field("a", 24)?])?;
    let bind = py_class(
        "fuzz.graph.Bind",
        obj,
        1,
        72,
        vec![
            record("var", field_flag::kSEqHashDefSimple, ti::kTVMFFIAny, 16, 8, 24)?,
            any_field("body", 40)?,
            record("note", field_flag::kSEqHashIgnore, ti::kTVMFFIAny, 16, 8, 56)?,
        ],
    )?;
    let spec = |name: &str| FieldSpec { name: name.into(), kind: FieldKind::Any, flags: 0, frozen: false };
    let slot = dataclass::register_type("fuzz.graph.Slot", obj, vec![spec("a"), spec("b")])?;
    Ok(Types { tree: tree_index, sub, var, dag, konst, unique, bind, slot })
}

/// The types, registered on first use.
pub fn types() -> &'static Types {
    static TYPES: OnceLock<Types> = OnceLock::new();
    TYPES.get_or_init(|| register().unwrap_or_else(|e| panic!("registering the fuzz graph types: {}", e.message())))
}

/// A new instance of `index` with every field zero/None.
fn new_object(index: i32) -> Result<ObjectRef, Error> {
    if dataclass::is_dataclass(index) {
        return dataclass::new_instance(index);
    }
    let make = tether_core::reflection::attr_columns::attr_value(index, b"__ffi_new__")
        .ok_or_else(|| Error::runtime_error("a py_class type without __ffi_new__"))?;
    Function::from_object(make.get::<ObjectRef>()?)?.call(&[])?.get::<ObjectRef>()
}

/// Set field `i` (declaration order, parents' first) of `obj`.
fn set(obj: &ObjectRef, i: usize, v: &Any) -> Result<(), Error> {
    let fields = type_registry::all_fields(obj.type_index());
    let f = fields.get(i).ok_or_else(|| Error::index_error("field index"))?;
    dataclass::set_field(obj, f, v.as_raw())
}

/// A value built by [`build`], and what to unlink when it is dropped.
pub struct Graph {
    pub value: Any,
    /// What was left on the stack, each a root of its own.
    pub roots: Vec<Any>,
    lists: Vec<List>,
    dicts: Vec<Dict>,
    objects: Vec<ObjectRef>,
}

impl Drop for Graph {
    fn drop(&mut self) {
        for l in &self.lists {
            l.clear();
        }
        for d in &self.dicts {
            d.clear();
        }
        // Cut every object field that may hold a reference (Any and object
        // fields; the POD ones hold none). The setters of these fields
        // accept None, so this cannot fail.
        for o in &self.objects {
            for f in type_registry::all_fields(o.type_index()) {
                let idx = f.field_static_type_index;
                if idx == ti::kTVMFFIAny || idx >= ti::kTVMFFIStaticObjectBegin {
                    let _ = dataclass::set_field(o, f, Any::none().as_raw());
                }
            }
        }
    }
}

struct Program<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Program<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    fn more(&self) -> bool {
        self.pos < self.data.len()
    }

    fn take(&mut self, n: usize) -> &[u8] {
        let start = self.pos.min(self.data.len());
        let end = start.saturating_add(n).min(self.data.len());
        self.pos = end;
        &self.data[start..end]
    }

    fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        let t = self.take(8);
        b[..t.len()].copy_from_slice(t);
        u64::from_le_bytes(b)
    }

    fn u16(&mut self) -> usize {
        u16::from_le_bytes([self.byte(), self.byte()]) as usize
    }
}

struct Builder {
    stack: Vec<Any>,
    lists: Vec<List>,
    dicts: Vec<Dict>,
    objects: Vec<ObjectRef>,
}

impl Builder {
    fn pop(&mut self) -> Any {
        self.stack.pop().unwrap_or_else(Any::none)
    }

    fn pop_n(&mut self, n: usize) -> Vec<Any> {
        let n = n.min(self.stack.len());
        self.stack.split_off(self.stack.len() - n)
    }

    fn list(&mut self, items: Vec<Any>) -> Result<Any, Error> {
        let l = List::new(items)?;
        let v = Any::from_object(l.clone().into_object());
        self.lists.push(l);
        Ok(v)
    }

    fn dict(&mut self, pairs: Vec<(Any, Any)>) -> Result<Any, Error> {
        let d = Dict::new(pairs)?;
        let v = Any::from_object(d.clone().into_object());
        self.dicts.push(d);
        Ok(v)
    }

    /// An instance of `index` with its fields from the stack (Any fields)
    /// and the program (POD fields); a `Tree` child is taken from the top
    /// of the stack only when it is one.
    fn object(&mut self, index: i32, p: &mut Program<'_>) -> Result<Any, Error> {
        let t = types();
        let obj = new_object(index)?;
        self.objects.push(obj.clone());
        let fields = type_registry::all_fields(index);
        for (i, f) in fields.iter().enumerate() {
            let v = match f.field_static_type_index {
                ti::kTVMFFIInt => Any::from(p.byte() as i64 % 5 - 2),
                ti::kTVMFFIFloat => Any::from(match p.byte() % 4 {
                    0 => 0.0,
                    1 => -0.0,
                    2 => f64::NAN,
                    _ => 1.5,
                }),
                ti::kTVMFFIBool => Any::from(p.byte() & 1 == 1),
                s if s >= ti::kTVMFFIStaticObjectBegin => {
                    let top = self.stack.last().map_or(-1, Any::type_index);
                    if top == t.tree || top == t.sub {
                        self.pop()
                    } else {
                        Any::none()
                    }
                }
                _ => self.pop(),
            };
            set(&obj, i, &v)?;
        }
        Ok(Any::from_object(obj))
    }

    /// Wrap `v` in `n` links of one kind of chain.
    fn chain(&mut self, mut v: Any, n: usize, how: u8) -> Result<Any, Error> {
        let t = types();
        for _ in 0..n {
            v = match how % 6 {
                0 => Any::from_object(Array::new(vec![v])?.into_object()),
                1 => self.list(vec![v])?,
                // Through the typed `child` field (only a Tree fits there;
                // anything else goes into `a`).
                2 => {
                    let obj = new_object(t.tree)?;
                    self.objects.push(obj.clone());
                    let tree_like = v.type_index() == t.tree || v.type_index() == t.sub;
                    set(&obj, if tree_like { 5 } else { 0 }, &v)?;
                    Any::from_object(obj)
                }
                3 => {
                    let obj = new_object(t.dag)?;
                    self.objects.push(obj.clone());
                    set(&obj, 1, &v)?;
                    Any::from_object(obj)
                }
                4 => {
                    let obj = new_object(t.slot)?;
                    self.objects.push(obj.clone());
                    set(&obj, 0, &v)?;
                    Any::from_object(obj)
                }
                _ => Any::from_object(Map::new(vec![(Any::from(0i64), v)])?.into_object()),
            };
        }
        Ok(v)
    }

    fn step(&mut self, op: u8, p: &mut Program<'_>) -> Result<(), Error> {
        let t = types();
        match op % 20 {
            0 => self.stack.push(Any::from(p.byte() as i64 % 7 - 3)),
            1 => self.stack.push(Any::from(p.u64() as i64)),
            2 => self.stack.push(Any::from(f64::from_bits(p.u64()))),
            3 => {
                // Short (inline) and long (heap) strings.
                let n = p.byte() as usize % 40;
                let s = String::from_utf8_lossy(p.take(n)).into_owned();
                self.stack.push(Any::string(&s)?);
            }
            4 => {
                let n = p.byte() as usize % 24;
                let b = p.take(n).to_vec();
                self.stack.push(Any::bytes(&b)?);
            }
            5 => self.stack.push(if p.byte() & 1 == 1 { Any::none() } else { Any::from(p.byte() & 2 == 2) }),
            6 => {
                let items = self.pop_n(p.byte() as usize % (MAX_TAKE + 1));
                self.stack.push(Any::from_object(Array::new(items)?.into_object()));
            }
            7 => {
                let items = self.pop_n(p.byte() as usize % (MAX_TAKE + 1));
                let v = self.list(items)?;
                self.stack.push(v);
            }
            8 | 9 => {
                let items = self.pop_n(2 * (p.byte() as usize % (MAX_TAKE / 2 + 1)));
                let pairs: Vec<(Any, Any)> = items.chunks_exact(2).map(|c| (c[0].clone(), c[1].clone())).collect();
                let v = if op % 20 == 8 { Any::from_object(Map::new(pairs)?.into_object()) } else { self.dict(pairs)? };
                self.stack.push(v);
            }
            10..=13 => {
                let all = [t.tree, t.sub, t.var, t.dag, t.konst, t.unique, t.bind, t.slot];
                let index = all[p.byte() as usize % all.len()];
                let v = self.object(index, p)?;
                self.stack.push(v);
            }
            14 => {
                // A chain, mostly a little past the native depth, now and
                // then much deeper.
                let n = match p.byte() % 4 {
                    0 => p.u16() % MAX_CHAIN,
                    _ => p.byte() as usize % 80,
                };
                let how = p.byte();
                let v = self.pop();
                let v = self.chain(v, n, how)?;
                self.stack.push(v);
            }
            15 => {
                // Share: the top value again.
                if let Some(top) = self.stack.last().cloned() {
                    self.stack.push(top);
                }
            }
            16 => {
                // Share: a value further down, on top.
                if !self.stack.is_empty() {
                    let i = p.byte() as usize % self.stack.len();
                    let v = self.stack[i].clone();
                    self.stack.push(v);
                }
            }
            17 => {
                // Close a cycle (or just re-link): store the top value in an
                // Any field of an object made earlier.
                if let (Some(top), false) = (self.stack.last().cloned(), self.objects.is_empty()) {
                    let obj = self.objects[p.byte() as usize % self.objects.len()].clone();
                    let fields = type_registry::all_fields(obj.type_index());
                    let anys: Vec<usize> =
                        (0..fields.len()).filter(|&i| fields[i].field_static_type_index == ti::kTVMFFIAny).collect();
                    if !anys.is_empty() {
                        set(&obj, anys[p.byte() as usize % anys.len()], &top)?;
                    }
                }
            }
            18 => {
                // Close a cycle through a List or a Dict.
                if let Some(top) = self.stack.last().cloned() {
                    let b = p.byte();
                    if b & 1 == 0 && !self.lists.is_empty() {
                        self.lists[b as usize / 2 % self.lists.len()].push(top)?;
                    } else if !self.dicts.is_empty() {
                        self.dicts[b as usize / 2 % self.dicts.len()].set(Any::from(b as i64), top)?;
                    }
                }
            }
            _ => {
                // Swap the top two, so later ops see other orders.
                let n = self.stack.len();
                if n >= 2 {
                    self.stack.swap(n - 1, n - 2);
                }
            }
        }
        Ok(())
    }
}

/// Run the program in `data`; the value is the Array of what is left on
/// the stack. Running one program twice builds two distinct values of the
/// same structure.
pub fn build(data: &[u8]) -> Result<Graph, Error> {
    let mut p = Program { data, pos: 0 };
    let mut b = Builder { stack: Vec::new(), lists: Vec::new(), dicts: Vec::new(), objects: Vec::new() };
    let mut r = Ok(());
    while p.more() && r.is_ok() {
        let op = p.byte();
        r = b.step(op, &mut p);
    }
    let roots = std::mem::take(&mut b.stack);
    let value = Array::new(roots.clone()).map(|a| Any::from_object(a.into_object()));
    // Whatever happened, the Graph unlinks what was made.
    let g = Graph { value: value.as_ref().map_or_else(|_| Any::none(), Clone::clone), roots, lists: b.lists, dicts: b.dicts, objects: b.objects };
    r?;
    value?;
    Ok(g)
}
