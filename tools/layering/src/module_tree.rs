//! The files of a crate and the module path each one defines: `lib.rs` is
//! the root, `a/mod.rs` and `a.rs` are `a`, `a/b.rs` is `a::b`.

use std::fs;
use std::path::{Path, PathBuf};

/// One source file and the module it defines.
#[derive(Debug, Clone)]
pub struct ModuleFile {
    pub path: PathBuf,
    /// Module path from the crate root; empty for the root itself.
    pub module: Vec<String>,
}

/// Every `.rs` file under `source_dir`, sorted by path so reports are stable.
pub fn collect(source_dir: &Path) -> Result<Vec<ModuleFile>, String> {
    let mut files = Vec::new();
    // An explicit stack: folder depth is the user's, not ours to recurse on.
    let mut pending = vec![source_dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            fs::read_dir(&dir).map_err(|e| format!("cannot read folder {}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot read folder {}: {e}", dir.display()))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
            if kind.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let relative = path.strip_prefix(source_dir).map_err(|_| {
                    format!("{} is outside {}", path.display(), source_dir.display())
                })?;
                files.push(ModuleFile {
                    module: module_path(relative),
                    path,
                });
            }
        }
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// The module path a file defines, from its path relative to the source folder.
pub fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.strip_suffix(".rs").unwrap_or(&last).to_string();
        let is_root = parts.is_empty() && (stem == "lib" || stem == "main");
        if stem != "mod" && !is_root {
            parts.push(stem);
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn maps_files_to_modules() {
        assert_eq!(module_path(Path::new("lib.rs")), path(&[]));
        assert_eq!(module_path(Path::new("main.rs")), path(&[]));
        assert_eq!(module_path(Path::new("any.rs")), path(&["any"]));
        assert_eq!(
            module_path(Path::new("structural/mod.rs")),
            path(&["structural"])
        );
        assert_eq!(
            module_path(Path::new("structural/hash.rs")),
            path(&["structural", "hash"])
        );
        assert_eq!(module_path(Path::new("a/lib.rs")), path(&["a", "lib"]));
    }
}
