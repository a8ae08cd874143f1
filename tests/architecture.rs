//! The invariants of ARCHITECTURE.md that a reading of the source can check:
//! the engine names no web crate, and its top-level modules import one
//! another without cycles. (Native only: it reads `src/` from the checkout.)
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ENGINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/engine");

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// A line without its `//` comment (doc links name modules too).
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

/// Identifiers that follow `prefix` in `s` (`crate::engine::cost` → `cost`).
fn after<'a>(s: &'a str, prefix: &str) -> Vec<&'a str> {
    s.match_indices(prefix)
        .filter(|(i, _)| {
            // `super::` must not be the tail of `super::super::`'s first half
            // when the caller asks for the plain prefix.
            *i == 0 || !s[..*i].ends_with("::")
        })
        .map(|(i, _)| {
            let rest = &s[i + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

/// Top-level engine module → the engine modules it uses.
fn engine_imports() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(ENGINE);
    let mut modules: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if name == "mod" {
            continue;
        }
        let files = if p.is_dir() { rust_files(&p) } else { vec![p] };
        modules.insert(name, files);
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, files) in &modules {
        let edges = graph.entry(m.clone()).or_default();
        for f in files {
            // In `engine/x.rs` and `engine/x/mod.rs`, `super::` is the engine;
            // deeper down it takes `super::super::`.
            let depth = f.strip_prefix(root).unwrap().components().count();
            let is_mod = f.file_name().is_some_and(|n| n == "mod.rs");
            let up = if depth == 1 || (depth == 2 && is_mod) {
                "super::"
            } else {
                "super::super::"
            };
            for line in std::fs::read_to_string(f).unwrap().lines() {
                let s = code(line);
                for x in after(s, "crate::engine::").into_iter().chain(after(s, up)) {
                    if x != m && modules.contains_key(x) {
                        edges.insert(x.to_string());
                    }
                }
            }
        }
    }
    graph
}

/// Strongly connected components of more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'g> {
        g: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    impl<'g> T<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on.insert(v);
            for w in &self.g[v] {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let l = self.low[v].min(self.low[w]);
                    self.low.insert(v, l);
                } else if self.on.contains(w) {
                    let l = self.low[v].min(self.index[w]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    comp.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

#[test]
fn engine_modules_import_without_cycles() {
    let graph = engine_imports();
    // The reader sees the edges it must see (else an empty graph passes).
    assert!(graph["plan"].contains("cost"), "{:?}", graph["plan"]);
    assert!(graph["execute"].contains("wire"), "{:?}", graph["execute"]);
    assert!(graph["compressed"].contains("execute"));
    assert_eq!(cycles(&graph), Vec::<Vec<String>>::new(), "{graph:#?}");
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        g.entry(a.into()).or_default().insert(b.into());
        g.entry(b.into()).or_default();
    }
    assert_eq!(cycles(&g), vec![vec!["a", "b", "c"]]);
}

#[test]
fn the_engine_names_no_web_crate() {
    let web = ["web_sys", "wasm_bindgen", "js_sys", "yew", "gloo"];
    for f in rust_files(Path::new(ENGINE)) {
        for (n, line) in std::fs::read_to_string(&f).unwrap().lines().enumerate() {
            let s = code(line);
            for w in web {
                assert!(
                    !s.contains(&format!("{w}::")),
                    "{}:{}: the engine names {w}: {line}",
                    f.display(),
                    n + 1
                );
            }
        }
    }
}
