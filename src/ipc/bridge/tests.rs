//! The bridge over an in-memory stream that, like a Windows named pipe, never reports end of file
//! to the companion: the bridge itself must end the session once its input is done.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

use super::{BridgeError, GONE_CODE, pump};

/// Generous: only a hang (the bug) can exceed it.
const HANG: Duration = Duration::from_secs(20);

/// A companion that answers every request line with `{"id":…,"result":{}}` (after `delay`), and
/// then keeps its end open until the test is over, as a named pipe server does.
async fn companion(stream: DuplexStream, delay: Duration) {
    let (rd, mut wr) = tokio::io::split(stream);
    let mut lines = BufReader::new(rd).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let msg: serde_json::Value = serde_json::from_str(&line).expect("json from the bridge");
        let requests = match msg {
            serde_json::Value::Array(batch) => batch,
            one => vec![one],
        };
        for m in requests {
            if let (Some(id), Some(_)) = (m.get("id"), m.get("method")) {
                tokio::time::sleep(delay).await;
                let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {}});
                wr.write_all(format!("{answer}\n").as_bytes())
                    .await
                    .expect("answer");
            }
        }
    }
    // The bridge's input ended (Unix half-close); a named pipe would never get here. Stay open.
    std::future::pending::<()>().await;
}

/// Runs the bridge on `input`; returns what it wrote to its stdout.
async fn bridge(input: &'static str, delay: Duration) -> String {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(companion(theirs, delay));
    let mut output = Vec::new();
    tokio::time::timeout(HANG, pump(input.as_bytes(), &mut output, ours))
        .await
        .expect("the bridge ends once its input is done and answered")
        .expect("no i/o error");
    server.abort();
    String::from_utf8(output).expect("utf-8")
}

/// Runs the bridge on `input` and `stream` while `companion` plays the other end; returns the
/// bridge's result and what it wrote to its stdout.
async fn pump_beside<I, S>(
    input: I,
    stream: S,
    companion: impl Future<Output = ()>,
) -> (Result<(), BridgeError>, Vec<u8>)
where
    I: tokio::io::AsyncRead + Unpin,
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut output = Vec::new();
    let (result, ()) = tokio::time::timeout(HANG, async {
        tokio::join!(pump(input, &mut output, stream), companion)
    })
    .await
    .expect("the bridge ends");
    (result, output)
}

#[tokio::test]
async fn ends_after_closed_input_once_every_request_is_answered() {
    let input = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"1","method":"tools/list"}"#,
        "\n",
    );
    // The answers come well after the input ended: they are still delivered.
    let out = bridge(input, Duration::from_millis(50)).await;
    let ids: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json")["id"].clone())
        .collect();
    assert_eq!(ids, [serde_json::json!(1), serde_json::json!("1")]);
}

#[tokio::test]
async fn ends_at_once_when_nothing_is_in_flight() {
    let input = concat!(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        // A response to a server→client request is not a request of ours.
        r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
        "\n",
        "not json at all\n",
    );
    assert_eq!(bridge(input, Duration::ZERO).await, "");
}

#[tokio::test]
async fn a_batch_is_answered_in_full_before_the_end() {
    let input = concat!(
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
        "\n",
        // The last line may lack its newline.
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    );
    let out = bridge(input, Duration::from_millis(10)).await;
    assert_eq!(out.lines().count(), 3, "{out}");
}

#[tokio::test]
async fn ends_when_the_companion_hangs_up_while_input_is_open() {
    let (ours, theirs) = tokio::io::duplex(1024);
    let (_keep_open, input) = tokio::io::duplex(1024);
    drop(theirs);
    let mut output = Vec::new();
    let err = tokio::time::timeout(HANG, pump(input, &mut output, ours))
        .await
        .expect("the bridge ends when the companion closes")
        .expect_err("the client is still there: the hang-up is an error");
    assert!(
        matches!(err, BridgeError::CompanionClosed { unanswered: 0 }),
        "{err}"
    );
    assert!(output.is_empty());
}

/// Every request the companion left unanswered when it went away gets one error answer.
#[tokio::test]
async fn requests_in_flight_when_the_companion_goes_away_are_answered_with_an_error() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (mut client, input) = tokio::io::duplex(64 * 1024);
    use tokio::io::AsyncReadExt;
    client
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .expect("write");
    let companion = async move {
        // Read the three lines, answer none, hang up.
        let mut theirs = theirs;
        let mut seen = Vec::new();
        let mut buf = [0u8; 1024];
        while seen.iter().filter(|b| **b == b'\n').count() < 3 {
            let n = theirs.read(&mut buf).await.expect("read");
            seen.extend_from_slice(&buf[..n]);
        }
    };
    let (result, output) = pump_beside(input, ours, companion).await;
    assert!(
        matches!(result, Err(BridgeError::CompanionClosed { unanswered: 2 })),
        "{result:?}"
    );
    let answers: Vec<serde_json::Value> = String::from_utf8(output)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let ids: Vec<_> = answers.iter().map(|a| a["id"].clone()).collect();
    assert_eq!(ids, [serde_json::json!("a"), serde_json::json!(7)]);
    assert!(answers.iter().all(|a| a["error"]["code"] == GONE_CODE));
    drop(client);
}

/// Ids the companion does not echo as sent (floats, booleans, arrays, objects), batches (it
/// refuses them with an `id: null` error) and lines that are not UTF-8 are not waited for: the
/// bridge once answered them a second time, claiming a crash.
#[tokio::test]
async fn only_requests_answered_under_their_own_id_are_waited_for() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let input: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"ping\"}\n\
        {\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"ping\"}\n\
        {\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}\n\
        {\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}\n\
        {\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}\n\
        [{\"jsonrpc\":\"2.0\",\"id\":54,\"method\":\"ping\"}]\n\
        {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}\n";
    // A companion that reads everything, answers nothing and stays open (a named pipe).
    let _companion = tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        let mut theirs = theirs;
        let mut sink = Vec::new();
        let _ = theirs.read_to_end(&mut sink).await;
        std::future::pending::<()>().await;
    });
    let mut output = Vec::new();
    tokio::time::timeout(HANG, pump(input, &mut output, ours))
        .await
        .expect("nothing to wait for once the input ended")
        .expect("no error");
    assert!(output.is_empty(), "{}", String::from_utf8_lossy(&output));
}

/// A companion that exits with our lines unread resets the connection (ECONNRESET on Linux):
/// that is a hang-up like end of file, and what was in flight is answered, not lost.
#[cfg(unix)]
#[tokio::test]
async fn a_reset_from_the_companion_is_a_hang_up_and_in_flight_requests_are_answered() {
    let (ours, theirs) = tokio::net::UnixStream::pair().expect("pair");
    let (mut client, input) = tokio::io::duplex(64 * 1024);
    client
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\"}\n")
        .await
        .expect("write");
    let companion = async move {
        // Wait for the request to arrive, then go away without reading it.
        theirs.readable().await.expect("readable");
        drop(theirs);
    };
    let (result, output) = pump_beside(input, ours, companion).await;
    assert!(
        matches!(result, Err(BridgeError::CompanionClosed { unanswered: 1 })),
        "{result:?}"
    );
    let answer: serde_json::Value = serde_json::from_slice(&output).expect("one JSON answer");
    assert_eq!(answer["id"], 5);
    assert_eq!(answer["error"]["code"], GONE_CODE);
    drop(client);
}

#[tokio::test]
async fn a_line_over_the_limit_reaches_the_companion_unchanged_and_the_next_one_is_tracked() {
    let mut input = vec![b'a'; crate::upstream::MAX_MESSAGE_BYTES + 10];
    input.push(b'\n');
    input.extend_from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    let want = {
        let mut all = input.clone();
        all.push(b'\n');
        all
    };
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let companion = async move {
        let (mut rd, mut wr) = tokio::io::split(theirs);
        let mut got = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut rd, &mut got)
            .await
            .expect("read");
        assert!(
            got == want,
            "{} bytes arrived, {} sent",
            got.len(),
            want.len()
        );
        wr.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
            .await
            .expect("answer");
    };
    let (result, output) = pump_beside(&input[..], ours, companion).await;
    result.expect("the bridge ends once the ping is answered");
    assert_eq!(output, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
}

/// The companion's refusal at its cap, as the accept loop writes it.
fn refusal() -> Vec<u8> {
    crate::ipc::accept::refusal_line(
        "MCP Companion is at its connection limit (2 agent connections, all in use)",
        2,
    )
}

/// The one line of `output`: the client's request `id` answered with the refusal.
fn refused_once(result: &Result<(), BridgeError>, output: &[u8], id: u64) {
    assert!(
        matches!(result, Err(BridgeError::AtConnectionLimit { message }) if message.contains("connection limit")),
        "{result:?}"
    );
    let text = String::from_utf8_lossy(output);
    let lines: Vec<&str> = text.lines().collect();
    let [line] = lines.as_slice() else {
        panic!("{} lines for one request: {text}", lines.len());
    };
    let answer: serde_json::Value = serde_json::from_str(line).expect("JSON");
    assert_eq!(answer["id"], id, "{answer}");
    assert_eq!(answer["error"]["code"], GONE_CODE, "{answer}");
    let message = answer["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("at its connection limit") && message.ends_with("the request was not run"),
        "{message}"
    );
}

/// A request sent before the refusal arrives gets it under its own id, once: the refusal line
/// itself (which has no id) is not copied as well.
#[tokio::test]
async fn a_refusal_after_the_request_answers_it_once() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (mut client, input) = tokio::io::duplex(64 * 1024);
    client
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n")
        .await
        .expect("write");
    let companion = async move {
        let (rd, mut wr) = tokio::io::split(theirs);
        let mut lines = BufReader::new(rd).lines();
        lines.next_line().await.expect("read").expect("the request");
        wr.write_all(&refusal()).await.expect("refuse");
    };
    let (result, output) = pump_beside(input, ours, companion).await;
    refused_once(&result, &output, 1);
    drop(client);
}

/// The refusal arrives before the client has written anything: the bridge waits for its first
/// request (the agent started it to send one) and answers that, rather than leaving the agent
/// a line without an id and a closed pipe. Time is paused: the request is written only once
/// the bridge has nothing left to do but wait.
#[tokio::test(start_paused = true)]
async fn a_refusal_before_any_request_answers_the_first_request_once() {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    let (mut client, input) = tokio::io::duplex(64 * 1024);
    let companion = async move {
        let (_rd, mut wr) = tokio::io::split(theirs);
        wr.write_all(&refusal()).await.expect("refuse");
    };
    let agent = async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        // The bridge may have ended (the bug): then the pipe is closed.
        let _ = client
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\"}\n")
            .await;
        client
    };
    let ((result, output), _client) = tokio::join!(pump_beside(input, ours, companion), agent);
    refused_once(&result, &output, 7);
}
