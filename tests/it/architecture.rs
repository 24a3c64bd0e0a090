//! The house rules of ARCHITECTURE.md, checked on the source: the stages form no circle
//! (a lower stage never names a higher one), no circle between sibling modules of a folder,
//! at most 13 top-level modules, no function over 120 lines and no file over 900 code lines.
//!
//! The check reads `src/` as text: every `crate::…`, `super::…` and `self::…` path outside
//! comments and `#[cfg(test)] mod tests`, braces of `use` trees expanded one level, is an
//! edge to the longest module it names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The stages, lowest first. A module may name its own stage and the ones before it.
/// `cli` and `fluent` are two front ends at the top; neither names the other.
const LAYERS: &[&[&str]] = &[
    &["shared"],
    &["spec"],
    &["transcript"],
    &["workspace"],
    &["sandbox"],
    &["gateway"],
    &["agent"],
    &["assertions"],
    &["verdict"],
    &["run"],
    &["report"],
    &["cli", "fluent"],
];

/// The longest function allowed in `src/`, in lines.
const MAX_FN_LINES: usize = 120;

/// The longest file allowed in `src/`, in code lines: lines that are neither blank nor a
/// comment, unit tests apart (a `tests.rs` file, or a file's `#[cfg(test)] mod tests`).
const MAX_FILE_CODE_LINES: usize = 900;

type Module = Vec<String>;

fn src() -> PathBuf {
    super::support::root().join("src")
}

/// Every module of the crate, by path (`["run", "one"]`), with its file.
fn modules() -> BTreeMap<Module, PathBuf> {
    let mut found = BTreeMap::new();
    let root = src();
    for entry in ignore::WalkBuilder::new(&root).build().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(&root).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            parts.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            parts.pop();
        }
        found.insert(parts, path.to_owned());
    }
    found
}

/// The code of a file without comments and without its unit tests.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    let line_comment = regex::Regex::new(r"^\s*//").unwrap();
    text.lines()
        .filter(|l| !line_comment.is_match(l))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths `code` (of module `me`) names.
fn named_paths(code: &str, me: &Module) -> Vec<Module> {
    let path =
        regex::Regex::new(r"\b(crate|super|self)((?:::[A-Za-z_0-9]+)*)(::\{[^;]*?\})?").unwrap();
    let mut out = Vec::new();
    for m in path.captures_iter(code) {
        let mut rest: Vec<String> = m[2]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let mut start: Module = match &m[1] {
            "crate" => Vec::new(),
            "self" => me.clone(),
            _ => me[..me.len().saturating_sub(1)].to_vec(),
        };
        while rest.first().is_some_and(|s| s == "super") {
            rest.remove(0);
            start.pop();
        }
        start.extend(rest);
        match m.get(3) {
            None => out.push(start),
            Some(group) => {
                let inner = &group.as_str()[3..group.as_str().len() - 1];
                for item in inner.split(',') {
                    let first = item.trim().split("::").next().unwrap_or("").trim();
                    let first = first.split_whitespace().next().unwrap_or("");
                    let mut p = start.clone();
                    if !first.is_empty() && first != "self" && !first.starts_with('{') {
                        p.push(first.to_owned());
                    }
                    out.push(p);
                }
            }
        }
    }
    out
}

/// The longest module `path` names, if any.
fn module_of<'a>(path: &Module, modules: &'a BTreeMap<Module, PathBuf>) -> Option<&'a Module> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get_key_value(&path[..n]).map(|(k, _)| k))
}

/// Every edge between modules of the crate.
fn edges() -> BTreeSet<(Module, Module)> {
    let modules = modules();
    let mut edges = BTreeSet::new();
    for (me, file) in &modules {
        for path in named_paths(&code(file), me) {
            if let Some(target) = module_of(&path, &modules)
                && target != me
            {
                edges.insert((me.clone(), target.clone()));
            }
        }
    }
    edges
}

fn layer(top: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&top))
}

#[test]
fn a_lower_stage_never_names_a_higher_one() {
    let mut wrong = Vec::new();
    for (from, to) in edges() {
        let (Some(a), Some(b)) = (from.first(), to.first()) else {
            continue;
        };
        if a == b {
            continue;
        }
        match (layer(a), layer(b)) {
            (Some(la), Some(lb)) if lb < la => {}
            (Some(_), Some(_)) => {
                wrong.push(format!("{} names {}", from.join("::"), to.join("::")))
            }
            _ => wrong.push(format!(
                "{} or {} is not a stage of ARCHITECTURE.md (add it to LAYERS and the docs)",
                a, b
            )),
        }
    }
    assert!(
        wrong.is_empty(),
        "stages named against the pipeline:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn sibling_modules_form_no_circle() {
    // An edge between two modules of one folder, as their children of the folder.
    let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (from, to) in edges() {
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if common == from.len() || common == to.len() {
            continue; // a folder's mod.rs and its own children
        }
        graph
            .entry(from[..=common].to_vec())
            .or_default()
            .insert(to[..=common].to_vec());
    }
    let circles = strongly_connected(&graph);
    assert!(
        circles.is_empty(),
        "circles between sibling modules:\n{}",
        circles
            .iter()
            .map(|c| c
                .iter()
                .map(|m| m.join("::"))
                .collect::<Vec<_>>()
                .join(" ↔ "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn at_most_thirteen_top_level_modules() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let top: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
        })
        .collect();
    assert!(top.len() <= 13, "{} top-level modules: {top:?}", top.len());
    for m in &top {
        let name = m.trim_end_matches(';');
        assert!(
            layer(name).is_some(),
            "`{name}` is not a stage of ARCHITECTURE.md"
        );
    }
}

#[test]
fn no_function_is_over_120_lines() {
    let start =
        regex::Regex::new(r"^\s*(pub(\([a-z]+\))? )?(async )?(const )?fn ([a-z_0-9]+)").unwrap();
    let mut long = Vec::new();
    for file in modules().values() {
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = match text.find("#[cfg(test)]\nmod tests") {
            Some(at) => text[..at].lines().collect(),
            None => text.lines().collect(),
        };
        for (i, line) in lines.iter().enumerate() {
            let Some(m) = start.captures(line) else {
                continue;
            };
            let mut depth = 0i32;
            let mut opened = false;
            let mut end = i;
            for (j, l) in lines.iter().enumerate().skip(i) {
                let l = strip_literals(l);
                depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
                opened |= l.contains('{');
                end = j;
                if (opened && depth <= 0) || (!opened && l.trim_end().ends_with(';')) {
                    break;
                }
            }
            let n = end - i + 1;
            if n > MAX_FN_LINES {
                long.push(format!(
                    "{}:{} `{}`: {n} lines",
                    file.display(),
                    i + 1,
                    &m[5]
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn no_file_is_over_900_code_lines() {
    let mut long = Vec::new();
    for (module, file) in modules() {
        if module.iter().any(|part| part == "tests") {
            continue;
        }
        let n = code(&file).lines().filter(|l| !l.trim().is_empty()).count();
        if n > MAX_FILE_CODE_LINES {
            long.push(format!("{}: {n} code lines", file.display()));
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_CODE_LINES} code lines (split them by what they read or do):\n{}",
        long.join("\n")
    );
}

/// A line without string and char literals and without its comment, for brace counting.
fn strip_literals(line: &str) -> String {
    static LITERALS: std::sync::LazyLock<(regex::Regex, regex::Regex)> =
        std::sync::LazyLock::new(|| {
            (
                regex::Regex::new(r#""(\\.|[^"\\])*""#).unwrap(),
                regex::Regex::new(r"'(\\.|[^'\\])'").unwrap(),
            )
        });
    let (strings, chars) = &*LITERALS;
    if !line.contains(['"', '\'', '/']) {
        return line.to_owned();
    }
    let line = strings.replace_all(line, "\"\"");
    let line = chars.replace_all(&line, "''");
    match line.find("//") {
        Some(at) => line[..at].to_owned(),
        None => line.into_owned(),
    }
}

/// The strongly connected components of more than one node (Tarjan).
fn strongly_connected(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        graph: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        found: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let nodes: BTreeSet<&Module> = graph
        .iter()
        .flat_map(|(k, vs)| std::iter::once(k).chain(vs))
        .collect();
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in nodes {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.found
}
