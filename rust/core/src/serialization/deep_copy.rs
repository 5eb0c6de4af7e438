//! Deep copies (`ffi.DeepCopy`), as TVM-FFI makes them: every List, Dict,
//! Map, Array and reflected object reachable from the value is copied once
//! (sharing and cycles are preserved in the copy); strings, bytes, shapes,
//! BigInts and PODs are shared. Objects are copied through their type's
//! `__ffi_shallow_copy__` hook, or field by field for run-time dataclass
//! types, and then get their fields' copies; other object types are an
//! error. A List or object that refers back to an Array or Map still being
//! copied is fixed up once all copies exist.

use std::collections::HashMap;

use crate::abi::type_index as ti;
use crate::any::Any;
use crate::containers::{Array, Dict, List, Map};
use crate::dataclass;
use crate::error::Error;
use crate::function::Function;
use crate::object::ObjectRef;
use crate::structural::deep_stack;
use crate::type_registry;

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
    if let Some(hook) = type_registry::attr_value(index, b"__ffi_shallow_copy__") {
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
    fn copy(&mut self, value: &Any) -> Result<Any, Error> {
        let Some(obj) = value.as_object() else { return Ok(value.clone()) };
        let addr = obj.as_ptr() as usize;
        if let Some((_, c)) = self.copies.get(&addr) {
            return Ok(c.clone());
        }
        if self.in_progress.contains_key(&addr) {
            self.deferred = true;
            return Ok(value.clone());
        }
        match obj.type_index() {
            ti::kTVMFFIStr | ti::kTVMFFIBytes | ti::kTVMFFIShape | ti::kTVMFFIBigInt => Ok(value.clone()),
            _ => deep_stack::guarded(|| self.copy_object(obj)),
        }
    }

    fn copy_object(&mut self, obj: ObjectRef) -> Result<Any, Error> {
        let addr = obj.as_ptr() as usize;
        match obj.type_index() {
            ti::kTVMFFIArray | ti::kTVMFFIMap => {
                self.in_progress.insert(addr, obj.clone());
                let r = self.copy_immutable(&obj);
                self.in_progress.remove(&addr);
                let copy = r?;
                self.copies.insert(addr, (obj, copy.clone()));
                Ok(copy)
            }
            ti::kTVMFFIList => {
                let new = List::new(Vec::new())?;
                let copy = Any::from_object(new.clone().into_object());
                self.copies.insert(addr, (obj.clone(), copy.clone()));
                for it in List::from_object(obj)?.to_vec() {
                    new.push(self.copy(&it)?)?;
                }
                Ok(copy)
            }
            ti::kTVMFFIDict => {
                // Mutable like List: the copy exists before its items, so
                // items referring back to the Dict get the copy.
                let new = Dict::new(Vec::new())?;
                let copy = Any::from_object(new.as_object());
                self.copies.insert(addr, (obj.clone(), copy.clone()));
                for (k, v) in Dict::from_object(obj)?.items() {
                    new.set(self.copy(&k)?, self.copy(&v)?)?;
                }
                Ok(copy)
            }
            index => {
                let new = shallow_copy(&obj)?;
                let copy = Any::from_object(new.clone());
                self.copies.insert(addr, (obj.clone(), copy.clone()));
                for f in type_registry::all_fields(index) {
                    if f.getter.is_none() {
                        continue;
                    }
                    let v = dataclass::get_field(&obj, f)?;
                    let c = self.copy(&v)?;
                    if v.object_ptr() != c.object_ptr() {
                        dataclass::set_field(&new, f, c.as_raw())?;
                    }
                }
                Ok(copy)
            }
        }
    }

    fn copy_immutable(&mut self, obj: &ObjectRef) -> Result<Any, Error> {
        if obj.type_index() == ti::kTVMFFIArray {
            let items: Vec<Any> = Array::from_object(obj.clone())?.iter().cloned().collect();
            let copied = items.iter().map(|v| self.copy(v)).collect::<Result<Vec<_>, _>>()?;
            return Ok(Any::from_object(Array::new(copied)?.into_object()));
        }
        let pairs: Vec<(Any, Any)> = Map::from_object(obj.clone())?.items();
        let mut copied = Vec::with_capacity(pairs.len());
        for (k, v) in &pairs {
            copied.push((self.copy(k)?, self.copy(v)?));
        }
        Ok(Any::from_object(Map::new(copied)?.into_object()))
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
                    for (k, v) in dict.items() {
                        if let Some(r) = self.replacement(&v) {
                            dict.set(k, r)?;
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
