//! Tests of the edits: validation, the document-level edits, and byte-for-byte saving.

use serde_json::json;

use super::*;

#[test]
fn entries_are_validated_like_loading_does() {
    let cases = [
        ("ok", json!({"command": "x"}), None),
        ("", json!({"command": "x"}), Some("server name")),
        (" a", json!({"command": "x"}), Some("server name")),
        ("a", json!({"args": ["x"]}), Some("server \"a\"")),
        (
            "a",
            json!({"type": "stdio", "command": 3}),
            Some("\"command\""),
        ),
        ("a", json!({"url": "ftp://x"}), Some("\"url\"")),
    ];
    for (name, entry, want) in cases {
        let got = validate_entry(name, &entry);
        match want {
            None => assert_eq!(got, Ok(()), "{name} {entry}"),
            Some(w) => {
                let msg = got.unwrap_err().to_string();
                assert!(msg.contains(w), "{name} {entry}: {msg}");
            }
        }
    }
}

#[test]
fn set_remove_and_whitelist_edit_the_document_in_place() {
    let mut doc = json!({"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}, "x": 1});
    set_server(&mut doc, "c", json!({"command": "c"}), false).unwrap();
    assert!(matches!(
        set_server(&mut doc, "a", json!({"command": "z"}), false),
        Err(EditError::Exists { .. })
    ));
    set_server(&mut doc, "a", json!({"command": "z"}), true).unwrap();
    remove_server(&mut doc, "b").unwrap();
    assert!(remove_server(&mut doc, "b").is_err());
    let names: Vec<_> = doc["mcpServers"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(names, ["a", "c"]);
    assert_eq!(doc["mcpServers"]["a"]["command"], "z");
    assert_eq!(doc["x"], 1);

    let bad = set_whitelist(
        &mut doc,
        &["10.0.0.0/8".into(), "nope".into(), "1.2.3.4/99".into()],
    );
    match bad {
        Err(EditError::Whitelist(errors)) => assert_eq!(errors.len(), 2),
        other => panic!("{other:?}"),
    }
    assert!(doc.get("ssrfWhitelist").is_none());
    set_whitelist(&mut doc, &[" 127.0.0.1 ".into(), String::new()]).unwrap();
    assert_eq!(doc["ssrfWhitelist"], json!(["127.0.0.1"]));
}

#[test]
fn update_file_saves_atomically_with_a_backup_and_returns_the_new_config() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    let cfg = update_file(&path, |d| {
        set_server(d, "t", json!({"command": "x"}), false)
    })
    .unwrap();
    assert_eq!(cfg.servers.len(), 1);
    let cfg = update_file(&path, |d| {
        set_server(d, "u", json!({"command": "y"}), false)
    })
    .unwrap();
    assert_eq!(cfg.servers.len(), 2);
    assert!(dir.path().join("config.json.bak").exists());
    let refused = update_file(&path, |d| set_server(d, "", json!({}), false));
    assert!(refused.is_err());
    assert_eq!(config::load(&path).unwrap().servers.len(), 2);
    std::fs::write(&path, "{ broken").unwrap();
    assert!(matches!(
        update_file(&path, |_| Ok(())),
        Err(EditError::File(_))
    ));
}

/// A hand-written file: no `type`s, tabs and two-space indents mixed, inline entries, a blank
/// line, unknown keys in odd places, keys not in alphabetical order.
const HAND_WRITTEN: &str = "{\n\t\"theme\": \"dark\",\n\t\"mcpServers\": {\n\t\t\"zeta\": {\"command\": \"npx\", \"args\": [\"-y\",\"pkg\"]},\n\n\t\t\"alpha\": {\n\t\t\t\"url\": \"https://h/mcp\",\n\t\t\t\"env\":   {\"B\": \"1\", \"A\": \"${HOME}\"}\n\t\t},\n\t\t\"mid\" : { \"command\" : \"m\" }\n\t},\n\t\"x-note\": [1,2,3]\n}\n";

fn edited(text: &str, change: impl FnOnce(&mut Value) -> Result<(), EditError>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    std::fs::write(&path, text).unwrap();
    update_file(&path, change).unwrap();
    std::fs::read_to_string(&path).unwrap()
}

#[test]
fn adding_a_server_changes_no_byte_of_the_others() {
    let got = edited(HAND_WRITTEN, |d| {
        set_server(d, "new", json!({"command": "n", "args": ["a"]}), false)
    });
    let want = HAND_WRITTEN.replace(
        "\"mid\" : { \"command\" : \"m\" }\n",
        "\"mid\" : { \"command\" : \"m\" },\n\t\t\"new\": {\n\t\t\t\"type\": \"stdio\",\n\t\t\t\"command\": \"n\",\n\t\t\t\"args\": [\n\t\t\t\t\"a\"\n\t\t\t]\n\t\t}\n",
    );
    assert_eq!(got, want);
}

#[test]
fn replacing_one_entry_or_one_value_touches_only_those_bytes() {
    let got = edited(HAND_WRITTEN, |d| {
        set_path(
            d,
            &["mcpServers", "alpha", "env", "A"],
            json!("${secret:a}"),
        )
    });
    assert_eq!(got, HAND_WRITTEN.replace("${HOME}", "${secret:a}"));

    // The window saves a whole entry: only its changed members change, inline stays inline.
    let got = edited(HAND_WRITTEN, |d| {
        set_server(
            d,
            "zeta",
            json!({"type": "stdio", "command": "npx", "args": ["-y", "pkg@2"]}),
            true,
        )
    });
    let want = HAND_WRITTEN.replace(
        "{\"command\": \"npx\", \"args\": [\"-y\",\"pkg\"]}",
        "{\"command\": \"npx\", \"args\": [\"-y\", \"pkg@2\"],\"type\": \"stdio\"}",
    );
    assert_eq!(got, want);
}

#[test]
fn removing_first_middle_last_and_only_entries_cuts_exactly_that_member() {
    let zeta = "\t\t\"zeta\": {\"command\": \"npx\", \"args\": [\"-y\",\"pkg\"]},\n\n";
    let cases: [(&[&str], String); 4] = [
        (&["zeta"], HAND_WRITTEN.replace(zeta, "")),
        (
            &["alpha"],
            HAND_WRITTEN.replace(
                ",\n\n\t\t\"alpha\": {\n\t\t\t\"url\": \"https://h/mcp\",\n\t\t\t\"env\":   {\"B\": \"1\", \"A\": \"${HOME}\"}\n\t\t}",
                "",
            ),
        ),
        (
            &["mid"],
            HAND_WRITTEN.replace(",\n\t\t\"mid\" : { \"command\" : \"m\" }", ""),
        ),
        (
            &["zeta", "alpha", "mid"],
            "{\n\t\"theme\": \"dark\",\n\t\"mcpServers\": {},\n\t\"x-note\": [1,2,3]\n}\n".into(),
        ),
    ];
    for (names, want) in cases {
        let got = edited(HAND_WRITTEN, |d| {
            names.iter().try_for_each(|n| remove_server(d, n))
        });
        assert_eq!(got, want, "removing {names:?}");
    }
}

#[test]
fn whitelist_and_import_only_add_what_they_add() {
    let got = edited(HAND_WRITTEN, |d| set_whitelist(d, &["10.0.0.0/8".into()]));
    assert_eq!(
        got,
        HAND_WRITTEN.replace(
            "[1,2,3]\n}",
            "[1,2,3],\n\t\"ssrfWhitelist\": [\n\t\t\"10.0.0.0/8\"\n\t]\n}"
        )
    );
    // Import goes through the same path: the user's entries keep their bytes.
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("claude_desktop_config.json");
    std::fs::write(&source, r#"{"mcpServers": {"imp": {"command": "i"}}}"#).unwrap();
    let sources = [crate::manage::import::Source::read(&source, None).unwrap()];
    let got = edited(HAND_WRITTEN, |d| {
        let plan = crate::manage::import::plan(d, &sources);
        crate::manage::import::apply(d, &plan);
        Ok(())
    });
    assert!(got.starts_with(&HAND_WRITTEN[..HAND_WRITTEN.find("\n\t},").unwrap()]));
    assert!(
        got.contains("\"imp\": {\n\t\t\t\"type\": \"stdio\""),
        "{got}"
    );
}

#[test]
fn inline_files_stay_inline_and_empty_objects_get_filled() {
    let cases = [
        (
            r#"{"mcpServers":{"a":{"command":"x"}}}"#,
            r#"{"mcpServers":{"a":{"command":"x"},"b": {"type": "stdio", "command": "y"}}}"#,
        ),
        (
            "{\n  \"mcpServers\": {}\n}",
            "{\n  \"mcpServers\": {\n    \"b\": {\n      \"type\": \"stdio\",\n      \"command\": \"y\"\n    }\n  }\n}",
        ),
        (
            "{}",
            "{\n  \"mcpServers\": {\n    \"b\": {\n      \"type\": \"stdio\",\n      \"command\": \"y\"\n    }\n  }\n}",
        ),
    ];
    for (before, want) in cases {
        let got = edited(before, |d| {
            set_server(d, "b", json!({"command": "y"}), false)
        });
        assert_eq!(got, want, "from {before}");
    }
}

#[test]
fn rewrite_always_means_the_wanted_document() {
    // Every combination of removing, changing and adding members over a few layouts: the
    // result parses to exactly the wanted document (rewrite checks this and says None if not).
    let layouts = [
        "{\"a\": 1, \"b\": {\"c\": [1]}, \"d\": \"x\"}",
        "{\n    \"a\": 1,\n    \"b\": {\n        \"c\": [1]\n    },\n    \"d\": \"x\"\n}",
        "{ \"a\":1 ,\"b\":{ \"c\":[1] } , \"d\":\"x\" , \"a\": 2}",
    ];
    for text in layouts {
        let old: Value = serde_json::from_str(text).unwrap();
        for mask in 0..64u32 {
            let mut new = old.clone();
            let map = new.as_object_mut().unwrap();
            for (bit, key) in ["a", "b", "d"].iter().enumerate() {
                if mask & (1 << bit) != 0 {
                    map.shift_remove(*key);
                }
            }
            if mask & 8 != 0 {
                map.insert("e".into(), json!({"f": [true, null]}));
            }
            if mask & 16 != 0 {
                set_path(&mut new, &["b", "c"], json!({"deep": 1})).unwrap();
            }
            if mask & 32 != 0 {
                set_path(&mut new, &["b", "g"], json!("new")).unwrap();
            }
            let out =
                rewrite_text(text, &new).unwrap_or_else(|| panic!("no rewrite of {text} to {new}"));
            assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), new, "{out}");
        }
    }
}

#[test]
fn a_config_with_a_byte_order_mark_is_edited_and_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    std::fs::write(&path, "\u{feff}{\n  \"mcpServers\": {}\n}\n").unwrap();
    update_file(&path, |doc| {
        set_path(
            doc,
            &["mcpServers", "a"],
            serde_json::json!({"command": "x"}),
        )
    })
    .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.starts_with('\u{feff}'), "{text:?}");
    assert_eq!(crate::config::load(&path).unwrap().servers.len(), 1);
}

#[test]
fn a_tool_policy_is_set_replaced_and_removed_without_leaving_an_empty_object() {
    let mut doc = json!({"mcpServers": {"a": {"command": "x"}}});
    set_tool_policy(&mut doc, "a", "write_*", Some(config::Policy::Ask)).unwrap();
    set_tool_policy(&mut doc, "a", "rm", Some(config::Policy::Deny)).unwrap();
    set_tool_policy(&mut doc, "a", "rm", Some(config::Policy::Allow)).unwrap();
    assert_eq!(
        doc["mcpServers"]["a"]["toolPolicy"],
        json!({"write_*": "ask", "rm": "allow"})
    );
    set_tool_policy(&mut doc, "a", "write_*", None).unwrap();
    set_tool_policy(&mut doc, "a", "rm", None).unwrap();
    assert_eq!(doc, json!({"mcpServers": {"a": {"command": "x"}}}));
    assert!(matches!(
        set_tool_policy(&mut doc, "b", "rm", Some(config::Policy::Deny)),
        Err(EditError::UnknownServer(_))
    ));
    assert!(matches!(
        set_tool_policy(&mut doc, "a", "[rm", Some(config::Policy::Deny)),
        Err(EditError::Invalid(_))
    ));
}
