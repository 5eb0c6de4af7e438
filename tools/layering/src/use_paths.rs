//! What one file names from the rest of its crate: every `use` leaf, every
//! multi-segment path in code, and `crate::`/`self::`/`super::` paths inside
//! macro invocations, each made absolute (from the crate root). Also the
//! names each `use` binds, so a path through a re-export can be followed to
//! the module that defines the item.
//!
//! A first segment that is neither `crate`/`self`/`super`, a child module
//! nor an item the module itself defines (a `macro_rules!` re-exported with
//! `use name;`, say) names another crate.
//!
//! Code under `#[cfg(test)]` is skipped: unit tests may reach any layer.

use std::collections::{HashMap, HashSet};

use proc_macro2::{TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::visit::{self, Visit};

/// A path naming something in the crate, made absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub segments: Vec<String>,
    pub line: usize,
}

/// A name bound by `use` in `module`: `module::name` stands for `target`
/// (`None` when the target lies outside the crate). `name == "*"` is a glob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alias {
    pub module: Vec<String>,
    pub name: String,
    pub target: Option<Vec<String>>,
}

#[derive(Debug, Default)]
pub struct FileUses {
    pub references: Vec<Reference>,
    pub aliases: Vec<Alias>,
}

/// Parses `source` (the text of the file defining `module`) and collects its
/// uses. `modules` holds every file-backed module path of the crate, used to
/// tell a child module (`use child::x`) from an external crate.
pub fn collect(
    source: &str,
    module: &[String],
    modules: &HashSet<Vec<String>>,
) -> Result<FileUses, String> {
    let file = syn::parse_file(source).map_err(|e| {
        let at = e.span().start();
        format!("line {}:{}: {e}", at.line, at.column + 1)
    })?;
    let mut local_items = HashMap::new();
    defined_items(&file.items, &mut module.to_vec(), &mut local_items);
    let mut collector = Collector {
        scope: module.to_vec(),
        modules,
        local_items,
        uses: FileUses::default(),
    };
    collector.visit_file(&file);
    Ok(collector.uses)
}

/// The names each module of the file (the file's own, and its inline
/// modules) defines with an item of its own, `use` bindings aside.
fn defined_items(
    items: &[syn::Item],
    scope: &mut Vec<String>,
    out: &mut HashMap<Vec<String>, HashSet<String>>,
) {
    for item in items {
        let name = match item {
            syn::Item::Const(i) => Some(&i.ident),
            syn::Item::Enum(i) => Some(&i.ident),
            syn::Item::Fn(i) => Some(&i.sig.ident),
            syn::Item::Macro(i) => i.ident.as_ref(),
            syn::Item::Mod(i) => {
                if let Some((_, inner)) = &i.content {
                    scope.push(i.ident.to_string());
                    defined_items(inner, scope, out);
                    scope.pop();
                }
                Some(&i.ident)
            }
            syn::Item::Static(i) => Some(&i.ident),
            syn::Item::Struct(i) => Some(&i.ident),
            syn::Item::Trait(i) => Some(&i.ident),
            syn::Item::TraitAlias(i) => Some(&i.ident),
            syn::Item::Type(i) => Some(&i.ident),
            syn::Item::Union(i) => Some(&i.ident),
            _ => None,
        };
        if let Some(name) = name {
            out.entry(scope.clone()).or_default().insert(name.to_string());
        }
    }
}

struct Collector<'m> {
    /// The module the code being visited belongs to (file module + inline modules).
    scope: Vec<String>,
    modules: &'m HashSet<Vec<String>>,
    /// Names defined by items of each module of this file.
    local_items: HashMap<Vec<String>, HashSet<String>>,
    uses: FileUses,
}

impl Collector<'_> {
    /// Makes `segments` absolute from the crate root, or `None` when they
    /// name something outside the crate (or a local item).
    fn absolutize(&self, segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        match first.as_str() {
            "crate" => Some(segments[1..].to_vec()),
            "self" => Some(self.scope.iter().chain(&segments[1..]).cloned().collect()),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                let keep = self.scope.len().checked_sub(ups)?;
                Some(
                    self.scope[..keep]
                        .iter()
                        .chain(&segments[ups..])
                        .cloned()
                        .collect(),
                )
            }
            _ => {
                let mut child = self.scope.clone();
                child.push(first.clone());
                let local = self.modules.contains(&child)
                    || self
                        .local_items
                        .get(&self.scope)
                        .is_some_and(|names| names.contains(first));
                local.then(|| self.scope.iter().chain(segments).cloned().collect())
            }
        }
    }

    fn record(&mut self, segments: &[String], line: usize) {
        if let Some(absolute) = self.absolutize(segments) {
            if !absolute.is_empty() {
                self.uses.references.push(Reference {
                    segments: absolute,
                    line,
                });
            }
        }
    }

    fn use_tree(
        &mut self,
        prefix: &mut Vec<String>,
        tree: &syn::UseTree,
        line: usize,
        leading_colon: bool,
    ) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree, line, leading_colon);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                self.bind(prefix, &name, &name, line, leading_colon);
            }
            syn::UseTree::Rename(r) => {
                self.bind(
                    prefix,
                    &r.ident.to_string(),
                    &r.rename.to_string(),
                    line,
                    leading_colon,
                );
            }
            syn::UseTree::Glob(_) => {
                let target = if leading_colon {
                    None
                } else {
                    self.absolutize(prefix)
                };
                if let Some(target) = &target {
                    if !target.is_empty() {
                        self.uses.references.push(Reference {
                            segments: target.clone(),
                            line,
                        });
                    }
                }
                self.uses.aliases.push(Alias {
                    module: self.scope.clone(),
                    name: "*".into(),
                    target,
                });
            }
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(prefix, item, line, leading_colon);
                }
            }
        }
    }

    fn bind(
        &mut self,
        prefix: &[String],
        original: &str,
        bound: &str,
        line: usize,
        leading_colon: bool,
    ) {
        let mut full = prefix.to_vec();
        // `use a::b::{self}` binds `b` itself.
        if original != "self" {
            full.push(original.to_string());
        }
        let bound = if original == "self" {
            prefix.last().cloned().unwrap_or_default()
        } else {
            bound.to_string()
        };
        let target = if leading_colon {
            None
        } else {
            self.absolutize(&full)
        };
        if let Some(target) = &target {
            if !target.is_empty() {
                self.uses.references.push(Reference {
                    segments: target.clone(),
                    line,
                });
            }
        }
        // `use name;` of an item defined right here binds nothing new.
        let binds_itself = target.as_ref().is_some_and(|t| {
            t.len() == self.scope.len() + 1 && t[..self.scope.len()] == self.scope[..] && t[self.scope.len()] == bound
        });
        if bound != "_" && !binds_itself {
            self.uses.aliases.push(Alias {
                module: self.scope.clone(),
                name: bound,
                target,
            });
        }
    }

    /// `crate::a::b`, `self::a`, `super::a` inside a macro's tokens.
    fn macro_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(group) => self.macro_tokens(group.stream()),
                TokenTree::Ident(ident)
                    if matches!(ident.to_string().as_str(), "crate" | "self" | "super") =>
                {
                    // `$crate` is the macro's own crate marker, not a path of ours.
                    let after_dollar =
                        i > 0 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
                    let mut segments = vec![ident.to_string()];
                    let mut j = i + 1;
                    while is_path_sep(&trees, j) {
                        match trees.get(j + 2) {
                            Some(TokenTree::Ident(next)) => {
                                segments.push(next.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    if segments.len() > 1 && !after_dollar {
                        self.record(&segments, ident.span().start().line);
                    }
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

fn is_path_sep(trees: &[TokenTree], at: usize) -> bool {
    matches!(
        (trees.get(at), trees.get(at + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) if a.as_char() == ':' && b.as_char() == ':'
    )
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_use(&mut self, node: &'ast syn::ItemUse) {
        if is_cfg_test(&node.attrs) {
            return;
        }
        let line = node.span().start().line;
        self.use_tree(
            &mut Vec::new(),
            &node.tree,
            line,
            node.leading_colon.is_some(),
        );
    }

    fn visit_item_mod(&mut self, node: &'ast syn::ItemMod) {
        if is_cfg_test(&node.attrs) {
            return;
        }
        if node.content.is_some() {
            self.scope.push(node.ident.to_string());
            visit::visit_item_mod(self, node);
            self.scope.pop();
        }
    }

    fn visit_item_fn(&mut self, node: &'ast syn::ItemFn) {
        if !is_cfg_test(&node.attrs) {
            visit::visit_item_fn(self, node);
        }
    }

    fn visit_item_impl(&mut self, node: &'ast syn::ItemImpl) {
        if !is_cfg_test(&node.attrs) {
            visit::visit_item_impl(self, node);
        }
    }

    fn visit_path(&mut self, node: &'ast syn::Path) {
        if node.leading_colon.is_none() && node.segments.len() >= 2 {
            let segments: Vec<String> = node.segments.iter().map(|s| s.ident.to_string()).collect();
            self.record(&segments, node.span().start().line);
        }
        visit::visit_path(self, node);
    }

    fn visit_macro(&mut self, node: &'ast syn::Macro) {
        self.macro_tokens(node.tokens.clone());
        visit::visit_macro(self, node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules(list: &[&[&str]]) -> HashSet<Vec<String>> {
        list.iter()
            .map(|m| m.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    fn segs(s: &str) -> Vec<String> {
        s.split("::").map(str::to_string).collect()
    }

    #[test]
    fn collects_uses_paths_and_macro_paths() {
        let mods = modules(&[&[], &["a"], &["a", "b"], &["c"]]);
        let src = r#"
            use crate::c::{Thing, other as renamed};
            use super::sibling::*;
            use std::fmt;
            fn f() { let _ = crate::c::make(); format!("{}", crate::a::b::NAME); m!($crate::no::Such); }
            #[cfg(test)] mod tests { use crate::c::TestOnly; }
        "#;
        let uses = collect(src, &segs("a::b"), &mods).unwrap();
        let refs: Vec<String> = uses
            .references
            .iter()
            .map(|r| r.segments.join("::"))
            .collect();
        assert!(refs.contains(&"c::Thing".to_string()));
        assert!(refs.contains(&"c::other".to_string()));
        assert!(refs.contains(&"a::sibling".to_string()));
        assert!(refs.contains(&"c::make".to_string()));
        assert!(refs.contains(&"a::b::NAME".to_string()));
        assert!(!refs
            .iter()
            .any(|r| r.contains("TestOnly") || r.contains("fmt") || r.contains("no::Such")));
        let renamed = uses.aliases.iter().find(|a| a.name == "renamed").unwrap();
        assert_eq!(renamed.target, Some(segs("c::other")));
        let std_alias = uses.aliases.iter().find(|a| a.name == "fmt").unwrap();
        assert_eq!(std_alias.target, None);
    }

    #[test]
    fn child_modules_resolve_relative_to_the_file() {
        let mods = modules(&[&[], &["any"], &["any", "view"]]);
        let uses = collect("pub use any::Any; use view::X;", &[], &mods).unwrap();
        let refs: Vec<String> = uses
            .references
            .iter()
            .map(|r| r.segments.join("::"))
            .collect();
        assert_eq!(refs, vec!["any::Any".to_string()]);
    }

    #[test]
    fn a_local_macro_reexported_by_use_is_followed() {
        let mods = modules(&[&[], &["m"], &["m", "steps"], &["m", "hooks"]]);
        let steps = collect(
            "macro_rules! attempt { () => {} } pub(crate) use attempt; mod inner { pub fn f() {} } use inner::f;",
            &segs("m::steps"),
            &mods,
        )
        .unwrap();
        // Defined here: no alias that would send a lookup back to itself.
        assert!(!steps.aliases.iter().any(|a| a.name == "attempt"));
        let inner = steps.aliases.iter().find(|a| a.name == "f").unwrap();
        assert_eq!(inner.target, Some(segs("m::steps::inner::f")));
        let hooks = collect("use super::steps::attempt;", &segs("m::hooks"), &mods).unwrap();
        assert_eq!(hooks.references[0].segments, segs("m::steps::attempt"));
    }

    #[test]
    fn reports_unparsable_files_with_a_line() {
        let err = collect("fn f( {", &[], &HashSet::new()).unwrap_err();
        assert!(err.starts_with("line 1:"), "{err}");
    }
}
