//! [`Approvals`]: the calls waiting for the person's approval (`toolPolicy` `ask`), and the
//! approvers that show them to the person — the desktop app in process, or a control-API
//! client such as `mcp-companion approvals --watch`. The question never goes to the agent.
//!
//! ```text
//! call ── Approvals::ask ──▶ open ask #id ──▶ ApprovalEvent::Asked to every approver
//!                               │
//!   Approvals::answer(id, …) ───┤ once / always → the call runs; deny → declined
//!   approvalTimeout passes ─────┤ timed out → declined
//!   the agent cancels the call ─┘ withdrawn (the ask's future is dropped)
//!                               ▼
//!                      ApprovalEvent::Closed { id, outcome } to every approver
//! ```
//!
//! One owner of open asks (this map, behind one lock taken for one insert, lookup or removal);
//! each ask has its own reply channel, so concurrent asks are answered independently and an
//! ask is answered at most once (the first answer removes it).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::{broadcast, oneshot};

/// Events kept for an approver that reads slowly; one that falls further behind re-reads
/// the open asks ([`Approver::recv`]).
const EVENT_BACKLOG: usize = 256;

/// The most bytes of an ask's whole arguments ([`Ask::arguments_full`]) an approver receives:
/// 1 MiB, far more than a person reads; longer ones are cut and say how long they were.
pub const ARGUMENTS_FULL_MAX: usize = 1024 * 1024;

/// One call waiting for the person, as approvers show it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ask {
    /// Answer with this id.
    pub id: u64,
    /// The server, as configured.
    pub server: String,
    /// The tool's name on that server.
    pub tool: String,
    /// The wrapped name the agent called.
    pub wrapped: String,
    /// The names the server's `toolPolicy` keys are matched against
    /// (`catalog::Route::policy_names`): what `always` writes its key for. Kept in the
    /// companion, not sent to approvers.
    #[serde(skip)]
    pub policy_names: Vec<String>,
    /// The agent's `clientInfo.name`, known secrets masked, when it gave one (`control` for the
    /// control API).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The agent's `clientInfo.version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// The agent's process id, when the endpoint knows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_pid: Option<u32>,
    /// The arguments as JSON text, indented, known secrets masked, capped at 1 KiB (plain
    /// text: show it as text, never as markup).
    pub arguments: String,
    /// The whole arguments, masked the same way, when `arguments` was cut; capped at
    /// [`ARGUMENTS_FULL_MAX`] bytes. Absent when `arguments` is already whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_full: Option<String>,
    /// Why it asks: `policy` (the entry's `toolPolicy` says `ask`) or `annotation` (the tool
    /// declares `destructiveHint`).
    pub reason: String,
    /// Seconds until it is declined unanswered (`approvalTimeout`).
    pub timeout_s: u64,
}

/// The person's answer to an ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Answer {
    /// Run this call.
    Once,
    /// Run this call, and set the tool's policy to `allow` in the config (the answerer
    /// writes it).
    Always,
    /// Do not run it.
    Deny,
}

impl Answer {
    /// The answer written as `text` (`once`/`allow`, `always`, `deny`).
    pub fn parse(text: &str) -> Option<Answer> {
        match text {
            "once" | "allow" => Some(Answer::Once),
            "always" => Some(Answer::Always),
            "deny" => Some(Answer::Deny),
            _ => None,
        }
    }
}

/// How an ask ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Closed {
    /// The person allowed it (once or always).
    Allowed,
    /// The person denied it.
    Denied,
    /// Nobody answered within `approvalTimeout`.
    TimedOut,
    /// The agent cancelled the call (or left) first.
    Withdrawn,
}

/// What approvers hear.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "camelCase")]
#[expect(
    clippy::large_enum_variant,
    reason = "one event per ask a person answers, on a bounded channel: the size is never felt"
)]
pub enum ApprovalEvent {
    /// A call waits for the person.
    Asked(Ask),
    /// Ask `id` is over: take it down.
    Closed {
        /// The ask.
        id: u64,
        /// How it ended.
        outcome: Closed,
    },
}

/// No open ask has that id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("approval {0} is no longer open (answered, timed out or withdrawn by its agent)")]
pub struct NotOpen(pub u64);

#[derive(Default)]
struct State {
    next: u64,
    open: BTreeMap<u64, (Ask, oneshot::Sender<Answer>)>,
    approvers: usize,
}

struct Shared {
    state: Mutex<State>,
    events: broadcast::Sender<ApprovalEvent>,
}

/// The open asks and the attached approvers; cheap to clone (one shared state).
#[derive(Clone)]
pub struct Approvals(Arc<Shared>);

impl Default for Approvals {
    fn default() -> Approvals {
        Approvals(Arc::new(Shared {
            state: Mutex::default(),
            events: broadcast::channel(EVENT_BACKLOG).0,
        }))
    }
}

impl std::fmt::Debug for Approvals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("Approvals")
            .field("open", &state.open.keys().collect::<Vec<_>>())
            .field("approvers", &state.approvers)
            .finish()
    }
}

impl Approvals {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // One insert, lookup or removal per critical section: a poisoned map is consistent.
        self.0.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Attaches an approver until the returned [`Approver`] is dropped: from now on it hears
    /// every ask, and asks wait for the person instead of being answered at once.
    pub fn attach(&self) -> Approver {
        let events = self.0.events.subscribe();
        self.lock().approvers += 1;
        Approver {
            approvals: self.clone(),
            events,
        }
    }

    /// Whether an approver is attached (someone can be asked).
    pub fn present(&self) -> bool {
        self.lock().approvers > 0
    }

    /// Every open ask, oldest first.
    pub fn open(&self) -> Vec<Ask> {
        self.lock().open.values().map(|(a, _)| a.clone()).collect()
    }

    /// Ask `id` as shown, while it is open.
    pub fn get(&self, id: u64) -> Option<Ask> {
        self.lock().open.get(&id).map(|(a, _)| a.clone())
    }

    /// Answers ask `id`; returns it as it was shown.
    ///
    /// # Errors
    /// [`NotOpen`] when no ask with that id is open.
    pub fn answer(&self, id: u64, answer: Answer) -> Result<Ask, NotOpen> {
        let (ask, reply) = self.lock().open.remove(&id).ok_or(NotOpen(id))?;
        reply.send(answer).map_err(|_| NotOpen(id))?;
        Ok(ask)
    }

    /// Opens an ask shown as `ask` (its id is set here) and waits for its answer: the
    /// person's, or [`Answer::Deny`] with [`Closed::TimedOut`] once `timeout` has passed.
    /// Dropping the future withdraws the ask.
    pub async fn ask(&self, mut ask: Ask, timeout: Duration) -> (Answer, Closed) {
        let (reply, answer) = oneshot::channel();
        let id = {
            let mut state = self.lock();
            state.next += 1;
            ask.id = state.next;
            state.open.insert(ask.id, (ask.clone(), reply));
            ask.id
        };
        let mut open = OpenAsk {
            approvals: self,
            id,
            closed: Closed::Withdrawn,
        };
        let _ = self.0.events.send(ApprovalEvent::Asked(ask));
        let (answer, closed) = match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(Answer::Deny)) => (Answer::Deny, Closed::Denied),
            Ok(Ok(given)) => (given, Closed::Allowed),
            Ok(Err(_)) | Err(_) => (Answer::Deny, Closed::TimedOut),
        };
        open.closed = closed;
        (answer, closed)
    }
}

/// An open ask's side of the map: removes it and tells the approvers how it ended when
/// dropped (answered, timed out, or its future dropped: withdrawn).
struct OpenAsk<'a> {
    approvals: &'a Approvals,
    id: u64,
    closed: Closed,
}

impl Drop for OpenAsk<'_> {
    fn drop(&mut self) {
        self.approvals.lock().open.remove(&self.id);
        let _ = self.approvals.0.events.send(ApprovalEvent::Closed {
            id: self.id,
            outcome: self.closed,
        });
    }
}

/// One attached approver: hears every ask; detaches when dropped.
pub struct Approver {
    approvals: Approvals,
    events: broadcast::Receiver<ApprovalEvent>,
}

impl std::fmt::Debug for Approver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Approver").finish_non_exhaustive()
    }
}

impl Approver {
    /// The next events, oldest first: one, or — after falling more than the backlog behind —
    /// the open asks again (re-showing an ask already shown is harmless: same id). `None`
    /// once the companion is gone.
    pub async fn recv(&mut self) -> Option<Vec<ApprovalEvent>> {
        match self.events.recv().await {
            Ok(event) => Some(vec![event]),
            Err(broadcast::error::RecvError::Lagged(_)) => Some(
                self.approvals
                    .open()
                    .into_iter()
                    .map(ApprovalEvent::Asked)
                    .collect(),
            ),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }

    /// The asks open now (an approver that attaches shows them first).
    pub fn open(&self) -> Vec<Ask> {
        self.approvals.open()
    }
}

impl Drop for Approver {
    fn drop(&mut self) {
        let mut state = self.approvals.lock();
        state.approvers = state.approvers.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(tool: &str) -> Ask {
        Ask {
            id: 0,
            server: "s".into(),
            tool: tool.into(),
            wrapped: format!("mcp_s_{tool}"),
            policy_names: Vec::new(),
            agent: None,
            agent_version: None,
            agent_pid: None,
            arguments: "{}".into(),
            arguments_full: None,
            reason: "policy".into(),
            timeout_s: 60,
        }
    }

    async fn asked(approver: &mut Approver) -> Ask {
        match approver.recv().await.unwrap().remove(0) {
            ApprovalEvent::Asked(a) => a,
            other => panic!("expected an ask, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn concurrent_asks_are_answered_each_once() {
        let approvals = Approvals::default();
        assert!(!approvals.present());
        let mut approver = approvals.attach();
        assert!(approvals.present());
        let a = tokio::spawn({
            let approvals = approvals.clone();
            async move { approvals.ask(ask("a"), Duration::from_secs(60)).await }
        });
        let first = asked(&mut approver).await;
        let b = tokio::spawn({
            let approvals = approvals.clone();
            async move { approvals.ask(ask("b"), Duration::from_secs(60)).await }
        });
        let second = asked(&mut approver).await;
        assert_ne!(first.id, second.id);
        assert_eq!(approvals.open().len(), 2);
        approvals.answer(second.id, Answer::Deny).unwrap();
        approvals.answer(first.id, Answer::Always).unwrap();
        assert_eq!(
            approvals.answer(first.id, Answer::Deny),
            Err(NotOpen(first.id))
        );
        assert_eq!(a.await.unwrap(), (Answer::Always, Closed::Allowed));
        assert_eq!(b.await.unwrap(), (Answer::Deny, Closed::Denied));
        assert!(approvals.open().is_empty());
        drop(approver);
        assert!(!approvals.present());
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_ask_times_out_denied_and_a_dropped_one_is_withdrawn() {
        let approvals = Approvals::default();
        let mut approver = approvals.attach();
        let timed = approvals.ask(ask("a"), Duration::from_secs(60)).await;
        assert_eq!(timed, (Answer::Deny, Closed::TimedOut));
        let _ = asked(&mut approver).await;
        let closed = approver.recv().await.unwrap().remove(0);
        assert!(matches!(
            closed,
            ApprovalEvent::Closed {
                outcome: Closed::TimedOut,
                ..
            }
        ));
        let waiting = tokio::spawn({
            let approvals = approvals.clone();
            async move { approvals.ask(ask("b"), Duration::from_secs(60)).await }
        });
        let open = asked(&mut approver).await;
        waiting.abort();
        let _ = waiting.await;
        assert_eq!(
            approver.recv().await.unwrap().remove(0),
            ApprovalEvent::Closed {
                id: open.id,
                outcome: Closed::Withdrawn
            }
        );
        assert!(approvals.open().is_empty());
    }
}
