//! Unit tests of [`super::BadAnswer`]: each kind of answer that is no answer reads as what came
//! back, quoted and escaped, and is found again through the wrappers rmcp puts around it.

use super::*;
use rmcp::model::{ErrorCode, ErrorData, JsonRpcError, JsonRpcVersion2_0};
use rmcp::service::ServiceError;
use rmcp::transport::DynamicTransportError;

fn request(id: RequestId) -> ClientJsonRpcMessage {
    serde_json::from_value(serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": "t" },
    }))
    .expect("a tools/call request")
}

fn server(value: serde_json::Value) -> ServerJsonRpcMessage {
    serde_json::from_value(value).expect("a server message")
}

fn of_body(body: &str) -> String {
    BadAnswer::of_body(body.as_bytes()).to_string()
}

#[test]
fn a_body_that_is_no_message_reads_as_what_it_is() {
    let long = format!("<html>{}</html>", "x".repeat(200));
    let cases = [
        ("", "the server answered with an empty body".to_owned()),
        (" \r\n", "the server answered with an empty body".to_owned()),
        (
            "oops: not json",
            r#"the server's answer is not JSON: expected value at line 1 column 1: "oops: not json""#
                .to_owned(),
        ),
        (
            "\u{1b}[31mred\u{7}\"q\"\n",
            r#"the server's answer is not JSON: expected value at line 1 column 1: "\u{1b}[31mred\u{7}\"q\"""#
                .to_owned(),
        ),
        (
            &long,
            format!(
                r#"the server's answer is not JSON: expected value at line 1 column 1: "<html>{}" (its first 120 bytes)"#,
                "x".repeat(114)
            ),
        ),
    ];
    for (body, want) in cases {
        assert_eq!(of_body(body), want, "{body:?}");
    }
    assert_eq!(
        of_body(r#"{"hello":"world"}"#),
        r#"the server's answer is not a JSON-RPC message: "{\"hello\":\"world\"}""#
    );
}

#[test]
fn a_prefix_cut_inside_a_character_drops_it() {
    let mut body = "a".repeat(PREFIX_MAX - 1).into_bytes();
    body.extend_from_slice("é and more".as_bytes());
    let prefix = Prefix::of(&body);
    assert!(prefix.cut);
    assert_eq!(prefix.text, "a".repeat(PREFIX_MAX - 1));
}

#[test]
fn an_answer_under_the_requests_id_is_its_answer() {
    let numeric = request(RequestId::Number(3));
    let answers = [
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "result": {}}),
        // rmcp matches a string that spells the number, and so do we.
        serde_json::json!({"jsonrpc": "2.0", "id": "3", "result": {}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -1, "message": "no"}}),
        // No id: the server could not read the request's; it is still the answer to the POST.
        serde_json::json!({"jsonrpc": "2.0", "error": {"code": -32700, "message": "parse"}}),
    ];
    for answer in answers {
        assert_eq!(
            BadAnswer::not_answering(&numeric, Some(200), &server(answer.clone())),
            None,
            "{answer}"
        );
    }
    let note: ClientJsonRpcMessage = serde_json::from_value(serde_json::json!({
        "jsonrpc": "2.0", "method": "notifications/initialized",
    }))
    .expect("a notification");
    let other = server(serde_json::json!({"jsonrpc": "2.0", "id": 9, "result": {}}));
    assert_eq!(BadAnswer::not_answering(&note, Some(200), &other), None);
}

#[test]
fn an_answer_to_something_else_says_what_it_was() {
    let ours = request(RequestId::String("fp-1".into()));
    let error = ServerJsonRpcMessage::Error(JsonRpcError {
        jsonrpc: JsonRpcVersion2_0,
        id: Some(RequestId::Number(999)),
        error: ErrorData::new(ErrorCode(-32603), "boom", None),
    });
    let cases = [
        (
            Some(500),
            error,
            "the server answered HTTP 500 Internal Server Error with a JSON-RPC error for another request (id 999): boom (JSON-RPC error -32603)",
        ),
        (
            Some(200),
            server(serde_json::json!({"jsonrpc": "2.0", "id": "fp-2", "result": {}})),
            r#"the server answered HTTP 200 OK with a result for another request (id "fp-2")"#,
        ),
        (
            None,
            server(
                serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": "hi"}}),
            ),
            r#"the server answered with a "notifications/message" notification instead of the result"#,
        ),
        (
            Some(200),
            server(serde_json::json!({"jsonrpc": "2.0", "id": 5, "method": "ping"})),
            r#"the server answered HTTP 200 OK with a "ping" request instead of the result"#,
        ),
    ];
    for (status, answer, want) in cases {
        let bad = BadAnswer::not_answering(&ours, status, &answer).expect("not the answer");
        assert_eq!(bad.to_string(), want);
    }
}

#[test]
fn a_bad_answer_is_found_through_rmcps_wrappers() {
    let wrap = |e: HttpError| {
        ServiceError::TransportSend(DynamicTransportError::from_parts(
            "rmcp::transport::worker::WorkerTransport<Some<Type>>",
            std::any::TypeId::of::<()>(),
            Box::new(e),
        ))
    };
    let cases = [
        (
            BadAnswer::NoResult { status: 202 }.into_error(),
            "the server answered HTTP 202 Accepted with no result",
        ),
        (
            StreamableHttpError::UnexpectedContentType(Some("text/plain".into())),
            r#"the server answered with content type "text/plain", not application/json or text/event-stream"#,
        ),
        (
            StreamableHttpError::UnexpectedContentType(None),
            "the server answered without a content type, not with application/json or text/event-stream",
        ),
    ];
    for (e, want) in cases {
        let ServiceError::TransportSend(send) = wrap(e) else {
            unreachable!("wrap makes a TransportSend")
        };
        let found = BadAnswer::find(send.error.as_ref()).expect("found");
        assert_eq!(found.to_string(), want);
        assert_eq!(
            crate::upstream::error_text::describe(send.error.as_ref()),
            want
        );
    }
    assert_eq!(
        BadAnswer::find(&StreamableHttpError::<reqwest::Error>::SessionExpired),
        None
    );
}

#[test]
fn invalid_content_blocks_are_named_by_index_and_field() {
    let cases = [
        (
            r#"{"content":[{"type":"text","text":"ok"},{"type":"blob","data":"AA"}]}"#,
            Some(
                r#"content block 1: field "type" is "blob" (expected one of text, image, audio, resource_link, resource)"#,
            ),
        ),
        (
            r#"{"content":[{"type":"image","data":"AA"}]}"#,
            Some(r#"content block 0 (type "image"): field "mimeType" is missing or not a string"#),
        ),
        (
            r#"{"content":[{"text":"no type"}]}"#,
            Some(r#"content block 0: field "type" is missing"#),
        ),
        (
            r#"{"content":[7]}"#,
            Some("content block 0 is not an object"),
        ),
        (
            r#"{"content":[{"type":"text","text":"ok"},{"type":"resource","resource":{"uri":"a:b","text":"x"}}]}"#,
            None,
        ),
    ];
    for (json, want) in cases {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(content_problem(&v).as_deref(), want, "{json}");
    }
    let body = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"ok"},{"type":"image","data":"AA"}]}}"#;
    assert_eq!(
        of_body(body),
        r#"the server sent an invalid result: content block 1 (type "image"): field "mimeType" is missing or not a string"#
    );
}
