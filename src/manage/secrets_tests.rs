//! Tests of the plain-text → keychain migration plan.

use super::*;
use crate::secret::MemoryStore;
use serde_json::json;

fn doc() -> Value {
    json!({
        "mcpServers": {
            "gh": {"command": "x", "env": {"GITHUB_TOKEN": "ghp_plain", "LOG_LEVEL": "debug",
                                          "API_KEY": "${API_KEY}", "EMPTY_SECRET": ""}},
            "docs": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer tok123",
                                                        "X-Trace": "1"}},
            "other": {"command": "y", "env": {"DB_PASSWORD": "hunter2"}}
        },
        "ssrfWhitelist": []
    })
}

#[test]
fn secret_looking_keys_are_recognised() {
    for k in [
        "GITHUB_TOKEN",
        "api_key",
        "ClientSecret",
        "DB_PASSWORD",
        "Authorization",
        "x-api-key",
        "PASSWD",
    ] {
        assert!(looks_secret(k), "{k}");
    }
    for k in ["LOG_LEVEL", "PATH", "X-Trace", "HOME"] {
        assert!(!looks_secret(k), "{k}");
    }
}

#[test]
fn plan_picks_plain_secret_values_only_and_keeps_the_scheme() {
    let store = MemoryStore::new();
    let moves = plan(&doc(), None, &store).unwrap();
    // In file order (the document keeps its key order).
    let got: Vec<(&str, &str, &str, &str)> = moves
        .iter()
        .map(|m| {
            (
                m.server.as_str(),
                m.field.as_str(),
                m.secret.as_str(),
                m.reference.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "gh",
                "env.GITHUB_TOKEN",
                "gh.GITHUB_TOKEN",
                "${secret:gh.GITHUB_TOKEN}"
            ),
            (
                "docs",
                "headers.Authorization",
                "docs.Authorization",
                "Bearer ${secret:docs.Authorization}"
            ),
            (
                "other",
                "env.DB_PASSWORD",
                "other.DB_PASSWORD",
                "${secret:other.DB_PASSWORD}"
            ),
        ]
    );
    let shown = format!("{moves:?} {}", serde_json::to_string(&moves).unwrap());
    for v in ["ghp_plain", "tok123", "hunter2"] {
        assert!(!shown.contains(v), "{shown}");
    }
    let only = plan(&doc(), Some(&["gh".to_owned()]), &store).unwrap();
    assert_eq!(only.len(), 1);
}

#[test]
fn apply_stores_values_then_rewrites_only_those_fields() {
    let store = MemoryStore::new();
    let mut d = doc();
    let moves = plan(&d, None, &store).unwrap();
    assert_eq!(apply(&mut d, &moves, &store), Ok(3));
    assert_eq!(store.get("docs.Authorization"), Ok(Some("tok123".into())));
    assert_eq!(store.get("gh.GITHUB_TOKEN"), Ok(Some("ghp_plain".into())));
    assert_eq!(store.get("other.DB_PASSWORD"), Ok(Some("hunter2".into())));
    let mut want = doc();
    want["mcpServers"]["gh"]["env"]["GITHUB_TOKEN"] = json!("${secret:gh.GITHUB_TOKEN}");
    want["mcpServers"]["docs"]["headers"]["Authorization"] =
        json!("Bearer ${secret:docs.Authorization}");
    want["mcpServers"]["other"]["env"]["DB_PASSWORD"] = json!("${secret:other.DB_PASSWORD}");
    assert_eq!(d, want);
    // Running again finds nothing left to move.
    assert!(plan(&d, None, &store).unwrap().is_empty());
}

#[test]
fn a_taken_name_with_another_value_gets_a_suffix_and_a_same_value_is_reused() {
    let store = MemoryStore::with(&[
        ("gh.GITHUB_TOKEN", "older"),
        ("other.DB_PASSWORD", "hunter2"),
    ]);
    let moves = plan(&doc(), None, &store).unwrap();
    let gh = moves.iter().find(|m| m.server == "gh").unwrap();
    assert_eq!(gh.secret, "gh.GITHUB_TOKEN-2");
    assert!(!gh.already_stored);
    let other = moves.iter().find(|m| m.server == "other").unwrap();
    assert_eq!(other.secret, "other.DB_PASSWORD");
    assert!(other.already_stored);
    let mut d = doc();
    assert_eq!(apply(&mut d, &moves, &store), Ok(2));
    assert_eq!(store.get("gh.GITHUB_TOKEN"), Ok(Some("older".into())));
}

#[test]
fn a_keychain_failure_leaves_the_document_untouched() {
    let store = crate::secret::NoKeychain {
        detail: "none".into(),
    };
    assert!(matches!(
        plan(&doc(), None, &store),
        Err(SecretError::Unavailable { .. })
    ));
    let mem = MemoryStore::new();
    let moves = plan(&doc(), None, &mem).unwrap();
    let mut d = doc();
    assert!(apply(&mut d, &moves, &store).is_err());
    assert_eq!(d, doc());
}
