//! Import: standard paths, format detection, conversion, and the added/skipped/renamed report,
//! over fixture files in `tests/fixtures/import/`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::source::parse_jsonc;
use super::*;

const CLAUDE: &str = include_str!("../../../tests/fixtures/import/claude_desktop_config.json");
const VSCODE: &str = include_str!("../../../tests/fixtures/import/vscode_mcp.json");
const NANOBOT: &str = include_str!("../../../tests/fixtures/import/nanobot_config.json");

fn source(client: ClientKind, name: &str, text: &str) -> Source {
    Source {
        client,
        path: PathBuf::from(name),
        doc: parse_jsonc(text).unwrap(),
    }
}

fn summary(plan: &ImportPlan) -> Vec<(String, String)> {
    plan.items
        .iter()
        .map(|i| {
            let what = match &i.action {
                ImportAction::Added => "added".to_owned(),
                ImportAction::Renamed { to } => format!("renamed {to}"),
                ImportAction::Skipped { reason } => format!("skipped: {reason}"),
            };
            (i.name.clone(), what)
        })
        .collect()
}

#[test]
fn standard_paths_cover_every_client() {
    let got = standard_paths(Some(Path::new("/h")), Some(Path::new("/c")));
    let want = [
        (
            ClientKind::ClaudeDesktop,
            "/c/Claude/claude_desktop_config.json",
        ),
        (ClientKind::Cursor, "/h/.cursor/mcp.json"),
        (ClientKind::VsCode, "/c/Code/User/mcp.json"),
        (ClientKind::VsCode, "/c/Code/User/settings.json"),
        (ClientKind::Nanobot, "/h/.nanobot/config.json"),
    ];
    let want: Vec<_> = want.iter().map(|(k, p)| (*k, PathBuf::from(p))).collect();
    assert_eq!(got, want);
    assert!(standard_paths(None, None).is_empty());
}

#[test]
fn client_is_detected_from_content_and_path() {
    let cases = [
        (
            "/c/Claude/claude_desktop_config.json",
            CLAUDE,
            ClientKind::ClaudeDesktop,
        ),
        ("/h/.cursor/mcp.json", CLAUDE, ClientKind::Cursor),
        ("/x/mcp.json", VSCODE, ClientKind::VsCode),
        ("/h/.nanobot/config.json", NANOBOT, ClientKind::Nanobot),
        (
            "/x/settings.json",
            r#"{"mcp": {"servers": {}}}"#,
            ClientKind::VsCode,
        ),
    ];
    for (path, text, want) in cases {
        let doc: Value = parse_jsonc(text).unwrap();
        assert_eq!(detect_client(Path::new(path), &doc), want, "{path}");
    }
}

#[test]
fn claude_and_vscode_import_adds_three_renames_clashes_and_skips_the_rest() {
    let existing = json!({"mcpServers": {"demo": {"command": "demo"}}});
    let sources = [
        source(ClientKind::ClaudeDesktop, "claude.json", CLAUDE),
        source(ClientKind::VsCode, "mcp.json", VSCODE),
    ];
    let plan = plan(&existing, &sources);
    let s = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(
        summary(&plan),
        vec![
            s("filesystem", "added"),
            s("time", "added"),
            s("companion", "skipped: this is MCP Companion's own bridge"),
            s("time", "renamed time-2"),
            s("legacy", "added"),
            s("weird", "skipped: unsupported type \"websocket\""),
        ]
    );
    assert_eq!(plan.added(), 4);
    let vs_time = plan.items[3].entry.as_ref().unwrap();
    assert_eq!(
        vs_time,
        &json!({"type": "streamableHttp", "url": "https://mcp.example.com/mcp",
                "headers": {"Authorization": "Bearer ${secret:time-2.token}"}})
    );
    assert!(
        plan.items[3].notes[0].contains("mcp-companion secret set time-2.token"),
        "{:?}",
        plan.items[3].notes
    );

    let mut doc = existing.clone();
    apply(&mut doc, &plan);
    let names: Vec<_> = doc["mcpServers"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(names, ["demo", "filesystem", "time", "time-2", "legacy"]);
    assert_eq!(doc["mcpServers"]["time"]["env"], json!({"TZ": "UTC"}));
    let cfg = crate::config::parse(&doc.to_string(), Path::new("c.json")).unwrap();
    assert!(cfg.servers.iter().all(|s| s.entry.is_ok()), "{cfg:?}");
}

#[test]
fn an_entry_already_present_is_skipped_and_nanobot_whitelist_is_shown_not_copied() {
    let existing = json!({
        "mcpServers": {"notes": {"type": "stdio", "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"]}},
        "ssrfWhitelist": ["127.0.0.1/32"]
    });
    let plan = plan(&existing, &[source(ClientKind::Nanobot, "n.json", NANOBOT)]);
    let s = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(
        summary(&plan),
        vec![
            s("fs", "skipped: already present as \"notes\""),
            s("docs", "added")
        ]
    );
    assert_eq!(plan.whitelist, vec!["10.0.0.0/8".to_owned()]);
    assert_eq!(
        plan.items[1].entry.as_ref().unwrap()["toolTimeout"],
        json!(60)
    );
    let mut doc = existing;
    apply(&mut doc, &plan);
    // Widening the SSRF guard for every remote server is the person's own edit.
    assert_eq!(doc["ssrfWhitelist"], json!(["127.0.0.1/32"]));
}

#[test]
fn importing_the_same_file_twice_adds_nothing_the_second_time() {
    let sources = [source(ClientKind::ClaudeDesktop, "c.json", CLAUDE)];
    let mut doc = json!({});
    let first = plan(&doc, &sources);
    apply(&mut doc, &first);
    let again = plan(&doc, &sources);
    assert_eq!(again.added(), 0);
}

#[test]
fn names_dedupe_against_each_other_within_one_import() {
    let a = source(
        ClientKind::Cursor,
        "a",
        r#"{"mcpServers": {"x": {"command": "a"}}}"#,
    );
    let b = source(
        ClientKind::Cursor,
        "b",
        r#"{"mcpServers": {"x": {"command": "b"}}}"#,
    );
    let c = source(
        ClientKind::Cursor,
        "c",
        r#"{"mcpServers": {"x": {"command": "c"}}}"#,
    );
    let plan = plan(&json!({}), &[a, b, c]);
    let names: Vec<_> = plan.items.iter().filter_map(|i| i.target_name()).collect();
    assert_eq!(names, ["x", "x-2", "x-3"]);
}

#[test]
fn vscode_files_are_read_as_jsonc_comments_and_trailing_commas_included() {
    let cases = [
        ("{\"a\": 1 // c\n}", json!({"a": 1})),
        ("{\"a\": \"//not\" /* c */}", json!({"a": "//not"})),
        ("{\"a\": \"q\\\"//x\"}", json!({"a": "q\"//x"})),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\",},},}",
            json!({"servers": {"a": {"command": "x"}}}),
        ),
        ("{\"a\": 1, \"a\": 2}", json!({"a": 2})),
    ];
    for (input, want) in cases {
        assert_eq!(parse_jsonc(input).unwrap(), want, "{input}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    std::fs::write(
        &path,
        "{\n  \"servers\": {\n    \"gh\": {\"command\": \"gh-mcp\",},\n  },\n}\n",
    )
    .unwrap();
    let src = Source::read(&path, Some(ClientKind::VsCode)).unwrap();
    assert_eq!(plan(&json!({}), &[src]).added(), 1);
}

#[test]
fn two_accounts_of_one_server_are_both_imported() {
    let text = r#"{"mcpServers": {
        "gh-work": {"command": "gh-mcp", "env": {"GH_HOST": "work.example"}},
        "gh-home": {"command": "gh-mcp", "env": {"GH_HOST": "github.com"}},
        "api-a": {"url": "https://api.example/mcp", "headers": {"X-Account": "a"}},
        "api-b": {"url": "https://api.example/mcp", "headers": {"X-Account": "b"}},
        "gh-again": {"command": "gh-mcp", "env": {"GH_HOST": "github.com"}}
    }}"#;
    let plan = plan(&json!({}), &[source(ClientKind::Cursor, "c", text)]);
    assert_eq!(
        summary(&plan),
        [
            ("gh-work".to_owned(), "added".to_owned()),
            ("gh-home".to_owned(), "added".to_owned()),
            ("api-a".to_owned(), "added".to_owned()),
            ("api-b".to_owned(), "added".to_owned()),
            (
                "gh-again".to_owned(),
                "skipped: already present as \"gh-home\"".to_owned()
            ),
        ]
    );
}

#[test]
fn reading_a_file_detects_its_client() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.json");
    std::fs::write(&path, VSCODE).unwrap();
    let src = Source::read(&path, None).unwrap();
    assert_eq!(src.client, ClientKind::VsCode);
    // With the byte order mark Notepad writes: the same.
    std::fs::write(&path, format!("\u{feff}{VSCODE}")).unwrap();
    let src = Source::read(&path, None).unwrap();
    assert_eq!(src.client, ClientKind::VsCode);
    assert!(!src.servers().is_empty());
    std::fs::write(&path, "{").unwrap();
    assert!(matches!(
        Source::read(&path, None),
        Err(ImportError::Syntax { .. })
    ));
}

#[test]
fn imported_text_never_becomes_a_wider_reference() {
    // Claude Desktop does not expand `${…}`: a value that was literally this text stays text.
    let claude = source(
        ClientKind::ClaudeDesktop,
        "claude.json",
        r#"{"mcpServers": {"aws": {"command": "aws-mcp",
            "env": {"AWS_SECRET_ACCESS_KEY": "${AWS_SECRET_ACCESS_KEY}"}}}}"#,
    );
    // VS Code: `${env:X}` reads X (as it did there), the rest has no meaning here.
    let vscode = source(
        ClientKind::VsCode,
        "mcp.json",
        r#"{"servers": {"gh": {"command": "gh-mcp", "args": ["${workspaceFolder}"],
            "env": {"GH_TOKEN": "${env:GH_TOKEN}", "K": "${env:secret:gh.TOKEN}"}}}}"#,
    );
    let plan = plan(&json!({}), &[claude, vscode]);
    let aws = plan.items[0].entry.as_ref().unwrap();
    assert_eq!(
        aws["env"]["AWS_SECRET_ACCESS_KEY"],
        "$${AWS_SECRET_ACCESS_KEY}"
    );
    assert!(aws.get("disabled").is_none());
    assert_eq!(plan.items[0].notes.len(), 1, "{:?}", plan.items[0].notes);
    let gh = plan.items[1].entry.as_ref().unwrap();
    assert_eq!(gh["env"]["GH_TOKEN"], "${GH_TOKEN}");
    assert_eq!(gh["env"]["K"], "$${env:secret:gh.TOKEN}");
    assert_eq!(gh["args"], json!(["$${workspaceFolder}"]));
    assert_eq!(gh["disabled"], true);
    let notes = plan.items[1].notes.join("\n");
    assert!(
        notes.contains("args[0]: ${workspaceFolder} has no meaning outside VS Code")
            && notes.contains("imported disabled"),
        "{notes}"
    );

    // What each imported entry reads when it starts: only GH_TOKEN, which the person wrote.
    let mut doc = json!({});
    apply(&mut doc, &plan);
    let cfg = crate::config::parse(&doc.to_string(), Path::new("t")).unwrap();
    let read = std::sync::Mutex::new(Vec::new());
    let lookup = |name: &str| {
        read.lock().unwrap().push(name.to_owned());
        Some("value".to_owned())
    };
    let store = crate::secret::MemoryStore::new();
    for spec in &cfg.servers {
        let entry = spec.entry.as_ref().unwrap();
        assert!(entry.secret_references().is_empty(), "{}", spec.name);
        entry.expand(&lookup, &store).unwrap();
    }
    assert_eq!(*read.lock().unwrap(), ["GH_TOKEN"]);
}
