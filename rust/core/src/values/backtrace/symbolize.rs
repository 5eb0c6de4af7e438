//! Turning a frame address into `File "src.cc", line 12, in fn` lines, once
//! per address per process.
//!
//! On Linux the object holding an address is found with `dl_iterate_phdr`
//! on every lookup, so libraries loaded after the first lookup (TVM loads
//! its own at import) are found too; each object's debug information and
//! symbol table are read once, with addr2line, and kept. Elsewhere the
//! backtrace crate's resolver is used. Frames of the FFI's own plumbing
//! (the C++ headers' error and call machinery, Rust's panic and closure
//! shims, the Python interpreter) are left out, as upstream leaves them out.
//!
//! Invariants: one lock guards the cache and the loaded objects, so an
//! object is loaded once; results are cached by address, and the cache is
//! dropped when the module loader unloads a library (an address may then
//! name other code).

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

/// Resolved addresses kept at most (then the cache starts over).
const CACHE_LIMIT: usize = 1 << 16;

static STATE: Mutex<Option<State>> = parking_lot::const_mutex(None);
static SYMBOLIZED: AtomicU64 = AtomicU64::new(0);
thread_local! {
    static SYMBOLIZED_HERE: Cell<u64> = const { Cell::new(0) };
}

#[derive(Default)]
struct State {
    resolved: HashMap<usize, Arc<str>>,
    #[cfg(target_os = "linux")]
    objects: HashMap<(String, usize), Option<addr2line::Loader>>,
}

/// How many addresses were symbolized (not found in the cache) by this
/// process: a test reads it to check that raising an error symbolizes
/// nothing until its text is read.
pub fn symbolized_count() -> u64 {
    SYMBOLIZED.load(Ordering::Relaxed)
}

/// As [`symbolized_count`], on the calling thread only.
pub fn symbolized_on_this_thread() -> u64 {
    SYMBOLIZED_HERE.with(Cell::get)
}

/// Forget every resolved address and loaded object (a library was
/// unloaded, and its addresses may be reused).
pub fn forget_resolved() {
    *STATE.lock() = None;
}

/// The text lines of the frame whose return address is `ip`.
pub fn frame_text(ip: usize) -> Arc<str> {
    let mut guard = STATE.lock();
    let state = guard.get_or_insert_with(State::default);
    if let Some(text) = state.resolved.get(&ip) {
        return text.clone();
    }
    SYMBOLIZED.fetch_add(1, Ordering::Relaxed);
    SYMBOLIZED_HERE.with(|c| c.set(c.get() + 1));
    let mut frames = Vec::new();
    // A return address points after the call; the call is one byte before.
    lookup(state, ip.wrapping_sub(1), &mut frames);
    #[cfg(unix)]
    if frames.is_empty() {
        if let Some(function) = dynamic_symbol(ip.wrapping_sub(1)) {
            frames.push(Frame { file: None, line: 0, function });
        }
    }
    if frames.is_empty() {
        frames.push(Frame { file: None, line: 0, function: format!("0x{ip:016x}") });
    }
    // Lookups report the innermost inlined function first, as the text
    // reads.
    let mut text = String::new();
    for f in frames.iter().filter(|f| !excluded(f)) {
        let _ = writeln!(text, "  File \"{}\", line {}, in {}", f.file.as_deref().unwrap_or("<unknown>"), f.line, f.function);
    }
    let text: Arc<str> = text.into();
    if state.resolved.len() >= CACHE_LIMIT {
        state.resolved.clear();
    }
    state.resolved.insert(ip, text.clone());
    text
}

struct Frame {
    file: Option<String>,
    line: u32,
    function: String,
}

/// The FFI's own plumbing, which says nothing about where an error came
/// from (upstream's list, and Rust's equivalents).
fn excluded(f: &Frame) -> bool {
    const FILES: [&str; 5] = [
        "include/tvm/ffi/error.h",
        "include/tvm/ffi/function_details.h",
        "include/tvm/ffi/function.h",
        "include/tvm/ffi/any.h",
        "include/c++/",
    ];
    const PREFIXES: [&str; 11] = [
        "TVMFFIErrorSetRaisedFromCStr",
        "TVMFFIBacktrace",
        "_Py",
        "core::ops::function::",
        "std::panicking::",
        "std::panic::",
        "core::panic::unwind_safe::",
        "__rust_try",
        // How a Function made from a C callback calls it.
        "tether_core::values::function::trampoline",
        // tether's Python extension passing calls and errors across.
        "_ffi::",
        "tether_park_",
    ];
    // Rust's closure and unwind-guard shims, wherever they are instantiated.
    const SHIMS: [&str; 2] = [" as core::ops::function::Fn", "<core::panic::unwind_safe::AssertUnwindSafe<"];
    if f.file.as_deref().is_some_and(|file| FILES.iter().any(|p| file.contains(p))) {
        return true;
    }
    let name = f.function.as_str();
    PREFIXES.iter().any(|p| name.starts_with(p))
        || SHIMS.iter().any(|p| name.contains(p))
        || name.contains("__libc_")
        || name.contains("PyObject")
}

#[cfg(target_os = "linux")]
fn lookup(state: &mut State, addr: usize, out: &mut Vec<Frame>) {
    let Some((path, bias)) = object_of(addr) else { return };
    let loader = state
        .objects
        .entry((path.clone(), bias))
        .or_insert_with(|| addr2line::Loader::new(&path).ok());
    let Some(loader) = loader else { return };
    let probe = (addr - bias) as u64;
    if let Ok(mut frames) = loader.find_frames(probe) {
        while let Ok(Some(frame)) = frames.next() {
            let function = frame.function.as_ref().and_then(|n| n.demangle().ok()).map(|n| n.into_owned());
            let (file, line) = match &frame.location {
                Some(loc) => (loc.file.map(str::to_owned), loc.line.unwrap_or(0)),
                None => (None, 0),
            };
            let Some(function) = function else { continue };
            out.push(Frame { file, line, function });
        }
    }
    if out.is_empty() {
        if let Some(name) = loader.find_symbol(probe) {
            out.push(Frame { file: None, line: 0, function: addr2line::demangle_auto(name.into(), None).into_owned() });
        }
    }
}

/// The exported symbol holding `addr`, from the dynamic symbol table (for
/// objects shipped without a full symbol table, such as the C library).
#[cfg(unix)]
fn dynamic_symbol(addr: usize) -> Option<String> {
    // SAFETY: Dl_info is pointers and integers, for which zero is valid.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables and fills `info`.
    if unsafe { libc::dladdr(addr as *const libc::c_void, &mut info) } == 0 || info.dli_sname.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated name owned by the loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_sname) }.to_string_lossy();
    Some(addr2line::demangle_auto(name, None).into_owned())
}

/// The file and load bias of the loaded object whose segments hold `addr`.
#[cfg(target_os = "linux")]
fn object_of(addr: usize) -> Option<(String, usize)> {
    struct Search {
        addr: usize,
        found: Option<(String, usize)>,
    }
    unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: libc::size_t, data: *mut libc::c_void) -> libc::c_int {
        // SAFETY: the loader passes a valid info for the duration of the
        // call, and `data` is the Search below, borrowed for the walk.
        let (info, search) = unsafe { (&*info, &mut *(data as *mut Search)) };
        let bias = info.dlpi_addr as usize;
        for i in 0..info.dlpi_phnum as usize {
            // SAFETY: dlpi_phdr holds dlpi_phnum headers.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            if ph.p_type != libc::PT_LOAD {
                continue;
            }
            let start = bias.wrapping_add(ph.p_vaddr as usize);
            if search.addr >= start && search.addr - start < ph.p_memsz as usize {
                let name = if info.dlpi_name.is_null() {
                    String::new()
                } else {
                    // SAFETY: a NUL-terminated name owned by the loader.
                    unsafe { std::ffi::CStr::from_ptr(info.dlpi_name) }.to_string_lossy().into_owned()
                };
                // The main program has no name here.
                let name = if name.is_empty() { "/proc/self/exe".to_owned() } else { name };
                search.found = Some((name, bias));
                return 1;
            }
        }
        0
    }
    let mut search = Search { addr, found: None };
    // SAFETY: `visit` only reads the headers the loader passes and writes
    // the Search it is given, which outlives the walk.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut search as *mut Search as *mut libc::c_void) };
    search.found
}

#[cfg(not(target_os = "linux"))]
fn lookup(_state: &mut State, addr: usize, out: &mut Vec<Frame>) {
    // `resolve` adjusts the address itself; undo our adjustment.
    backtrace::resolve(addr.wrapping_add(1) as *mut std::ffi::c_void, |sym| {
        let Some(name) = sym.name() else { return };
        out.push(Frame {
            file: sym.filename().map(|p| p.display().to_string()),
            line: sym.lineno().unwrap_or(0),
            function: format!("{name:#}"),
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plumbing_is_left_out() {
        let f = |file: Option<&str>, function: &str| Frame { file: file.map(str::to_owned), line: 1, function: function.into() };
        assert!(excluded(&f(Some("/x/include/tvm/ffi/error.h"), "tvm::ffi::details::ErrorBuilder::~ErrorBuilder")));
        assert!(excluded(&f(None, "_PyEval_EvalFrameDefault")));
        assert!(excluded(&f(None, "std::panicking::try")));
        assert!(excluded(&f(None, "<alloc::boxed::Box<F,A> as core::ops::function::Fn<Args>>::call")));
        assert!(!excluded(&f(Some("src/ir/op.cc"), "tvm::Op::Get")));
    }

    #[test]
    fn an_address_resolves_once_and_names_its_function() {
        let ip = an_address_resolves_once_and_names_its_function as *const () as usize + 1;
        let before = symbolized_on_this_thread();
        let text = frame_text(ip);
        assert!(text.contains("an_address_resolves_once_and_names_its_function"), "{text}");
        assert!(text.contains("symbolize.rs"), "{text}");
        let again = frame_text(ip);
        assert_eq!(text, again);
        assert_eq!(symbolized_on_this_thread(), before + 1);
    }
}
