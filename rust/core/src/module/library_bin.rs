//! The module tree a library embeds as `__tvm_ffi__library_bin`, in
//! TVM-FFI's format (little-endian, lengths as u64):
//!
//! ```text
//! import tree: indptr: vec<u64>, child_indices: vec<u64>   (CSR: module i
//!              imports child_indices[indptr[i]..indptr[i+1]])
//! then per module: kind: str, and unless kind is "_lib", bytes: str
//! ```
//!
//! `"_lib"` stands for the library module itself; any other kind is
//! rebuilt by the global `ffi.Module.load_from_bytes.<kind>` from its
//! bytes. Module 0 is the root. (The u64 length in front of the blob is
//! read by the caller.)

use std::sync::Arc;

use crate::values::any::Any;
use crate::values::error::Error;
use crate::values::function::Function;
use crate::object::ObjectRef;

use super::library::{new_library_module, Library};
use super::object::Module;

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

fn malformed(what: &str) -> Error {
    Error::new("InternalError", format!("malformed library binary: {what}"))
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.data.len()).ok_or_else(|| malformed(what))?;
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let b = self.bytes(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    fn vec_u64(&mut self, what: &str) -> Result<Vec<u64>, Error> {
        let n = self.u64(what)?;
        if n > (self.data.len() / 8) as u64 {
            return Err(malformed(what));
        }
        (0..n).map(|_| self.u64(what)).collect()
    }

    fn string(&mut self, what: &str) -> Result<&'a [u8], Error> {
        let n = self.u64(what)?;
        let n = usize::try_from(n).map_err(|_| malformed(what))?;
        self.bytes(n, what)
    }
}

fn load_from_bytes(kind: &str, bytes: &[u8]) -> Result<Module, Error> {
    let loader_name = format!("ffi.Module.load_from_bytes.{kind}");
    let loader = Function::get_global(&loader_name).ok_or_else(|| {
        Error::runtime_error(format!(
            "Library binary was created using {{{kind}}} but a loader of that name is not registered. \
             Make sure to have runtime that registers {loader_name}"
        ))
    })?;
    Module::from_object(loader.call(&[Any::bytes(bytes)?])?.get::<ObjectRef>()?)
}

/// Build the tree `blob` describes. Returns the root and the last library
/// module made for `"_lib"` (whose address goes into the library context).
/// `library` is None when deserializing without a library, where `"_lib"`
/// is an error.
pub(crate) fn build(blob: &[u8], library: Option<&Arc<Library>>) -> Result<(Module, Option<Module>), Error> {
    let mut r = Reader { data: blob, pos: 0 };
    let indptr = r.vec_u64("import tree")?;
    let children = r.vec_u64("import tree")?;
    if indptr.is_empty() {
        return Err(malformed("empty import tree"));
    }
    let count = indptr.len() - 1;
    let mut modules = Vec::with_capacity(count);
    let mut lib_module = None;
    for _ in 0..count {
        let kind = String::from_utf8_lossy(r.string("module kind")?).into_owned();
        if kind == "_lib" {
            let library = library.ok_or_else(|| {
                Error::new("InternalError", "_lib is not allowed during module serialization")
            })?;
            let m = new_library_module(library)?;
            lib_module = Some(m.clone());
            modules.push(m);
        } else {
            let bytes = r.string("module bytes")?;
            modules.push(load_from_bytes(&kind, bytes)?);
        }
    }
    for (i, m) in modules.iter().enumerate() {
        let (start, end) = (indptr[i] as usize, indptr[i + 1] as usize);
        let range = children.get(start..end).ok_or_else(|| malformed("import tree indices"))?;
        for &child in range {
            let child = modules.get(child as usize).ok_or_else(|| malformed("import tree child index"))?;
            m.push_import(child)?;
        }
    }
    let root = modules.into_iter().next().ok_or_else(|| malformed("no modules"))?;
    Ok((root, lib_module))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put_u64(out: &mut Vec<u8>, v: u64) {
        out.extend_from_slice(&v.to_le_bytes());
    }

    fn put_str(out: &mut Vec<u8>, s: &[u8]) {
        put_u64(out, s.len() as u64);
        out.extend_from_slice(s);
    }

    #[test]
    fn builds_the_import_tree_with_library_and_loaded_modules() {
        // Module 0 (_lib) imports module 1 (kind "tether_test_blob"), which
        // the registered loader rebuilds from its bytes.
        let seen = Arc::new(parking_lot::Mutex::new(Vec::<Vec<u8>>::new()));
        let seen_in_loader = seen.clone();
        Function::set_global(
            "ffi.Module.load_from_bytes.tether_test_blob",
            Function::from_closure(move |args| {
                seen_in_loader.lock().push(args[0].get::<Vec<u8>>()?);
                Ok(new_library_module(&Library::system("tether_test_blob."))?.to_any())
            })
            .unwrap(),
            true,
        )
        .unwrap();
        let mut blob = Vec::new();
        put_u64(&mut blob, 3);
        for v in [0, 1, 1] {
            put_u64(&mut blob, v);
        }
        put_u64(&mut blob, 1);
        put_u64(&mut blob, 1);
        put_str(&mut blob, b"_lib");
        put_str(&mut blob, b"tether_test_blob");
        put_str(&mut blob, b"payload");
        let lib = Library::system("");
        let (root, lib_module) = build(&blob, Some(&lib)).unwrap();
        assert!(lib_module.unwrap().as_object().same_as(root.as_object()));
        assert_eq!(seen.lock().as_slice(), &[b"payload".to_vec()]);
        let imports = root.imports().unwrap();
        assert_eq!(imports.len(), 1);
        assert_eq!(imports[0].kind().unwrap(), "library");
        assert!(imports[0].imports().unwrap().is_empty());
    }

    #[test]
    fn rejects_truncated_and_unknown_kinds() {
        let mut blob = Vec::new();
        put_u64(&mut blob, 2);
        put_u64(&mut blob, 0);
        let e = build(&blob, None).err().unwrap();
        assert_eq!(e.kind(), "InternalError");

        let mut blob = Vec::new();
        put_u64(&mut blob, 2);
        put_u64(&mut blob, 0);
        put_u64(&mut blob, 0);
        put_u64(&mut blob, 0);
        put_str(&mut blob, b"no_such_kind");
        put_str(&mut blob, b"");
        let e = build(&blob, None).err().unwrap();
        assert_eq!(e.kind(), "RuntimeError");
        assert!(e.message().contains("ffi.Module.load_from_bytes.no_such_kind"), "{}", e.message());

        let mut blob = Vec::new();
        put_u64(&mut blob, 2);
        put_u64(&mut blob, 0);
        put_u64(&mut blob, 0);
        put_u64(&mut blob, 0);
        put_str(&mut blob, b"_lib");
        let e = build(&blob, None).err().unwrap();
        assert!(e.message().contains("_lib is not allowed"));
    }
}
