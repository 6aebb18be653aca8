//! Property tests and the corpus replay over [`parse`] and [`save_atomic`], the entry points of
//! the `config` fuzz target (`fuzz/fuzz_targets/config.rs`). Run longer with
//! `PROPTEST_CASES=…` (see `tests/fuzz.sh`).

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::{ConfigError, load, parse, save_atomic};

/// What must hold for any text: no panic; a syntax error names a line; a document that parses
/// survives a save and a reload with the same servers.
fn check(text: &str) {
    let origin = Path::new("config.json");
    match parse(text, origin) {
        Err(ConfigError::Syntax { line, message, .. }) => {
            assert!(line >= 1, "{message}");
        }
        Err(_) => {}
        Ok(cfg) => {
            let dir = tempfile::tempdir().expect("tempdir");
            let path = dir.path().join("config.json");
            save_atomic(&path, &cfg.raw).expect("a parsed config saves");
            let again = load(&path).expect("a saved config loads");
            assert_eq!(
                again.valid_servers().collect::<Vec<_>>(),
                cfg.valid_servers().collect::<Vec<_>>()
            );
            assert_eq!(again.servers.len(), cfg.servers.len());
        }
    }
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (0.0..1e6f64).prop_map(Value::from),
        prop_oneof![
            Just("stdio".to_owned()),
            Just("sse".to_owned()),
            Just("http".to_owned()),
            Just("streamableHttp".to_owned()),
            Just("https://example.com/mcp".to_owned()),
            Just("${HOME}/x".to_owned()),
            Just("$${literal".to_owned()),
            ".{0,10}",
        ]
        .prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(2, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Entry keys the parser knows, plus noise.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(super::entry::KNOWN_KEYS.to_vec()).prop_map(str::to_owned),
        "[a-zA-Z_]{1,8}",
    ]
}

/// Documents shaped like configs: server entries with known keys holding any JSON.
fn document() -> impl Strategy<Value = Value> {
    let entry = prop::collection::btree_map(key(), json_value(), 0..6)
        .prop_map(|m| Value::Object(m.into_iter().collect()));
    (
        prop::collection::btree_map(".{0,8}", prop_oneof![entry, json_value()], 0..4),
        prop::option::of(json_value()),
    )
        .prop_map(|(servers, whitelist)| {
            let mut doc = json!({ "mcpServers": Value::Object(servers.into_iter().collect()) });
            if let Some(w) = whitelist {
                doc["ssrfWhitelist"] = w;
            }
            doc
        })
}

/// Cases per property: `PROPTEST_CASES` when set (tests/fuzz.sh), else 64 (each case saves and
/// reloads a file).
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn any_text_parses_or_fails_cleanly(text in ".{0,200}") {
        check(&text);
    }

    #[test]
    fn config_shaped_documents_parse_save_and_reload(doc in document()) {
        check(&doc.to_string());
        check(&serde_json::to_string_pretty(&doc).expect("json"));
    }
}

/// Replays `fuzz/corpus/config`: one document per file, as the fuzz target sees it.
#[test]
fn the_config_corpus_parses_or_fails_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/config");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz/corpus/config") {
        let bytes = std::fs::read(entry.expect("entry").path()).expect("read");
        check(&String::from_utf8_lossy(&bytes));
        seen += 1;
    }
    assert!(seen >= 10, "corpus has only {seen} inputs");
}
