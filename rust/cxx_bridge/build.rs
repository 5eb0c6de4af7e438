// Compiles the C++ half of the bridge (src/bridge.cc, with the cxx-generated
// glue) against tether's header-only layer, and links the shared core
// (libtether_core), never the core's rlib: the process needs exactly one
// copy of the registries, shared by the C++ code and by tether-sys.
//
// TETHER_CORE_LIB_DIR names a directory holding a built core; otherwise the
// core is built here, with Cargo, into OUT_DIR (its own target directory,
// so the outer build's lock is not contended).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().parent().unwrap().to_path_buf();
    println!("cargo:rerun-if-changed=src/lib.rs");
    println!("cargo:rerun-if-changed=src/bridge.cc");
    println!("cargo:rerun-if-changed=include/bridge.h");
    println!("cargo:rerun-if-changed={}", root.join("cpp/include").display());
    println!("cargo:rerun-if-env-changed=TETHER_CORE_LIB_DIR");

    cxx_build::bridge("src/lib.rs")
        .file("src/bridge.cc")
        .include(root.join("cpp/include"))
        .std("c++17")
        .warnings(true)
        .extra_warnings(true)
        .compile("tether_cxx_bridge");

    let lib_dir = match env::var_os("TETHER_CORE_LIB_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            for dir in ["rust/core/src", "rust/sys/src"] {
                println!("cargo:rerun-if-changed={}", root.join(dir).display());
            }
            let target_dir = PathBuf::from(env::var("OUT_DIR").unwrap()).join("core-target");
            let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "-p", "tether-core", "--lib", "--manifest-path"])
                .arg(root.join("Cargo.toml"))
                .arg("--target-dir")
                .arg(&target_dir);
            for var in ["CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS", "CARGO_BUILD_TARGET", "CARGO_TARGET_DIR"] {
                cmd.env_remove(var);
            }
            let status = cmd.status().expect("running cargo to build tether-core");
            assert!(status.success(), "building tether-core failed");
            target_dir.join("debug")
        }
    };
    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // MSVC links `-l NAME` as NAME.lib; rustc names the core's import
    // library tether_core.dll.lib.
    if os == "windows" && env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("msvc") {
        println!("cargo:rustc-link-lib=dylib=tether_core.dll");
    } else {
        println!("cargo:rustc-link-lib=dylib=tether_core");
    }
    if os != "windows" {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib_dir.display());
    }
}
