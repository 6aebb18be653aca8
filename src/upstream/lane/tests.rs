use std::time::Duration;

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, InitializedNotification, JsonRpcMessage,
};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, duplex};

use super::*;

/// A lane and its transport on in-memory pipes: `server_out` is what the "server" writes
/// (our stdout side), `server_in` what it reads (its stdin).
fn pipes(
    max_line: usize,
) -> (
    FastLane,
    LaneTransport<DuplexStream>,
    DuplexStream,
    DuplexStream,
) {
    let (stdout_ours, server_out) = duplex(1 << 20);
    let (stdin_ours, server_in) = duplex(1 << 20);
    let lane = FastLane::new(stdin_ours);
    let transport = LaneTransport::new(stdout_ours, lane.clone(), max_line);
    (lane, transport, server_out, server_in)
}

#[tokio::test]
async fn answers_to_fast_requests_reach_their_ticket_raw_and_the_rest_reaches_rmcp() {
    let (lane, mut transport, mut server_out, _server_in) = pipes(1 << 20);
    let mut ticket = lane.open(Duration::from_secs(60)).expect("open");
    let id = ticket.id_json();
    let answer = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[]  }}}}\n");
    server_out
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n")
        .await
        .expect("write");
    server_out
        .write_all(answer.as_bytes())
        .await
        .expect("write");
    server_out
        .write_all(b"not json\n{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n")
        .await
        .expect("write");
    drop(server_out);

    let first = transport.receive().await.expect("the notification");
    assert!(
        matches!(first, JsonRpcMessage::Notification(_)),
        "{first:?}"
    );
    let second = transport.receive().await.expect("the numbered response");
    assert!(matches!(second, JsonRpcMessage::Response(_)), "{second:?}");
    assert_eq!(
        ticket.answer().await.expect("answer"),
        answer.as_bytes(),
        "passed on byte for byte"
    );
    assert!(transport.receive().await.is_none(), "end of output");
    assert_eq!(
        lane.ended(),
        Some(LaneEnd::Lost("the connection closed".into()))
    );
    assert!(
        lane.open(Duration::from_secs(60)).is_err(),
        "an ended lane takes no requests"
    );
}

#[tokio::test]
async fn a_ticket_waiting_when_the_output_ends_learns_why() {
    let (lane, mut transport, server_out, _server_in) = pipes(1 << 20);
    let mut ticket = lane.open(Duration::from_secs(60)).expect("open");
    let reader = tokio::spawn(async move { transport.receive().await.is_none() });
    drop(server_out);
    let waited = tokio::time::timeout(Duration::from_secs(10), ticket.answer())
        .await
        .expect("woken");
    assert_eq!(
        waited,
        Err(NoAnswer::Ended(LaneEnd::Lost(
            "the connection closed".into()
        )))
    );
    assert!(reader.await.expect("join"));
}

#[tokio::test]
async fn closing_the_session_ends_the_lane_as_closed_and_closes_stdin() {
    let (lane, mut transport, _server_out, server_in) = pipes(1 << 20);
    let mut ticket = lane.open(Duration::from_secs(60)).expect("open");
    transport.close().await.expect("close");
    assert_eq!(ticket.answer().await, Err(NoAnswer::Ended(LaneEnd::Closed)));
    let mut rest = Vec::new();
    let mut server_in = BufReader::new(server_in);
    let n = tokio::io::AsyncReadExt::read_to_end(&mut server_in, &mut rest)
        .await
        .expect("read");
    assert_eq!(n, 0, "the server saw end of input");
}

#[tokio::test]
async fn frames_from_rmcp_and_from_tickets_never_interleave() {
    let (lane, mut transport, _server_out, server_in) = pipes(1 << 20);
    let big = "y".repeat(200_000);
    let mut tasks = Vec::new();
    for i in 0..20 {
        let ticket = lane.open(Duration::from_secs(60)).expect("open");
        let frame = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/call\",\"params\":{{\"name\":\"{big}\"}}}}\n",
            ticket.id_json()
        );
        tasks.push(tokio::spawn(async move {
            ticket.send(frame.as_bytes()).await.expect("send");
            i
        }));
        let note = ClientJsonRpcMessage::notification(ClientNotification::InitializedNotification(
            InitializedNotification::default(),
        ));
        tasks.push(tokio::spawn(transport.send(note)).then_ok(i));
    }
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(server_in).lines();
        let mut n = 0;
        while n < 40 {
            let line = lines.next_line().await.expect("read").expect("a line");
            serde_json::from_str::<serde_json::Value>(&line).expect("every line is whole JSON");
            n += 1;
        }
    });
    for task in tasks {
        task.await.expect("join");
    }
    tokio::time::timeout(Duration::from_secs(30), reader)
        .await
        .expect("all lines")
        .expect("join");
}

/// `JoinHandle<Result<(), E>>` → a handle that panics on a send error and yields `i`.
trait ThenOk {
    fn then_ok(self, i: i32) -> tokio::task::JoinHandle<i32>;
}

impl ThenOk for tokio::task::JoinHandle<Result<(), std::io::Error>> {
    fn then_ok(self, i: i32) -> tokio::task::JoinHandle<i32> {
        tokio::spawn(async move {
            self.await.expect("join").expect("send");
            i
        })
    }
}

#[tokio::test]
async fn a_large_answer_costs_about_its_size_not_double() {
    let (lane, mut transport, mut server_out, _server_in) = pipes(64 << 20);
    let mut ticket = lane.open(Duration::from_secs(60)).expect("open");
    let text = "z".repeat(8 << 20);
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"t\":\"{text}\"}}}}\n",
        ticket.id_json()
    );
    let size = line.len();
    let writer = tokio::spawn(async move {
        server_out.write_all(line.as_bytes()).await.expect("write");
        server_out
    });
    let reader = tokio::spawn(async move { transport.receive().await.is_none() });
    let answer = ticket.answer().await.expect("answer");
    assert_eq!(answer.len(), size);
    assert!(
        answer.capacity() <= size + size / 4 + (64 << 10),
        "buffer of {} bytes for a {size}-byte line",
        answer.capacity()
    );
    drop(writer.await);
    reader.abort();
}

#[tokio::test]
async fn an_oversized_line_is_skipped_and_the_next_one_read() {
    let (_lane, mut transport, mut server_out, _server_in) = pipes(100);
    let long = format!("{{\"x\":\"{}\"}}\n", "a".repeat(500));
    server_out.write_all(long.as_bytes()).await.expect("write");
    server_out
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n")
        .await
        .expect("write");
    let next = transport.receive().await.expect("the next line");
    assert!(matches!(next, JsonRpcMessage::Response(_)), "{next:?}");
}

#[tokio::test]
async fn a_ticket_whose_timeout_passes_is_told_so_and_the_others_still_get_their_answers() {
    let (lane, mut transport, mut server_out, _server_in) = pipes(1 << 20);
    // A long deadline first (the sweeper arms for it), then a shorter one must re-arm it.
    let mut patient = lane.open(Duration::from_secs(60)).expect("open");
    let mut hasty = lane.open(Duration::from_millis(50)).expect("open");
    let reader = tokio::spawn(async move { while transport.receive().await.is_some() {} });
    let waited = tokio::time::timeout(Duration::from_secs(30), hasty.answer())
        .await
        .expect("the sweeper ends it");
    assert_eq!(waited, Err(NoAnswer::TimedOut));
    // A third ticket after the sweep, with a deadline later than none: armed again.
    let mut later = lane.open(Duration::from_millis(50)).expect("open");
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(30), later.answer())
            .await
            .expect("the sweeper ends it"),
        Err(NoAnswer::TimedOut)
    );
    let answer = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{}}}}\n",
        patient.id_json()
    );
    server_out
        .write_all(answer.as_bytes())
        .await
        .expect("write");
    assert_eq!(patient.answer().await.expect("answered"), answer.as_bytes());
    drop(server_out);
    reader.await.expect("join");
}

#[tokio::test]
async fn the_sweeper_stops_when_the_lane_is_dropped() {
    let (lane, transport, _server_out, _server_in) = pipes(1 << 20);
    let ticket = lane.open(Duration::from_secs(3600)).expect("open");
    let weak = std::sync::Arc::downgrade(&lane.shared);
    drop((ticket, transport, lane));
    // Nothing but the sweeper could hold the lane; it holds it weakly.
    assert!(weak.upgrade().is_none());
}

/// A server that stops reading its input: the pipe fills part-way through the first request,
/// and the second waits for the writer. At their deadlines both give up: the first, begun,
/// is still written whole (the server will read it), and `notifications/cancelled` for it
/// follows it; the second was never written and never is.
#[tokio::test]
async fn a_send_to_a_server_that_stops_reading_gives_up_at_its_deadline() {
    let (stdin_ours, server_in) = duplex(1024);
    let lane = FastLane::new(stdin_ours);
    let never = std::future::pending::<()>;
    let mut first = lane.open(Duration::from_millis(200)).expect("open");
    let mut second = lane.open(Duration::from_millis(200)).expect("open");
    let big = "y".repeat(10_000);
    let line = |ticket: &Ticket| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"tools/call\",\"params\":{{\"name\":\"{big}\"}}}}\n",
            ticket.id_json()
        )
    };
    let (first_line, second_line) = (line(&first), line(&second));
    let first_id = first.id_json();
    let (sent_first, sent_second) = tokio::join!(
        first.send_until(first_line.as_bytes(), never()),
        second.send_until(second_line.as_bytes(), never()),
    );
    let timed_out = Interrupted::NoAnswer(NoAnswer::TimedOut);
    assert!(
        matches!(&sent_first, Err(Unsent::Stopped { begun: true, why }) if *why == timed_out),
        "{sent_first:?}"
    );
    assert!(
        matches!(&sent_second, Err(Unsent::Stopped { begun: false, why }) if *why == timed_out),
        "{sent_second:?}"
    );
    first.cancel("request timeout");
    drop(second);

    // The server reads again: the first request whole, then its cancel, and nothing else.
    let mut lines = BufReader::new(server_in).lines();
    let read = lines.next_line().await.expect("read").expect("a line");
    assert_eq!(read.len() + 1, first_line.len(), "the first request, whole");
    let cancel = lines.next_line().await.expect("read").expect("a line");
    let cancel: serde_json::Value = serde_json::from_str(&cancel).expect("JSON");
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(
        format!(
            "\"{}\"",
            cancel["params"]["requestId"].as_str().unwrap_or_default()
        ),
        first_id
    );
    drop(lane);
    let rest = tokio::time::timeout(Duration::from_millis(300), lines.next_line()).await;
    assert!(
        !matches!(rest, Ok(Ok(Some(_)))),
        "the second request was never written: {rest:?}"
    );
}
