//! Python lists, tuples and dicts to FFI Arrays and Maps, at any depth.
//!
//! The conversion walks the value with an explicit stack instead of native
//! recursion, so a 100,000-level nested list converts on any thread's
//! stack. A container that contains itself is refused with a ValueError
//! naming the cycle (it has no finite FFI value).
//!
//! The leaves (everything that is not a list, tuple or dict) convert
//! through the converter the caller passes in, `py_to_ffi::py_to_any`,
//! which in turn calls this module for containers.

use std::collections::HashSet;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::convert::builtin_calls::call_builtin;
use crate::convert::owned_any::OwnedAny;

/// The conversion of one leaf value.
pub type LeafToAny = fn(Python<'_>, &Bound<'_, PyAny>) -> PyResult<OwnedAny>;

/// Whether `obj` converts through this module.
pub fn is_container(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyList>()
        || (obj.is_instance_of::<PyTuple>() && !crate::convert::shape_values::is_shape_value(obj))
        || obj.is_instance_of::<PyDict>()
}

/// One container being converted: its children (a dict's as key, value,
/// key, value …), how many are done, and their converted values.
struct Level<'py> {
    id: usize,
    kind: &'static str,
    builtin: &'static str,
    children: Vec<Bound<'py, PyAny>>,
    next: usize,
    done: Vec<OwnedAny>,
}

impl<'py> Level<'py> {
    fn new(obj: &Bound<'py, PyAny>) -> PyResult<Level<'py>> {
        let (kind, builtin, children) = if let Ok(d) = obj.cast::<PyDict>() {
            // A snapshot of the items: the dict may change while values convert.
            let mut flat = Vec::with_capacity(d.len() * 2);
            for item in d.items().iter() {
                let (k, v): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item.extract()?;
                flat.push(k);
                flat.push(v);
            }
            ("dict", "ffi.Map", flat)
        } else {
            let kind = if obj.is_instance_of::<PyList>() { "list" } else { "tuple" };
            (kind, "ffi.Array", obj.try_iter()?.collect::<PyResult<Vec<_>>>()?)
        };
        let done = Vec::with_capacity(children.len());
        Ok(Level { id: obj.as_ptr() as usize, kind, builtin, children, next: 0, done })
    }
}

/// Convert a list, tuple or dict (see [`is_container`]) and everything in
/// it, each leaf with `leaf_to_any`.
pub fn container_to_any<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, leaf_to_any: LeafToAny) -> PyResult<OwnedAny> {
    let mut stack = vec![Level::new(obj)?];
    let mut open: HashSet<usize> = HashSet::from([obj.as_ptr() as usize]);
    loop {
        let top = stack.last_mut().expect("the stack holds the level being converted");
        if top.next < top.children.len() {
            let child = top.children[top.next].clone();
            top.next += 1;
            if !is_container(&child) {
                top.done.push(leaf_to_any(py, &child)?);
                continue;
            }
            if !open.insert(child.as_ptr() as usize) {
                return Err(cycle_error(&stack, child.as_ptr() as usize));
            }
            stack.push(Level::new(&child)?);
            continue;
        }
        let level = stack.pop().expect("non-empty");
        open.remove(&level.id);
        let value = call_builtin(py, level.builtin, level.done)?;
        match stack.last_mut() {
            Some(parent) => parent.done.push(value),
            None => return Ok(value),
        }
    }
}

fn cycle_error(stack: &[Level<'_>], id: usize) -> PyErr {
    let start = stack.iter().position(|l| l.id == id).unwrap_or(0);
    let path: Vec<&str> = stack[start..].iter().map(|l| l.kind).chain([stack[start].kind]).collect();
    PyValueError::new_err(format!(
        "cannot convert a self-referential {}: it contains itself ({})",
        stack[start].kind,
        path.join(" -> ")
    ))
}
