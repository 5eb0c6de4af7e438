//! Deep copies (`ffi.DeepCopy`), as TVM-FFI makes them: every List, Dict,
//! Map, Array and reflected object reachable from the value is copied once
//! (sharing and cycles are preserved in the copy); strings, bytes, shapes,
//! BigInts and PODs are shared. Objects are copied through their type's
//! `__ffi_shallow_copy__` hook, or field by field for run-time dataclass
//! types, and then get their fields' copies; other object types are an
//! error. A List, Dict (value or key) or object that refers back to an
//! Array or Map still being copied is fixed up once all copies exist. The copy runs on an explicit
//! stack of open containers and objects, so depth costs heap, not stack.

use std::collections::HashMap;

use crate::abi::type_index as ti;
use crate::values::any::Any;
use crate::containers::{Array, Dict, List, Map};
use crate::dataclass;
use crate::values::error::Error;
use crate::values::function::Function;
use crate::object::ObjectRef;
use crate::types::type_registry;

/// A deep copy of `value`.
pub fn deep_copy(value: &Any) -> Result<Any, Error> {
    let mut c = Copier { copies: HashMap::new(), in_progress: HashMap::new(), deferred: false };
    let out = c.copy(value)?;
    if c.deferred {
        c.fix_up()?;
    }
    Ok(out)
}

struct Copier {
    /// Original address -> (original, copy).
    copies: HashMap<usize, (ObjectRef, Any)>,
    in_progress: HashMap<usize, ObjectRef>,
    deferred: bool,
}

fn shallow_copy(obj: &ObjectRef) -> Result<ObjectRef, Error> {
    let index = obj.type_index();
    if let Some(hook) = crate::reflection::attr_columns::attr_value(index, b"__ffi_shallow_copy__") {
        return Function::from_object(hook.get::<ObjectRef>()?)?.call(&[Any::from_object(obj.clone())])?.get::<ObjectRef>();
    }
    if dataclass::is_dataclass(index) {
        let copy = dataclass::new_instance(index)?;
        for f in type_registry::all_fields(index) {
            dataclass::set_field(&copy, f, dataclass::get_field(obj, f)?.as_raw())?;
        }
        return Ok(copy);
    }
    Err(Error::runtime_error(format!(
        "Check failed: (copy_fn.has_value()) is false: Cannot deep copy object of type \"{}\" because it is not copy-constructible",
        type_registry::type_key_of(index)
    )))
}

impl Copier {
    /// Copy `root` on an explicit stack of open containers and objects, so
    /// nesting depth costs heap memory, not native stack.
    fn copy(&mut self, root: &Any) -> Result<Any, Error> {
        let mut stack: Vec<Open> = Vec::new();
        let mut done = match self.start(root)? {
            Started::Copied(c) => return Ok(c),
            Started::Open(open) => {
                stack.push(open);
                None
            }
        };
        loop {
            let Some(top) = stack.last_mut() else {
                return Ok(done.expect("the root's copy"));
            };
            if let Some(c) = done.take() {
                accept(top, c)?;
            }
            match next_item(top)? {
                Some(item) => match self.start(&item)? {
                    Started::Copied(c) => done = Some(c),
                    Started::Open(open) => stack.push(open),
                },
                None => {
                    let open = stack.pop().expect("the frame read above");
                    done = Some(self.finish(open)?);
                }
            }
        }
    }

    /// The copy of a value that needs no frame (shared leaves, values
    /// copied already), or the frame that copies it.
    fn start(&mut self, value: &Any) -> Result<Started, Error> {
        let Some(obj) = value.as_object() else { return Ok(Started::Copied(value.clone())) };
        let addr = obj.as_ptr() as usize;
        if let Some((_, c)) = self.copies.get(&addr) {
            return Ok(Started::Copied(c.clone()));
        }
        if self.in_progress.contains_key(&addr) {
            self.deferred = true;
            return Ok(Started::Copied(value.clone()));
        }
        let kind = match obj.type_index() {
            ti::kTVMFFIStr | ti::kTVMFFIBytes | ti::kTVMFFIShape | ti::kTVMFFIBigInt => {
                return Ok(Started::Copied(value.clone()));
            }
            // Enum singletons are immutable and unique: copies share them.
            i if crate::enum_type::is_enum_type(i) => return Ok(Started::Copied(value.clone())),
            ti::kTVMFFIArray => {
                self.in_progress.insert(addr, obj.clone());
                let items: Vec<Any> = Array::from_object(obj.clone())?.iter().cloned().collect();
                Kind::Array { copied: Vec::with_capacity(items.len()), items }
            }
            ti::kTVMFFIMap => {
                self.in_progress.insert(addr, obj.clone());
                let pairs = Map::from_object(obj.clone())?.items();
                Kind::Map { copied: Vec::with_capacity(pairs.len()), pairs, key: None }
            }
            ti::kTVMFFIList => {
                let new = List::new(Vec::new())?;
                self.copies.insert(addr, (obj.clone(), Any::from_object(new.clone().into_object())));
                Kind::List { items: List::from_object(obj.clone())?.to_vec(), new }
            }
            ti::kTVMFFIDict => {
                // Mutable like List: the copy exists before its items, so
                // items referring back to the Dict get the copy.
                let new = Dict::new(Vec::new())?;
                self.copies.insert(addr, (obj.clone(), Any::from_object(new.as_object())));
                Kind::Dict { pairs: Dict::from_object(obj.clone())?.items(), new, key: None }
            }
            index => {
                let new = shallow_copy(&obj)?;
                self.copies.insert(addr, (obj.clone(), Any::from_object(new.clone())));
                let fields = type_registry::all_fields(index).into_iter().filter(|f| f.getter.is_some()).collect();
                Kind::Object { new, fields, original: None }
            }
        };
        Ok(Started::Open(Open { obj, kind, next: 0 }))
    }

    /// The copy of a frame whose items are all copied.
    fn finish(&mut self, open: Open) -> Result<Any, Error> {
        let addr = open.obj.as_ptr() as usize;
        let copy = match open.kind {
            Kind::Array { copied, .. } => {
                self.in_progress.remove(&addr);
                Any::from_object(Array::new(copied)?.into_object())
            }
            Kind::Map { copied, .. } => {
                self.in_progress.remove(&addr);
                Any::from_object(Map::new(copied)?.into_object())
            }
            Kind::List { new, .. } => return Ok(Any::from_object(new.into_object())),
            Kind::Dict { new, .. } => return Ok(Any::from_object(new.as_object())),
            Kind::Object { new, .. } => return Ok(Any::from_object(new)),
        };
        self.copies.insert(addr, (open.obj, copy.clone()));
        Ok(copy)
    }

    fn replacement(&self, v: &Any) -> Option<Any> {
        let p = v.object_ptr()? as usize;
        self.copies.get(&p).map(|(_, c)| c.clone()).filter(|c| c.object_ptr() != v.object_ptr())
    }

    /// Point Lists, Dicts and objects at copies that did not exist yet when they
    /// were filled.
    fn fix_up(&mut self) -> Result<(), Error> {
        let copies: Vec<Any> = self.copies.values().map(|(_, c)| c.clone()).collect();
        for c in copies {
            let obj = c.as_object().expect("copies are objects");
            match obj.type_index() {
                ti::kTVMFFIList => {
                    let list = List::from_object(obj)?;
                    for (i, it) in list.to_vec().iter().enumerate() {
                        if let Some(r) = self.replacement(it) {
                            list.set(i as i64, r)?;
                        }
                    }
                }
                ti::kTVMFFIDict => {
                    let dict = Dict::from_object(obj)?;
                    let items = dict.items();
                    if items.iter().any(|(k, _)| self.replacement(k).is_some()) {
                        // A key was an Array or Map still being copied (the
                        // root, say): keys cannot be swapped in place, so
                        // the Dict is refilled in its iteration order.
                        dict.clear();
                        for (k, v) in items {
                            let k = self.replacement(&k).unwrap_or(k);
                            let v = self.replacement(&v).unwrap_or(v);
                            dict.set(k, v)?;
                        }
                    } else {
                        for (k, v) in items {
                            if let Some(r) = self.replacement(&v) {
                                dict.set(k, r)?;
                            }
                        }
                    }
                }
                index if index >= ti::kTVMFFIStaticObjectEnd => {
                    for f in type_registry::all_fields(index) {
                        if f.getter.is_none() {
                            continue;
                        }
                        if let Some(r) = self.replacement(&dataclass::get_field(&obj, f)?) {
                            dataclass::set_field(&obj, f, r.as_raw())?;
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// What starting a value gave: its copy, or a frame to work through.
enum Started {
    Copied(Any),
    Open(Open),
}

/// The copy under way of one container or object.
enum Kind {
    /// Immutable: built from its items' copies once they all exist.
    Array { items: Vec<Any>, copied: Vec<Any> },
    /// Immutable; `key` is the copied key waiting for its value.
    Map { pairs: Vec<(Any, Any)>, copied: Vec<(Any, Any)>, key: Option<Any> },
    /// Mutable: the copy exists first and is filled.
    List { items: Vec<Any>, new: List },
    Dict { pairs: Vec<(Any, Any)>, new: Dict, key: Option<Any> },
    /// `original` is the field value whose copy is awaited.
    Object { new: ObjectRef, fields: Vec<&'static crate::abi::TVMFFIFieldInfo>, original: Option<Any> },
}

struct Open {
    obj: ObjectRef,
    kind: Kind,
    /// The next item to copy (keys and values alternate for maps).
    next: usize,
}

/// The next item of `open` to copy.
fn next_item(open: &mut Open) -> Result<Option<Any>, Error> {
    let i = open.next;
    open.next += 1;
    Ok(match &mut open.kind {
        Kind::Array { items, .. } | Kind::List { items, .. } => items.get(i).cloned(),
        Kind::Map { pairs, .. } | Kind::Dict { pairs, .. } => {
            pairs.get(i / 2).map(|(k, v)| if i % 2 == 0 { k.clone() } else { v.clone() })
        }
        Kind::Object { fields, original, .. } => match fields.get(i) {
            Some(f) => {
                let v = dataclass::get_field(&open.obj, f)?;
                *original = Some(v.clone());
                Some(v)
            }
            None => None,
        },
    })
}

/// Put the copy of the item last handed out into `open`'s copy.
fn accept(open: &mut Open, copy: Any) -> Result<(), Error> {
    let i = open.next - 1;
    match &mut open.kind {
        Kind::Array { copied, .. } => copied.push(copy),
        Kind::List { new, .. } => new.push(copy)?,
        Kind::Map { copied, key, .. } => match key.take() {
            None => *key = Some(copy),
            Some(k) => copied.push((k, copy)),
        },
        Kind::Dict { new, key, .. } => match key.take() {
            None => *key = Some(copy),
            Some(k) => new.set(k, copy)?,
        },
        Kind::Object { new, fields, original } => {
            let v = original.take().expect("the field value handed out");
            if v.object_ptr() != copy.object_ptr() {
                dataclass::set_field(new, fields[i], copy.as_raw())?;
            }
        }
    }
    Ok(())
}
