//! The layer order of the core's top-level modules holds: every `crate::…` reference in `src/`
//! (and every `mcp_companion::…` one in the binary, `main.rs` and `cli/`) points at a module
//! listed before its own in README.md's "How it works" line
//!
//! ```text
//! Layers, lowest first: `net`, `secret`, …, `cli`; a module uses only modules listed before it.
//! ```
//!
//! and no two top-level modules use each other, directly or around a cycle. References are
//! read from code only: comments (doc links included) and string literals are skipped, so a
//! doc comment may still point anywhere. The test also fails when a top-level module is
//! missing from the line, or the line names a module that does not exist, so a new room must
//! take its place in the order before it builds green.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One reference from a file to another top-level module.
#[derive(Debug)]
struct Reference {
    from: String,
    to: String,
    /// `src/…/file.rs:line`.
    at: String,
}

#[test]
fn every_module_uses_only_modules_of_lower_layers_and_none_use_each_other_in_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let layers = layer_line(&readme).unwrap_or_else(|e| panic!("README.md: {e}"));
    let rank: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), i))
        .collect();

    let src = root.join("src");
    let modules = top_level_modules(&src);
    let mut problems = Vec::new();
    for m in &modules {
        if !rank.contains_key(m.as_str()) {
            problems.push(format!(
                "module `{m}` is not in README.md's layer line: give it its place"
            ));
        }
    }
    for m in &layers {
        if !modules.contains(m) {
            problems.push(format!(
                "README.md's layer line names `{m}`, which is no top-level module of src/"
            ));
        }
    }

    let references = references(&src, &modules);
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for r in &references {
        graph.entry(&r.from).or_default().insert(&r.to);
        if let (Some(from), Some(to)) = (rank.get(r.from.as_str()), rank.get(r.to.as_str()))
            && to > from
        {
            problems.push(format!(
                "{}: `{}` uses `{}`, which is listed after it (a higher layer)",
                r.at, r.from, r.to
            ));
        }
    }
    for cycle in cycles(&graph) {
        problems.push(format!("modules use each other: {}", cycle.join(" → ")));
    }
    assert!(
        problems.is_empty(),
        "the layering is broken:\n  {}",
        problems.join("\n  ")
    );
    // The test reads something: the lowest and the highest layer are both used.
    assert!(
        references.iter().any(|r| r.from == "cli"),
        "no reference read"
    );
}

/// The module names of README.md's layer line, lowest first.
fn layer_line(readme: &str) -> Result<Vec<String>, String> {
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("How it works"))
        .ok_or("no \"## How it works\" section")?;
    let line = section
        .lines()
        .find(|l| l.starts_with("Layers, lowest first: "))
        .ok_or("no line \"Layers, lowest first: …\" in \"How it works\"")?;
    let list = line["Layers, lowest first: ".len()..]
        .split_once(';')
        .ok_or("the layer line has no `;` after its list")?
        .0;
    let names: Vec<String> = list
        .split(',')
        .map(|n| n.trim().trim_matches('`').to_owned())
        .collect();
    if names.iter().any(|n| n.is_empty()) {
        return Err(format!("an empty name in the layer line: {line}"));
    }
    Ok(names)
}

/// The top-level modules of the core: every `src/<name>.rs` and `src/<name>/` except the crate
/// roots, plus `cli`, the binary's own module (`main.rs` counts as part of it).
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    let mut modules = BTreeSet::from(["cli".to_owned()]);
    for entry in std::fs::read_dir(src).expect("src/") {
        let path = entry.expect("src/ entry").path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if path.is_dir() {
            modules.insert(name.to_owned());
        } else if let Some(stem) = name.strip_suffix(".rs")
            && stem != "lib"
            && stem != "main"
        {
            modules.insert(stem.to_owned());
        }
    }
    modules
}

/// Every reference to another top-level module in the code of `src/`.
fn references(src: &Path, modules: &BTreeSet<String>) -> Vec<Reference> {
    let mut found = Vec::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).expect("under src/");
        let first = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("a file name");
        let from = match first.strip_suffix(".rs").unwrap_or(first) {
            // The crate root only declares the modules.
            "lib" => continue,
            "main" => "cli",
            other => other,
        };
        let text = std::fs::read_to_string(&file).expect("a Rust file");
        for (line, to) in crate_paths(&code_only(&text)) {
            if to != from && modules.contains(&to) {
                found.push(Reference {
                    from: from.to_owned(),
                    to,
                    at: format!("src/{}:{line}", rel.display()),
                });
            }
        }
    }
    found
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a directory") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// `text` with comments removed and string and character literals emptied; newlines are kept,
/// so line numbers stay right.
fn code_only(text: &str) -> String {
    let s = text.as_bytes();
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    while i < s.len() {
        match s[i] {
            b'/' if s.get(i + 1) == Some(&b'/') => {
                while i < s.len() && s[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if s.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < s.len() {
                    if s[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if s[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if s[i] == b'\n' {
                            out.push(b'\n');
                        }
                        i += 1;
                    }
                }
            }
            b'r' if (i == 0 || !ident(s[i - 1]))
                && matches!(s.get(i + 1), Some(b'"') | Some(b'#')) =>
            {
                // A raw string r"…" / r#"…"#; `r#ident` is a raw identifier.
                let hashes = s[i + 1..].iter().take_while(|&&b| b == b'#').count();
                if s.get(i + 1 + hashes) != Some(&b'"') {
                    out.push(s[i]);
                    i += 1;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"')
                    .chain(std::iter::repeat_n(b'#', hashes))
                    .collect();
                i += 2 + hashes;
                while i < s.len() && !s[i..].starts_with(&close) {
                    if s[i] == b'\n' {
                        out.push(b'\n');
                    }
                    i += 1;
                }
                i += close.len();
                out.extend_from_slice(b"\"\"");
            }
            b'"' => {
                i += 1;
                while i < s.len() && s[i] != b'"' {
                    if s[i] == b'\\' {
                        i += 1;
                    }
                    if s.get(i) == Some(&b'\n') {
                        out.push(b'\n');
                    }
                    i += 1;
                }
                i += 1;
                out.extend_from_slice(b"\"\"");
            }
            b'\'' => {
                // A character literal ('x', '\n', '\u{1F600}', '"'), else a lifetime.
                let end = if s.get(i + 1) == Some(&b'\\') {
                    s[i + 2..]
                        .iter()
                        .position(|&b| b == b'\'')
                        .map(|p| i + 2 + p)
                } else {
                    // `'` is ASCII, so `i + 1` is a character boundary of `text`.
                    let len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    (s.get(i + 1 + len) == Some(&b'\'')).then_some(i + 1 + len)
                };
                match end {
                    Some(end) => {
                        out.extend_from_slice(b"' '");
                        i = end + 1;
                    }
                    None => {
                        out.push(b'\'');
                        i += 1;
                    }
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The first path segment after each `crate::` / `mcp_companion::` in `code`, with its line:
/// `crate::hub::Hub` gives `hub`; `crate::{hub::Hub, net}` gives `hub` and `net`.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let s = code.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let newlines: Vec<usize> = (0..s.len()).filter(|&i| s[i] == b'\n').collect();
    let line_at = |i: usize| 1 + newlines.partition_point(|&n| n < i);
    let word = |i: usize| -> String {
        s[i..]
            .iter()
            .take_while(|&&b| ident(b))
            .map(|&b| b as char)
            .collect()
    };
    let mut found = Vec::new();
    for prefix in ["crate::", "mcp_companion::"] {
        let mut from = 0;
        while let Some(p) = code[from..].find(prefix) {
            let start = from + p;
            from = start + prefix.len();
            if start > 0 && (ident(s[start - 1]) || s[start - 1] == b':') {
                continue;
            }
            let mut i = from;
            while s.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
                i += 1;
            }
            if s.get(i) != Some(&b'{') {
                found.push((line_at(start), word(i)));
                continue;
            }
            // A group: the first segment of each item at depth one.
            let mut depth = 0;
            let mut item_start = true;
            while i < s.len() {
                match s[i] {
                    b'{' => {
                        depth += 1;
                        item_start = depth == 1;
                    }
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b',' if depth == 1 => item_start = true,
                    b if ident(b) && item_start && depth == 1 => {
                        found.push((line_at(i), word(i)));
                        item_start = false;
                    }
                    _ => {}
                }
                i += 1;
            }
        }
    }
    found
}

/// Every cycle of `graph` once (each as the path that closes it), by a depth-first search.
fn cycles<'a>(graph: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Vec<Vec<&'a str>> {
    fn visit<'a>(
        node: &'a str,
        graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
        found: &mut Vec<Vec<&'a str>>,
    ) {
        if let Some(at) = path.iter().position(|&n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node);
            found.push(cycle);
            return;
        }
        if done.contains(node) {
            return;
        }
        path.push(node);
        for &next in graph.get(node).into_iter().flatten() {
            visit(next, graph, path, done, found);
        }
        path.pop();
        done.insert(node);
    }
    let mut found = Vec::new();
    let mut done = BTreeSet::new();
    for &node in graph.keys() {
        visit(node, graph, &mut Vec::new(), &mut done, &mut found);
    }
    found
}

#[test]
fn the_reader_sees_code_and_skips_comments_and_strings() {
    let code = code_only(
        "use crate::{hub::{Hub, X}, net};\n\
         // crate::cli in a comment\n\
         /* crate::control */ let s = \"crate::endpoint\"; let r = r#\"crate::ipc\"#;\n\
         let c = '\"'; fn f<'a>(x: &'a str) { crate::upstream::call(x) }\n\
         let m = mcp_companion::demo::run; crate :: nope;",
    );
    let got: Vec<(usize, String)> = crate_paths(&code);
    let want: Vec<(usize, String)> = [(1, "hub"), (1, "net"), (4, "upstream"), (5, "demo")]
        .into_iter()
        .map(|(l, m)| (l, m.to_owned()))
        .collect();
    let mut got = got;
    got.sort();
    assert_eq!(got, want);
}

#[test]
fn a_cycle_is_reported_as_the_path_that_closes_it() {
    let graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::from([
        ("a", BTreeSet::from(["b"])),
        ("b", BTreeSet::from(["c"])),
        ("c", BTreeSet::from(["a"])),
        ("d", BTreeSet::from(["a"])),
    ]);
    assert_eq!(cycles(&graph), vec![vec!["a", "b", "c", "a"]]);
}
