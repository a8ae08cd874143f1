//! The invariants of ARCHITECTURE.md that a reading of the source can check:
//! the engine names no web crate, and its modules import one another
//! without cycles, both between top-level modules (`plan` → `cost` →
//! `plan` through any of their files) and between any two files
//! (`cost/reference` ⇄ `cost/sliced`). (Native only: it reads `src/` from
//! the checkout.)
//!
//! A module's own file and its submodules' files may use one another
//! freely: `cost.rs` declares and calls `cost/fast.rs`, which uses the
//! `Timeline` `cost.rs` defines. Those are one module's facade and its
//! inside, so file-level edges between a file and its ancestors are not
//! counted; every other edge is, and the top-level check catches a cycle
//! that runs through a parent.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const ENGINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/engine");

/// File-level import cycles that exist on purpose, each with its reason.
/// Empty: a new cycle fails the test until it is broken or listed here.
const KNOWN_FILE_CYCLES: &[(&[&str], &str)] = &[];

/// A module's path below `engine`, `/`-separated (`cost/fast`; `plan` for
/// `plan/mod.rs`).
type Module = String;

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

/// The engine's files by module path, with their source; the engine's own
/// `mod.rs` (which only declares modules) is left out.
fn engine_sources() -> BTreeMap<Module, String> {
    let root = Path::new(ENGINE);
    let mut out = BTreeMap::new();
    for f in rust_files(root) {
        let rel = f.strip_prefix(root).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts.is_empty() {
            continue;
        }
        out.insert(parts.join("/"), std::fs::read_to_string(&f).unwrap());
    }
    out
}

/// The source with comments removed and string and char literals blanked,
/// so that neither a doc link nor a string names a module, and a `//` in a
/// string does not cut its line.
fn code_only(src: &str) -> String {
    fn ch(c: &[char], i: usize) -> char {
        c.get(i).copied().unwrap_or('\0')
    }
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        if ch(&c, i) == '/' && ch(&c, i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch(&c, i) == '/' && ch(&c, i + 1) == '*' {
            i += 2;
            while i < c.len() && !(c[i] == '*' && ch(&c, i + 1) == '/') {
                i += 1;
            }
            i += 2;
            out.push(' ');
        } else if ch(&c, i) == 'r'
            && (ch(&c, i + 1) == '"' || ch(&c, i + 1) == '#')
            && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_'))
        {
            // A raw string r"…" or r#"…"#.
            let mut k = 1;
            while ch(&c, i + k) == '#' {
                k += 1;
            }
            if ch(&c, i + k) != '"' {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let hashes = k - 1;
            i += k + 1;
            while i < c.len() {
                if c[i] == '"' && (1..=hashes).all(|h| ch(&c, i + h) == '#') {
                    i += hashes + 1;
                    break;
                }
                i += 1;
            }
            out.push_str("\"\"");
        } else if ch(&c, i) == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if ch(&c, i) == '\'' && (ch(&c, i + 1) == '\\' || ch(&c, i + 2) == '\'') {
            // A char literal ('"', '\n', '\''); otherwise a lifetime.
            i += if ch(&c, i + 1) == '\\' { 3 } else { 2 };
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The flat paths of a use tree (`a::{b, c::{self, D}}` → `a::b`, `a::c`,
/// `a::c::D`), each as its segments.
fn expand_use(tree: &str) -> Vec<Vec<String>> {
    fn rec(prefix: &[String], t: &str, out: &mut Vec<Vec<String>>) {
        let t = t.trim();
        if t.is_empty() {
            return;
        }
        let Some(open) = t.find('{') else {
            let head = t.split(" as ").next().unwrap_or("");
            let mut p = prefix.to_vec();
            p.extend(
                head.split("::")
                    .map(str::trim)
                    .filter(|s| !s.is_empty() && *s != "self")
                    .map(String::from),
            );
            out.push(p);
            return;
        };
        let mut p = prefix.to_vec();
        p.extend(
            t[..open]
                .split("::")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from),
        );
        let body = &t[open + 1..t.rfind('}').unwrap_or(t.len())];
        let (mut depth, mut start) = (0, 0);
        for (k, ch) in body.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    rec(&p, &body[start..k], out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        rec(&p, &body[start..], out);
    }
    let mut out = Vec::new();
    rec(&[], tree, &mut out);
    out
}

/// Every path a file names: its `use` trees, flattened, and every
/// `a::b…` path in the rest of its code, each as its segments.
fn paths_in(src: &str) -> Vec<Vec<String>> {
    let code = code_only(src);
    let mut out = Vec::new();
    let mut rest = String::with_capacity(code.len());
    let mut s = code.as_str();
    // `use` items (also `pub use`, `pub(crate) use`), up to their `;`.
    while let Some(k) = s.find("use ") {
        let word_start = k == 0 || {
            let b = s.as_bytes()[k - 1];
            !(b.is_ascii_alphanumeric() || b == b'_')
        };
        let Some(end) = s[k..].find(';').map(|e| k + e) else {
            break;
        };
        if word_start {
            rest.push_str(&s[..k]);
            out.extend(expand_use(&s[k + 4..end]));
            s = &s[end + 1..];
        } else {
            rest.push_str(&s[..k + 4]);
            s = &s[k + 4..];
        }
    }
    rest.push_str(s);
    // Other paths: identifiers joined by `::`.
    let c: Vec<char> = rest.chars().collect();
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        if !(c[i].is_alphabetic() || c[i] == '_') || (i > 0 && (ident(c[i - 1]) || c[i - 1] == ':'))
        {
            i += 1;
            continue;
        }
        let mut segs = Vec::new();
        loop {
            let s0 = i;
            while i < c.len() && ident(c[i]) {
                i += 1;
            }
            segs.push(c[s0..i].iter().collect::<String>());
            if c.get(i) == Some(&':')
                && c.get(i + 1) == Some(&':')
                && c.get(i + 2)
                    .is_some_and(|&ch| ch.is_alphabetic() || ch == '_')
            {
                i += 2;
            } else {
                break;
            }
        }
        if segs.len() > 1 {
            out.push(segs);
        }
    }
    out
}

/// The engine module a path in `from` names (the longest module prefix
/// of it), if any: `crate::engine::…`, `super::…`, `self::…`, or a child
/// module of `from` by its bare name.
fn resolve(modules: &BTreeSet<Module>, from: &str, segs: &[String]) -> Option<Module> {
    let mut base: Vec<&str> = from.split('/').collect();
    let mut rest = segs;
    match segs.first().map(String::as_str)? {
        "crate" => {
            if segs.get(1).map(String::as_str) != Some("engine") {
                return None;
            }
            base.clear();
            rest = &segs[2..];
        }
        "super" | "self" => {
            while let Some(s) = rest.first().map(String::as_str) {
                match s {
                    "super" => {
                        base.pop()?;
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        first => {
            if !modules.contains(&format!("{from}/{first}")) {
                return None;
            }
        }
    }
    let full: Vec<&str> = base
        .into_iter()
        .chain(rest.iter().map(String::as_str))
        .collect();
    (1..=full.len())
        .rev()
        .map(|k| full[..k].join("/"))
        .find(|m| modules.contains(m))
}

/// Whether `a` is `b` or one of `b`'s ancestors or descendants.
fn related(a: &str, b: &str) -> bool {
    a == b || a.starts_with(&format!("{b}/")) || b.starts_with(&format!("{a}/"))
}

/// File → the engine files it uses, without the edges between a file and
/// its ancestors (the module doc says why).
fn file_graph(sources: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let modules: BTreeSet<Module> = sources.keys().cloned().collect();
    sources
        .iter()
        .map(|(m, src)| {
            let edges = paths_in(src)
                .iter()
                .filter_map(|p| resolve(&modules, m, p))
                .filter(|t| !related(t, m))
                .collect();
            (m.clone(), edges)
        })
        .collect()
}

/// Top-level module → the top-level modules its files use.
fn module_graph(sources: &BTreeMap<Module, String>) -> BTreeMap<Module, BTreeSet<Module>> {
    let top = |m: &str| m.split('/').next().unwrap_or(m).to_string();
    let modules: BTreeSet<Module> = sources.keys().cloned().collect();
    let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (m, src) in sources {
        let edges = graph.entry(top(m)).or_default();
        for t in paths_in(src).iter().filter_map(|p| resolve(&modules, m, p)) {
            if top(&t) != top(m) {
                edges.insert(top(&t));
            }
        }
    }
    graph
}

/// Strongly connected components of more than one node (Tarjan).
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
    let graph = module_graph(&engine_sources());
    // The reader sees the edges it must see (else an empty graph passes).
    assert!(graph["plan"].contains("cost"), "{:?}", graph["plan"]);
    assert!(graph["execute"].contains("wire"), "{:?}", graph["execute"]);
    assert!(graph["compressed"].contains("execute"));
    assert_eq!(cycles(&graph), Vec::<Vec<String>>::new(), "{graph:#?}");
}

#[test]
fn engine_files_import_without_cycles() {
    let graph = file_graph(&engine_sources());
    // Edges between sibling files, through `super::x`, a bare child name
    // and `crate::engine::…` (else an empty graph passes).
    assert!(graph["algorithm/hier"].contains("algorithm/ring"));
    assert!(graph["formats/nccl_json"].contains("formats/nccl_tests"));
    assert!(graph["cost/sliced"].contains("cost/reference"));
    assert!(graph["plan/bound"].contains("cost"));
    // No edge between a file and its ancestors.
    assert!(
        !graph["cost/fast"].contains("cost"),
        "{:?}",
        graph["cost/fast"]
    );
    let known: Vec<Vec<String>> = KNOWN_FILE_CYCLES
        .iter()
        .map(|(c, _)| c.iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(cycles(&graph), known, "{graph:#?}");
}

#[test]
fn the_file_reader_catches_a_cycle_between_siblings() {
    let sources: BTreeMap<Module, String> = [
        ("cost", "mod reference; mod sliced; pub use reference::X;"),
        (
            "cost/reference",
            "use super::{sliced, Timeline};\nfn f() { sliced::choose(); }",
        ),
        ("cost/sliced", "impl super::reference::Simulator {}"),
        ("plan", "use crate::engine::cost::{self, sliced::Slices};"),
    ]
    .into_iter()
    .map(|(m, s)| (m.to_string(), s.to_string()))
    .collect();
    let graph = file_graph(&sources);
    assert_eq!(
        graph["plan"],
        BTreeSet::from(["cost".into(), "cost/sliced".into()])
    );
    assert_eq!(
        cycles(&graph),
        vec![vec![
            "cost/reference".to_string(),
            "cost/sliced".to_string()
        ]]
    );
    // Comments, doc links and strings name no module.
    let quiet = "// use super::sliced;\n/// [`super::sliced`]\nconst S: &str = \"super::sliced\";";
    assert!(paths_in(quiet).is_empty(), "{:?}", paths_in(quiet));
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
            let s = line.split("//").next().unwrap_or("");
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
