//! The layering docs/architecture.md describes, checked over the source:
//! within each crate, no top-level module imports one that imports it back (directly or
//! through others). A cycle makes two modules one in all but name, and is how a crate
//! stops being readable in one sitting.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const CRATES: &[&str] = &["core", "io", "protocol", "daemon", "judged", "cli", "jury", "hook-shims", "mcp"];

/// Every `.rs` file under `src`.
fn rust_files(src: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).expect("read src") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found
}

/// The top-level module each `.rs` file under `src` belongs to, with its text.
fn sources(src: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for path in rust_files(src) {
        let relative = path.strip_prefix(src).expect("under src");
        let first = relative.components().next().expect("a component");
        let module = first.as_os_str().to_string_lossy().trim_end_matches(".rs").to_owned();
        if module != "lib" && module != "main" {
            found.push((module, fs::read_to_string(&path).expect("read source")));
        }
    }
    found
}

/// The modules of the same crate that `text` names through `crate::`, ignoring comments
/// (doc links are not imports) and the unit tests at the end of a file. A group
/// (`crate::{a::X, b}`) may span lines and nest.
fn imports(text: &str) -> BTreeSet<String> {
    let code = code_of(text);
    let mut named = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => named.extend(top_level_items(group).into_iter().map(first_segment)),
            None => {
                named.insert(first_segment(rest));
            }
        }
    }
    named.retain(|n| !n.is_empty() && n != "self");
    named
}

/// The code of a source file: its comments (doc links are not imports) and the unit tests
/// at its end left out.
fn code_of(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    code.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// The items of a `{…}` group up to its closing brace, split at its own commas only.
fn top_level_items(group: &str) -> Vec<&str> {
    let (mut items, mut depth, mut from) = (Vec::new(), 0, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[from..i]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    items
}

fn first_segment(path: &str) -> String {
    path.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// A cycle through `start`, as the modules on it, if there is one.
fn cycle_through(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![vec![start.to_owned()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().expect("non-empty");
        for next in graph.get(last).into_iter().flatten() {
            if next == start {
                let mut cycle = path.clone();
                cycle.push(start.to_owned());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push(longer);
            }
        }
    }
    None
}

fn cycles(src: &Path) -> Vec<String> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in sources(src) {
        let edges = graph.entry(module.clone()).or_default();
        edges.extend(imports(&text).into_iter().filter(|m| *m != module));
    }
    graph.keys().filter_map(|m| cycle_through(&graph, m)).map(|c| c.join(" -> ")).collect()
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for krate in CRATES {
        for cycle in cycles(&workspace.join(krate).join("src")) {
            found.push(format!("{krate}: {cycle}"));
        }
    }
    assert!(found.is_empty(), "module cycles (move the shared type to the module both use):\n{}", found.join("\n"));
}

#[test]
fn the_cycle_check_sees_a_cycle() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("lib.rs"), "pub mod a;\npub mod b;\n").expect("write");
    fs::write(dir.path().join("a.rs"), "use crate::b::B;\n/// [`crate::c`]\npub struct A;\n").expect("write");
    fs::write(dir.path().join("b.rs"), "use crate::{a::A, self};\n#[cfg(test)]\nuse crate::c;\n").expect("write");
    assert_eq!(cycles(dir.path()), ["a -> b -> a", "b -> a -> b"]);
    // A group over several lines, nested, names each of its modules.
    fs::write(dir.path().join("c.rs"), "use crate::{\n    a::{A, B},\n    d,\n};\n").expect("write");
    fs::write(dir.path().join("d.rs"), "pub fn f() { crate::c::g() }\n").expect("write");
    assert!(cycles(dir.path()).contains(&"c -> d -> c".to_owned()), "{:?}", cycles(dir.path()));
}

/// What reaches the disk or starts a process: the core's rules reach the world through
/// `Env`, and what both modes do on the disk is `judged_io`'s.
const TOUCHES_THE_WORLD: &[&str] =
    &["std::fs", "std::process::Command", "std::os::unix", "File::", "rustix", "landlock"];

/// The places in `src`'s product code (its unit-test files and modules left out) that
/// name something of [`TOUCHES_THE_WORLD`].
fn touching_the_world(src: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for path in rust_files(src).into_iter().filter(|path| path.file_name().is_some_and(|n| n != "tests.rs")) {
        let code = code_of(&fs::read_to_string(&path).expect("read source"));
        for name in TOUCHES_THE_WORLD.iter().filter(|name| code.contains(*name)) {
            found.push(format!("{}: {name}", path.display()));
        }
    }
    found.sort();
    found
}

#[test]
fn the_core_reads_no_disk_and_runs_no_process() {
    let core = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../core/src");
    let found = touching_the_world(&core);
    assert!(found.is_empty(), "the core touches the world (move it to judged_io):\n{}", found.join("\n"));
    // The check sees what it looks for.
    let io = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../io/src");
    assert!(touching_the_world(&io).iter().any(|place| place.ends_with("std::fs")));
}
