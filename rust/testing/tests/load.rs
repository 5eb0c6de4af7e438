//! The testing library as programs meet it: a shared library loaded beside
//! the core. The core alone has no `testing.*` global; loading the library
//! adds them to that same core (its tables, not a copy of them), and the
//! library defines none of the core's C ABI itself.

use std::ffi::{c_void, CStr};
use std::path::PathBuf;

use tether_sys::abi::{TVMFFIAny, TVMFFIByteArray};
use tether_sys::api_table::TetherCoreApiTable;

/// Where a library is: the path in `TETHER_CORE_LIB` / `TETHER_TESTING_LIB`
/// when set (Bazel), else the build directory holding both libraries (the
/// test runs from its `deps` folder under Cargo). The file name is the
/// platform's (`libX.so`, `libX.dylib`, `X.dll`).
fn lib_path(name: &str) -> PathBuf {
    let var = if name == "tether_core" { "TETHER_CORE_LIB" } else { "TETHER_TESTING_LIB" };
    if let Some(p) = std::env::var_os(var) {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test executable");
    let deps = exe.parent().expect("deps dir").to_path_buf();
    let file = format!("{}{name}{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
    [deps.join(&file), deps.parent().expect("profile dir").join(&file)]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{file} not built next to {}", deps.display()))
}

/// Loading libraries and finding what defines a symbol: dlopen/dladdr on
/// Unix, LoadLibrary/GetModuleHandleEx on Windows.
#[cfg(unix)]
mod dl {
    use std::ffi::{c_void, CStr, CString};
    use std::path::Path;

    pub fn open(path: &Path) -> *mut c_void {
        let c = CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid path; RTLD_LOCAL keeps the library's names out of
        // the global scope.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        // SAFETY: after a failed dlopen, dlerror returns its message.
        assert!(!h.is_null(), "dlopen {}: {:?}", path.display(), unsafe { CStr::from_ptr(libc::dlerror()) });
        h
    }

    pub fn sym(h: *mut c_void, name: &str) -> *mut c_void {
        let c = CString::new(name).unwrap();
        // SAFETY: a live handle and a valid name.
        unsafe { libc::dlsym(h, c.as_ptr()) }
    }

    /// The file defining the code at `addr`.
    pub fn defining_file(addr: *mut c_void) -> String {
        // SAFETY: a plain C record, all-zero valid.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: an address inside a loaded library and an output record.
        assert_ne!(unsafe { libc::dladdr(addr, &mut info) }, 0);
        // SAFETY: dladdr filled in the library's file name.
        unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned()
    }
}

#[cfg(windows)]
mod dl {
    use std::ffi::{c_void, CString};
    use std::os::windows::ffi::OsStrExt;
    use std::path::Path;

    const GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS: u32 = 0x4;
    const GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT: u32 = 0x2;

    #[link(name = "kernel32")]
    extern "system" {
        fn LoadLibraryW(name: *const u16) -> *mut c_void;
        fn GetProcAddress(module: *mut c_void, name: *const std::ffi::c_char) -> *mut c_void;
        fn GetModuleHandleExW(flags: u32, name: *const u16, module: *mut *mut c_void) -> i32;
        fn GetModuleFileNameW(module: *mut c_void, name: *mut u16, size: u32) -> u32;
        fn GetLastError() -> u32;
    }

    pub fn open(path: &Path) -> *mut c_void {
        let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
        // SAFETY: a NUL-terminated wide path.
        let h = unsafe { LoadLibraryW(wide.as_ptr()) };
        // SAFETY: reads the calling thread's last error code.
        assert!(!h.is_null(), "LoadLibraryW {}: error {}", path.display(), unsafe { GetLastError() });
        h
    }

    pub fn sym(h: *mut c_void, name: &str) -> *mut c_void {
        let c = CString::new(name).unwrap();
        // SAFETY: a live module handle and a valid name.
        unsafe { GetProcAddress(h, c.as_ptr()) }
    }

    /// The file defining the code at `addr`.
    pub fn defining_file(addr: *mut c_void) -> String {
        let mut module: *mut c_void = std::ptr::null_mut();
        // SAFETY: with FROM_ADDRESS the name argument is an address inside
        // a loaded module; the handle is not counted (the module stays
        // loaded by the test's own handle).
        let ok = unsafe {
            GetModuleHandleExW(
                GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
                addr as *const u16,
                &mut module,
            )
        };
        assert_ne!(ok, 0);
        let mut buf = vec![0u16; 32768];
        // SAFETY: a module handle and a buffer of the given length.
        let n = unsafe { GetModuleFileNameW(module, buf.as_mut_ptr(), buf.len() as u32) } as usize;
        assert!(n > 0 && n < buf.len());
        String::from_utf16_lossy(&buf[..n])
    }
}

use dl::{defining_file, open as dlopen, sym as dlsym};

fn has_global(t: &TetherCoreApiTable, name: &str) -> bool {
    let n = TVMFFIByteArray { data: name.as_ptr().cast(), size: name.len() };
    let mut f: *mut c_void = std::ptr::null_mut();
    // SAFETY: a valid name and output slot; a found function is released.
    unsafe {
        assert_eq!((t.TVMFFIFunctionGetGlobal)(&n, &mut f), 0);
        if f.is_null() {
            return false;
        }
        (t.TVMFFIObjectDecRef)(f);
    }
    true
}

fn call_echo(t: &TetherCoreApiTable, value: i64) -> i64 {
    let name = "testing.echo";
    let n = TVMFFIByteArray { data: name.as_ptr().cast(), size: name.len() };
    let mut f: *mut c_void = std::ptr::null_mut();
    let mut arg = TVMFFIAny::NONE;
    arg.type_index = tether_sys::abi::type_index::kTVMFFIInt;
    arg.value.v_int64 = value;
    let mut out = TVMFFIAny::NONE;
    // SAFETY: valid name, output slot, argument and result; the function
    // is released after the call and the result is a plain int.
    unsafe {
        assert_eq!((t.TVMFFIFunctionGetGlobal)(&n, &mut f), 0);
        assert!(!f.is_null());
        assert_eq!((t.TVMFFIFunctionCall)(f, &mut arg, 1, &mut out), 0);
        (t.TVMFFIObjectDecRef)(f);
        out.value.v_int64
    }
}

#[test]
fn the_library_registers_into_the_one_core_it_links() {
    let core_path = lib_path("tether_core");
    let core = dlopen(&core_path);
    let table_fn = dlsym(core, "tether_core_api_table");
    assert!(!table_fn.is_null());
    // SAFETY: the core's entry point returning its static table.
    let table: &TetherCoreApiTable =
        unsafe { &*std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> *const TetherCoreApiTable>(table_fn)() };

    // The production core: no testing globals at all.
    for name in ["testing.echo", "testing.apply_n", "testing.raise_error", "testing.object_use_count", "testing.nop"] {
        assert!(!has_global(table, name), "the core alone registers {name}");
    }

    let testing = dlopen(&lib_path("tether_testing"));
    let status = dlsym(testing, "tether_testing_load_error");
    assert!(!status.is_null());
    // SAFETY: the library's status function.
    let err = unsafe { std::mem::transmute::<*mut c_void, extern "C" fn() -> *const std::ffi::c_char>(status)() };
    assert!(err.is_null(), "{:?}", unsafe { CStr::from_ptr(err) });

    // Registered into the core already loaded: seen through its table.
    for name in ["testing.echo", "testing.apply", "testing.test_raise_error", "testing.apply_n", "testing.schema_id_int"] {
        assert!(has_global(table, name), "{name} missing after loading the testing library");
    }
    assert_eq!(call_echo(table, 42), 42);

    // One core: the C ABI the testing library reaches is the core's own
    // file; the library defines no TVMFFI* function and no table.
    let same_file = |a: &str, b: &PathBuf| std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok();
    for sym in ["TVMFFIFunctionGetGlobal", "TVMFFIObjectDecRef", "tether_core_api_table"] {
        let found = dlsym(testing, sym);
        assert!(!found.is_null(), "{sym} not reachable from the testing library");
        let file = defining_file(found);
        assert!(same_file(&file, &core_path), "{sym} defined in {file}, not in the core");
    }
    assert!(same_file(&defining_file(status), &lib_path("tether_testing")));
}
