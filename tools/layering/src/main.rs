//! `tether-layering LAYER_FILE [BASE_DIR]`: checks every crate the layer
//! file lists (see `layer_spec`) — no module names a module of a higher
//! layer, every top-level module belongs to a layer, and no files, nor
//! folders taken whole, form an import circle. Prints each finding with its file and line; exits 1 when
//! there is any, 2 when the check cannot run.

mod dependency_graph;
mod layer_spec;
mod module_tree;
mod use_paths;

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (spec_path, base, only) = match args.as_slice() {
        [spec] => (PathBuf::from(spec), PathBuf::from("."), &[][..]),
        [spec, base, only @ ..] => (PathBuf::from(spec), PathBuf::from(base), only),
        _ => {
            eprintln!("usage: tether-layering LAYER_FILE [BASE_DIR [SOURCE_DIR...]]");
            return ExitCode::from(2);
        }
    };
    match run(&spec_path, &base, only) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(message) => {
            eprintln!("tether-layering: {message}");
            ExitCode::from(2)
        }
    }
}

/// Checks the crates of the layer file (those named in `only`, or all);
/// returns the number of findings.
pub fn run(spec_path: &Path, base: &Path, only: &[String]) -> Result<usize, String> {
    let text = fs::read_to_string(spec_path)
        .map_err(|e| format!("cannot read {}: {e}", spec_path.display()))?;
    let spec = layer_spec::parse(&text).map_err(|e| format!("{}: {e}", spec_path.display()))?;
    if let Some(unknown) = only
        .iter()
        .find(|dir| !spec.iter().any(|c| &c.source_dir == *dir))
    {
        return Err(format!(
            "{} lists no crate `{unknown}`",
            spec_path.display()
        ));
    }
    let mut findings = 0;
    for layers in spec
        .iter()
        .filter(|c| only.is_empty() || only.contains(&c.source_dir))
    {
        let report = check_crate(&base.join(&layers.source_dir), layers)?;
        findings += report.len();
        if report.is_empty() {
            println!("{}: layers hold, no import circle", layers.source_dir);
        }
        for line in report {
            println!("{line}");
        }
    }
    Ok(findings)
}

/// One crate's findings, one line (or block) each.
pub fn check_crate(
    source_dir: &Path,
    layers: &layer_spec::CrateLayers,
) -> Result<Vec<String>, String> {
    let files = module_tree::collect(source_dir)?;
    let modules: HashSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let mut uses = Vec::with_capacity(files.len());
    for file in &files {
        let source = fs::read_to_string(&file.path)
            .map_err(|e| format!("cannot read {}: {e}", file.path.display()))?;
        uses.push(
            use_paths::collect(&source, &file.module, &modules)
                .map_err(|e| format!("{}: {e}", file.path.display()))?,
        );
    }
    let graph = dependency_graph::build(files, &uses);
    let shown = |i: usize| graph.files[i].path.display().to_string();
    let module_name = |i: usize| {
        let module = &graph.files[i].module;
        if module.is_empty() {
            "the crate root".to_string()
        } else {
            module.join("::")
        }
    };
    let mut report = Vec::new();
    let (violations, unlisted) = dependency_graph::layer_violations(&graph, layers);
    for module in unlisted {
        report.push(format!(
            "{}: top-level module `{module}` belongs to no layer",
            source_dir.display()
        ));
    }
    for v in violations {
        report.push(format!(
            "{}:{}: layer `{}` names `{}` of the higher layer `{}`",
            shown(v.edge.from),
            v.edge.line,
            v.from_layer,
            module_name(v.edge.to),
            v.to_layer
        ));
    }
    for circle in dependency_graph::circles(&graph) {
        let members: HashSet<usize> = circle.iter().copied().collect();
        let mut block = format!("import circle of {} files:", circle.len());
        for &file in &circle {
            let inside: Vec<String> = graph
                .edges
                .iter()
                .filter(|e| e.from == file && members.contains(&e.to))
                .map(|e| format!("{} (line {})", module_name(e.to), e.line))
                .collect();
            block.push_str(&format!("\n  {} -> {}", shown(file), inside.join(", ")));
        }
        report.push(block);
    }
    for circle in dependency_graph::folder_circles(&graph) {
        let inside = if circle.parent.is_empty() {
            "the crate root".to_string()
        } else {
            format!("`{}`", circle.parent.join("::"))
        };
        let mut block = format!(
            "import circle of {} modules of {inside} (a folder counts whole):",
            circle.members.len()
        );
        for (from, to, edge) in &circle.edges {
            block.push_str(&format!(
                "\n  {from} -> {to}: {}:{} names {}",
                shown(edge.from),
                edge.line,
                module_name(edge.to)
            ));
        }
        report.push(block);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A throwaway crate tree under the system temp folder.
    struct Tree(PathBuf);

    impl Tree {
        fn new(files: &[(&str, &str)]) -> Tree {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let root = std::env::temp_dir().join(format!(
                "tether-layering-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            for (path, text) in files {
                let path = root.join(path);
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                fs::write(path, text).unwrap();
            }
            Tree(root)
        }
    }

    impl Drop for Tree {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn layers(text: &str) -> layer_spec::CrateLayers {
        layer_spec::parse(&format!("[src]\n{text}"))
            .unwrap()
            .remove(0)
    }

    #[test]
    fn a_clean_tree_passes() {
        let tree = Tree::new(&[
            (
                "lib.rs",
                "pub mod top; pub mod bottom; pub use bottom::Thing;",
            ),
            ("top/mod.rs", "pub mod api; use crate::Thing;"),
            (
                "top/api.rs",
                "use crate::bottom::Thing; fn f() { crate::bottom::make(); }",
            ),
            ("bottom/mod.rs", "pub struct Thing; pub fn make() {}"),
        ]);
        let report = check_crate(&tree.0, &layers("top: top\nbottom: bottom\n")).unwrap();
        assert!(report.is_empty(), "{report:?}");
    }

    #[test]
    fn an_upward_use_is_reported_with_its_line() {
        let tree = Tree::new(&[
            ("lib.rs", "pub mod top; pub mod bottom;"),
            ("top.rs", "pub fn hook() {}"),
            ("bottom.rs", "\nfn f() { crate::top::hook(); }"),
        ]);
        let report = check_crate(&tree.0, &layers("top: top\nbottom: bottom\n")).unwrap();
        assert_eq!(report.len(), 1, "{report:?}");
        assert!(
            report[0]
                .ends_with("bottom.rs:2: layer `bottom` names `top` of the higher layer `top`"),
            "{}",
            report[0]
        );
    }

    #[test]
    fn an_upward_use_through_a_reexport_is_found() {
        let tree = Tree::new(&[
            (
                "lib.rs",
                "pub mod top; pub mod bottom; pub use top::Hook as RootHook;",
            ),
            ("top.rs", "pub struct Hook;"),
            ("bottom.rs", "use crate::RootHook;"),
        ]);
        let report = check_crate(&tree.0, &layers("top: top\nbottom: bottom\n")).unwrap();
        assert_eq!(report.len(), 1, "{report:?}");
    }

    #[test]
    fn circles_and_unlisted_modules_are_reported() {
        let tree = Tree::new(&[
            ("lib.rs", "pub mod a; pub mod b; pub mod c; pub mod stray;"),
            ("a.rs", "use crate::b::X; pub struct Y;"),
            ("b.rs", "use crate::c::Z; pub struct X;"),
            ("c.rs", "use crate::a::Y; pub struct Z;"),
            ("stray.rs", ""),
        ]);
        let report = check_crate(&tree.0, &layers("all: a b c\n")).unwrap();
        assert!(
            report
                .iter()
                .any(|l| l.contains("`stray` belongs to no layer")),
            "{report:?}"
        );
        let circle = report
            .iter()
            .find(|l| l.starts_with("import circle of 3 files"))
            .expect("circle");
        assert!(circle.contains("a.rs -> b (line 1)"), "{circle}");
    }

    #[test]
    fn a_parent_and_child_using_each_other_is_a_circle() {
        let tree = Tree::new(&[
            ("lib.rs", "pub mod s;"),
            (
                "s/mod.rs",
                "mod hash; pub struct Frame; pub fn run() { hash::go(); }",
            ),
            ("s/hash.rs", "use super::Frame; pub fn go() {}"),
        ]);
        let report = check_crate(&tree.0, &layers("s: s\n")).unwrap();
        assert_eq!(report.len(), 1, "{report:?}");
        assert!(report[0].starts_with("import circle of 2 files"));
    }

    #[test]
    fn a_circle_between_folders_is_reported() {
        // No two files name each other, but folder `a` and file `b` do.
        let tree = Tree::new(&[
            ("lib.rs", "pub mod s;"),
            ("s/mod.rs", "pub mod a; pub mod b;"),
            ("s/a/mod.rs", "pub mod low; pub mod high;"),
            ("s/a/low.rs", "pub struct Low;"),
            ("s/a/high.rs", "use crate::s::b::Mid;"),
            ("s/b.rs", "use crate::s::a::low::Low; pub struct Mid;"),
        ]);
        let report = check_crate(&tree.0, &layers("s: s\n")).unwrap();
        assert_eq!(report.len(), 1, "{report:?}");
        assert!(
            report[0].starts_with("import circle of 2 modules of `s` (a folder counts whole):"),
            "{}",
            report[0]
        );
        assert!(report[0].contains("a -> b: "), "{}", report[0]);
        assert!(report[0].contains("high.rs:1 names s::b"), "{}", report[0]);
        assert!(report[0].contains("b -> a: "), "{}", report[0]);
    }

    #[test]
    fn folders_that_depend_one_way_pass() {
        let tree = Tree::new(&[
            ("lib.rs", "pub mod s; pub mod t;"),
            ("s/mod.rs", "pub mod a; pub mod b; pub use a::low::Low;"),
            ("s/a/mod.rs", "pub mod low;"),
            ("s/a/low.rs", "pub struct Low;"),
            ("s/b.rs", "use crate::s::Low; pub struct Mid;"),
            ("t/mod.rs", "pub mod x; use crate::s::b::Mid;"),
            ("t/x.rs", "use crate::s::a::low::Low;"),
        ]);
        let report = check_crate(&tree.0, &layers("t: t\ns: s\n")).unwrap();
        assert!(report.is_empty(), "{report:?}");
    }

    #[test]
    fn run_checks_only_the_crates_asked_for() {
        let tree = Tree::new(&[
            ("good/lib.rs", "pub mod a;"),
            ("good/a.rs", ""),
            ("bad/lib.rs", "pub mod a; pub mod b;"),
            ("bad/a.rs", "use crate::b::X; pub struct Y;"),
            ("bad/b.rs", "use crate::a::Y; pub struct X;"),
            ("layers.txt", "[good]\nall: a\n[bad]\nall: a b\n"),
        ]);
        let spec = tree.0.join("layers.txt");
        assert_eq!(run(&spec, &tree.0, &["good".to_string()]).unwrap(), 0);
        assert_eq!(run(&spec, &tree.0, &["bad".to_string()]).unwrap(), 1);
        assert_eq!(run(&spec, &tree.0, &[]).unwrap(), 1);
        assert!(run(&spec, &tree.0, &["other".to_string()]).unwrap_err().contains("lists no crate `other`"));
    }

    #[test]
    fn the_check_refuses_what_it_cannot_read() {
        let missing = std::env::temp_dir().join("tether-layering-no-such-folder");
        assert!(check_crate(&missing, &layers("a: a\n"))
            .unwrap_err()
            .contains("cannot read folder"));
        let tree = Tree::new(&[("lib.rs", "fn broken( {")]);
        assert!(check_crate(&tree.0, &layers("a: a\n"))
            .unwrap_err()
            .contains("lib.rs: line 1"));
    }
}
