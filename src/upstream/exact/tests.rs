use super::*;
use rmcp::model::{NumberOrString, RequestId, ResultType};
use serde_json::json;

fn id() -> RequestId {
    NumberOrString::Number(7)
}

#[test]
fn a_response_line_carries_the_text_and_a_result_type_only_when_missing() {
    let text = r#"{"content":[],"n":123456789012345678901234567890}"#;
    let line = response_line(&id(), text, None).unwrap_or_default();
    assert_eq!(
        String::from_utf8_lossy(&line),
        format!(r#"{{"jsonrpc":"2.0","id":7,"result":{text}}}"#)
    );
    let line = response_line(&id(), text, Some(&ResultType::COMPLETE)).unwrap_or_default();
    let line = String::from_utf8_lossy(&line);
    assert!(
        line.contains(r#""result":{"resultType":"complete","content":[]"#),
        "{line}"
    );
    let empty = response_line(&id(), "{}", Some(&ResultType::COMPLETE)).unwrap_or_default();
    let empty: Value = serde_json::from_slice(&empty).unwrap_or_default();
    assert_eq!(empty["result"], json!({"resultType": "complete"}));
}

#[test]
fn a_result_with_unknown_blocks_is_typed_with_the_known_ones_and_keeps_all() {
    let value = json!({"content": [{"type": "future_kind", "x": 1}, {"type": "text", "text": "t"}],
        "extra": true});
    let Some(mut result) = tool_result(value.clone()) else {
        panic!("no result");
    };
    assert_eq!(result.content.len(), 1);
    let text = take_result(&mut result).unwrap_or_default();
    assert_eq!(serde_json::from_str::<Value>(&text).ok(), Some(value));
    assert!(result.meta.is_none());
}

#[test]
fn a_malformed_known_block_or_no_content_is_no_tool_result() {
    assert!(tool_result(json!({"content": [{"type": "image"}]})).is_none());
    assert!(tool_result(json!({"contents": []})).is_none());
}

#[test]
fn a_call_line_carries_the_agent_arguments_and_the_rest_as_typed() {
    use rmcp::model::{
        CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, JsonRpcRequest,
    };
    let text = r#"{"big":123456789012345678901234567890}"#;
    let raw: Arc<RawValue> = Arc::from(RawValue::from_string(text.to_owned()).unwrap_or_default());
    let typed: rmcp::model::JsonObject = serde_json::from_str(text).unwrap_or_default();
    let exact = same_arguments(&raw, Some(&typed));
    assert!(exact.is_some());
    assert!(same_arguments(&raw, None).is_none());

    let mut params = CallToolRequestParams::new("t");
    params.arguments = Some(typed);
    let mut call = CallToolRequest::new(params);
    call.extensions.insert(exact.unwrap_or(ExactArguments(raw)));
    let message = ClientJsonRpcMessage::Request(JsonRpcRequest::new(
        id(),
        ClientRequest::CallToolRequest(call),
    ));
    let line = String::from_utf8(call_line(&message).unwrap_or_default()).unwrap_or_default();
    assert_eq!(
        line,
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"arguments":{text},"name":"t"}}}}"#
        )
    );
}
