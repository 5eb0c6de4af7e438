// Links the testing library against the shared core library.
//
// The core is found in TETHER_CORE_LIB_DIR when that is set, else where
// this Cargo build put it: `tether-core` is a dependency (for build order
// only), so its cdylib is in the profile's `deps` directory by the time
// this library links. At run time the library finds the core next to
// itself (an $ORIGIN / @loader_path rpath), as the Python package and the
// build directory lay them out. On ELF it carries its file name as its
// SONAME, so programs linked against it record `libtether_testing.so`.
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=TETHER_CORE_LIB_DIR");
    println!("cargo:rerun-if-changed=build.rs");
    if let Some(dir) = std::env::var_os("TETHER_CORE_LIB_DIR") {
        println!("cargo:rustc-link-search=native={}", PathBuf::from(dir).display());
    }
    // OUT_DIR is <target>/<profile>/build/tether-testing-<hash>/out.
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    if let Some(profile_dir) = out.ancestors().nth(3) {
        println!("cargo:rustc-link-search=native={}", profile_dir.join("deps").display());
    }
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let family = std::env::var("CARGO_CFG_TARGET_FAMILY").unwrap_or_default();
    let apple = matches!(os.as_str(), "macos" | "ios" | "tvos" | "watchos" | "visionos");
    let elf = family.split(',').any(|f| f == "unix") && !apple;
    if elf {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtether_testing.so");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,$ORIGIN");
    } else if apple {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-rpath,@loader_path");
    }
}
