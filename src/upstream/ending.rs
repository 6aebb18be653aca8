//! How a stdio server's session ended, for the calls that were in flight on it ([`Ending`],
//! [`explain`]).
//!
//! A server that crashes mid-call ends its session twice over: its output ends, so the call's
//! answer will not come ([`CallError::Transport`], or [`CallError::SessionClosed`] once the
//! supervisor closes the session under it), and its process exits. Only the supervisor waits
//! on the process ([`super::Session::closed`]), which notes how it ended in the session's
//! [`Ending`]; a call that lost its session reads that there — waiting a little, since the
//! lost output usually comes first — and says how the process exited and quotes the last
//! line it wrote to stderr, as `status` does ([`CallError::Exited`]). A session our side ends
//! (stop, restart, reload, shutdown: [`super::Session::shutdown`]) is noted first, so a call
//! whose output ends as the process is stopped says so at once. Both forwarding paths
//! (`hub::route` and the fast path) explain their failures here before they are judged.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::call::CallError;
use super::session::Closed;
use super::stderr::LogRing;

/// How long a call whose connection broke waits for the supervisor to learn how the process
/// ended: [`super::Session::closed`] itself waits up to 1 s for the exit status once the
/// connection closed.
pub const ENDING_WAIT: Duration = Duration::from_secs(2);
/// How long it then waits for the stderr drain to read the process's last lines (as the
/// supervisor does for `status`).
const STDERR_WAIT: Duration = Duration::from_millis(400);

/// How a session ended ([`Ending`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// The process exited on its own; how (`exit code 3`, `signal 9 (SIGKILL)`).
    Exited(String),
    /// Our side ended the session (stop, restart, reload, shutdown).
    Stopped,
    /// The connection closed and the exit status is not known.
    Disconnected,
}

impl End {
    /// How a session that [`super::Session::closed`] on its own ended.
    pub fn of(closed: &Closed) -> End {
        match closed {
            Closed::Exited(how) => End::Exited(how.clone()),
            _ => End::Disconnected,
        }
    }
}

/// How one session ended, once known: shared by the session (which notes it) and its calls;
/// cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct Ending(Arc<watch::Sender<Option<End>>>);

impl Ending {
    /// A session that has not ended yet.
    pub fn new() -> Ending {
        Ending::default()
    }

    /// Notes how the session ended; the first note stays.
    pub fn note(&self, end: End) {
        self.0.send_if_modified(|slot| {
            if slot.is_some() {
                return false;
            }
            *slot = Some(end);
            true
        });
    }

    /// How the session ended, if that is known yet.
    pub fn now(&self) -> Option<End> {
        self.0.borrow().clone()
    }

    /// How the session ended, waiting up to `wait` to learn it.
    pub async fn within(&self, wait: Duration) -> Option<End> {
        let mut seen = self.0.subscribe();
        let known = tokio::time::timeout(wait, seen.wait_for(Option::is_some)).await;
        match known {
            Ok(Ok(closed)) => closed.clone(),
            _ => None,
        }
    }
}

/// `e`, or what it means once the session's ending is known, when `e` is the session's
/// breaking under the call ([`CallError::Transport`], [`CallError::SessionClosed`]):
/// [`CallError::Exited`] when its process exited (`log` is the server's stderr, whose last line
/// of that process is quoted), [`CallError::SessionClosed`] when our side stopped it.
///
/// A [`CallError::Transport`] waits up to [`ENDING_WAIT`] for the ending; a
/// [`CallError::SessionClosed`] does not wait (the ending is noted before a session is
/// closed). Sessions without a process (`ending` is `None`) and every other error pass
/// unchanged, at once.
pub async fn explain(e: CallError, ending: Option<&Ending>, log: &LogRing) -> CallError {
    let Some(ending) = ending else {
        return e;
    };
    let end = match e {
        CallError::Transport { .. } => ending.within(ENDING_WAIT).await,
        CallError::SessionClosed => ending.now(),
        _ => return e,
    };
    let how = match end {
        Some(End::Exited(how)) => how,
        Some(End::Stopped) => return CallError::SessionClosed,
        Some(End::Disconnected) | None => return e,
    };
    log.drained(STDERR_WAIT).await;
    let last_stderr = log.tail_of_last_process(1).pop();
    CallError::Exited { how, last_stderr }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lost() -> CallError {
        CallError::Transport {
            reason: "the connection closed".into(),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_broken_call_waits_for_the_exit_and_quotes_the_last_stderr_line() {
        let ending = Ending::new();
        let log = LogRing::new();
        log.push("starting".into());
        log.push("panic: boom".into());
        let noted = ending.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            noted.note(End::of(&Closed::Exited("exit code 101".into())));
        });
        let e = explain(lost(), Some(&ending), &log).await;
        assert_eq!(
            e,
            CallError::Exited {
                how: "exit code 101".into(),
                last_stderr: Some("panic: boom".into()),
            }
        );
        // A session our side closed after the exit says the same, without waiting.
        let e = explain(CallError::SessionClosed, Some(&ending), &LogRing::new()).await;
        assert_eq!(
            e,
            CallError::Exited {
                how: "exit code 101".into(),
                last_stderr: None,
            }
        );
    }

    #[tokio::test(start_paused = true)]
    async fn other_endings_and_other_errors_pass_unchanged() {
        let log = LogRing::new();
        log.push("a line".into());
        let disconnected = Ending::new();
        disconnected.note(End::of(&Closed::Disconnected));
        assert_eq!(explain(lost(), Some(&disconnected), &log).await, lost());
        // Our side stopped it: the lost output is the stop, told at once.
        let stopped = Ending::new();
        stopped.note(End::Stopped);
        stopped.note(End::Exited("signal 15 (SIGTERM)".into()));
        assert_eq!(
            explain(lost(), Some(&stopped), &log).await,
            CallError::SessionClosed
        );
        // Nothing noted: a closed session stays closed, and the wait for an ending ends.
        let unknown = Ending::new();
        assert_eq!(
            explain(CallError::SessionClosed, Some(&unknown), &log).await,
            CallError::SessionClosed
        );
        let started = tokio::time::Instant::now();
        assert_eq!(explain(lost(), Some(&unknown), &log).await, lost());
        assert_eq!(started.elapsed(), ENDING_WAIT);
        let answered = CallError::Rpc {
            code: -1,
            message: "no".into(),
            data: None,
        };
        let exited = Ending::new();
        exited.note(End::Exited("exit code 1".into()));
        assert_eq!(
            explain(answered.clone(), Some(&exited), &log).await,
            answered
        );
        assert_eq!(explain(lost(), None, &log).await, lost());
    }
}
