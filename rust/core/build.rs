// Links the core's shared library so that its references to its own exported
// functions cannot be interposed.
//
// On ELF platforms the dynamic loader resolves a shared library's references
// to its own default-visibility symbols through the global lookup scope, so
// another library exporting the same `TVMFFI*` names and loaded earlier with
// RTLD_GLOBAL would capture calls the core makes to itself (and the function
// pointers it stores, such as deleters and the entries of its API table).
// `-Bsymbolic` binds those references inside the library at link time.
// Mach-O (two-level namespace) and PE (per-DLL imports) already bind a
// library's own references to itself, so they need nothing.
//
// On ELF the library also carries its name as its SONAME: a program linked
// against it by path then records `libtether_core.so` as what it needs (not
// the build directory's path), and the loader finds it by rpath or search
// path. Mach-O gets its install name from rustc and PE has no such field.
//
// Both are plain link args, not cdylib-only ones: Cargo passes a package's
// cdylib link args on to the cdylibs of packages depending on it, which
// would give the testing library (rust/testing) the core's SONAME. On the
// core's own executables (tests, examples) they are harmless.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let family = std::env::var("CARGO_CFG_TARGET_FAMILY").unwrap_or_default();
    let elf = family.split(',').any(|f| f == "unix") && !matches!(os.as_str(), "macos" | "ios" | "tvos" | "watchos" | "visionos");
    if elf {
        println!("cargo:rustc-link-arg=-Wl,-Bsymbolic");
        println!("cargo:rustc-link-arg=-Wl,-soname,libtether_core.so");
    }
    // The C++ shim behind TVM-FFI's C++ entry points (src/cxx_shim):
    // C++17, its own minimal declarations, no TVM-FFI header.
    // On Itanium C++ ABI targets with exported trampolines (x86-64 and
    // AArch64, not MSVC), ModuleObj's vtable and type_info come from Rust
    // (src/cxx_shim/module_vtable.rs) so that they are exported; elsewhere
    // the shim lets the compiler emit them.
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .file("cxx/library_surface.cc")
        .file("cxx/module_object.cc")
        .warnings(true);
    if matches!(arch.as_str(), "x86_64" | "aarch64") && env != "msvc" {
        build.define("TETHER_CXX_VTABLE_FROM_RUST", None);
    }
    build.compile("tether_core_cxx");
    for file in ["library_surface.cc", "library_surface.h", "module_object.cc", "module_object.h"] {
        println!("cargo:rerun-if-changed=cxx/{file}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
