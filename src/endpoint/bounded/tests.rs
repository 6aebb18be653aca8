//! The bounded transport over an in-memory stream: reading pauses at the in-flight bound and
//! resumes when an answer is written, a half-closed agent gets its answers, a failed write
//! means the agent is gone; lines a tap (the fast path) takes count the same.

use std::time::Duration;

use rmcp::model::{EmptyResult, RequestId, ServerResult};
use serde_json::json;
use tokio::io::{AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};

use super::*;

type Wire = Bounded<ReadHalf<DuplexStream>, WriteHalf<DuplexStream>>;

fn wire(max_in_flight: usize) -> (Wire, DuplexStream, CancellationToken) {
    let (agent, server) = tokio::io::duplex(1 << 16);
    let (rd, wr) = tokio::io::split(server);
    let gone = CancellationToken::new();
    let transport = Bounded::new(
        LineTransport::new(rd, wr, 1 << 20),
        Arc::new(Budget::new(max_in_flight, 1 << 20)),
        gone.clone(),
        Hangup::unknown(),
    );
    (transport, agent, gone)
}

fn ping(id: i64) -> Vec<u8> {
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
    )
    .into_bytes()
}

fn answer(id: i64) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::response(
        ServerResult::EmptyResult(EmptyResult {}),
        RequestId::Number(id),
    )
}

async fn receives_soon(t: &mut Wire) -> Option<Option<ClientJsonRpcMessage>> {
    tokio::time::timeout(Duration::from_millis(200), t.receive())
        .await
        .ok()
}

#[tokio::test]
async fn reading_pauses_at_the_in_flight_bound_and_resumes_once_an_answer_is_written() {
    let (mut t, mut agent, _gone) = wire(2);
    for id in 1..=3 {
        agent.write_all(&ping(id)).await.expect("write");
    }
    assert!(matches!(receives_soon(&mut t).await, Some(Some(_))));
    assert!(matches!(receives_soon(&mut t).await, Some(Some(_))));
    assert!(
        receives_soon(&mut t).await.is_none(),
        "a third request was read"
    );
    t.send(answer(1)).await.expect("send");
    let third = receives_soon(&mut t)
        .await
        .expect("resumed")
        .expect("a message");
    let JsonRpcMessage::Request(third) = third else {
        panic!("{third:?}")
    };
    assert_eq!(third.id, RequestId::Number(3));
}

#[tokio::test]
async fn a_cancelled_request_frees_its_slot() {
    let (mut t, mut agent, _gone) = wire(1);
    agent.write_all(&ping(1)).await.expect("write");
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    agent
        .write_all(format!("{cancel}\n").as_bytes())
        .await
        .expect("write");
    agent.write_all(&ping(2)).await.expect("write");
    assert!(matches!(receives_soon(&mut t).await, Some(Some(_))));
    // At the bound: not even the cancellation is read until something frees a slot...
    assert!(receives_soon(&mut t).await.is_none());
    // ...so the bound counts answers written, and an answer frees it.
    t.send(answer(1)).await.expect("send");
    assert!(matches!(
        receives_soon(&mut t).await,
        Some(Some(JsonRpcMessage::Notification(_)))
    ));
    assert!(matches!(
        receives_soon(&mut t).await,
        Some(Some(JsonRpcMessage::Request(_)))
    ));
}

#[tokio::test]
async fn a_half_closed_agent_gets_its_answers_before_the_session_ends() {
    let (mut t, mut agent, gone) = wire(8);
    agent.write_all(&ping(1)).await.expect("write");
    agent.shutdown().await.expect("half-close");
    assert!(matches!(receives_soon(&mut t).await, Some(Some(_))));
    assert!(
        receives_soon(&mut t).await.is_none(),
        "ended with an answer owed"
    );
    t.send(answer(1)).await.expect("send");
    assert!(matches!(receives_soon(&mut t).await, Some(None)));
    assert!(!gone.is_cancelled());
}

#[tokio::test]
async fn a_failed_write_means_the_agent_is_gone() {
    let (mut t, mut agent, gone) = wire(8);
    agent.write_all(&ping(1)).await.expect("write");
    agent.write_all(&ping(2)).await.expect("write");
    assert!(matches!(receives_soon(&mut t).await, Some(Some(_))));
    drop(agent);
    assert!(t.send(answer(1)).await.is_err());
    assert!(gone.is_cancelled());
    // The unread request is never delivered, and later writes fail at once.
    assert!(matches!(receives_soon(&mut t).await, Some(None)));
    assert!(t.send(answer(2)).await.is_err());
}

/// A tap that takes every line and enters it in the budget, as the fast path does.
struct TakeAll {
    budget: Arc<Budget>,
    taken: Arc<std::sync::atomic::AtomicI64>,
}

impl crate::endpoint::line::Tap for TakeAll {
    fn take(&mut self, _line: &[u8]) -> bool {
        let n = self.taken.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.budget.requested(RequestId::Number(n + 1));
        true
    }
}

fn tapped_wire(
    max_in_flight: usize,
) -> (
    Wire,
    DuplexStream,
    Arc<Budget>,
    Arc<std::sync::atomic::AtomicI64>,
) {
    let (agent, server) = tokio::io::duplex(1 << 16);
    let (rd, wr) = tokio::io::split(server);
    let budget = Arc::new(Budget::new(max_in_flight, 1 << 20));
    let taken = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let tap = TakeAll {
        budget: budget.clone(),
        taken: taken.clone(),
    };
    let transport = Bounded::new(
        LineTransport::new(rd, wr, 1 << 20).with_tap(Box::new(tap)),
        budget.clone(),
        CancellationToken::new(),
        Hangup::unknown(),
    );
    (transport, agent, budget, taken)
}

#[tokio::test]
async fn lines_a_tap_takes_wait_for_room_like_the_others() {
    let (mut t, mut agent, budget, taken) = tapped_wire(2);
    for id in 1..=4 {
        agent.write_all(&ping(id)).await.expect("write");
    }
    let taken = || taken.load(std::sync::atomic::Ordering::SeqCst);
    assert!(receives_soon(&mut t).await.is_none(), "nothing for rmcp");
    assert_eq!(taken(), 2, "taken past the in-flight bound");
    // The tap answers its first call: one more line is read.
    drop(budget.queue(Some(RequestId::Number(1)), 10));
    assert!(receives_soon(&mut t).await.is_none());
    assert_eq!(taken(), 3);
}

#[tokio::test]
async fn a_half_closed_agent_gets_the_answers_of_the_calls_a_tap_took() {
    let (mut t, mut agent, budget, _) = tapped_wire(8);
    agent.write_all(&ping(1)).await.expect("write");
    agent.shutdown().await.expect("half-close");
    assert!(
        receives_soon(&mut t).await.is_none(),
        "ended with an answer owed"
    );
    drop(budget.queue(Some(RequestId::Number(1)), 10));
    assert!(matches!(receives_soon(&mut t).await, Some(None)));
}
