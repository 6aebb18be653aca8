//! The desktop command names are written in four places that must agree, or a command is
//! registered but not callable (not granted), granted but not registered, or called by the
//! window under a name nothing answers:
//!
//! | file | what it lists |
//! |---|---|
//! | `build.rs` `COMMANDS` | the commands Tauri generates `allow-*` permissions for |
//! | `src/lib.rs` `generate_handler!` | the commands the app answers |
//! | `capabilities/default.json` | the `allow-*` permissions the window is granted |
//! | `../ui/api.js` | the commands the window invokes, one camelCase wrapper each |
//!
//! The test reads the four files and fails naming the names that differ.

use std::collections::BTreeSet;
use std::path::Path;

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text between `start` and the next `end` after it.
fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text.find(start).unwrap_or_else(|| panic!("no {start:?}")) + start.len();
    let len = text[from..]
        .find(end)
        .unwrap_or_else(|| panic!("no {end:?} after {start:?}"));
    &text[from..from + len]
}

/// Every name, failing on a name listed twice.
fn set(what: &str, names: impl IntoIterator<Item = String>) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    for name in names {
        assert!(set.insert(name.clone()), "{what} lists {name} twice");
    }
    set
}

fn build_rs() -> BTreeSet<String> {
    let text = read("build.rs");
    let list = between(&text, "const COMMANDS: &[&str] = &[", "];");
    set(
        "build.rs",
        list.split(',')
            .map(|s| s.trim().trim_matches('"').to_owned())
            .filter(|s| !s.is_empty()),
    )
}

fn handler() -> BTreeSet<String> {
    let text = read("src/lib.rs");
    let list = between(&text, "generate_handler![", "]");
    set(
        "generate_handler!",
        list.split(',')
            .map(|path| path.trim().rsplit("::").next().unwrap_or("").to_owned())
            .filter(|s| !s.is_empty()),
    )
}

fn capabilities() -> BTreeSet<String> {
    let file: serde_json::Value =
        serde_json::from_str(&read("capabilities/default.json")).expect("capabilities JSON");
    let permissions = file["permissions"].as_array().expect("a permissions array");
    set(
        "capabilities/default.json",
        permissions
            .iter()
            .filter_map(|p| p.as_str()?.strip_prefix("allow-"))
            .map(|p| p.replace('-', "_")),
    )
}

/// `snake_case` → `camelCase`.
fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The commands `ui/api.js` invokes; each wrapper must be named the camelCase of its command.
fn api_js() -> BTreeSet<String> {
    let text = read("../ui/api.js");
    let mut names = Vec::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once("invoke('") else {
            continue;
        };
        let Some((command, _)) = rest.split_once('\'') else {
            continue;
        };
        let wrapper = line
            .strip_prefix("export const ")
            .and_then(|l| l.split_once(' '))
            .map(|(name, _)| name);
        assert_eq!(
            wrapper,
            Some(camel(command).as_str()),
            "ui/api.js: the wrapper of {command} should be `export const {}`",
            camel(command)
        );
        names.push(command.to_owned());
    }
    set("ui/api.js", names)
}

#[test]
fn the_four_lists_of_command_names_agree() {
    let lists = [
        ("build.rs COMMANDS", build_rs()),
        ("generate_handler! in src/lib.rs", handler()),
        ("capabilities/default.json", capabilities()),
        ("ui/api.js", api_js()),
    ];
    let (first_name, first) = &lists[0];
    assert!(first.len() > 10, "{first_name} read as {first:?}");
    for (name, list) in &lists[1..] {
        let missing: Vec<_> = first.difference(list).collect();
        let extra: Vec<_> = list.difference(first).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{name} differs from {first_name}: missing {missing:?}, extra {extra:?}"
        );
    }
}
