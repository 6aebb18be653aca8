use super::reply::ONE_WRITE;
use super::*;

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_owned()).expect("json")
}

#[test]
fn a_result_that_may_name_a_uri_is_told_from_one_that_cannot() {
    for may in [
        r#"{"content":[{"type":"resource_link","uri":"demo://a","name":"a"}]}"#,
        r#"{"content":[],"_meta":{"ui":{"resourceUri":"ui://app"}}}"#,
        r#"{"content":[],"structuredContent":{"uri":"file:///x"}}"#,
        // The key spelt with an escape.
        r#"{"content":[],"structuredContent":{"\u0075ri":"file:///x"}}"#,
    ] {
        assert!(may_name_a_uri(may), "{may}");
    }
    for cannot in [
        r#"{"content":[{"type":"text","text":"the uri is demo://a"}]}"#,
        r#"{"content":[{"type":"text","text":"Echo: \"hello\""}]}"#,
    ] {
        assert!(!may_name_a_uri(cannot), "{cannot}");
    }
}

#[test]
fn a_task_augmented_call_is_told_from_a_plain_one() {
    let task = r#"{"name":"t","arguments":{},"task":{"ttl":60000}}"#;
    assert!(is_task_augmented(&raw(task)));
    // The key spelt with an escape is the same key.
    assert!(is_task_augmented(&raw(r#"{"name":"t","\u0074ask":{}}"#)));
    // Never forwarded as an ordinary call: its params do not fit the fast path's.
    assert!(serde_json::from_str::<CallParams<'_>>(task).is_err());
    for plain in [
        r#"{"name":"t","arguments":{"task":1}}"#,
        r#"{"name":"t"}"#,
        r#"{"name":"\u0074"}"#,
        "[]",
    ] {
        assert!(!is_task_augmented(&raw(plain)), "{plain}");
    }
}

#[test]
fn plain_results_are_recognised_and_odd_ones_are_not() {
    assert!(is_plain_result(&raw(
        r#"{"content":[{"type":"text","text":"hi"}]}"#
    )));
    assert!(is_plain_result(&raw(
        r#"{"content":[],"structuredContent":{"a":1},"isError":false,"_meta":{"k":1}}"#
    )));
    assert!(is_plain_result(&raw(
        r#"{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}"#
    )));
    assert!(is_plain_result(&raw(
        r#"{"content":[{"type":"future_kind","x":{}}],"extraTopLevel":1}"#
    )));
    for odd in [
        r#"{"content":[{"type":"text","text":5}]}"#,
        r#"{"content":[{"type":"image","data":"AA=="}]}"#,
        r#"{"content":[{"type":"resource","resource":{}}]}"#,
        r#"{"content":[],"task":{}}"#,
        r#"{"tools":[]}"#,
        r#"{"content":[],"isError":true}"#,
        r#"{"content":[],"resultType":"complete"}"#,
        r#"{"content":"text"}"#,
        "[]",
    ] {
        assert!(!is_plain_result(&raw(odd)), "{odd}");
    }
}

#[test]
fn a_spliced_reply_carries_the_agents_id_and_the_result_bytes_unchanged() {
    for size in [10, ONE_WRITE + 10] {
        let text = "x".repeat(size);
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"fp-1\",\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}}}}\n"
        )
        .into_bytes();
        let answer: Answer<'_> = serde_json::from_slice(&line).expect("answer");
        let result = answer.result.expect("result");
        let range = range_in(&line, result).expect("inside");
        let expected = result.get().to_owned();
        let reply = Reply::spliced("\"a\\\"b\"", line.clone(), range);
        // The log's copy of the result is the reply's own bytes, not a new buffer.
        let logged = reply.result_json();
        assert_eq!(&logged[..], expected.as_bytes());
        assert_eq!(logged.as_ptr(), reply.result_json().as_ptr());
        let bytes = reply.bytes();
        assert_eq!(bytes.last(), Some(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
        assert_eq!(v["id"], "a\"b");
        assert_eq!(
            v["result"]["content"][0]["text"].as_str().map(str::len),
            Some(size)
        );
        let text = String::from_utf8(bytes).expect("utf-8");
        assert!(text.contains(&expected), "result bytes changed");
    }
}

#[test]
fn the_request_frame_renames_and_keeps_arguments_as_sent() {
    let args = raw(r#"{"b": 1,"a":[2]}"#);
    let frame = request_frame("\"fp-3\"", "odd \"name\"", Some(args.get()), None);
    let text = String::from_utf8(frame).expect("utf-8");
    assert_eq!(
        text,
        "{\"jsonrpc\":\"2.0\",\"id\":\"fp-3\",\"method\":\"tools/call\",\"params\":{\"name\":\"odd \\\"name\\\"\",\"arguments\":{\"b\": 1,\"a\":[2]}}}\n"
    );
    let bare = request_frame("\"fp-4\"", "t", None, Some(r#"{"k":1}"#));
    assert!(
        !String::from_utf8(bare)
            .expect("utf-8")
            .contains("arguments")
    );
}

#[test]
fn ids_and_meta_are_judged() {
    assert!(plain_id(&raw("\"x\"")));
    assert!(plain_id(&raw("-12")));
    assert!(!plain_id(&raw("1.0")));
    assert!(!plain_id(&raw("1e3")));
    assert!(needs_slow_path(&raw(r#"{"progressToken":"t"}"#)));
    assert!(!needs_slow_path(&raw(r#"{"other":1}"#)));
    assert!(
        needs_slow_path(&raw("[]")),
        "an odd _meta goes the slow way"
    );
    assert!(
        needs_slow_path(&raw(
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#
        )),
        "a 2026-07-28 request goes the slow way"
    );
    assert_eq!(
        id_key(&serde_json::json!("\u{31}")),
        id_key(&serde_json::json!("1"))
    );
    assert_ne!(
        id_key(&serde_json::json!(1)),
        id_key(&serde_json::json!("1"))
    );
}
