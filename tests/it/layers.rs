//! The library's imports, read from `src/`: its layers point one way and no modules import
//! each other in a circle. The drawing of the layers is a snapshot (`snapshots/layers.snap`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The library's top-level modules, lowest first: each may use only those before it.
const LAYERS: &[&str] = &[
    "strings",
    "js",
    "error",
    "sys",
    "parallel",
    "exec",
    "input",
    "ranges",
    "model",
    "sourcemap",
    "lines",
    "estimate",
    "schedule",
    "view",
    "tree",
    "diff",
    "output",
    "timeline",
];

type Module = Vec<String>;

/// Every library file as its module path (`model/trace/mod.rs` → `[model, trace]`), with its
/// code: comment lines and the `#[cfg(test)]` module at its end left out (tests may reach
/// anywhere), as are the command's wing and the crate roots.
fn library() -> BTreeMap<Module, String> {
    fn walk(dir: &Path, out: &mut BTreeMap<Module, String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
                continue;
            }
            let rel = p.strip_prefix("src").unwrap().with_extension("");
            let mut m: Module = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            if m[0] == "cli" || m == ["main"] || m == ["lib"] || m.last().unwrap() == "tests" {
                continue;
            }
            if m.last().unwrap() == "mod" {
                m.pop();
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
            let code: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
            out.insert(m, code.join("\n"));
        }
    }
    let mut out = BTreeMap::new();
    walk(Path::new("src"), &mut out);
    out
}

/// The names `lib.rs` re-exports, by the module they come from (`Config` is its own: `lib`).
fn reexports() -> BTreeMap<String, String> {
    let lib = std::fs::read_to_string("src/lib.rs").unwrap();
    let mut out = BTreeMap::new();
    for line in lib.lines().filter_map(|l| l.strip_prefix("pub use ")) {
        let (module, names) = line.trim_end_matches(';').split_once("::").unwrap();
        let names = names.rsplit("::").next().unwrap().trim_matches(|c| c == '{' || c == '}');
        for n in names.split(", ") {
            out.insert(n.to_owned(), module.to_owned());
        }
    }
    out
}

/// The modules `code` (of module `m`) names: `crate::a::b`, `super::x`, `crate::Name`.
fn imports(
    m: &Module,
    code: &str,
    known: &BTreeMap<Module, String>,
    lib: &BTreeMap<String, String>,
) -> BTreeSet<Module> {
    let mut out = BTreeSet::new();
    let bytes = code.as_bytes();
    for (at, head) in code.match_indices("crate::").chain(code.match_indices("super::")) {
        if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
            continue;
        }
        let rest = &code[at + head.len()..];
        let path: Vec<&str> = if let Some(list) = rest.strip_prefix('{') {
            // `crate::{a::b, C}`: each item's first segment.
            let mut depth = 0;
            let end = list
                .char_indices()
                .find(|&(_, c)| {
                    depth += (c == '{') as i32 - (c == '}') as i32;
                    depth < 0
                })
                .map_or(list.len(), |(i, _)| i);
            let mut firsts = Vec::new();
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in list[..end].char_indices().chain([(end, ',')]) {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        firsts.push(list[start..i].trim().split("::").next().unwrap());
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            for first in firsts.into_iter().filter(|f| !f.is_empty()) {
                out.extend(target(m, vec![head.trim_end_matches(':'), first], known, lib));
            }
            continue;
        } else {
            code[at..]
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap()
                .split("::")
                .collect()
        };
        out.extend(target(m, path, known, lib));
    }
    out
}

/// The module a path names, seen from module `m`: None for `m` itself, a module it is part
/// of, or a name that is no module's.
fn target(
    m: &Module,
    path: Vec<&str>,
    known: &BTreeMap<Module, String>,
    lib: &BTreeMap<String, String>,
) -> Option<Module> {
    {
        let mut full: Module = if path[0] == "crate" {
            Vec::new()
        } else {
            // `super` from `a/b.rs` (module [a, b]) is `a`.
            m[..m.len() - 1].to_vec()
        };
        for seg in &path[1..] {
            match *seg {
                "super" => {
                    full.pop();
                }
                "" => break,
                s => full.push(s.to_owned()),
            }
        }
        // The longest known module the path lies in; a name `lib.rs` defines is `lib`.
        let target = (1..=full.len()).rev().map(|n| full[..n].to_vec()).find(|p| known.contains_key(p));
        let target = match target {
            Some(t) => t,
            None => match full.first() {
                Some(name)
                    if name.starts_with(|c: char| c.is_ascii_uppercase())
                        || name == "analyze"
                        || name == "assemble" =>
                {
                    vec![lib.get(name).cloned().unwrap_or_else(|| "lib".to_owned())]
                }
                _ => return None,
            },
        };
        // A module's parts may use the module they are parts of.
        (!m.starts_with(&target)).then_some(target)
    }
}

fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let known = library();
    let lib = reexports();
    known.iter().map(|(m, code)| (m.clone(), imports(m, code, &known, &lib))).collect()
}

#[test]
fn layers_point_one_way() {
    let g = graph();
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut up = Vec::new();
    let mut drawing = BTreeMap::<&str, BTreeSet<&str>>::new();
    for (m, uses) in &g {
        let from = m[0].as_str();
        assert!(rank(from).is_some(), "src/{from} is in no layer: add it to LAYERS");
        for u in uses {
            let to = u[0].as_str();
            if to == from {
                continue;
            }
            drawing.entry(from).or_default().insert(to);
            match rank(to) {
                Some(r) if r < rank(from).unwrap() => {}
                _ => up.push(format!("{} -> {}", m.join("/"), u.join("/"))),
            }
        }
    }
    assert!(up.is_empty(), "imports against the layers (or of lib.rs's own items):\n{}", up.join("\n"));
    let mut text = String::new();
    for l in LAYERS.iter().rev() {
        let uses: Vec<&str> = drawing.get(l).map(|u| u.iter().copied().collect()).unwrap_or_default();
        text.push_str(&format!("{l:<9} -> {}\n", uses.join(" ")));
    }
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_snapshot!("layers", text));
}

#[test]
fn no_modules_import_each_other_in_a_circle() {
    let g = graph();
    // Tarjan's strongly connected components, iteratively.
    let nodes: Vec<&Module> = g.keys().collect();
    let index_of: BTreeMap<&Module, usize> = nodes.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let edges: Vec<Vec<usize>> =
        nodes.iter().map(|m| g[*m].iter().filter_map(|u| index_of.get(u).copied()).collect()).collect();
    let n = nodes.len();
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut next, mut circles) = (Vec::new(), 0, Vec::new());
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0)];
        while let Some((v, k)) = work.pop() {
            if k == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = edges[v].get(k) {
                work.push((v, k + 1));
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                loop {
                    let w = stack.pop().unwrap();
                    on[w] = false;
                    comp.push(nodes[w].join("/"));
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    circles.push(comp);
                }
            }
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
        }
    }
    assert!(circles.is_empty(), "modules that import each other: {circles:?}");
}

/// The test reads what it should: a module known to import another is seen to.
#[test]
fn the_reading_sees_imports() {
    let g = graph();
    let of = |m: &str| g[&m.split('/').map(str::to_owned).collect::<Module>()].clone();
    assert!(of("model/trace").contains(&vec!["model".to_owned(), "nodes".to_owned()]));
    assert!(of("input/document").contains(&vec!["input".to_owned(), "sink".to_owned()]));
    assert!(of("estimate").iter().any(|u| u[0] == "model"));
}
