//! Module objects (`ffi.Module`) as the core sees them: a [`Module`]
//! reference, the virtual functions reached through the C++ shim, and the
//! parts of `ModuleObj` TVM-FFI's library implements (looking through
//! imports, importing with its cycle check, the lookup behind
//! `TVMFFIEnvModLookupFromImports`).
//!
//! Every `ffi.Module` object is a C++ `tvm::ffi::ModuleObj` (ours from
//! `cxx/module_object.cc`, or a subclass compiled against TVM-FFI's
//! headers): the vtable pointer, then the object header (the FFI handle,
//! 8 bytes in), then `imports_` (an `ffi.Array` of modules) and
//! `import_lookup_cache_` (an `ffi.Map` from names to functions), each one
//! object pointer. Its virtual functions are called through
//! `tether_shim_module_call`, which also turns C++ exceptions into errors.
//!
//! SAFETY invariants of this module: a [`Module`] holds a live object of
//! type index 73, laid out as above, whose two fields hold NULL or a live
//! object reference each; the fields are read and replaced only under
//! [`FIELDS`] (code compiled against the headers reads `imports()` inline
//! without a lock, as it does on TVM-FFI).

use std::collections::HashSet;
use std::ffi::{c_int, c_void};
use std::ptr::NonNull;

use parking_lot::Mutex;

use crate::abi::{type_index as ti, TVMFFIAny, TVMFFIObject};
use crate::values::any::Any;
use crate::containers::{Array, Map};
use crate::values::error::{self, Error};
use crate::values::function::Function;
use crate::object::ObjectRef;

extern "C" {
    fn tether_shim_module_call(op: i32, handle: *mut c_void, args: *const TVMFFIAny, n: i32, result: *mut TVMFFIAny) -> c_int;
}

/// Serialises reads and replacements of the two fields.
static FIELDS: Mutex<()> = Mutex::new(());

/// Byte offsets from the handle: after the 24-byte header.
const IMPORTS_OFFSET: usize = 24;
const LOOKUP_CACHE_OFFSET: usize = 32;
/// The C++ object starts one vtable pointer before the handle.
const VPTR_SIZE: usize = 8;

/// `ModuleObj`'s virtual functions, in TVM-FFI's declaration order (the
/// operation codes of `tether_shim_module_call`).
#[derive(Clone, Copy)]
#[repr(i32)]
enum Op {
    Kind = 0,
    GetPropertyMask = 1,
    GetFunction = 2,
    ImplementsFunction = 3,
    GetFunctionDoc = 4,
    GetFunctionMetadata = 5,
    WriteToFile = 6,
    GetWriteFormats = 7,
    SaveToBytes = 8,
    InspectSource = 9,
    ImportModule = 10,
    ClearImports = 11,
}

/// An owning reference to a module object.
#[derive(Clone)]
pub struct Module(ObjectRef);

impl Module {
    /// View an object as a module (TypeError if it is not one).
    pub fn from_object(obj: ObjectRef) -> Result<Module, Error> {
        if obj.type_index() == ti::kTVMFFIModule {
            Ok(Module(obj))
        } else {
            Err(Error::type_error(format!(
                "expected ffi.Module, got {}",
                crate::types::type_registry::type_key_of(obj.type_index())
            )))
        }
    }

    pub fn as_object(&self) -> &ObjectRef {
        &self.0
    }

    pub fn into_object(self) -> ObjectRef {
        self.0
    }

    pub fn to_any(&self) -> Any {
        Any::from_object(self.0.clone())
    }

    /// The address of the C++ object (what a library's
    /// `__tvm_ffi__library_ctx` holds).
    pub fn cxx_address(&self) -> *mut c_void {
        (self.0.as_ptr() as *mut u8).wrapping_sub(VPTR_SIZE) as *mut c_void
    }

    /// The module whose C++ object is at `address` (a library context),
    /// borrowed from the caller.
    ///
    /// # Safety
    /// `address` must be a live module's C++ address.
    pub unsafe fn from_cxx_address(address: *mut c_void) -> Result<Module, Error> {
        let handle = NonNull::new((address as *mut u8).wrapping_add(VPTR_SIZE) as *mut TVMFFIObject)
            .filter(|_| !address.is_null())
            .ok_or_else(|| Error::value_error("module context is NULL"))?;
        // SAFETY: per the caller, a live module object.
        Module::from_object(unsafe { ObjectRef::from_raw_borrowed(handle) })
    }

    fn field(&self, offset: usize) -> *mut *mut TVMFFIObject {
        (self.0.as_ptr() as *mut u8).wrapping_add(offset) as *mut *mut TVMFFIObject
    }

    fn read_field(&self, offset: usize) -> Option<ObjectRef> {
        let _guard = FIELDS.lock();
        // SAFETY: a pointer-sized field of a live module (module invariant).
        let p = unsafe { *self.field(offset) };
        // SAFETY: NULL or a live object the field holds a reference to.
        NonNull::new(p).map(|p| unsafe { ObjectRef::from_raw_borrowed(p) })
    }

    fn replace_field(&self, offset: usize, value: ObjectRef) {
        let old = {
            let _guard = FIELDS.lock();
            // SAFETY: as in read_field; the field takes `value`'s reference.
            unsafe { std::mem::replace(&mut *self.field(offset), value.into_raw()) }
        };
        // Released outside the lock: the last reference may run deleters.
        if let Some(old) = NonNull::new(old) {
            // SAFETY: the field's reference, now ours.
            drop(unsafe { ObjectRef::from_raw_owned(old) });
        }
    }

    /// The imported modules, in import order.
    pub fn imports(&self) -> Result<Vec<Module>, Error> {
        match self.read_field(IMPORTS_OFFSET) {
            None => Ok(Vec::new()),
            Some(array) => Array::from_object(array)?
                .iter()
                .map(|m| Module::from_object(m.get::<ObjectRef>()?))
                .collect(),
        }
    }

    /// Append to `imports_` without any check (TVM-FFI's library binaries
    /// build their import trees this way).
    pub(crate) fn push_import(&self, other: &Module) -> Result<(), Error> {
        let mut items: Vec<Any> = match self.read_field(IMPORTS_OFFSET) {
            None => Vec::new(),
            Some(array) => Array::from_object(array)?.iter().cloned().collect(),
        };
        items.push(other.to_any());
        self.replace_field(IMPORTS_OFFSET, Array::new(items)?.into_object());
        Ok(())
    }

    fn call(&self, op: Op, args: &[Any]) -> Result<Any, Error> {
        let mut result = TVMFFIAny::NONE;
        // SAFETY: a live module; `args` are valid values (Any is
        // repr(transparent) over TVMFFIAny) of the kinds the operation takes.
        let rc = unsafe {
            tether_shim_module_call(
                op as i32,
                self.0.as_ptr() as *mut c_void,
                args.as_ptr() as *const TVMFFIAny,
                args.len() as i32,
                &mut result,
            )
        };
        if rc == 0 {
            // SAFETY: on success the shim stored an owned value.
            Ok(unsafe { Any::from_raw_owned(result) })
        } else {
            Err(error::take_raised_or_unknown(rc))
        }
    }

    // ---- virtual functions ----

    pub fn kind(&self) -> Result<String, Error> {
        self.call(Op::Kind, &[])?.get()
    }

    pub fn property_mask(&self) -> Result<i64, Error> {
        self.call(Op::GetPropertyMask, &[])?.get()
    }

    /// This module's own function `name` (the virtual `GetFunction(name)`).
    pub fn own_function(&self, name: &str) -> Result<Option<Function>, Error> {
        optional_function(self.call(Op::GetFunction, &[Any::string(name)?])?)
    }

    pub fn own_implements_function(&self, name: &str) -> Result<bool, Error> {
        self.call(Op::ImplementsFunction, &[Any::string(name)?])?.get()
    }

    /// The docstring (a str) or None.
    pub fn own_function_doc(&self, name: &str) -> Result<Any, Error> {
        self.call(Op::GetFunctionDoc, &[Any::string(name)?])
    }

    /// The metadata JSON (a str) or None.
    pub fn own_function_metadata(&self, name: &str) -> Result<Any, Error> {
        self.call(Op::GetFunctionMetadata, &[Any::string(name)?])
    }

    pub fn write_to_file(&self, file_name: &str, format: &str) -> Result<(), Error> {
        self.call(Op::WriteToFile, &[Any::string(file_name)?, Any::string(format)?]).map(drop)
    }

    /// An `Array<str>`.
    pub fn write_formats(&self) -> Result<Any, Error> {
        self.call(Op::GetWriteFormats, &[])
    }

    /// Bytes.
    pub fn save_to_bytes(&self) -> Result<Any, Error> {
        self.call(Op::SaveToBytes, &[])
    }

    /// A str.
    pub fn inspect_source(&self, format: &str) -> Result<Any, Error> {
        self.call(Op::InspectSource, &[Any::string(format)?])
    }

    /// The virtual `ImportModule` (TVM-FFI's checks cycles; a subclass may
    /// override it).
    pub fn import_module(&self, other: &Module) -> Result<(), Error> {
        self.call(Op::ImportModule, &[other.to_any()]).map(drop)
    }

    pub fn clear_imports(&self) -> Result<(), Error> {
        self.call(Op::ClearImports, &[]).map(drop)
    }

    // ---- what TVM-FFI's library implements ----

    /// `GetFunction(name, query_imports)`: this module's function, else
    /// (with `query_imports`) the first import's, depth first.
    pub fn get_function(&self, name: &str, query_imports: bool) -> Result<Option<Function>, Error> {
        if let Some(f) = self.own_function(name)? {
            return Ok(Some(f));
        }
        if query_imports {
            for import in self.imports()? {
                if let Some(f) = import.get_function(name, true)? {
                    return Ok(Some(f));
                }
            }
        }
        Ok(None)
    }

    pub fn implements_function(&self, name: &str, query_imports: bool) -> Result<bool, Error> {
        if self.own_implements_function(name)? {
            return Ok(true);
        }
        if query_imports {
            for import in self.imports()? {
                if import.implements_function(name, true)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// `GetFunctionDoc(name, query_imports)`: a str or None.
    pub fn function_doc(&self, name: &str, query_imports: bool) -> Result<Any, Error> {
        self.search_imports(query_imports, &|m: &Module| m.own_function_doc(name))
    }

    /// `GetFunctionMetadata(name, query_imports)`: a str or None.
    pub fn function_metadata(&self, name: &str, query_imports: bool) -> Result<Any, Error> {
        self.search_imports(query_imports, &|m: &Module| m.own_function_metadata(name))
    }

    fn search_imports(&self, query_imports: bool, own: &dyn Fn(&Module) -> Result<Any, Error>) -> Result<Any, Error> {
        let found = own(self)?;
        if !found.is_none() || !query_imports {
            return Ok(found);
        }
        for import in self.imports()? {
            let found = import.search_imports(true, own)?;
            if !found.is_none() {
                return Ok(found);
            }
        }
        Ok(Any::none())
    }

    /// `ModuleObj::ImportModule` as TVM-FFI implements it: refuses an
    /// import through which this module is reachable, then appends.
    pub(crate) fn default_import_module(&self, other: &Module) -> Result<(), Error> {
        let mut visited: HashSet<usize> = HashSet::from([other.0.as_ptr() as usize]);
        let mut stack = vec![other.clone()];
        while let Some(m) = stack.pop() {
            for next in m.imports()? {
                if visited.insert(next.0.as_ptr() as usize) {
                    stack.push(next);
                }
            }
        }
        if visited.contains(&(self.0.as_ptr() as usize)) {
            return Err(Error::runtime_error("Cyclic dependency detected during import"));
        }
        self.push_import(other)
    }

    /// `ModuleObj::ClearImports` as TVM-FFI implements it.
    pub(crate) fn default_clear_imports(&self) -> Result<(), Error> {
        self.replace_field(IMPORTS_OFFSET, Array::new(Vec::new())?.into_object());
        Ok(())
    }

    /// `TVMFFIEnvModLookupFromImports`: `name` from the imports (depth
    /// first, then the global registry), remembered in the module's lookup
    /// cache, which keeps the returned function alive with the module.
    pub fn lookup_from_imports(&self, name: &str) -> Result<*mut TVMFFIObject, Error> {
        let key = Any::string(name)?;
        let cache = match self.read_field(LOOKUP_CACHE_OFFSET) {
            Some(obj) => Some(Map::from_object(obj)?),
            None => None,
        };
        if let Some(f) = cache.as_ref().and_then(|c| c.get(&key)) {
            // The cache holds the reference the caller borrows.
            return f.object_ptr().ok_or_else(|| Error::runtime_error("module lookup cache holds a non-function"));
        }
        let mut found = None;
        for import in self.imports()? {
            if let Some(f) = import.get_function(name, true)? {
                found = Some(f);
                break;
            }
        }
        let f = match found.or_else(|| Function::get_global(name)) {
            Some(f) => f,
            None => {
                return Err(Error::runtime_error(format!(
                    "Cannot find function {name} in the imported modules or global registry."
                )))
            }
        };
        let handle = f.as_object().as_ptr();
        let _guard = LOOKUP.lock();
        // Re-read under the lookup lock: another thread may have added
        // entries since.
        let mut pairs = match self.read_field(LOOKUP_CACHE_OFFSET) {
            Some(obj) => Map::from_object(obj)?.items(),
            None => Vec::new(),
        };
        if let Some((_, existing)) = pairs.iter().find(|(k, _)| k.get::<String>().ok().as_deref() == Some(name)) {
            return existing.object_ptr().ok_or_else(|| Error::runtime_error("module lookup cache holds a non-function"));
        }
        pairs.push((key, Any::from_object(f.into_object())));
        self.replace_field(LOOKUP_CACHE_OFFSET, Map::new(pairs)?.into_object());
        Ok(handle)
    }
}

/// Serialises additions to lookup caches (lookups themselves run unlocked,
/// since they may call back into module code).
static LOOKUP: Mutex<()> = Mutex::new(());

fn optional_function(value: Any) -> Result<Option<Function>, Error> {
    if value.is_none() {
        Ok(None)
    } else {
        Function::from_object(value.get::<ObjectRef>()?).map(Some)
    }
}

/// Getter of the reflected `imports_` field (an `ffi.Array`, or None).
///
/// # Safety
/// `field` is the `imports_` slot of a live module (module invariant).
unsafe extern "C" fn imports_getter(field: *mut c_void, out: *mut TVMFFIAny) -> c_int {
    let _guard = FIELDS.lock();
    // SAFETY: per the caller; the slot holds NULL or a live reference.
    unsafe {
        let p = *(field as *mut *mut TVMFFIObject);
        *out = match NonNull::new(p) {
            None => TVMFFIAny::NONE,
            Some(p) => Any::from_object(ObjectRef::from_raw_borrowed(p)).into_raw(),
        };
    }
    0
}

/// Reflect `imports_` on `ffi.Module` read-only, as TVM-FFI does (Python's
/// `Module.imports` reads it).
pub(crate) fn register_reflection() -> Result<(), Error> {
    let name = "imports_";
    let info = crate::abi::TVMFFIFieldInfo {
        name: crate::abi::TVMFFIByteArray { data: name.as_ptr() as *const _, size: name.len() },
        doc: crate::abi::TVMFFIByteArray { data: std::ptr::null(), size: 0 },
        metadata: crate::abi::TVMFFIByteArray { data: std::ptr::null(), size: 0 },
        flags: 0,
        size: std::mem::size_of::<*mut TVMFFIObject>() as i64,
        alignment: std::mem::align_of::<*mut TVMFFIObject>() as i64,
        offset: IMPORTS_OFFSET as i64,
        getter: Some(imports_getter),
        setter: std::ptr::null_mut(),
        default_value_or_factory: TVMFFIAny::NONE,
        field_static_type_index: ti::kTVMFFIArray,
    };
    crate::reflection::type_members::register_field(ti::kTVMFFIModule, &info)
}

/// ffi.Module's start-up reflection, as TVM-FFI's runtime registers it:
/// final, no structural kind; upstream's ModuleObj (a C++ class with
/// virtual functions) is 48 bytes.
pub(crate) fn register_type_attrs() -> Result<(), Error> {
    use crate::abi::{type_index as ti, TVMFFIByteArray, TVMFFITypeMetadata};
    crate::types::type_registry::register_metadata(
        ti::kTVMFFIModule,
        &TVMFFITypeMetadata { doc: TVMFFIByteArray::EMPTY, creator: None, total_size: 48, structural_eq_hash_kind: 0 },
    )?;
    crate::reflection::attr_columns::register_attr(ti::kTVMFFIModule, b"__ffi_type_final__", Any::from(true).as_raw())
}
