//! The generated constructor of reflected types (`__ffi_init__`), as
//! TVM-FFI's `ffi._RegisterFFIInit` makes it: a Function that creates an
//! empty instance and binds its arguments to the type's reflected fields
//! (parents' first).
//!
//! Calling conventions, as upstream:
//!
//! * positional only: `init(v0, v1, …)` binds the values, in order, to the
//!   *positional* init fields — init fields that are not keyword-only,
//!   required ones first, then those with a default;
//! * keywords: `init(v0, …, KWARGS, "name", value, …)` where `KWARGS` is the
//!   process-wide sentinel of `ffi.GetKwargsObject()`.
//!
//! Fields left unbound take their default (`kHasDefault`; a factory is
//! called when `kDefaultFromFactory` is set); an unbound init field without
//! a default is an error; an `init=False` field without a default keeps
//! the value the creator gave it. Errors carry upstream's messages
//! (`T.__ffi_init__() missing required argument: 'x'`, …), and a setter's
//! error is re-raised with `T.__ffi_init__() field 'x':` in front.
//!
//! C++ types registered through apache-tvm-ffi's headers (`ObjectDef`)
//! call `ffi._RegisterFFIInit(type_index)` when they have a creator and no
//! explicit `refl::init<…>`; run-time dataclass types get the same
//! constructor at registration.
//!
//! The only unsafe code here reads a type's metadata record (kept by the
//! registry for the process); instances come from [`create_empty`] and
//! fields are written through `super::set_field`; the other unsafe reads
//! (field names, the creator call) live in `super`.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use crate::abi::{field_flag, type_index as ti, TVMFFIFieldInfo};
use crate::values::any::{Any, AnyView};
use crate::values::error::Error;
use crate::values::function::{arg, Function};
use crate::object::{header_placeholder, Object, ObjectPtr, ObjectRef};
use crate::types::type_registry::{self, type_key_of};

/// The `KWARGS` sentinel: one plain object for the whole process.
pub fn kwargs_object() -> Result<ObjectRef, Error> {
    kwargs_ref().cloned()
}

/// The `KWARGS` sentinel, borrowed (it lives for the process).
fn kwargs_ref() -> Result<&'static ObjectRef, Error> {
    static KWARGS: OnceLock<ObjectRef> = OnceLock::new();
    if let Some(k) = KWARGS.get() {
        return Ok(k);
    }
    // A plain ffi.Object, like the MISSING sentinel.
    let made = ObjectPtr::new(Object { header: header_placeholder() })?.into_object_ref();
    Ok(KWARGS.get_or_init(|| made))
}

struct Entry {
    name: String,
    init: bool,
    kw_only: bool,
    has_default: bool,
}

/// The analysis of a type's fields, made once when the constructor is made.
struct Plan {
    type_index: i32,
    type_key: String,
    fields: Vec<Entry>,
    /// Indices into `fields` of the positional init fields, required first.
    positional: Vec<usize>,
    by_name: HashMap<String, usize>,
    /// For run-time dataclass types, their instance layout: its slots are
    /// the fields one to one, parents' first as the registry lists them,
    /// and every field's setter is the dataclass setter, so the
    /// constructor writes the slots itself with that setter's checks
    /// (`super::store_slot`) instead of calling it as a Function, and
    /// creates the instance without looking the layout up again.
    layout: Option<Arc<super::Layout>>,
    /// What a call looks up in the type table (field records, the
    /// `__ffi_new__` creator), for the table's generation it was read in:
    /// a constructor called many times reads them once, and again after
    /// any registration.
    facts: parking_lot::RwLock<Option<InitFacts>>,
}

/// See [`Plan::facts`].
#[derive(Clone)]
struct InitFacts {
    generation: u64,
    infos: Arc<[&'static TVMFFIFieldInfo]>,
    /// The type's `__ffi_new__`, when an instance is made through it (not
    /// a run-time dataclass type nor one with a native creator).
    new_fn: Option<Function>,
}

// SAFETY: the field records are the type table's, never changed or freed
// once registered, so reading them from any thread is sound; a Function is
// Send and Sync.
unsafe impl Send for InitFacts {}
// SAFETY: as above.
unsafe impl Sync for InitFacts {}

impl Plan {
    fn new(type_index: i32) -> Plan {
        let mut fields = Vec::new();
        for info in type_registry::all_fields(type_index) {
            let name = super::field_name(info);
            fields.push(Entry {
                name,
                init: info.flags & field_flag::kInitOff == 0,
                kw_only: info.flags & field_flag::kKwOnly != 0,
                has_default: info.flags & field_flag::kHasDefault != 0,
            });
        }
        let mut by_name = HashMap::new();
        let mut required = Vec::new();
        let mut optional = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if !f.init {
                continue;
            }
            by_name.insert(f.name.clone(), i);
            if !f.kw_only {
                if f.has_default { optional.push(i) } else { required.push(i) }
            }
        }
        required.extend(optional);
        let layout = super::layout_of(type_index).filter(|l| l.slots.len() == fields.len());
        Plan {
            type_index,
            type_key: type_key_of(type_index),
            fields,
            positional: required,
            by_name,
            layout,
            facts: parking_lot::RwLock::new(None),
        }
    }

    fn err(&self, text: String) -> Error {
        Error::type_error(format!("{}.__ffi_init__() {text}", self.type_key))
    }

    /// The field records (in the plan's order: records are only appended,
    /// so its indices stay valid) and the creator, of the current table.
    fn facts(&self) -> Result<InitFacts, Error> {
        let generation = type_registry::generation();
        if let Some(f) = self.facts.read().as_ref().filter(|f| f.generation == generation) {
            return Ok(f.clone());
        }
        let new_fn = if super::is_dataclass(self.type_index) || has_native_creator(self.type_index) {
            None
        } else {
            match crate::reflection::attr_columns::attr_value(self.type_index, b"__ffi_new__") {
                Some(f) => Some(Function::from_object(f.get::<ObjectRef>()?)?),
                None => None,
            }
        };
        let facts = InitFacts { generation, infos: type_registry::all_fields(self.type_index).into(), new_fn };
        *self.facts.write() = Some(facts.clone());
        Ok(facts)
    }

    /// A new, empty instance: as [`create_empty`], through the creator
    /// found for the current table.
    fn create(&self) -> Result<ObjectRef, Error> {
        match self.facts()?.new_fn {
            Some(new_fn) => new_fn.call(&[])?.get::<ObjectRef>(),
            None => create_empty(self.type_index),
        }
    }

    fn set(&self, infos: &mut Infos, obj: &ObjectRef, i: usize, value: &AnyView<'_>, what: &str) -> Result<(), Error> {
        let result = match &self.layout {
            Some(layout) => {
                let slot = &layout.slots[i];
                // SAFETY: `obj` is an instance of this dataclass type (made by
                // `call`), whose layout has this slot.
                unsafe {
                    let addr = (obj.as_ptr() as *mut u8).add(slot.offset);
                    super::store_slot(slot.kind, addr, value, || format!("field {:?} of {}", self.fields[i].name, self.type_key))
                }
            }
            None => super::set_field(obj, infos.get(self)?[i], value.as_raw()),
        };
        result.map_err(|e| {
            Error::new(
                e.kind(),
                format!("{}.__ffi_init__() {what} '{}':\n  {}", self.type_key, self.fields[i].name, nested(e.message())),
            )
        })
    }

    fn set_default(&self, infos: &mut Infos, obj: &ObjectRef, i: usize) -> Result<(), Error> {
        let f = infos.get(self)?[i];
        let stored = Any::from_view(&f.default_value_or_factory)?;
        let value = if f.flags & field_flag::kDefaultFromFactory != 0 {
            let factory = stored
                .as_object()
                .and_then(|o| Function::from_object(o).ok())
                .ok_or_else(|| self.err(format!("default factory of field '{}' is not a Function", self.fields[i].name)))?;
            factory.call(&[]).map_err(|e| {
                Error::new(
                    e.kind(),
                    format!(
                        "{}.__ffi_init__() default for field '{}':\n  {}",
                        self.type_key,
                        self.fields[i].name,
                        nested(e.message())
                    ),
                )
            })?
        } else {
            stored
        };
        // SAFETY: `value` lives until the end of this function.
        self.set(infos, obj, i, &unsafe { AnyView::from_raw(*value.as_raw()) }, "default for field")
    }

    fn call(&self, args: &[AnyView<'_>]) -> Result<ObjectRef, Error> {
        let obj = match &self.layout {
            Some(layout) => super::new_instance_of(self.type_index, layout)?,
            None => self.create()?,
        };
        let mut infos = Infos(None);
        // Which fields are bound: inline for the usual widths.
        let mut inline = [false; 64];
        let mut heap = Vec::new();
        let bound: &mut [bool] = if self.fields.len() <= inline.len() {
            &mut inline[..self.fields.len()]
        } else {
            heap.resize(self.fields.len(), false);
            &mut heap
        };
        // The sentinel is recognised by its address (no conversion of
        // every argument to an object reference, which formats an error
        // for each value that is not one).
        let kwargs = kwargs_ref()?.as_ptr();
        let split = args.iter().position(|a| {
            // SAFETY: an object value's payload is its handle.
            a.type_index() >= ti::kTVMFFIStaticObjectBegin && unsafe { a.as_raw().value.v_obj } == kwargs
        });
        let n_pos = split.unwrap_or(args.len());
        if n_pos > self.positional.len() {
            return Err(self.err(format!(
                "takes at most {} positional argument(s), but {n_pos} were given",
                self.positional.len()
            )));
        }
        for (value, &i) in args[..n_pos].iter().zip(&self.positional) {
            self.set(&mut infos, &obj, i, value, "field")?;
            bound[i] = true;
        }
        if let Some(split) = split {
            let pairs = &args[split + 1..];
            if pairs.len() % 2 != 0 {
                return Err(self.err("KWARGS requires an even number of key-value arguments".into()));
            }
            for kv in pairs.chunks(2) {
                let key: String = kv[0].get().map_err(|_| self.err(format!("keyword must be a str, got {}", kv[0].type_key())))?;
                let &i = self
                    .by_name
                    .get(&key)
                    .ok_or_else(|| self.err(format!("got an unexpected keyword argument '{key}'")))?;
                if bound[i] {
                    return Err(self.err(format!("got multiple values for argument '{key}'")));
                }
                self.set(&mut infos, &obj, i, &kv[1], "field")?;
                bound[i] = true;
            }
        }
        for (i, f) in self.fields.iter().enumerate() {
            if bound[i] {
                continue;
            }
            if f.has_default {
                self.set_default(&mut infos, &obj, i)?;
            } else if f.init {
                let kind = if f.kw_only { "keyword-only " } else { "" };
                return Err(self.err(format!("missing required {kind}argument: '{}'", f.name)));
            }
        }
        Ok(obj)
    }
}

/// The field records of one constructor call, fetched on first use (a call
/// binding every field of a run-time type in place needs none).
struct Infos(Option<Arc<[&'static TVMFFIFieldInfo]>>);

impl Infos {
    fn get(&mut self, plan: &Plan) -> Result<&[&'static TVMFFIFieldInfo], Error> {
        if self.0.is_none() {
            self.0 = Some(plan.facts()?.infos);
        }
        Ok(self.0.as_deref().unwrap_or(&[]))
    }
}

/// Whether `type_index` has a creator in its metadata (C++ types
/// registered with a default constructor).
fn has_native_creator(type_index: i32) -> bool {
    // SAFETY: NULL or a metadata record the registry keeps for the process.
    type_registry::type_info(type_index).is_some_and(|info| unsafe { info.metadata.as_ref() }.is_some_and(|m| m.creator.is_some()))
}

/// A new instance of `type_index` with every field at its creator's value,
/// as upstream's `CreateEmptyObject`: run-time dataclass types zero their
/// slots; other types use the creator in their metadata (C++ types
/// registered with a default constructor), else their `__ffi_new__`
/// attribute (classes defined through `ffi._PyClassRegisterTypeAttrColumns`).
pub fn create_empty(type_index: i32) -> Result<ObjectRef, Error> {
    if super::is_dataclass(type_index) {
        return super::new_instance(type_index);
    }
    let info = type_registry::type_info(type_index)
        .ok_or_else(|| Error::value_error(format!("unknown type index {type_index}")))?;
    // SAFETY: NULL or a metadata record the registry keeps for the process.
    if unsafe { info.metadata.as_ref() }.is_some_and(|m| m.creator.is_some()) {
        return super::create_with_creator(type_index);
    }
    if let Some(new_fn) = crate::reflection::attr_columns::attr_value(type_index, b"__ffi_new__") {
        return Function::from_object(new_fn.get::<ObjectRef>()?)?.call(&[])?.get::<ObjectRef>();
    }
    Err(Error::runtime_error(format!(
        "Type `{}` does not support reflection creation (no native creator or __ffi_new__ type attr)",
        type_key_of(type_index)
    )))
}

/// The generated `__ffi_init__` of `type_index`, analysed now (fields
/// registered later are not seen, as upstream).
pub fn make_init(type_index: i32) -> Result<Function, Error> {
    if type_registry::type_info(type_index).is_none() {
        return Err(Error::value_error(format!("unknown type index {type_index}")));
    }
    let plan = Arc::new(Plan::new(type_index));
    Function::from_closure(move |args| Ok(Any::from_object(plan.call(args)?)))
}

/// Register the generated constructor as the type's `__ffi_init__` attribute.
pub fn register_init(type_index: i32) -> Result<(), Error> {
    let f = make_init(type_index)?;
    crate::reflection::attr_columns::register_attr(type_index, b"__ffi_init__", Any::from_object(f.into_object()).as_raw())
}

/// `ffi._RegisterFFIInit(type_index)` and `ffi.GetKwargsObject()`.
pub(crate) fn globals() -> Vec<(&'static str, Result<Function, Error>)> {
    vec![
        (
            "ffi._RegisterFFIInit",
            Function::from_closure(|args| {
                register_init(arg::<i64>(args, 0, "type_index")? as i32)?;
                Ok(Any::none())
            }),
        ),
        ("ffi.GetKwargsObject", Function::from_closure(|_| Ok(Any::from_object(kwargs_object()?)))),
    ]
}

/// A setter's message nested under the constructor's: every further line
/// indented two more spaces, as upstream's auto-init reports it.
fn nested(message: &str) -> String {
    message.replace('\n', "\n  ")
}
