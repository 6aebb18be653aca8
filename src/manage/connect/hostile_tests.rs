//! Files the person shaped by hand: CRLF TOML, our entry extended with their own keys, keys
//! written twice, Codex's inline `mcp_servers = { … }`.

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
