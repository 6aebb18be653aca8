//! Files the person shaped by hand: CRLF TOML, our entry extended with their own keys, keys
//! written twice, Codex's inline `mcp_servers = { … }`, Goose YAML of other shapes.

use super::*;

const EXE: &str = "/opt/mcp companion/bin/mcp-companion";

fn write(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    std::fs::write(&file, text).unwrap();
    (dir, file)
}

fn read(file: &Path) -> String {
    std::fs::read_to_string(file).unwrap()
}

#[test]
fn a_crlf_codex_file_comes_back_crlf_through_connect_and_disconnect() {
    let before = "# mine\r\nmodel = \"o3\"\r\n\r\n[mcp_servers.a]\r\ncommand = \"a\"\r\n";
    let (_dir, file) = write("config.toml", before);
    connect(Client::Codex, &file, EXE).unwrap();
    let after = read(&file);
    assert!(after.contains(EXE), "{after:?}");
    assert!(!after.replace("\r\n", "").contains('\n'), "{after:?}");
    disconnect(Client::Codex, &file).unwrap();
    assert_eq!(read(&file), before);
}

#[test]
fn keys_the_person_added_to_our_entry_survive_a_moved_binary() {
    let json = "{\n  \"mcpServers\": {\n    \"mcp-companion\": {\n      \"command\": \"/old/mcp-companion\",\n      \"args\": [\"bridge\"],\n      \"env\": {\"RUST_LOG\": \"debug\"},\n      \"timeout\": 120000\n    }\n  }\n}\n";
    for client in [Client::Cursor, Client::Gemini, Client::ClaudeDesktop] {
        let (_dir, file) = write("mcp.json", json);
        assert_eq!(connect(client, &file, EXE).unwrap(), Outcome::Changed);
        let text = read(&file);
        let root = jsonc::parse(&text).unwrap().unwrap();
        let entry = &jsonc::to_value(&text, &root)["mcpServers"][ENTRY_NAME];
        assert_eq!(entry["command"], EXE, "{text}");
        assert_eq!(entry["env"]["RUST_LOG"], "debug", "{text}");
        assert_eq!(entry["timeout"], 120000, "{text}");
        assert_eq!(connect(client, &file, EXE).unwrap(), Outcome::Unchanged);
    }
    let toml = "[mcp_servers.mcp-companion]\ncommand = \"/old/mcp-companion\"\nargs = [\"bridge\"]\nstartup_timeout_sec = 30\n\n[mcp_servers.mcp-companion.env]\nRUST_LOG = \"debug\"\n";
    let (_dir, file) = write("config.toml", toml);
    assert_eq!(
        connect(Client::Codex, &file, EXE).unwrap(),
        Outcome::Changed
    );
    let text = read(&file);
    assert_eq!(
        text,
        toml.replace("/old/mcp-companion", EXE),
        "only the command changed"
    );
}

#[test]
fn with_a_key_written_twice_the_last_copy_is_edited() {
    // JSON.parse (Claude Desktop, Cursor, Gemini…) keeps the last of two equal keys.
    let before = "{\n  \"mcpServers\": {\"old\": {\"command\": \"old\"}},\n  \"mcpServers\": {\"live\": {\"command\": \"live\"}}\n}\n";
    let (_dir, file) = write("mcp.json", before);
    connect(Client::Cursor, &file, EXE).unwrap();
    let text = read(&file);
    let second = text.rfind("\"mcpServers\"").unwrap();
    assert!(text[second..].contains(EXE), "{text}");
    assert!(!text[..second].contains(EXE), "{text}");
    assert!(is_connected(Client::Cursor, &file).unwrap());
    disconnect(Client::Cursor, &file).unwrap();
    assert_eq!(read(&file), before);

    let twice = "{\"mcpServers\": {\"mcp-companion\": {\"command\": \"a\", \"args\": [\"bridge\"]}, \"mcp-companion\": {\"command\": \"b\", \"args\": [\"bridge\"]}}}";
    let (_dir, file) = write("mcp.json", twice);
    connect(Client::Cursor, &file, EXE).unwrap();
    let text = read(&file);
    assert!(
        text.contains("\"command\": \"a\"") && !text.contains("\"command\": \"b\""),
        "{text}"
    );
    disconnect(Client::Cursor, &file).unwrap();
    assert!(
        !read(&file).contains(ENTRY_NAME),
        "every copy is ours to remove"
    );
}

#[test]
fn a_codex_inline_servers_table_is_edited_inline() {
    let before = "model = \"o3\"\nmcp_servers = { a = { command = \"a\" } }\n";
    let (_dir, file) = write("config.toml", before);
    assert_eq!(
        connect(Client::Codex, &file, EXE).unwrap(),
        Outcome::Changed
    );
    let text = read(&file);
    let doc: toml_edit::DocumentMut = text.parse().unwrap();
    assert_eq!(
        doc["mcp_servers"][ENTRY_NAME]["command"].as_str(),
        Some(EXE)
    );
    assert_eq!(doc["mcp_servers"]["a"]["command"].as_str(), Some("a"));
    assert!(is_connected(Client::Codex, &file).unwrap());
    assert_eq!(
        connect(Client::Codex, &file, EXE).unwrap(),
        Outcome::Unchanged
    );
    disconnect(Client::Codex, &file).unwrap();
    let doc: toml_edit::DocumentMut = read(&file).parse().unwrap();
    assert!(doc["mcp_servers"].get(ENTRY_NAME).is_none(), "{doc}");

    let (_dir, file) = write("config.toml", "mcp_servers = \"none\"\n");
    let err = connect(Client::Codex, &file, EXE).unwrap_err().to_string();
    assert!(
        err.contains("\"mcp_servers\" is a string, not a table of servers"),
        "{err}"
    );
}

#[test]
fn an_entry_of_our_name_that_is_not_ours_is_neither_overwritten_nor_removed() {
    let json = "{\"mcpServers\": {\"mcp-companion\": {\"command\": \"npx\", \"args\": [\"-y\", \"my-own-server\"]}}}\n";
    let opencode = "{\"mcp\": {\"mcp-companion\": {\"type\": \"local\", \"command\": [\"node\", \"mine.js\"]}}}\n";
    let toml = "[mcp_servers.mcp-companion]\ncommand = \"uvx\"\nargs = [\"mine\"]\n";
    for (client, name, text) in [
        (Client::Cursor, "mcp.json", json),
        (Client::Opencode, "opencode.json", opencode),
        (Client::Codex, "config.toml", toml),
    ] {
        let (_dir, file) = write(name, text);
        let refused = connect(client, &file, EXE).unwrap_err().to_string();
        assert!(
            refused.contains("is not ours") && refused.contains("rename that entry"),
            "{refused}"
        );
        let refused = disconnect(client, &file).unwrap_err().to_string();
        assert!(refused.contains("is not ours"), "{refused}");
        assert_eq!(read(&file), text, "{client:?} left as it was");
        assert!(!is_connected(client, &file).unwrap(), "{client:?}");
    }
    // Ours, from a binary that moved, is still ours.
    let moved = "{\"mcpServers\": {\"mcp-companion\": {\"command\": \"/old/target/debug/mcp-companion\", \"args\": [\"bridge\"]}}}\n";
    let (_dir, file) = write("mcp.json", moved);
    assert!(is_connected(Client::Cursor, &file).unwrap());
    assert_eq!(disconnect(Client::Cursor, &file).unwrap(), Outcome::Changed);
}

#[test]
fn goose_files_of_other_shapes_are_refused_untouched() {
    for (text, says) in [
        (
            "extensions: {developer: {enabled: true}}\n",
            "written inline",
        ),
        ("extensions:\n  - type: stdio\n    name: x\n", "is a list"),
        (
            "extensions:\n  a:\n    enabled: true\nextensions:\n  b: {}\n",
            "appears twice",
        ),
        ("extensions:\n\ta:\n\t\tenabled: true\n", "tab"),
        ("- just\n- a list\n", "not a `key: value` line"),
        (
            "extensions:\n  mcp-companion: {cmd: /x, args: [bridge]}\n",
            "written inline",
        ),
    ] {
        let (_dir, file) = write("config.yaml", text);
        let err = connect(Client::Goose, &file, EXE).unwrap_err().to_string();
        assert!(
            err.contains(says) && err.contains("not changed"),
            "{text:?}: {err}"
        );
        assert_eq!(read(&file), text);
    }
}

#[test]
fn goose_entries_are_added_refreshed_and_removed_by_their_lines_only() {
    // No file yet: a new one with our block.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("goose").join("config.yaml");
    connect(Client::Goose, &file, EXE).unwrap();
    let text = read(&file);
    assert!(
        text.starts_with("extensions:\n  mcp-companion:\n"),
        "{text}"
    );
    assert!(text.contains(&format!("    cmd: \"{EXE}\"\n")), "{text}");
    assert!(text.contains("    args: [\"bridge\"]\n"), "{text}");
    assert!(is_connected(Client::Goose, &file).unwrap());
    disconnect(Client::Goose, &file).unwrap();
    assert_eq!(read(&file), "");

    // `extensions: {}` (what Goose writes with none) becomes a block; the last entry out
    // takes `extensions` with it (null would not load).
    let (_dir, file) = write(
        "config.yaml",
        "GOOSE_MODEL: x\nextensions: {}\nGOOSE_MODE: auto\n",
    );
    connect(Client::Goose, &file, EXE).unwrap();
    let text = read(&file);
    assert!(
        text.starts_with("GOOSE_MODEL: x\nextensions:\n  mcp-companion:\n")
            && text.ends_with("GOOSE_MODE: auto\n"),
        "{text}"
    );
    disconnect(Client::Goose, &file).unwrap();
    assert_eq!(read(&file), "GOOSE_MODEL: x\nGOOSE_MODE: auto\n");

    // An entry as Goose rewrites it (block list args, keys sorted, the person's `envs`): a
    // moved binary changes the `cmd` line only (the args are the same).
    let before = "extensions:\n  mcp-companion:\n    args:\n    - bridge\n    cmd: /old/target/debug/mcp-companion\n    enabled: true\n    envs:\n      RUST_LOG: debug\n    name: mcp-companion\n    timeout: 600\n    type: stdio\n";
    let (_dir, file) = write("config.yaml", before);
    assert!(is_connected(Client::Goose, &file).unwrap());
    assert_eq!(
        connect(Client::Goose, &file, EXE).unwrap(),
        Outcome::Changed
    );
    let text = read(&file);
    assert_eq!(
        text,
        before.replace(
            "cmd: /old/target/debug/mcp-companion",
            &format!("cmd: \"{EXE}\"")
        ),
    );
    assert_eq!(
        connect(Client::Goose, &file, EXE).unwrap(),
        Outcome::Unchanged
    );
    connect_with(Client::Goose, &file, EXE, &["bridge", "--profile", "work"]).unwrap();
    assert!(
        read(&file).contains("    args: [\"bridge\", \"--profile\", \"work\"]\n"),
        "{}",
        read(&file)
    );
    disconnect(Client::Goose, &file).unwrap();
    assert_eq!(read(&file), "");

    // CRLF and a quoted entry name of someone else's: refused, untouched.
    let theirs = "extensions:\r\n  \"mcp-companion\":\r\n    cmd: uvx\r\n    args: [mine]\r\n";
    let (_dir, file) = write("config.yaml", theirs);
    let err = connect(Client::Goose, &file, EXE).unwrap_err().to_string();
    assert!(err.contains("runs `uvx mine`, which is not ours"), "{err}");
    assert!(disconnect(Client::Goose, &file).is_err());
    assert_eq!(read(&file), theirs);

    // CRLF kept for our lines too.
    let crlf = "GOOSE_MODEL: x\r\nextensions:\r\n  a:\r\n    cmd: a\r\n";
    let (_dir, file) = write("config.yaml", crlf);
    connect(Client::Goose, &file, EXE).unwrap();
    let text = read(&file);
    assert!(!text.replace("\r\n", "").contains('\n'), "{text:?}");
    disconnect(Client::Goose, &file).unwrap();
    assert_eq!(read(&file), crlf);
}

#[test]
fn goose_comments_entries_after_ours_and_a_missing_final_break() {
    // Comments at column 0 inside `extensions`, an entry after ours: only our lines go.
    let before = "extensions:\n# mine\n  a:\n    cmd: a\n";
    let (_dir, file) = write("config.yaml", before);
    connect(Client::Goose, &file, EXE).unwrap();
    let mut text = read(&file);
    text.push_str("  b:\n    cmd: b\n# the end\n");
    std::fs::write(&file, &text).unwrap();
    assert!(is_connected(Client::Goose, &file).unwrap());
    disconnect(Client::Goose, &file).unwrap();
    assert_eq!(
        read(&file),
        format!("{before}  b:\n    cmd: b\n# the end\n")
    );

    // No final line break: our block starts on a line of its own.
    let (_dir, file) = write("config.yaml", "GOOSE_MODEL: x");
    connect(Client::Goose, &file, EXE).unwrap();
    assert!(
        read(&file).starts_with("GOOSE_MODEL: x\nextensions:\n  mcp-companion:\n"),
        "{}",
        read(&file)
    );
    disconnect(Client::Goose, &file).unwrap();
    assert_eq!(read(&file), "GOOSE_MODEL: x\n");

    // Entries indented by four, fields by four more: ours follows the file's steps.
    let (_dir, file) = write("config.yaml", "extensions:\n    a:\n        cmd: a\n");
    connect(Client::Goose, &file, EXE).unwrap();
    assert!(
        read(&file).contains("\n    mcp-companion:\n        name: mcp-companion\n"),
        "{}",
        read(&file)
    );
}
