// Where to find libtether_core when linking the extern declarations: the
// directory in TETHER_CORE_LIB_DIR, if set. Dependents that build the core
// themselves (the Python extension) add their own search path instead.
fn main() {
    println!("cargo:rerun-if-env-changed=TETHER_CORE_LIB_DIR");
    if std::env::var_os("CARGO_FEATURE_LINK").is_some() {
        if let Some(dir) = std::env::var_os("TETHER_CORE_LIB_DIR") {
            println!("cargo:rustc-link-search=native={}", dir.to_string_lossy());
        }
    }
}
