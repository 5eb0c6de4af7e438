//! The layer file: for each crate (a source folder), its layers from top to
//! bottom and the top-level modules each layer holds.
//!
//! ```text
//! # comment
//! [rust/core/src]
//! c_api: c_api cxx_shim
//! object: object
//! ```
//!
//! A module may name modules of its own layer and of the layers below it.
//! The crate root (`lib.rs`/`main.rs`) is the crate's map and sits above
//! every layer.

use std::collections::HashMap;

/// One crate's layers, top first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrateLayers {
    /// The crate's source folder, relative to the layer file's base folder.
    pub source_dir: String,
    /// Layer names, top first.
    pub layers: Vec<String>,
    /// Top-level module name -> index into `layers` (0 = top).
    pub rank_of_module: HashMap<String, usize>,
}

impl CrateLayers {
    pub fn rank(&self, top_module: &str) -> Option<usize> {
        self.rank_of_module.get(top_module).copied()
    }
}

/// Parses a layer file. Errors name the line.
pub fn parse(text: &str) -> Result<Vec<CrateLayers>, String> {
    let mut crates: Vec<CrateLayers> = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            let dir = section
                .strip_suffix(']')
                .ok_or_else(|| format!("line {line_no}: a section header must end with `]`"))?
                .trim();
            if dir.is_empty() {
                return Err(format!("line {line_no}: empty source folder"));
            }
            if crates.iter().any(|c| c.source_dir == dir) {
                return Err(format!("line {line_no}: `{dir}` is listed twice"));
            }
            crates.push(CrateLayers {
                source_dir: dir.to_string(),
                layers: Vec::new(),
                rank_of_module: HashMap::new(),
            });
            continue;
        }
        let current = crates.last_mut().ok_or_else(|| {
            format!("line {line_no}: a layer before any `[source folder]` header")
        })?;
        let (name, modules) = line
            .split_once(':')
            .ok_or_else(|| format!("line {line_no}: expected `layer: module module ...`"))?;
        let name = name.trim();
        if name.is_empty() || current.layers.iter().any(|l| l == name) {
            return Err(format!(
                "line {line_no}: layer name `{name}` is empty or repeated"
            ));
        }
        let rank = current.layers.len();
        current.layers.push(name.to_string());
        for module in modules.split_whitespace() {
            if let Some(previous) = current.rank_of_module.insert(module.to_string(), rank) {
                return Err(format!(
                    "line {line_no}: module `{module}` is already in layer `{}`",
                    current.layers[previous]
                ));
            }
        }
    }
    Ok(crates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sections_and_ranks() {
        let spec = parse("# top first\n[a/src]\ntop: x y\nbottom: z\n[b]\nonly: w\n").unwrap();
        assert_eq!(spec.len(), 2);
        assert_eq!(spec[0].rank("x"), Some(0));
        assert_eq!(spec[0].rank("z"), Some(1));
        assert_eq!(spec[0].rank("w"), None);
        assert_eq!(spec[1].layers, vec!["only".to_string()]);
    }

    #[test]
    fn refuses_malformed_files() {
        assert!(parse("top: x\n").unwrap_err().contains("line 1"));
        assert!(parse("[a]\ntop x\n").unwrap_err().contains("expected"));
        assert!(parse("[a]\nt: x\nu: x\n")
            .unwrap_err()
            .contains("already in layer `t`"));
        assert!(parse("[a]\n[a]\n").unwrap_err().contains("twice"));
        assert!(parse("[a\n").unwrap_err().contains("`]`"));
    }
}
