//! Argument checking for typed globals (the container globals, the
//! structural traversals, ...), with TVM-FFI's messages: a global has a
//! typed signature (`ffi.StructuralWalk(0: AnyView, 1: Array<Tuple<int,
//! ffi.Function>>, ...) -> ...`), a wrong argument count
//! or type raises TypeError naming it, and a malformed callback table names
//! the first offending element the way TVM-FFI's typed conversion does
//! (`Array[index 0: Array[index 1: int]]`).

use crate::abi::type_index as ti;
use crate::values::any::{Any, AnyView};
use crate::containers::{Array, Dict, List, Map};
use crate::values::error::Error;
use crate::values::function::Function;
use crate::object::ObjectRef;
use crate::types::type_registry::type_key_of;

/// A global's typed signature.
pub(crate) struct Sig {
    pub name: &'static str,
    pub params: &'static [&'static str],
    pub ret: &'static str,
}

/// One callback table entry: the type index it matches, the callback, and
/// (for `ffi.StructuralMutate`) whether it takes the in-place mode.
#[derive(Clone)]
pub struct Entry {
    pub type_index: i32,
    pub callback: Function,
    pub takes_mode: bool,
}

impl Entry {
    /// A callback for values of `type_index` (`-1`: every value).
    pub fn new(type_index: i32, callback: Function) -> Entry {
        Entry {
            type_index,
            callback,
            takes_mode: false,
        }
    }
}

impl Sig {
    /// The global `(name, Function)` for this signature: the argument count
    /// is checked (with TVM-FFI's message) before `body` runs.
    pub fn into_global(self, body: fn(&Sig, &[AnyView<'_>]) -> Result<Any, Error>) -> (&'static str, Result<Function, Error>) {
        let name = self.name;
        (
            name,
            Function::from_closure(move |args| {
                self.check_count(args)?;
                body(&self, args)
            }),
        )
    }

    fn text(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{i}: {p}"))
            .collect();
        format!("`{}({}) -> {}`", self.name, params.join(", "), self.ret)
    }

    pub fn check_count(&self, args: &[AnyView<'_>]) -> Result<(), Error> {
        if args.len() != self.params.len() {
            return Err(Error::type_error(format!(
                "Mismatched number of arguments when calling: {}. Expected {} but got {} arguments",
                self.text(),
                self.params.len(),
                args.len()
            )));
        }
        Ok(())
    }

    fn mismatch_text(&self, i: usize, got: &str) -> Error {
        Error::type_error(format!(
            "Mismatched type on argument #{i} when calling: {}. Expected `{}` but got `{}`",
            self.text(),
            self.params[i],
            got
        ))
    }

    pub fn mismatch(&self, args: &[AnyView<'_>], i: usize) -> Error {
        self.mismatch_text(i, &type_key_of(args[i].type_index()))
    }

    /// Argument `i` as an object of type `index` or a subtype.
    pub fn object(&self, args: &[AnyView<'_>], i: usize, index: i32) -> Result<ObjectRef, Error> {
        let actual = args[i].type_index();
        if actual < ti::kTVMFFIStaticObjectBegin
            || !crate::types::type_registry::is_instance(actual, index)
        {
            return Err(self.mismatch(args, i));
        }
        args[i].get::<ObjectRef>()
    }

    pub fn int(&self, args: &[AnyView<'_>], i: usize) -> Result<i64, Error> {
        match args[i].type_index() {
            ti::kTVMFFIInt | ti::kTVMFFIBool => args[i].get::<i64>(),
            _ => Err(self.mismatch(args, i)),
        }
    }

    /// A `List<Any>` parameter: a List, or an Array copied into a new List.
    pub fn list(&self, args: &[AnyView<'_>], i: usize) -> Result<List, Error> {
        match args[i].type_index() {
            ti::kTVMFFIList => List::from_object(args[i].get::<ObjectRef>()?),
            ti::kTVMFFIArray => List::new(Array::from_object(args[i].get::<ObjectRef>()?)?.iter().cloned().collect()),
            _ => Err(self.mismatch(args, i)),
        }
    }

    /// A `Dict<Any, Any>` parameter: a Dict, or a Map copied into a new Dict.
    pub fn dict(&self, args: &[AnyView<'_>], i: usize) -> Result<Dict, Error> {
        match args[i].type_index() {
            ti::kTVMFFIDict => Dict::from_object(args[i].get::<ObjectRef>()?),
            ti::kTVMFFIMap => Dict::new(Map::from_object(args[i].get::<ObjectRef>()?)?.items()),
            _ => Err(self.mismatch(args, i)),
        }
    }

    pub fn function(&self, args: &[AnyView<'_>], i: usize) -> Result<Function, Error> {
        if args[i].type_index() != ti::kTVMFFIFunction {
            return Err(self.mismatch(args, i));
        }
        Function::from_object(args[i].get::<ObjectRef>()?)
    }

    /// Argument `i` as `Array<Tuple<int, ffi.Function>>`, or with
    /// `with_mode`, `Array<Tuple<int, ffi.Function, bool>>`.
    pub fn entries(
        &self,
        args: &[AnyView<'_>],
        i: usize,
        with_mode: bool,
    ) -> Result<Vec<Entry>, Error> {
        if args[i].type_index() != ti::kTVMFFIArray {
            return Err(self.mismatch(args, i));
        }
        let outer = Array::from_object(args[i].get::<ObjectRef>()?)?;
        let width = if with_mode { 3 } else { 2 };
        let mut out = Vec::with_capacity(outer.len());
        for (k, item) in outer.iter().enumerate() {
            let bad = |inner: String| self.mismatch_text(i, &format!("Array[index {k}: {inner}]"));
            if item.type_index() != ti::kTVMFFIArray {
                return Err(bad(item.type_key()));
            }
            let tuple = Array::from_object(item.get::<ObjectRef>()?)?;
            if tuple.len() != width {
                return Err(bad(format!("Array[size={}]", tuple.len())));
            }
            let fields: Vec<Any> = tuple.iter().cloned().collect();
            let field_bad = |j: usize, v: &Any| bad(format!("Array[index {j}: {}]", v.type_key()));
            if !matches!(fields[0].type_index(), ti::kTVMFFIInt | ti::kTVMFFIBool) {
                return Err(field_bad(0, &fields[0]));
            }
            if fields[1].type_index() != ti::kTVMFFIFunction {
                return Err(field_bad(1, &fields[1]));
            }
            let takes_mode = if with_mode {
                if !matches!(fields[2].type_index(), ti::kTVMFFIBool | ti::kTVMFFIInt) {
                    return Err(field_bad(2, &fields[2]));
                }
                fields[2].get::<bool>()?
            } else {
                false
            };
            out.push(Entry {
                type_index: fields[0].get::<i64>()? as i32,
                callback: Function::from_object(fields[1].get::<ObjectRef>()?)?,
                takes_mode,
            });
        }
        Ok(out)
    }
}

/// TVM-FFI's `RuntimeTypeIndexMatch`: whether a value of type `actual`
/// matches a callback registered for `target` (`-1` matches everything,
/// `ffi.Object` every object, str/bytes their inline forms, object types
/// their subtypes).
pub fn type_index_matches(actual: i32, target: i32) -> bool {
    if actual == target || target == ti::kTVMFFIAny {
        return true;
    }
    match target {
        ti::kTVMFFIStr => return actual == ti::kTVMFFISmallStr,
        ti::kTVMFFIBytes => return actual == ti::kTVMFFISmallBytes,
        ti::kTVMFFIObject => return actual >= ti::kTVMFFIStaticObjectBegin,
        _ => {}
    }
    if actual < ti::kTVMFFIStaticObjectBegin
        || target < ti::kTVMFFIStaticObjectBegin
        || actual < target
    {
        return false;
    }
    crate::types::type_registry::is_instance(actual, target)
}

/// The first entry matching a value of type `type_index`.
pub fn find_entry(entries: &[Entry], type_index: i32) -> Option<&Entry> {
    entries
        .iter()
        .find(|e| type_index_matches(type_index, e.type_index))
}
