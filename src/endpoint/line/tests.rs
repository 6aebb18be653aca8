//! Each kind of bad line gets its JSON-RPC answer and the connection goes on.

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

use rmcp::model::{ClientRequest, JsonRpcMessage};

use super::*;

const MAX_LINE: usize = 4096;

struct Wire {
    transport: LineTransport<ReadHalf<DuplexStream>, WriteHalf<DuplexStream>>,
    agent_out: WriteHalf<DuplexStream>,
    agent_in: Lines<BufReader<ReadHalf<DuplexStream>>>,
}

fn wire() -> Wire {
    let (agent, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    let (agent_read, agent_out) = tokio::io::split(agent);
    Wire {
        transport: LineTransport::new(server_read, server_write, MAX_LINE),
        agent_out,
        agent_in: BufReader::new(agent_read).lines(),
    }
}

impl Wire {
    async fn send(&mut self, line: &str) {
        self.agent_out
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write");
    }

    async fn answer(&mut self) -> Value {
        let line = self
            .agent_in
            .next_line()
            .await
            .expect("read")
            .expect("a line");
        serde_json::from_str(&line).expect("JSON")
    }

    /// Sends a ping with `id` and returns what rmcp would receive for it.
    async fn ping_passes(&mut self, id: u64) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string())
            .await;
        let message = self.transport.receive().await.expect("a message");
        let JsonRpcMessage::Request(request) = message else {
            panic!("not a request: {message:?}");
        };
        assert!(
            matches!(request.request, ClientRequest::PingRequest(_)),
            "{request:?}"
        );
        assert_eq!(serde_json::to_value(&request.id).expect("id"), json!(id));
    }
}

#[tokio::test]
async fn each_bad_line_gets_its_answer_and_the_connection_goes_on() {
    let oversized = format!("{{\"x\": \"{}\"}}", "a".repeat(MAX_LINE * 3));
    let cases: Vec<(String, Value, i32, &str)> = vec![
        ("not json".into(), Value::Null, -32700, "parse error"),
        // JSON nested past the parser's recursion limit: the id is still read.
        (format!(r#"{{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{{"name":"x","arguments":{{"a":{}{}}},"_meta":{{"progressToken":"p"}}}}}}"#, "[".repeat(200), "]".repeat(200)), json!(11), -32700, "recursion limit"),
        (format!(r#"{{"jsonrpc":"2.0","method":"tools/call","params":{}{}}}"#, "[".repeat(200), "]".repeat(200)), Value::Null, -32700, "recursion limit"),
        ("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"".into(), Value::Null, -32700, "parse error"),
        (oversized, Value::Null, -32700, "longer than 4096 bytes"),
        ("[1, 2]".into(), Value::Null, -32600, "invalid request"),
        ("42".into(), Value::Null, -32600, "invalid request"),
        (r#"{"jsonrpc": "2.0", "id": {"no": 1}, "method": "ping"}"#.into(), Value::Null, -32600, "invalid request"),
        (r#"{"jsonrpc": "1.0", "id": 4, "method": "ping"}"#.into(), json!(4), -32600, "invalid request"),
        (r#"{"jsonrpc": "2.0", "id": 5, "method": "tools/call"}"#.into(), json!(5), -32602, "invalid params for tools/call: params are missing"),
        (r#"{"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": {"name": 5}}"#.into(), json!("s"), -32602, "invalid params for tools/call"),
        (r#"{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x", "arguments": "text"}}"#.into(), json!(7), -32602, "invalid params for tools/call"),
        (r#"{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": []}"#.into(), json!(8), -32602, "invalid params for tools/call"),
        (r#"{"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"cursor": 3}}"#.into(), json!(9), -32602, "invalid params for tools/list"),
        (r#"{"jsonrpc": "2.0", "id": 10, "method": "ping", "params": 1}"#.into(), json!(10), -32602, "invalid params for ping"),
        // JSON-RPC 2.0 §5: an invalid Request object is answered even without an id.
        (r#"{"jsonrpc": "2.0"}"#.into(), Value::Null, -32600, "invalid request: \"method\" is missing"),
        (r#"{"jsonrpc": "2.0", "id": 12}"#.into(), json!(12), -32600, "invalid request: \"method\" is missing"),
        (r#"{"jsonrpc": "1.0", "method": "notifications/initialized"}"#.into(), Value::Null, -32600, "\"jsonrpc\" must be \"2.0\", not \"1.0\""),
        (r#"{"jsonrpc": "2.0", "method": 5}"#.into(), Value::Null, -32600, "\"method\" must be a string, not 5"),
        (r#"{"jsonrpc": "2.0", "id": 13, "method": 5}"#.into(), json!(13), -32600, "\"method\" must be a string, not 5"),
        ("[]".into(), Value::Null, -32600, "an empty batch"),
        (r#"{"jsonrpc": "2.0", "id": 14, "method": "tasks/get", "params": "x"}"#.into(), json!(14), -32602, "invalid params for tasks/get: params must be an object with \"taskId\""),
        (r#"{"jsonrpc": "2.0", "id": 15, "method": "tools/call", "params": "x"}"#.into(), json!(15), -32602, "invalid params for tools/call: params must be an object with \"name\""),
        (r#"{"jsonrpc": "2.0", "id": 16, "method": "prompts/get", "params": {"name": "p", "arguments": {"a": 5}}}"#.into(), json!(16), -32602, "invalid params for prompts/get: argument \"a\" must be a string, not 5"),
        (r#"{"jsonrpc": "2.0", "id": 17, "method": "no/such", "params": "x"}"#.into(), json!(17), -32600, "\"params\" must be an object, not \"x\""),
    ];
    let mut w = wire();
    for (n, (line, id, code, message)) in cases.into_iter().enumerate() {
        w.send(&line).await;
        // The answer is written before the next line is read, so the ping below comes after it.
        let ping = 1000 + n as u64;
        w.ping_passes(ping).await;
        let answer = w.answer().await;
        assert_eq!(answer["jsonrpc"], "2.0", "{line}: {answer}");
        assert_eq!(answer["id"], id, "{line}: {answer}");
        assert!(
            answer.as_object().expect("object").contains_key("id"),
            "{answer}"
        );
        assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
        let text = answer["error"]["message"].as_str().expect("message");
        assert!(text.contains(message), "{line}: {text}");
    }
}

#[tokio::test]
async fn notifications_rmcp_cannot_read_and_blank_lines_get_no_answer() {
    let mut w = wire();
    for line in [
        "",
        "   ",
        "\r",
        // Notifications rmcp cannot read: sound envelopes, so never answered.
        r#"{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"}"#,
        r#"{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": [1]}"#,
    ] {
        w.send(line).await;
    }
    w.ping_passes(1).await;
    // Nothing was answered: the only line the server writes next is its own.
    w.transport
        .send(ServerJsonRpcMessage::error(
            ErrorData::internal_error("marker", None),
            None,
        ))
        .await
        .expect("send");
    let next = w.answer().await;
    assert_eq!(next["error"]["message"], "marker", "{next}");
}

#[tokio::test]
async fn a_good_request_passes_unchanged() {
    let mut w = wire();
    w.send(r#"{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mcp_x_y", "arguments": {"a": 1}}}"#)
        .await;
    let message = w.transport.receive().await.expect("a message");
    let JsonRpcMessage::Request(request) = message else {
        panic!("not a request: {message:?}");
    };
    let ClientRequest::CallToolRequest(call) = request.request else {
        panic!("not tools/call: {:?}", request.request);
    };
    assert_eq!(call.params.name, "mcp_x_y");
    assert_eq!(
        call.params.arguments,
        Some(json!({"a": 1}).as_object().cloned().expect("object"))
    );
}

#[tokio::test]
async fn end_of_input_ends_the_stream() {
    let mut w = wire();
    w.agent_out
        .write_all(b"{\"partial\": ")
        .await
        .expect("write");
    w.agent_out.shutdown().await.expect("shutdown");
    // An unterminated tail is not a message: the stream just ends.
    assert!(w.transport.receive().await.is_none());
}

#[test]
fn params_of_methods_we_do_not_serve_are_not_judged() {
    assert_eq!(params_problem("x/y", Some(&json!("z"))), None);
    assert_eq!(params_problem("tools/list", None), None);
    assert_eq!(params_problem("prompts/list", None), None);
    assert_eq!(params_problem("ping", Some(&json!({}))), None);
}

/// The native methods (prompts, resources, completion) are answered -32602 with serde's
/// reason when their params are unusable, as tools/call is; rmcp alone would file them as
/// custom requests and answer -32601 ("not supported"), which misleads.
#[test]
fn unusable_params_of_native_methods_get_invalid_params() {
    for (line, words) in [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{}}"#,
            "uri",
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"resources/read"}"#,
            "missing",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":5}}"#,
            "string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":5}}"#,
            "string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{}}"#,
            "ref",
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"resources/templates/list","params":{"cursor":5}}"#,
            "string",
        ),
    ] {
        match judge(line.as_bytes()) {
            Verdict::Answer { error, .. } => {
                assert_eq!(error.code.0, -32602, "{line}");
                assert!(error.message.contains(words), "{line}: {}", error.message);
            }
            _ => panic!("{line} was not answered"),
        }
    }
}

/// Found by the property test below: rmcp reads an id of `0.0` as the integer 0, so the -32602
/// answer must echo the id from the line itself.
#[test]
fn an_invalid_params_answer_echoes_the_id_exactly_as_sent() {
    for (line, want) in [
        (
            r#"{"jsonrpc":"2.0","id":0.0,"method":"tools/call"}"#,
            json!(0.0),
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call"}"#,
            json!(7),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call"}"#,
            json!("a"),
        ),
    ] {
        match judge(line.as_bytes()) {
            Verdict::Answer { id, error } => {
                assert_eq!(error.code.0, -32602, "{line}");
                assert_eq!(id, want, "{line}");
            }
            _ => panic!("{line} was not answered"),
        }
    }
}

/// An id rmcp cannot hold (a number that is not a 64-bit signed integer) gets a -32600 that
/// says so; one that lost digits as a float is answered with `null`, never another number.
#[test]
fn a_numeric_id_beyond_64_bits_is_named_and_never_echoed_changed() {
    for (line, want) in [
        (
            r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}"#,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}"#,
            json!(9_223_372_036_854_775_808_u64),
        ),
        (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, json!(1.5)),
    ] {
        match judge(line.as_bytes()) {
            Verdict::Answer { id, error } => {
                assert_eq!(error.code.0, -32600, "{line}");
                assert_eq!(id, want, "{line}");
                assert!(
                    error.message.contains("numeric id must be an integer from"),
                    "{line}: {}",
                    error.message
                );
            }
            _ => panic!("{line} was not answered"),
        }
    }
}

mod props;

#[tokio::test(start_paused = true)]
async fn a_line_left_unfinished_past_the_deadline_ends_the_connection() {
    let deadline = std::time::Duration::from_secs(60);
    let (agent, server) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server);
    let (_agent_in, mut agent_out) = tokio::io::split(agent);
    let mut transport =
        LineTransport::new(server_read, server_write, MAX_LINE).with_line_deadline(deadline);
    // Idling between lines is fine, however long.
    tokio::time::sleep(deadline * 10).await;
    agent_out
        .write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}\n{\"jsonrpc\": ")
        .await
        .expect("write");
    assert!(transport.receive().await.is_some());
    let started = tokio::time::Instant::now();
    assert!(transport.receive().await.is_none(), "half a line delivered");
    assert_eq!(transport.end(), End::Stalled);
    assert!(started.elapsed() >= deadline, "{:?}", started.elapsed());
}

#[tokio::test(start_paused = true)]
async fn a_line_finished_within_the_deadline_is_read() {
    let deadline = std::time::Duration::from_secs(60);
    let (agent, server) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server);
    let (_agent_in, mut agent_out) = tokio::io::split(agent);
    let mut transport =
        LineTransport::new(server_read, server_write, MAX_LINE).with_line_deadline(deadline);
    let writer = tokio::spawn(async move {
        agent_out
            .write_all(b"{\"jsonrpc\": \"2.0\", ")
            .await
            .expect("write");
        tokio::time::sleep(deadline / 2).await;
        agent_out
            .write_all(b"\"id\": 1, \"method\": \"ping\"}\n")
            .await
            .expect("write");
        agent_out
    });
    assert!(transport.receive().await.is_some());
    assert_eq!(transport.end(), End::Open);
    drop(writer.await.expect("writer"));
}

/// A key given twice makes rmcp file the request as a custom one (answered -32601, "not
/// supported"); a parsed value keeps only the last key, so the line's own text is judged.
#[test]
fn a_key_given_twice_in_params_is_invalid_params_not_an_unknown_method() {
    for (line, method) in [
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{},"name":"get-env"}}"#,
            "tools/call",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"a://x","uri":"b://y"}}"#,
            "resources/read",
        ),
    ] {
        match judge(line.as_bytes()) {
            Verdict::Answer { error, .. } => {
                assert_eq!(error.code.0, -32602, "{line}");
                assert!(
                    error.message.contains(method) && error.message.contains("duplicate"),
                    "{line}: {}",
                    error.message
                );
            }
            _ => panic!("{line} was not answered"),
        }
    }
}
