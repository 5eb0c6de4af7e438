// Builds the core shared library (libtether_core) from ../rust/core and the
// testing library (libtether_testing, the `testing.*` globals and test types)
// from ../rust/testing, places both and the C/C++ headers inside the `tether`
// package so the wheel carries them, and links the extension against the
// core, and against the testing library so that loading the extension loads
// it (as upstream's extension links libtvm_ffi_testing), both found at run
// time next to the extension through an $ORIGIN / @loader_path rpath. It also
// compiles two small C files against the target Python's headers: the frames
// that park daemon threads at interpreter exit (src/exit_park.c, with C
// exceptions' unwind tables where the compiler has them) and the
// free-threaded try-incref (src/try_incref.c).
//
// TETHER_CORE_LIB_DIR, when set, names a directory that already holds a
// built core library and testing library; they are used instead of building
// them.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The file name of the shared library `stem` (`tether_core`, `tether_testing`)
/// on the target (a build script's own `cfg!` is the host's).
fn lib_file_name(stem: &str) -> String {
    match env::var("CARGO_CFG_TARGET_OS").unwrap_or_default().as_str() {
        "windows" => format!("{stem}.dll"),
        "macos" => format!("lib{stem}.dylib"),
        _ => format!("lib{stem}.so"),
    }
}

/// Whether the target links with MSVC's linker, which takes a DLL's import
/// library: rustc names a cdylib's `stem.dll.lib`, so the library is linked
/// as `stem.dll` (`-l NAME` reads `NAME.lib`), as tether-sys's `#[link]` does.
fn msvc_target() -> bool {
    env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("windows") && env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("msvc")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create include dir");
    for entry in std::fs::read_dir(from).expect("read include dir") {
        let entry = entry.expect("dir entry");
        let dst = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &dst);
        } else {
            std::fs::copy(entry.path(), &dst).expect("copy header");
        }
    }
}

/// The include directory of the Python the extension is built for (maturin
/// names it in PYO3_PYTHON).
fn python_include_dir() -> PathBuf {
    let python = env::var("PYO3_PYTHON").or_else(|_| env::var("PYTHON_SYS_EXECUTABLE")).unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python)
        .args(["-c", "import sysconfig; print(sysconfig.get_paths()['include'])"])
        .output()
        .unwrap_or_else(|e| panic!("running {python} to find Python's headers: {e}"));
    assert!(out.status.success(), "{python} could not report its include directory");
    PathBuf::from(String::from_utf8(out.stdout).expect("UTF-8 path").trim())
}

/// Upstream's C++ headers (`tvm/ffi/*`, `dlpack/dlpack.h`) and their
/// LICENSE and NOTICE, taken from apache-tvm-ffi's pinned, sha256-checked
/// sdist into the package, so code written against them (`load_inline`,
/// `export_library`, CMake's `find_package(tvm_ffi)`) builds with tether
/// alone installed. The sdist is downloaded once into `target/upstream`
/// (`TETHER_TVM_FFI_SDIST` names a local copy instead, for offline and
/// sandboxed builds); a failure fails the build rather than shipping a
/// package without them.
fn bundle_tvm_ffi_headers(root: &Path, package: &Path) {
    println!("cargo:rerun-if-env-changed=TETHER_TVM_FFI_SDIST");
    let script = root.join("tools/upstream_sdist/sdist.py");
    println!("cargo:rerun-if-changed={}", script.display());
    let python = env::var("PYO3_PYTHON").or_else(|_| env::var("PYTHON_SYS_EXECUTABLE")).unwrap_or_else(|_| "python3".into());
    let mut cmd = Command::new(&python);
    cmd.arg(&script)
        .arg("headers")
        .arg("--cache")
        .arg(root.join("target/upstream"))
        .arg("--dest")
        .arg(package.join("include"))
        .arg("--licenses")
        .arg(package.join("licenses/apache-tvm-ffi"));
    if let Some(sdist) = env::var_os("TETHER_TVM_FFI_SDIST") {
        cmd.arg("--sdist").arg(sdist);
    }
    let status = cmd.status().unwrap_or_else(|e| panic!("running {python} {}: {e}", script.display()));
    assert!(
        status.success(),
        "taking TVM-FFI's headers from the apache-tvm-ffi sdist failed (set TETHER_TVM_FFI_SDIST to a local copy when offline)"
    );
}

/// `libtvm_ffi.so` (ELF only): a library with that SONAME that is a filter
/// on the core, defining a placeholder for each of the core's dynamic
/// symbols (src/tvm_ffi_filter_stubs.sh writes them), so `-ltvm_ffi` links
/// and everything resolves to the core (see src/tvm_ffi_soname.c).
fn build_tvm_ffi_soname_library(manifest: &Path, package: &Path, out_dir: &Path) {
    println!("cargo:rerun-if-changed=src/tvm_ffi_soname.c");
    println!("cargo:rerun-if-changed=src/tvm_ffi_filter_stubs.sh");
    println!("cargo:rerun-if-env-changed=NM");
    let stubs = out_dir.join("tvm_ffi_filter_stubs.c");
    let generated = Command::new("bash")
        .arg(manifest.join("src/tvm_ffi_filter_stubs.sh"))
        .arg(package.join(lib_file_name("tether_core")))
        .output()
        .expect("running src/tvm_ffi_filter_stubs.sh (needs bash and nm)");
    assert!(generated.status.success(), "tvm_ffi_filter_stubs.sh failed: {}", String::from_utf8_lossy(&generated.stderr));
    std::fs::write(&stubs, &generated.stdout).expect("write the filter placeholders");
    let compiler = cc::Build::new().get_compiler();
    // Zig's linker (lld, used for manylinux wheels) has no --filter. The
    // library holds placeholders only and calls nothing (no libc symbol
    // versions), so the host's own compiler builds it then (wheels are built
    // for the machine's own architecture).
    let mut command = if compiler.path().to_string_lossy().contains("zig") {
        Command::new(env::var("HOST_CC").unwrap_or_else(|_| "cc".into()))
    } else {
        compiler.to_command()
    };
    let out = package.join("libtvm_ffi.so");
    let status = command
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(manifest.join("src/tvm_ffi_soname.c"))
        .arg(&stubs)
        .args(["-Wl,-soname,libtvm_ffi.so", "-Wl,--filter=libtether_core.so", "-Wl,-rpath,$ORIGIN"])
        .status()
        .expect("running the C compiler for libtvm_ffi.so");
    assert!(status.success(), "building libtvm_ffi.so failed");
}

/// The core's sources, for `tether-config --sourcedir`: the core and sys
/// crates under `src/rust/` with a workspace manifest of their own (the
/// repository's, with only those two members) and the lock file, so
/// `cargo build --release --manifest-path <sourcedir>/Cargo.toml` builds
/// `libtether_core` from the installed package.
fn copy_core_sources(root: &Path, package: &Path) {
    for file in ["Cargo.toml", "Cargo.lock", "rust/core/Cargo.toml", "rust/core/build.rs", "rust/core/cxx", "rust/sys/Cargo.toml", "rust/sys/build.rs"] {
        println!("cargo:rerun-if-changed={}", root.join(file).display());
    }
    let dest = package.join("src");
    if dest.exists() {
        std::fs::remove_dir_all(&dest).expect("clear the packaged sources");
    }
    for (krate, entries) in [("core", &["Cargo.toml", "build.rs", "src", "cxx"][..]), ("sys", &["Cargo.toml", "build.rs", "src"][..])] {
        for entry in entries {
            let from = root.join("rust").join(krate).join(entry);
            let to = dest.join("rust").join(krate).join(entry);
            if from.is_dir() {
                copy_dir(&from, &to);
            } else {
                std::fs::create_dir_all(to.parent().unwrap()).expect("create the source dir");
                std::fs::copy(&from, &to).expect("copy a source file");
            }
        }
    }
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("read the workspace manifest");
    let members = r#"["rust/core", "rust/sys"]"#;
    let manifest: Vec<String> = manifest
        .lines()
        .map(|line| {
            if line.starts_with("members =") {
                format!("members = {members}")
            } else if line.starts_with("default-members =") {
                format!("default-members = {members}")
            } else {
                line.to_string()
            }
        })
        .collect();
    std::fs::write(dest.join("Cargo.toml"), manifest.join("\n") + "\n").expect("write the source manifest");
    std::fs::copy(root.join("Cargo.lock"), dest.join("Cargo.lock")).expect("copy the lock file");
}

/// The header of C helpers for Python extension modules
/// (`libinfo.find_python_helper_include_path()`), beside tether's headers.
fn copy_python_helper_header(manifest: &Path, package: &Path) {
    println!("cargo:rerun-if-changed=include/tvm_ffi_python_helpers.h");
    std::fs::copy(manifest.join("include/tvm_ffi_python_helpers.h"), package.join("include/tvm_ffi_python_helpers.h"))
        .expect("copy tvm_ffi_python_helpers.h");
}

fn main() {
    // cfg(Py_GIL_DISABLED) and friends for the interpreter being built for.
    pyo3_build_config::use_pyo3_cfgs();
    println!("cargo:rerun-if-changed=src/exit_park.c");
    println!("cargo:rerun-if-changed=../cpp/include/tether/c_api.h");
    println!("cargo:rerun-if-changed=src/try_incref.c");
    println!("cargo:rerun-if-env-changed=PYO3_PYTHON");
    let include = python_include_dir();
    // The parking frames with -fexceptions: glibc's pthread_cleanup_push
    // then becomes a cleanup attribute that the forced unwind runs from the
    // frame's unwind tables, instead of a __sigsetjmp on every call (see
    // exit_park.c). GCC and Clang on Linux and macOS (where the frames are
    // plain calls, but the flag costs nothing); not MSVC.
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let mut park = cc::Build::new();
    // <tether/c_api.h> for the FFI value a callback's None result is written as.
    park.file("src/exit_park.c").include(&include).include(manifest_dir.join("../cpp/include")).warnings(true);
    let compiler = park.get_compiler();
    if matches!(target_os.as_str(), "linux" | "macos") && (compiler.is_like_gnu() || compiler.is_like_clang()) {
        park.flag("-fexceptions");
    }
    park.compile("tether_exit_park");
    cc::Build::new().file("src/try_incref.c").include(&include).warnings(true).compile("tether_try_incref");

    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().to_path_buf();
    let package = manifest.join("tether");
    println!("cargo:rerun-if-env-changed=TETHER_CORE_LIB_DIR");
    for dir in ["rust/core/src", "rust/sys/src", "rust/testing/src", "cpp/include"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }

    let lib_dir = match env::var_os("TETHER_CORE_LIB_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let target_dir = PathBuf::from(env::var("OUT_DIR").unwrap()).join("core-target");
            let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "--release", "-p", "tether-core", "-p", "tether-testing", "--lib", "--manifest-path"])
                .arg(root.join("Cargo.toml"))
                .arg("--target-dir")
                .arg(&target_dir);
            // Flags meant for the extension (set by maturin) must not leak
            // into the core's own build.
            for var in ["CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_TARGET_DIR"] {
                cmd.env_remove(var);
            }
            let status = cmd.status().expect("running cargo to build tether-core and tether-testing");
            assert!(status.success(), "building tether-core and tether-testing failed");
            target_dir.join("release")
        }
    };
    for stem in ["tether_core", "tether_testing"] {
        let lib = lib_dir.join(lib_file_name(stem));
        assert!(lib.exists(), "{stem} library not found at {}", lib.display());
        std::fs::copy(&lib, package.join(lib_file_name(stem))).expect("copy the library into the package");
    }
    copy_dir(&root.join("cpp/include"), &package.join("include"));
    bundle_tvm_ffi_headers(&root, &package);
    copy_python_helper_header(&manifest, &package);
    copy_core_sources(&root, &package);

    if target_os == "linux" {
        build_tvm_ffi_soname_library(&manifest, &package, &PathBuf::from(env::var("OUT_DIR").unwrap()));
    }

    println!("cargo:rustc-link-search=native={}", package.display());
    if msvc_target() {
        // The import libraries stay out of the package: linked from OUT_DIR.
        let implib = PathBuf::from(env::var("OUT_DIR").unwrap()).join("implib");
        std::fs::create_dir_all(&implib).expect("create the import library dir");
        for stem in ["tether_core", "tether_testing"] {
            let lib = lib_dir.join(format!("{stem}.dll.lib"));
            assert!(lib.exists(), "{stem} import library not found at {}", lib.display());
            std::fs::copy(&lib, implib.join(format!("{stem}.dll.lib"))).expect("copy the import library");
        }
        println!("cargo:rustc-link-search=native={}", implib.display());
    }
    // The testing library: nothing of it is referenced, so it is kept as a
    // dependency explicitly (ELF linkers drop unreferenced libraries under
    // --as-needed; MSVC imports a DLL only for a referenced symbol).
    if msvc_target() {
        println!("cargo:rustc-link-lib=dylib=tether_testing.dll");
        println!("cargo:rustc-cdylib-link-arg=/INCLUDE:TVMFFITestingDummyTarget");
    } else if target_os == "windows" {
        println!("cargo:rustc-link-lib=dylib=tether_testing");
    } else if target_os == "macos" {
        println!("cargo:rustc-link-lib=dylib=tether_testing");
    } else {
        // Needed although unreferenced; rustc links with --as-needed, which
        // is restored after (Zig's lld, used for manylinux wheels, has no
        // --push-state).
        println!("cargo:rustc-cdylib-link-arg=-Wl,--no-as-needed");
        println!("cargo:rustc-cdylib-link-arg=-ltether_testing");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--as-needed");
    }
    if target_os == "macos" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,@loader_path");
    } else if target_os != "windows" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,$ORIGIN");
    }
}
