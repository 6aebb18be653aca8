//! Golden files per client (`tests/golden/connect/<client>.before.*` → `.after.*`): comments,
//! formatting and unrelated keys kept byte-for-byte, repeated connect changes nothing,
//! disconnect gives back the original bytes. `UPDATE_GOLDEN=1` rewrites the `.after` files
//! (review the diff before committing).

use std::path::{Path, PathBuf};

use super::*;

const EXE: &str = "/opt/mcp companion/bin/mcp-companion";

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/connect")
}

fn check(client: Client) {
    let ext = match client {
        Client::Codex => "toml",
        Client::Goose => "yaml",
        _ => "json",
    };
    let before_path = golden_dir().join(format!("{}.before.{ext}", client.id()));
    let after_path = golden_dir().join(format!("{}.after.{ext}", client.id()));
    let before = std::fs::read_to_string(&before_path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("config.{ext}"));
    std::fs::write(&file, &before).unwrap();

    assert_eq!(
        connect(client, &file, EXE).unwrap(),
        Outcome::Changed,
        "{client:?}"
    );
    let after = std::fs::read_to_string(&file).unwrap();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&after_path, &after).unwrap();
    }
    let want = std::fs::read_to_string(&after_path).unwrap();
    assert_eq!(
        after,
        want,
        "{client:?}: connect output differs from {}",
        after_path.display()
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join(format!("config.{ext}.bak"))).unwrap(),
        before
    );
    assert!(is_connected(client, &file).unwrap(), "{client:?}");

    assert_eq!(
        connect(client, &file, EXE).unwrap(),
        Outcome::Unchanged,
        "{client:?} again"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), want);

    assert_eq!(
        disconnect(client, &file).unwrap(),
        Outcome::Changed,
        "{client:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        before,
        "{client:?}: disconnect"
    );
    assert!(!is_connected(client, &file).unwrap());
    assert_eq!(disconnect(client, &file).unwrap(), Outcome::Unchanged);
}

#[test]
fn golden_claude_desktop() {
    check(Client::ClaudeDesktop);
}

#[test]
fn golden_claude_code() {
    check(Client::ClaudeCode);
}

#[test]
fn golden_cursor() {
    check(Client::Cursor);
}

#[test]
fn golden_vscode() {
    check(Client::Vscode);
}

#[test]
fn golden_windsurf() {
    check(Client::Windsurf);
}

#[test]
fn golden_codex() {
    check(Client::Codex);
}

#[test]
fn golden_zed() {
    check(Client::Zed);
}

#[test]
fn golden_nanobot() {
    check(Client::Nanobot);
}

#[test]
fn golden_gemini() {
    check(Client::Gemini);
}

#[test]
fn golden_opencode() {
    check(Client::Opencode);
}

#[test]
fn golden_goose() {
    check(Client::Goose);
}

#[test]
fn golden_lmstudio() {
    check(Client::LmStudio);
}

#[test]
fn golden_cline() {
    check(Client::Cline);
}

#[test]
fn golden_junie() {
    check(Client::Junie);
}

#[test]
fn continue_gets_a_file_of_its_own_that_disconnect_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcpServers").join("mcp-companion.json");
    assert_eq!(
        connect(Client::Continue, &file, EXE).unwrap(),
        Outcome::Changed
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"mcpServers": {ENTRY_NAME: {"command": EXE, "args": ["bridge"]}}})
    );
    assert!(is_connected(Client::Continue, &file).unwrap());
    assert_eq!(
        disconnect(Client::Continue, &file).unwrap(),
        Outcome::Changed
    );
    assert!(!file.exists(), "our own file is gone");
    assert_eq!(
        disconnect(Client::Continue, &file).unwrap(),
        Outcome::Unchanged
    );
    // Someone added a server to our file: it stays, only our entry goes.
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "{\"mcpServers\": {\"mine\": {\"command\": \"x\"}}}\n",
    )
    .unwrap();
    connect(Client::Continue, &file, EXE).unwrap();
    disconnect(Client::Continue, &file).unwrap();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\"mcpServers\": {\"mine\": {\"command\": \"x\"}}}\n"
    );
}

#[test]
fn the_last_entry_out_takes_the_servers_section_and_leaves_a_valid_file() {
    // Created by connect: disconnect leaves an empty object, which every JSON client reads
    // as "no servers" (the file is the client's; it stays).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    connect(Client::Cursor, &file, EXE).unwrap();
    disconnect(Client::Cursor, &file).unwrap();
    let left = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&left).unwrap(),
        serde_json::json!({}),
        "{left:?}"
    );
    assert!(!left.contains("mcpServers"), "{left:?}");
}

#[test]
fn a_changed_binary_path_is_updated_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    std::fs::write(&file, "{\n  // mine\n  \"mcpServers\": {}\n}\n").unwrap();
    connect(Client::Cursor, &file, "/old/mcp-companion").unwrap();
    assert_eq!(
        connect(Client::Cursor, &file, EXE).unwrap(),
        Outcome::Changed
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains(EXE) && !text.contains("/old/") && text.contains("// mine"),
        "{text}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_planted_at_the_backup_path_is_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    let victim = dir.path().join("victim");
    std::fs::write(&file, "{ \"mcpServers\": {} }\n").unwrap();
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, dir.path().join("mcp.json.bak")).unwrap();
    assert_eq!(
        connect(Client::Cursor, &file, EXE).unwrap(),
        Outcome::Changed
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("mcp.json.bak")).unwrap(),
        "{ \"mcpServers\": {} }\n"
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_client_file_keeps_its_link_and_its_target_is_edited() {
    let dir = tempfile::tempdir().unwrap();
    let dots = dir.path().join("dots");
    std::fs::create_dir(&dots).unwrap();
    let target = dots.join("cursor.json");
    std::fs::write(&target, "{ \"mcpServers\": {} }\n").unwrap();
    let link = dir.path().join("mcp.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert_eq!(
        connect(Client::Cursor, &link, EXE).unwrap(),
        Outcome::Changed
    );
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(std::fs::read_to_string(&target).unwrap().contains(EXE));
    assert_eq!(disconnect(Client::Cursor, &link).unwrap(), Outcome::Changed);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(!std::fs::read_to_string(&target).unwrap().contains(EXE));
}

#[test]
fn missing_files_are_created_and_unparsable_ones_never_touched() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sub").join("mcp.json");
    assert_eq!(
        connect(Client::Cursor, &file, EXE).unwrap(),
        Outcome::Changed
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        v["mcpServers"][ENTRY_NAME]["args"],
        serde_json::json!(["bridge"])
    );

    let broken =
        "{\n  \"mcpServers\": {\n    \"a\": { \"command\": \"x\" }\n    \"b\": 1\n  }\n}\n";
    std::fs::write(&file, broken).unwrap();
    let err = connect(Client::Cursor, &file, EXE).unwrap_err().to_string();
    assert!(
        err.contains("line 4, column 5") && err.contains("not changed"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), broken);
    assert!(disconnect(Client::Cursor, &file).is_err());

    let toml = dir.path().join("config.toml");
    std::fs::write(&toml, "model = \n").unwrap();
    let err = connect(Client::Codex, &toml, EXE).unwrap_err().to_string();
    assert!(err.contains("line 1"), "{err}");
    assert_eq!(std::fs::read_to_string(&toml).unwrap(), "model = \n");
}

#[test]
fn a_servers_key_that_is_not_an_object_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    std::fs::write(&file, "{\"mcpServers\": []}").unwrap();
    let err = connect(Client::Cursor, &file, EXE).unwrap_err().to_string();
    assert!(err.contains("\"mcpServers\" is not an object"), "{err}");
}

#[test]
fn crlf_files_block_comments_and_one_line_objects_round_trip() {
    let cases = [
        "{\r\n  \"mcpServers\": {\r\n    \"a\": {\"command\": \"a\"} /* last */\r\n  }\r\n}\r\n",
        "{\"mcpServers\": {\"a\": {\"command\": \"a\"},}}",
        "{\n  \"mcpServers\": { // none yet\n  }\n}\n",
        "  {}  ",
    ];
    for before in cases {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        std::fs::write(&file, before).unwrap();
        connect(Client::Cursor, &file, EXE).unwrap();
        let after = std::fs::read_to_string(&file).unwrap();
        let root = jsonc::parse(&after).unwrap().unwrap();
        let doc = jsonc::to_value(&after, &root);
        assert_eq!(
            doc["mcpServers"][ENTRY_NAME]["command"], EXE,
            "{before:?} -> {after:?}"
        );
        if before.contains("\r\n") {
            assert!(!after.replace("\r\n", "").contains('\n'), "{after:?}");
        }
        disconnect(Client::Cursor, &file).unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            before,
            "{before:?} via {after:?}"
        );
    }
}

#[test]
fn a_byte_order_mark_is_kept_and_the_file_still_edited() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claude_desktop_config.json");
    let before = "\u{feff}{\n  \"mcpServers\": {\"mine\": {\"command\": \"x\"}}\n}\n";
    std::fs::write(&file, before).unwrap();
    assert!(!is_connected(Client::ClaudeDesktop, &file).unwrap());
    assert_eq!(
        connect(Client::ClaudeDesktop, &file, EXE).unwrap(),
        Outcome::Changed
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with('\u{feff}') && text.contains(EXE), "{text}");
    assert!(is_connected(Client::ClaudeDesktop, &file).unwrap());
    disconnect(Client::ClaudeDesktop, &file).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
}
