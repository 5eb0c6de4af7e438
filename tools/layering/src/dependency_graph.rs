//! The file-to-file dependency graph of one crate and the checks on it: no
//! file names a module of a higher layer, no files form an import circle,
//! and no folders do — at every level of the module tree, the children of
//! one module (a file, or a folder taken whole with everything under it)
//! depend on each other one way. Circles are the strongly connected
//! components of more than one node, found with an iterative Tarjan walk.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::layer_spec::CrateLayers;
use crate::module_tree::ModuleFile;
use crate::use_paths::{Alias, FileUses};

/// How many re-exports a path may pass through before we give up (a `use`
/// loop is a compile error, but the checker must not trust its input).
const MAX_ALIAS_HOPS: usize = 64;

/// One edge: `from` names `to` at `line` of `from`'s file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub from: usize,
    pub to: usize,
    pub line: usize,
}

pub struct Graph {
    pub files: Vec<ModuleFile>,
    /// Deduplicated by (from, to); the first line that names the target.
    pub edges: Vec<Edge>,
}

/// Builds the graph from each file's collected uses (`uses[i]` for `files[i]`).
pub fn build(files: Vec<ModuleFile>, uses: &[FileUses]) -> Graph {
    let index_of: HashMap<Vec<String>, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.module.clone(), i))
        .collect();
    let mut aliases: HashMap<(Vec<String>, String), Option<Vec<String>>> = HashMap::new();
    for Alias {
        module,
        name,
        target,
    } in uses.iter().flat_map(|u| &u.aliases)
    {
        if name != "*" {
            aliases
                .entry((module.clone(), name.clone()))
                .or_insert_with(|| target.clone());
        }
    }
    let mut seen: HashSet<(usize, usize)> = HashSet::new();
    let mut edges = Vec::new();
    for (from, file_uses) in uses.iter().enumerate() {
        for reference in &file_uses.references {
            let Some(to) = resolve(&reference.segments, &index_of, &aliases) else {
                continue;
            };
            if to != from && seen.insert((from, to)) {
                edges.push(Edge {
                    from,
                    to,
                    line: reference.line,
                });
            }
        }
    }
    edges.sort();
    Graph { files, edges }
}

/// The file that defines what `segments` names, following re-exports.
fn resolve(
    segments: &[String],
    index_of: &HashMap<Vec<String>, usize>,
    aliases: &HashMap<(Vec<String>, String), Option<Vec<String>>>,
) -> Option<usize> {
    let mut current = segments.to_vec();
    for _ in 0..MAX_ALIAS_HOPS {
        let prefix_len = (0..=current.len())
            .rev()
            .find(|&n| index_of.contains_key(&current[..n]))?;
        let module = current[..prefix_len].to_vec();
        if prefix_len == current.len() {
            return index_of.get(&module).copied();
        }
        // A name bound by `use` inside the module (possibly an inline
        // submodule of the file, hence the longer keys tried first).
        let alias = (prefix_len..current.len()).rev().find_map(|end| {
            aliases
                .get(&(current[..end].to_vec(), current[end].clone()))
                .map(|t| (end, t))
        });
        match alias {
            Some((end, Some(target))) => {
                current = target.iter().chain(&current[end + 1..]).cloned().collect();
            }
            // Re-exported from outside the crate: no edge.
            Some((_, None)) => return None,
            None => return index_of.get(&module).copied(),
        }
    }
    None
}

/// A use of a higher layer from a lower one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerViolation {
    pub edge: Edge,
    pub from_layer: String,
    pub to_layer: String,
}

/// Checks each edge against the layer order; also reports top-level
/// modules that belong to no layer.
pub fn layer_violations(
    graph: &Graph,
    layers: &CrateLayers,
) -> (Vec<LayerViolation>, BTreeSet<String>) {
    let mut unlisted = BTreeSet::new();
    let rank = |file: &ModuleFile, unlisted: &mut BTreeSet<String>| -> Option<usize> {
        let top = file.module.first()?; // the crate root is the map, above all layers
        let rank = layers.rank(top);
        if rank.is_none() {
            unlisted.insert(top.clone());
        }
        rank
    };
    let mut violations = Vec::new();
    for file in &graph.files {
        rank(file, &mut unlisted);
    }
    for edge in &graph.edges {
        let (Some(from), Some(to)) = (
            rank(&graph.files[edge.from], &mut unlisted),
            rank(&graph.files[edge.to], &mut unlisted),
        ) else {
            continue;
        };
        // Rank 0 is the top layer: naming a smaller rank is naming upward.
        if to < from {
            violations.push(LayerViolation {
                edge: edge.clone(),
                from_layer: layers.layers[from].clone(),
                to_layer: layers.layers[to].clone(),
            });
        }
    }
    (violations, unlisted)
}

/// Import circles: each strongly connected component of more than one
/// file, files in path order.
pub fn circles(graph: &Graph) -> Vec<Vec<usize>> {
    let mut successors = vec![Vec::new(); graph.files.len()];
    for edge in &graph.edges {
        successors[edge.from].push(edge.to);
    }
    let mut components = strongly_connected(&successors);
    for component in &mut components {
        component.sort_by(|a, b| graph.files[*a].path.cmp(&graph.files[*b].path));
    }
    components.sort();
    components
}

/// A circle among the children of one module: `members` (child names, in
/// order) each reach the next through `edges`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderCircle {
    /// The module whose children they are; empty for the crate root.
    pub parent: Vec<String>,
    pub members: Vec<String>,
    /// Each (from member, to member) once, with the first file edge behind it.
    pub edges: Vec<(String, String, Edge)>,
}

/// Circles among the children of each module that has a folder among its
/// children: a folder stands for every file under it. A circle of files
/// alone is left to [`circles`].
pub fn folder_circles(graph: &Graph) -> Vec<FolderCircle> {
    let parents: BTreeSet<Vec<String>> = graph
        .files
        .iter()
        .flat_map(|f| (0..f.module.len().saturating_sub(1)).map(|n| f.module[..n].to_vec()))
        .collect();
    let mut found = Vec::new();
    for parent in parents {
        // Child name of each file under `parent` (not `parent`'s own file).
        let child_of = |file| child_name(&parent, file);
        let names: Vec<String> = graph
            .files
            .iter()
            .filter_map(child_of)
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let folders: HashSet<&String> = graph
            .files
            .iter()
            .filter(|f| f.module.len() > parent.len() + 1)
            .filter_map(child_of)
            .collect();
        let node: HashMap<&String, usize> = names.iter().enumerate().map(|(i, n)| (n, i)).collect();
        let mut successors = vec![Vec::new(); names.len()];
        let mut first_edge: HashMap<(usize, usize), &Edge> = HashMap::new();
        for edge in &graph.edges {
            let (Some(from), Some(to)) = (
                child_of(&graph.files[edge.from]),
                child_of(&graph.files[edge.to]),
            ) else {
                continue;
            };
            let (from, to) = (node[from], node[to]);
            if from != to && !first_edge.contains_key(&(from, to)) {
                first_edge.insert((from, to), edge);
                successors[from].push(to);
            }
        }
        for mut component in strongly_connected(&successors) {
            if !component.iter().any(|&c| folders.contains(&names[c])) {
                continue;
            }
            component.sort();
            let members: HashSet<usize> = component.iter().copied().collect();
            let mut edges: Vec<(String, String, Edge)> = first_edge
                .iter()
                .filter(|((f, t), _)| members.contains(f) && members.contains(t))
                .map(|(&(f, t), &e)| (names[f].clone(), names[t].clone(), e.clone()))
                .collect();
            edges.sort();
            found.push(FolderCircle {
                parent: parent.clone(),
                members: component.iter().map(|&c| names[c].clone()).collect(),
                edges,
            });
        }
    }
    found
}

/// The child of `parent` that `file` lies in (`None` for `parent`'s own
/// file and files elsewhere).
fn child_name<'f>(parent: &[String], file: &'f ModuleFile) -> Option<&'f String> {
    (file.module.len() > parent.len() && file.module[..parent.len()] == *parent)
        .then(|| &file.module[parent.len()])
}

/// The strongly connected components of more than one node.
fn strongly_connected(successors: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = successors.len();
    const UNVISITED: usize = usize::MAX;
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next_index = 0;
    let mut components = Vec::new();
    for root in 0..n {
        if index[root] != UNVISITED {
            continue;
        }
        // Each frame: (node, position in its successor list).
        let mut frames = vec![(root, 0usize)];
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (node, ref mut position)) = frames.last_mut() {
            if let Some(&next) = successors[node].get(*position) {
                *position += 1;
                if index[next] == UNVISITED {
                    index[next] = next_index;
                    low[next] = next_index;
                    next_index += 1;
                    stack.push(next);
                    on_stack[next] = true;
                    frames.push((next, 0));
                } else if on_stack[next] {
                    low[node] = low[node].min(index[next]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index[node] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    components.push(component);
                }
            }
        }
    }
    components
}
