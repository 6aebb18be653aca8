//! Property tests of how a stdio session reads one line from its server (the proptest engine of
//! `tests/fuzz.sh`), over generated lines and the corpus `fuzz/corpus/server_line`:
//!
//! - only an answer is an answer: a line with a `method` (a server request, even one reusing
//!   the id `"fp-<n>"` of one of our fast-lane requests) is never taken for the fast-lane
//!   answer it imitates, and a line taken for one carries that very id;
//! - an answer is never left unread: any JSON object with a string or integer `id` and no
//!   `method` becomes, for rmcp, a response or an error under that same id — one it cannot
//!   read (both `result` and `error`, neither, a bad error object) an error at once, a listing
//!   with an item nested past the parser's limit the listing without that item;
//! - no line panics the reader, whatever its bytes.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::super::FastLane;
use super::super::peek::fast_id;
use super::decode;

/// The rules above, for one line.
fn check(lane: &FastLane, line: &[u8]) {
    let fast = fast_id(line);
    let decoded = decode(line, lane);
    let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(line) else {
        return;
    };
    let answers = fields.contains_key("result") || fields.contains_key("error");
    if fields.contains_key("method") && !answers {
        assert_eq!(fast, None, "a server request taken for an answer");
    }
    if let Some(n) = fast {
        assert_eq!(fields.get("id"), Some(&json!(format!("fp-{n}"))));
    }
    let id = fields
        .get("id")
        .filter(|id| id.is_string() || id.is_i64())
        .filter(|_| !fields.contains_key("method"));
    if let Some(id) = id {
        let message = decoded.expect("an answer was dropped");
        let wire = serde_json::to_value(&message).expect("encodes");
        assert_eq!(&wire["id"], id, "{wire}");
        assert!(
            wire.get("result").is_some() != wire.get("error").is_some(),
            "{wire}"
        );
    }
}

/// `depth` nested arrays around `0`.
fn nested(depth: usize) -> String {
    format!("{}0{}", "[".repeat(depth), "]".repeat(depth))
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
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

/// Lines shaped like what a server sends: answers to our requests (fast-lane `"fp-<n>"` ids,
/// rmcp's numbers, others), its own requests (possibly reusing our ids), answers with both
/// `result` and `error` or neither, listings with items nested past the parser's limit.
fn server_line() -> impl Strategy<Value = String> {
    let id = prop_oneof![
        (0u64..1000).prop_map(|n| json!(format!("fp-{n}"))),
        any::<u32>().prop_map(Value::from),
        "[a-z0-9-]{0,6}".prop_map(Value::from),
        json_value(),
    ];
    let method = prop_oneof![
        Just("ping"),
        Just("roots/list"),
        Just("elicitation/create"),
        Just("notifications/progress"),
        Just("x/unknown"),
    ];
    let error = prop_oneof![
        (any::<i32>(), ".{0,12}")
            .prop_map(|(code, message)| json!({"code": code, "message": message})),
        json_value(),
    ];
    let result = prop_oneof![
        json_value(),
        Just(json!({"content": [{"type": "text", "text": "ok"}]})),
        Just(json!({"tools": [{"name": "fine", "inputSchema": {"type": "object"}}]})),
    ];
    (
        prop::option::of(id),
        prop::option::of(method),
        prop::option::of(result),
        prop::option::of(error),
        any::<bool>(),
        0usize..4,
    )
        .prop_map(|(id, method, result, error, jsonrpc, member_order)| {
            let mut members: Vec<(&str, Value)> = Vec::new();
            if jsonrpc {
                members.push(("jsonrpc", json!("2.0")));
            }
            members.extend(id.map(|v| ("id", v)));
            members.extend(method.map(|m| ("method", json!(m))));
            members.extend(result.map(|v| ("result", v)));
            members.extend(error.map(|v| ("error", v)));
            let turn = member_order % members.len().max(1);
            members.rotate_left(turn);
            let body: Vec<String> = members
                .iter()
                .map(|(k, v)| format!("{}:{v}", json!(k)))
                .collect();
            format!("{{{}}}", body.join(","))
        })
}

/// A runtime for the lane (its sweeper and its `-32600` answers are tasks).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

proptest! {
    #[test]
    fn any_bytes_are_read_without_panicking(line in prop::collection::vec(any::<u8>(), 0..256)) {
        let rt = runtime();
        rt.block_on(async { check(&FastLane::new(tokio::io::sink()), &line) });
    }

    #[test]
    fn server_lines_are_read_by_the_rules(line in server_line()) {
        let rt = runtime();
        rt.block_on(async { check(&FastLane::new(tokio::io::sink()), line.as_bytes()) });
    }

    #[test]
    fn a_listing_item_nested_too_deep_is_dropped_not_the_listing(depth in 100usize..400) {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"tools":[{{"name":"deep","inputSchema":{{"type":"object","default":{}}}}},{{"name":"fine","inputSchema":{{"type":"object"}}}}]}}}}"#,
            nested(depth)
        );
        let rt = runtime();
        let wire = rt.block_on(async {
            let lane = FastLane::new(tokio::io::sink());
            check(&lane, line.as_bytes());
            serde_json::to_value(decode(line.as_bytes(), &lane)).expect("encodes")
        });
        let names: Vec<&Value> = wire["result"]["tools"]
            .as_array()
            .map(|tools| tools.iter().map(|t| &t["name"]).collect())
            .unwrap_or_default();
        // Readable whole, both tools; else the listing without the one too deep.
        prop_assert!(names.contains(&&json!("fine")), "{}", wire);
    }

    #[test]
    fn a_tool_too_deep_for_its_place_in_the_listing_is_dropped(depth in 120usize..130) {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"tools":[{{"name":"deep","inputSchema":{{"type":"object","default":{}}}}},{{"name":"fine","inputSchema":{{"type":"object"}}}}]}}}}"#,
            nested(depth)
        );
        let rt = runtime();
        let wire = rt.block_on(async {
            let lane = FastLane::new(tokio::io::sink());
            serde_json::to_value(decode(line.as_bytes(), &lane)).expect("encodes")
        });
        prop_assert!(wire["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{}", wire);
    }
}

/// Replays `fuzz/corpus/server_line`: one line per `\n`-separated piece of each file.
#[tokio::test]
async fn the_server_line_corpus_is_read_by_the_rules() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/server_line");
    let lane = FastLane::new(tokio::io::sink());
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz/corpus/server_line") {
        let bytes = std::fs::read(entry.expect("entry").path()).expect("read");
        for line in bytes.split(|b| *b == b'\n') {
            check(&lane, line);
        }
        seen += 1;
    }
    assert!(seen >= 6, "corpus has only {seen} inputs");
}
