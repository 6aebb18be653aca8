//! [`Notices`]: what servers tell every interested agent, outside any call —
//! `notifications/resources/updated`, `notifications/message` (log messages) and
//! `notifications/tasks/status`. Every upstream session sends into one fan-out per hub; each
//! agent session has its own queue ([`NoticeReceiver`]) and keeps what it asked for (its
//! subscriptions, its log level).
//!
//! Log messages are taken below rmcp, in the order the server wrote them
//! ([`super::progress::ProgressTap`]), so they are queued before the response that followed
//! them is handed to its call. An agent session's [`Delivery`] counts what was queued for it
//! and what its forwarder has written: a call waits ([`Delivery::reached`]) until everything
//! queued before its response is written, so the agent reads a server's log messages before
//! the answer they preceded, as on one JSON-RPC stream.
//!
//! Bounds: each agent session's queue holds at most [`AGENT_NOTICE_BYTES`] (their JSON size);
//! a notice is shared by every queue that holds it, so silent agents together hold about one
//! copy. When an agent's queue is full (it is not reading), further notices for that agent are
//! dropped and counted: one warning when dropping starts, one line with the count when its
//! queue has drained. Sending never waits, so one agent never slows the servers or the others.
#![expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577; 2025-era servers send log messages"
)]

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use tokio::sync::{Notify, mpsc};

/// Bytes of notices (their JSON size) one agent session may have waiting to be written
/// (16 MiB, some 50 000 typical log messages) before further ones are dropped for it.
pub const AGENT_NOTICE_BYTES: usize = 16 * 1024 * 1024;

/// One server's notification for agents.
#[derive(Clone, Debug)]
pub enum Notice {
    /// `notifications/resources/updated` for the server's own `uri`.
    ResourceUpdated {
        /// The server as configured.
        server: Arc<str>,
        /// The URI as the server knows it.
        uri: String,
    },
    /// `notifications/tasks/status` (MCP 2025-11-25 utilities/tasks): a task's new status,
    /// for the agent that created the task.
    TaskStatus {
        /// The server as configured.
        server: Arc<str>,
        /// What the server sent (the task, its `taskId` the server's).
        params: serde_json::Value,
    },
    /// `notifications/message`.
    Log {
        /// The server as configured.
        server: Arc<str>,
        /// What the server sent.
        params: LoggingMessageNotificationParam,
    },
}

impl Notice {
    /// About the bytes the notice takes as JSON on an agent's connection.
    fn weight(&self) -> usize {
        const ENVELOPE: usize = 96;
        ENVELOPE
            + match self {
                Notice::ResourceUpdated { uri, .. } => uri.len(),
                Notice::TaskStatus { params, .. } => json_len(params),
                Notice::Log { params, .. } => {
                    json_len(&params.data) + params.logger.as_ref().map_or(0, String::len)
                }
            }
    }
}

/// The length of `value` as compact JSON, without building the text.
fn json_len(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// What was queued for one agent session and what of it its forwarder has handled (written,
/// or skipped as not wanted): the order barrier between notices and answers (module doc).
#[derive(Debug, Default)]
pub struct Delivery {
    queued: AtomicU64,
    handled: AtomicU64,
    /// The forwarder is gone: nothing more will be handled.
    closed: AtomicBool,
    changed: Notify,
}

impl Delivery {
    /// How many notices have been queued for the session so far.
    pub fn mark(&self) -> u64 {
        self.queued.load(Ordering::Acquire)
    }

    /// Returns once the first `mark` notices queued for the session have been handled, or
    /// its forwarder is gone. Cancel-safe.
    pub async fn reached(&self, mark: u64) {
        let done =
            || self.closed.load(Ordering::Acquire) || self.handled.load(Ordering::Acquire) >= mark;
        // Most answers find nothing queued before them: no waiter is registered then (that
        // takes the `Notify`'s lock, which every answer in flight would contend for).
        if done() {
            return;
        }
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if done() {
                return;
            }
            changed.await;
        }
    }

    /// Waits until everything queued so far is handled ([`Self::mark`], then [`Self::reached`]).
    pub async fn settle(&self) {
        self.reached(self.mark()).await;
    }

    fn handled(&self, n: u64) {
        if n > 0 {
            self.handled.fetch_add(n, Ordering::AcqRel);
            self.changed.notify_waiters();
        }
    }

    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.changed.notify_waiters();
    }
}

/// One agent session's queue, as the fan-out holds it.
#[derive(Debug)]
struct Queue {
    tx: mpsc::UnboundedSender<(Arc<Notice>, usize)>,
    state: Arc<QueueState>,
}

#[derive(Debug)]
struct QueueState {
    /// Bytes queued and not yet taken by the receiver.
    held: AtomicUsize,
    /// Notices dropped since the queue last drained.
    dropped: AtomicUsize,
    capacity: usize,
    delivery: Arc<Delivery>,
}

impl Queue {
    /// Queues `notice` unless the queue is full; false when the receiver is gone.
    fn push(&self, notice: &Arc<Notice>, bytes: usize) -> bool {
        let s = &self.state;
        let held = s.held.load(Ordering::Acquire);
        if held > 0 && held + bytes > s.capacity {
            if s.dropped.fetch_add(1, Ordering::AcqRel) == 0 {
                tracing::warn!(
                    queued_bytes = held,
                    "agent connection is not reading server notifications; dropping its log messages and other notifications until it does"
                );
            }
            return !self.tx.is_closed();
        }
        s.held.fetch_add(bytes, Ordering::AcqRel);
        s.delivery.queued.fetch_add(1, Ordering::AcqRel);
        if self.tx.send((notice.clone(), bytes)).is_err() {
            s.held.fetch_sub(bytes, Ordering::AcqRel);
            return false;
        }
        true
    }
}

/// One agent session's notices, in the order the servers sent them (module doc). Dropping it
/// ends the session's subscription and releases whoever waits on its [`Delivery`].
#[derive(Debug)]
pub struct NoticeReceiver {
    rx: mpsc::UnboundedReceiver<(Arc<Notice>, usize)>,
    state: Arc<QueueState>,
    /// Notices returned and not yet counted as handled (the one being forwarded).
    pending: u64,
}

impl NoticeReceiver {
    /// The next notice; `None` once no server can send any more. Calling it again says the
    /// notice it returned before has been handled. Cancel-safe.
    pub async fn recv(&mut self) -> Option<Arc<Notice>> {
        self.state
            .delivery
            .handled(std::mem::take(&mut self.pending));
        let (notice, bytes) = self.rx.recv().await?;
        let held = self.state.held.fetch_sub(bytes, Ordering::AcqRel) - bytes;
        if held == 0 {
            let dropped = self.state.dropped.swap(0, Ordering::AcqRel);
            if dropped > 0 {
                tracing::info!(
                    dropped,
                    "agent connection is reading server notifications again; it missed some"
                );
            }
        }
        self.pending = 1;
        Some(notice)
    }
}

impl Drop for NoticeReceiver {
    fn drop(&mut self) {
        self.state.delivery.close();
    }
}

/// The sending side every upstream session of a hub shares, and where agent sessions
/// subscribe.
#[derive(Clone, Debug, Default)]
pub struct Notices(Arc<Mutex<Vec<Queue>>>);

impl Notices {
    fn queues(&self) -> std::sync::MutexGuard<'_, Vec<Queue>> {
        // One push or sweep per critical section: a poisoned list is consistent.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Passes `notice` to every subscribed agent session (none: dropped). Never waits.
    pub fn send(&self, notice: Notice) {
        let bytes = notice.weight();
        let notice = Arc::new(notice);
        self.queues().retain(|q| q.push(&notice, bytes));
    }

    /// Every notice from now on, counted in `delivery`.
    pub fn subscribe(&self, delivery: Arc<Delivery>) -> NoticeReceiver {
        self.subscribe_with(delivery, AGENT_NOTICE_BYTES)
    }

    fn subscribe_with(&self, delivery: Arc<Delivery>, capacity: usize) -> NoticeReceiver {
        let (tx, rx) = mpsc::unbounded_channel();
        let state = Arc::new(QueueState {
            held: AtomicUsize::new(0),
            dropped: AtomicUsize::new(0),
            capacity,
            delivery,
        });
        self.queues().push(Queue {
            tx,
            state: state.clone(),
        });
        NoticeReceiver {
            rx,
            state,
            pending: 0,
        }
    }
}

/// Where one server's log messages go: every agent ([`Notices`]), and the companion's own log
/// (in the server's span): at DEBUG, so a chatty server does not fill it, and at WARN for what
/// the server marks `warning` or worse (never ERROR: that is the companion's own failures).
#[derive(Clone, Debug)]
pub struct ServerLogs {
    /// The server as configured.
    pub server: Arc<str>,
    /// The hub's fan-out.
    pub notices: Notices,
}

impl ServerLogs {
    /// Logs `params` and passes it to the agents.
    pub fn log(&self, mut params: LoggingMessageNotificationParam) {
        // Known secrets are masked before the message reaches the log or any agent.
        crate::net::scrub_known_value(&mut params.data);
        let logger = params.logger.as_deref().unwrap_or("");
        let data = &params.data;
        // The level as the server named it (`notice`, `critical`), which ours cannot tell.
        let said = serde_json::to_value(params.level).unwrap_or_default();
        let said = said.as_str().unwrap_or_default();
        match params.level {
            LoggingLevel::Debug | LoggingLevel::Info | LoggingLevel::Notice => {
                tracing::debug!(logger, level = said, %data, "server log")
            }
            _ => tracing::warn!(logger, level = said, %data, "server log"),
        }
        self.notices.send(Notice::Log {
            server: self.server.clone(),
            params,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logging::test_log::logged;

    fn message(level: LoggingLevel, text: &str) -> LoggingMessageNotificationParam {
        let mut params = LoggingMessageNotificationParam::new(level, serde_json::json!(text));
        params.logger = Some("srv".into());
        params
    }

    /// A server's `info` message is a DEBUG line of the companion's log and its `error` a WARN
    /// one; both reach the agents as the server sent them.
    #[tokio::test]
    async fn server_log_messages_are_debug_lines_unless_the_server_warns() {
        let notices = Notices::default();
        let mut agent = notices.subscribe(Arc::new(Delivery::default()));
        let logs = ServerLogs {
            server: "s".into(),
            notices,
        };
        let text = logged(false, || {
            logs.log(message(LoggingLevel::Info, "chatty"));
            logs.log(message(LoggingLevel::Notice, "noted"));
            logs.log(message(LoggingLevel::Error, "broken"));
        });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[0].contains("DEBUG")
                && lines[0].contains("level=\"info\"")
                && lines[0].contains("chatty"),
            "{text}"
        );
        assert!(
            lines[1].contains("DEBUG") && lines[1].contains("level=\"notice\""),
            "{text}"
        );
        assert!(
            lines[2].contains(" WARN ")
                && lines[2].contains("level=\"error\"")
                && lines[2].contains("broken"),
            "{text}"
        );
        for want in ["chatty", "noted", "broken"] {
            let notice = agent.recv().await.expect("a notice");
            let Notice::Log { params, .. } = &*notice else {
                panic!("{notice:?}");
            };
            assert_eq!(params.data, serde_json::json!(want));
        }
    }
}
