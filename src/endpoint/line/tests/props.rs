//! Property tests and the corpus replay over [`judge`], the same entry point as the `endpoint`
//! fuzz target (`fuzz/fuzz_targets/endpoint.rs`). Run longer with `PROPTEST_CASES=…` (see
//! `tests/fuzz.sh`).

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::super::{Verdict, judge};
use rmcp::model::{ClientRequest, JsonRpcMessage};

/// Methods the endpoint serves, whose params it judges.
const SERVED: [&str; 5] = [
    "tools/call",
    "tools/list",
    "initialize",
    "logging/setLevel",
    "ping",
];

/// What must hold for any line: no panic; an answer is a JSON-RPC error with a standard
/// code and a usable id; a notification (`"jsonrpc": "2.0"`, a string `method`, no `id`)
/// is never answered, and other objects without `id` are answered with `null`; a valid id
/// is echoed; a delivered request for a served method is typed, never a custom request.
fn check(line: &[u8]) {
    let verdict = judge(line);
    let parsed: Option<Value> = serde_json::from_slice(line).ok();
    match &verdict {
        Verdict::Answer { id, error } => {
            assert!(
                matches!(error.code.0, -32700 | -32600 | -32602),
                "{error:?}"
            );
            assert!(
                id.is_null() || id.is_string() || id.is_i64() || id.is_u64() || id.is_f64(),
                "{id}"
            );
            let wire = json!({"jsonrpc": "2.0", "id": id, "error": error});
            assert!(wire["error"]["message"].is_string());
            if let Some(Value::Object(fields)) = &parsed {
                let notification = !fields.contains_key("id")
                    && fields.get("jsonrpc") == Some(&json!("2.0"))
                    && fields.get("method").is_some_and(Value::is_string)
                    && !fields.contains_key("result")
                    && !fields.contains_key("error");
                assert!(!notification, "a notification was answered: {fields:?}");
                if !fields.contains_key("id") {
                    assert!(id.is_null(), "{id}");
                }
                match fields.get("id") {
                    // A float that lost digits of the integer sent cannot be echoed.
                    Some(Value::Number(n))
                        if n.is_f64()
                            && n.as_f64()
                                .is_some_and(|f| f.fract() == 0.0 && f.abs() >= 2f64.powi(53)) =>
                    {
                        assert!(id.is_null(), "{id}");
                    }
                    Some(sent @ (Value::String(_) | Value::Number(_))) => assert_eq!(id, sent),
                    _ => {}
                }
            }
        }
        Verdict::Deliver(message) => {
            if let JsonRpcMessage::Request(request) = message.as_ref()
                && let ClientRequest::CustomRequest(custom) = &request.request
            {
                assert!(
                    !SERVED.contains(&custom.method.as_str())
                        || custom.params.as_ref().is_none_or(Value::is_null),
                    "a served method with bad params went to rmcp: {custom:?}"
                );
            }
        }
        Verdict::Ignore => {}
    }
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,12}".prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Objects shaped like JSON-RPC messages, each member possibly missing or wrong.
fn message() -> impl Strategy<Value = Value> {
    let method = prop_oneof![
        prop::sample::select(SERVED.to_vec()).prop_map(str::to_owned),
        Just("notifications/initialized".to_owned()),
        Just("notifications/cancelled".to_owned()),
        "[a-z/]{1,12}",
    ];
    (
        prop::option::of(prop_oneof![Just(json!("2.0")), json_leaf()]),
        prop::option::of(prop_oneof![
            any::<u32>().prop_map(Value::from),
            "[a-z0-9]{1,6}".prop_map(Value::from),
            json_value()
        ]),
        prop::option::of(method),
        prop::option::of(json_value()),
    )
        .prop_map(|(jsonrpc, id, method, params)| {
            let mut m = Map::new();
            for (k, v) in [
                ("jsonrpc", jsonrpc),
                ("id", id),
                ("method", method.map(Value::from)),
                ("params", params),
            ] {
                if let Some(v) = v {
                    m.insert(k.to_owned(), v);
                }
            }
            Value::Object(m)
        })
}

proptest! {
    #[test]
    fn any_bytes_are_judged_without_panicking(line in prop::collection::vec(any::<u8>(), 0..256)) {
        check(&line);
    }

    #[test]
    fn any_json_text_is_judged_by_the_rules(value in json_value()) {
        check(value.to_string().as_bytes());
    }

    #[test]
    fn message_shaped_objects_are_judged_by_the_rules(value in message()) {
        check(value.to_string().as_bytes());
    }
}

/// Replays `fuzz/corpus/endpoint`: one input per file, as the fuzz target sees it.
#[test]
fn the_endpoint_corpus_is_judged_by_the_rules() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/endpoint");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz/corpus/endpoint") {
        let bytes = std::fs::read(entry.expect("entry").path()).expect("read");
        for line in bytes.split(|b| *b == b'\n') {
            check(line);
        }
        seen += 1;
    }
    assert!(seen >= 10, "corpus has only {seen} inputs");
}
