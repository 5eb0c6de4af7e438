//! The bridge's C++ code generator for builds without Cargo's build script
//! (Bazel's genrule in rust/cxx_bridge/BUILD.bazel): writes the header and
//! implementation cxx generates for a `#[cxx::bridge]` module, and cxx's
//! own `rust/cxx.h`, exactly as `cxx-build` does for Cargo.
//!
//! Usage: cxxbridge_gen <lib.rs> <out lib.rs.h> <out lib.rs.cc> <out rust/cxx.h>

use std::str::FromStr;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: {} <lib.rs> <out.h> <out.cc> <out cxx.h>", args[0]);
        std::process::exit(2);
    }
    let source = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| fail(&format!("reading {}: {e}", args[1])));
    let tokens = proc_macro2::TokenStream::from_str(&source).unwrap_or_else(|e| fail(&format!("lexing {}: {e}", args[1])));
    let code = cxx_gen::generate_header_and_cc(tokens, &cxx_gen::Opt::default())
        .unwrap_or_else(|e| fail(&format!("generating C++ for {}: {e}", args[1])));
    for (path, bytes) in [(&args[2], &code.header[..]), (&args[3], &code.implementation[..]), (&args[4], cxx_gen::HEADER.as_bytes())] {
        std::fs::write(path, bytes).unwrap_or_else(|e| fail(&format!("writing {path}: {e}")));
    }
}

fn fail(message: &str) -> ! {
    eprintln!("cxxbridge_gen: {message}");
    std::process::exit(1)
}
