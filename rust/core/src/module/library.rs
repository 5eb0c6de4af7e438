//! Library modules (kind `"library"`): modules whose functions are symbols
//! of a library — a shared library opened from a file
//! (`ffi.Module.load_from_file.so`) or the system library's registry
//! (`ffi.SystemLib`) — found by TVM-FFI's naming convention: function
//! `name` is the safe-call symbol `__tvm_ffi_<name>`, its docstring and
//! metadata come from `__tvm_ffi__doc_<name>` / `__tvm_ffi__metadata_<name>`
//! (safe-call functions without arguments returning a str).
//!
//! Creating a library module also stores every registered context symbol
//! into the library's variable of that name, stores the module's address
//! into `__tvm_ffi__library_ctx` (what `TVMFFIEnvModLookupFromImports`
//! receives), and, when the library embeds `__tvm_ffi__library_bin`, builds
//! the module tree it describes ([`super::library_bin`]); that is
//! [`super::library_module`]'s job.
//!
//! Shared libraries are opened `RTLD_LAZY | RTLD_LOCAL` as TVM-FFI does,
//! plus `RTLD_DEEPBIND` on glibc Linux unless `TETHER_LOAD_DEEPBIND` is
//! `0`/`false`/`no`/`off`, so that a library linked against
//! `libtether_core` binds to this core even when another runtime exporting
//! the `TVMFFI*` names is loaded globally (docs/architecture.md). A
//! library the process has open already (Python's `load_module` opens it
//! first, with the flags its caller chose) is taken as it is, so a second
//! open never asks for other flags (a sanitizer runtime refuses
//! `RTLD_DEEPBIND` outright). The library is closed when the last module
//! and function using it are gone.
//!
//! SAFETY invariants of this module: a [`Library`]'s handle stays open until
//! it is dropped; symbols named by the convention are safe-call functions,
//! and `__tvm_ffi__library_ctx` and context-symbol variables are
//! pointer-sized writable variables, as TVM-FFI's loader assumes.

use std::ffi::{c_int, c_void, CString};
use std::sync::Arc;

use crate::abi::{TVMFFIAny, TVMFFISafeCallType};
use crate::values::any::Any;
use crate::containers::{Array, Map};
use crate::values::error::{self, Error};
use crate::values::function::Function;
use crate::object::ObjectRef;

use super::object::Module;
use super::symbols;

pub(crate) const SYMBOL_PREFIX: &str = "__tvm_ffi_";
pub(super) const LIBRARY_CTX: &str = "__tvm_ffi__library_ctx";
pub(super) const LIBRARY_BIN: &str = "__tvm_ffi__library_bin";
const METADATA_PREFIX: &str = "__tvm_ffi__metadata_";
const DOC_PREFIX: &str = "__tvm_ffi__doc_";

extern "C" {
    fn tether_shim_library_module_new(state: *mut c_void, imports: *mut c_void, lookup_cache: *mut c_void) -> *mut c_void;
}

/// Where a library's symbols come from.
pub(crate) enum Library {
    /// A `dlopen` handle.
    Shared { handle: *mut c_void },
    /// The system library's registry, with a name prefix.
    System { prefix: String },
}

// SAFETY: a dlopen handle may be used from any thread; the registry is
// behind its own lock.
unsafe impl Send for Library {}
// SAFETY: as above; lookups do not mutate the library.
unsafe impl Sync for Library {}

impl Drop for Library {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Library::Shared { handle } = *self {
            // SAFETY: opened by `open` and closed only here.
            unsafe { libc::dlclose(handle) };
            // Its addresses may now name other code.
            crate::values::backtrace::forget_resolved();
        }
    }
}

/// Whether libraries are opened with `RTLD_DEEPBIND` (see the module doc).
pub(crate) fn deep_bind_default() -> bool {
    match std::env::var("TETHER_LOAD_DEEPBIND") {
        Ok(v) => !matches!(v.trim().to_ascii_lowercase().as_str(), "0" | "false" | "no" | "off"),
        Err(_) => true,
    }
}

impl Library {
    /// Open a shared library. `deep_bind` only matters on glibc Linux.
    #[cfg(unix)]
    pub(crate) fn open(path: &str, deep_bind: bool) -> Result<Arc<Library>, Error> {
        let c_path = CString::new(path).map_err(|_| Error::value_error("library path contains a NUL byte"))?;
        #[allow(unused_mut)]
        let mut mode = libc::RTLD_LAZY | libc::RTLD_LOCAL;
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        if deep_bind {
            mode |= libc::RTLD_DEEPBIND;
        }
        let _ = deep_bind;
        // SAFETY: a NUL-terminated path; RTLD_NOLOAD only returns (and
        // counts a reference to) a library that is open already.
        let open_already = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        // SAFETY: a NUL-terminated path; dlerror is read right after.
        let handle = if open_already.is_null() { unsafe { libc::dlopen(c_path.as_ptr(), mode) } } else { open_already };
        if handle.is_null() {
            // SAFETY: dlerror returns NULL or a NUL-terminated message.
            let why = unsafe {
                let e = libc::dlerror();
                if e.is_null() {
                    String::new()
                } else {
                    std::ffi::CStr::from_ptr(e).to_string_lossy().into_owned()
                }
            };
            return Err(Error::runtime_error(format!(
                "Check failed: (lib_handle_ != nullptr) is false: Failed to load dynamic shared library {path} {why}"
            )));
        }
        Ok(Arc::new(Library::Shared { handle }))
    }

    #[cfg(not(unix))]
    pub(crate) fn open(path: &str, _deep_bind: bool) -> Result<Arc<Library>, Error> {
        Err(Error::runtime_error(format!(
            "Failed to load dynamic shared library {path}: tether loads shared libraries on Unix only"
        )))
    }

    pub(crate) fn system(prefix: &str) -> Arc<Library> {
        Arc::new(Library::System { prefix: prefix.to_string() })
    }

    /// A symbol by its full name (the system library tries the prefixed
    /// name first), or NULL.
    pub(crate) fn symbol(&self, name: &str) -> *mut c_void {
        match self {
            Library::Shared { handle } => {
                let Ok(c_name) = CString::new(name) else { return std::ptr::null_mut() };
                #[cfg(unix)]
                {
                    // SAFETY: an open handle and a NUL-terminated name.
                    unsafe { libc::dlsym(*handle, c_name.as_ptr()) }
                }
                #[cfg(not(unix))]
                {
                    let _ = (handle, c_name);
                    std::ptr::null_mut()
                }
            }
            Library::System { prefix } => {
                let p = symbols::system_lib_symbol(&format!("{prefix}{name}"));
                if p.is_null() {
                    symbols::system_lib_symbol(name)
                } else {
                    p
                }
            }
        }
    }

    /// The symbol of function `name`: `__tvm_ffi_<name>` (the system library
    /// tries `__tvm_ffi_<prefix><name>` first).
    pub(crate) fn function_symbol(&self, name: &str) -> *mut c_void {
        match self {
            Library::Shared { .. } => self.symbol(&format!("{SYMBOL_PREFIX}{name}")),
            Library::System { prefix } => {
                let p = symbols::system_lib_symbol(&format!("{SYMBOL_PREFIX}{prefix}{name}"));
                if p.is_null() {
                    symbols::system_lib_symbol(&format!("{SYMBOL_PREFIX}{name}"))
                } else {
                    p
                }
            }
        }
    }

    /// Function `name` of `module` (which owns this library): a Function
    /// calling the symbol with a NULL handle, keeping the module alive.
    pub(crate) fn function(&self, module: &Module, name: &str) -> Result<Option<Function>, Error> {
        let symbol = self.function_symbol(name);
        if symbol.is_null() {
            return Ok(None);
        }
        // SAFETY: symbols named by the convention are safe-call functions.
        let safe_call: TVMFFISafeCallType = unsafe { std::mem::transmute::<*mut c_void, TVMFFISafeCallType>(symbol) };
        let keep_alive = module.clone();
        Function::from_closure(move |args| {
            let _module = &keep_alive;
            let mut result = TVMFFIAny::NONE;
            // SAFETY: AnyView is repr(transparent) over TVMFFIAny; the
            // library stays open while the module lives.
            let rc = unsafe {
                safe_call(std::ptr::null_mut(), args.as_ptr() as *const TVMFFIAny, args.len() as i32, &mut result)
            };
            finish(rc, result)
        })
        .map(Some)
    }

    /// The str an argument-less safe-call symbol returns, or None when the
    /// library has no such symbol.
    fn string_symbol(&self, symbol_name: &str) -> Result<Any, Error> {
        let symbol = self.symbol(symbol_name);
        if symbol.is_null() {
            return Ok(Any::none());
        }
        // SAFETY: as in `function`.
        let getter: TVMFFISafeCallType = unsafe { std::mem::transmute::<*mut c_void, TVMFFISafeCallType>(symbol) };
        let mut result = TVMFFIAny::NONE;
        // SAFETY: no arguments, a result slot of ours.
        let rc = unsafe { getter(std::ptr::null_mut(), std::ptr::null(), 0, &mut result) };
        let value = finish(rc, result)?;
        if value.view().str_bytes().is_none() || value.type_index() == crate::abi::type_index::kTVMFFIBytes {
            return Err(Error::type_error(format!("Cannot convert from type `{}` to `str`", value.type_key())));
        }
        Ok(value)
    }

    pub(crate) fn function_doc(&self, name: &str) -> Result<Any, Error> {
        self.string_symbol(&format!("{DOC_PREFIX}{name}"))
    }

    pub(crate) fn function_metadata(&self, name: &str) -> Result<Any, Error> {
        self.string_symbol(&format!("{METADATA_PREFIX}{name}"))
    }
}

fn finish(rc: c_int, result: TVMFFIAny) -> Result<Any, Error> {
    if rc == 0 {
        // SAFETY: on success the callee stored an owned value.
        Ok(unsafe { Any::from_raw_owned(result) })
    } else {
        Err(error::take_raised_or_unknown(rc))
    }
}

/// A new library module over `library` (no imports).
pub(crate) fn new_library_module(library: &Arc<Library>) -> Result<Module, Error> {
    let imports = Array::new(Vec::new())?.into_object();
    let cache = Map::new(Vec::new())?.into_object();
    let state = Box::into_raw(Box::new(library.clone())) as *mut c_void;
    // SAFETY: the shim takes over the state and both references, also on
    // failure.
    let handle = unsafe { tether_shim_library_module_new(state, imports.into_raw() as *mut c_void, cache.into_raw() as *mut c_void) };
    let handle = std::ptr::NonNull::new(handle as *mut crate::abi::TVMFFIObject)
        .ok_or_else(|| Error::new("MemoryError", "out of memory allocating a module"))?;
    // SAFETY: a new object with its one strong reference, now ours.
    Module::from_object(unsafe { ObjectRef::from_raw_owned(handle) })
}

/// The state the C++ library module owns (a boxed `Arc<Library>`).
///
/// # Safety
/// `state` must come from [`new_library_module`] and still be owned.
pub(crate) unsafe fn library_of_state<'a>(state: *mut c_void) -> &'a Arc<Library> {
    // SAFETY: per the caller.
    unsafe { &*(state as *const Arc<Library>) }
}

/// Release a library module's state.
///
/// # Safety
/// As [`library_of_state`]; `state` is not used afterwards.
pub(crate) unsafe fn drop_state(state: *mut c_void) {
    if !state.is_null() {
        // SAFETY: per the caller, the box made by new_library_module.
        drop(unsafe { Box::from_raw(state as *mut Arc<Library>) });
    }
}
