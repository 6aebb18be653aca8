//! Elicitation in the window: a server's `elicitation/create` that no calling agent
//! can answer is put to the person. [`WindowElicitor`] is the core's
//! [`Elicitor`](mcp_companion::upstream::elicitor::Elicitor) for the desktop app: it records
//! the request in [`Pending`], emits it on [`ELICITATION_REQUESTED`], brings the window forward
//! and waits for the person's answer (the `answer_elicitation` command), the timeout (→
//! `cancel`), or the server withdrawing it. A desktop notification ([`crate::notification`])
//! says who asks; clicking it raises the window. However it ends, [`ELICITATION_CLOSED`] tells
//! the window to take the form down and the notification is withdrawn.
//!
//! [`Pending`] is the one owner of open requests (id → reply channel); several may be open at
//! once, each answered by its own id.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_companion::upstream::elicitor::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationRequest, Elicitor,
};
use serde::Serialize;
use tauri::{AppHandle, Emitter, Runtime};
use tokio::sync::oneshot;

use crate::notification::{Notice, Notification, Outcome};

/// Channel carrying an [`Elicitation`]: a form (or URL) to show.
pub const ELICITATION_REQUESTED: &str = "elicitation-requested";
/// Channel carrying the `id` (number) of an elicitation that was answered, timed out or
/// withdrawn by its server.
pub const ELICITATION_CLOSED: &str = "elicitation-closed";

/// One open elicitation as the window shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Elicitation {
    /// Answer with this id (`answer_elicitation`).
    pub id: u64,
    /// The asking server's name.
    pub server: String,
    /// The server's message: plain text, shown as text, never as markup.
    pub message: String,
    /// `form` or `url`.
    pub mode: &'static str,
    /// Form mode: the server's `requestedSchema` (an object schema of primitive properties).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<serde_json::Value>,
    /// URL mode: the URL the server wants opened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// URL mode: the URL's host, shown on its own so the person sees where it leads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Seconds until the request is answered `cancel` on its own.
    pub timeout_s: u64,
}

impl Elicitation {
    /// What the window shows for `request`; `None` for a mode this build does not know.
    pub fn of(id: u64, request: &ElicitationRequest) -> Option<Elicitation> {
        let mut shown = Elicitation {
            id,
            server: request.server.to_string(),
            message: String::new(),
            mode: "form",
            requested_schema: None,
            url: None,
            host: None,
            timeout_s: request.timeout.as_secs(),
        };
        match &request.params {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                shown.message = message.clone();
                shown.requested_schema = serde_json::to_value(requested_schema).ok();
            }
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                shown.message = message.clone();
                shown.mode = "url";
                shown.host = Some(host_of(url));
                shown.url = Some(url.clone());
            }
            _ => return None,
        }
        Some(shown)
    }
}

/// The host of `url` (`scheme://user@host:port/path` → `host:port`), or the whole text when it
/// has no `scheme://`.
pub fn host_of(url: &str) -> String {
    let Some((_, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
        .to_owned()
}

/// No open elicitation has that id (answered already, timed out, or withdrawn).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("elicitation {0} is no longer open (answered, timed out or withdrawn by its server)")]
pub struct NotPending(pub u64);

struct Open {
    shown: Elicitation,
    reply: oneshot::Sender<ElicitResult>,
}

#[derive(Default)]
struct Inner {
    next: u64,
    open: BTreeMap<u64, Open>,
}

/// The open elicitations, id → reply channel; cheap to clone (one shared map).
#[derive(Clone, Default)]
pub struct Pending(Arc<Mutex<Inner>>);

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Pending").field(&self.ids()).finish()
    }
}

impl Pending {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens a request shown as `shown(id)` with a fresh id. The returned [`Ticket`] waits for
    /// its answer; dropping the ticket (answered, timed out, or withdrawn) removes the request
    /// and calls `on_close` with its id.
    pub fn open(
        &self,
        shown: impl FnOnce(u64) -> Option<Elicitation>,
        on_close: impl FnOnce(u64) + Send + 'static,
    ) -> Option<(Elicitation, Ticket)> {
        let mut inner = self.lock();
        inner.next += 1;
        let id = inner.next;
        let shown = shown(id)?;
        let (reply, answer) = oneshot::channel();
        inner.open.insert(
            id,
            Open {
                shown: shown.clone(),
                reply,
            },
        );
        let ticket = Ticket {
            pending: self.clone(),
            id,
            answer,
            on_close: Some(Box::new(on_close)),
        };
        Some((shown, ticket))
    }

    /// Answers request `id` with `result`.
    ///
    /// # Errors
    /// [`NotPending`] when no request with that id is open.
    pub fn answer(&self, id: u64, result: ElicitResult) -> Result<(), NotPending> {
        let open = self.lock().open.remove(&id).ok_or(NotPending(id))?;
        open.reply.send(result).map_err(|_| NotPending(id))
    }

    /// Request `id` as shown, while it is open.
    pub fn get(&self, id: u64) -> Option<Elicitation> {
        self.lock().open.get(&id).map(|o| o.shown.clone())
    }

    /// Every open request, oldest first (a window that (re)loads shows them).
    pub fn list(&self) -> Vec<Elicitation> {
        self.lock().open.values().map(|o| o.shown.clone()).collect()
    }

    fn ids(&self) -> Vec<u64> {
        self.lock().open.keys().copied().collect()
    }
}

/// One open request's side of [`Pending`]: waits for the answer; removes the request when
/// dropped.
pub struct Ticket {
    pending: Pending,
    id: u64,
    answer: oneshot::Receiver<ElicitResult>,
    on_close: Option<Box<dyn FnOnce(u64) + Send>>,
}

impl Ticket {
    /// The person's answer, or `cancel` once `timeout` has passed.
    pub async fn wait(mut self, timeout: Duration) -> ElicitResult {
        match tokio::time::timeout(timeout, &mut self.answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) | Err(_) => {
                tracing::info!(
                    id = self.id,
                    timeout_s = timeout.as_secs_f64(),
                    "nobody answered the elicitation in the window: answered cancel"
                );
                ElicitResult::new(ElicitationAction::Cancel)
            }
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.pending.lock().open.remove(&self.id);
        if let Some(on_close) = self.on_close.take() {
            on_close(self.id);
        }
    }
}

/// Asks the person in the main window (see the module doc).
pub struct WindowElicitor<R: Runtime> {
    app: AppHandle<R>,
    pending: Pending,
}

impl<R: Runtime> std::fmt::Debug for WindowElicitor<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WindowElicitor")
            .field("pending", &self.pending)
            .finish_non_exhaustive()
    }
}

impl<R: Runtime> WindowElicitor<R> {
    /// An elicitor for `app`'s window, recording requests in `pending` (which the
    /// `answer_elicitation` command answers).
    pub fn new(app: AppHandle<R>, pending: Pending) -> WindowElicitor<R> {
        WindowElicitor { app, pending }
    }
}

impl<R: Runtime> Elicitor for WindowElicitor<R> {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitResult> {
        let app = self.app.clone();
        let closed = app.clone();
        let (withdraw, withdrawn) = oneshot::channel::<()>();
        let opened = self.pending.open(
            |id| Elicitation::of(id, &request),
            move |id| {
                drop(withdraw);
                if let Err(e) = closed.emit(ELICITATION_CLOSED, id) {
                    tracing::warn!(error = %e, "cannot tell the window an elicitation closed");
                }
            },
        );
        let Some((shown, ticket)) = opened else {
            tracing::warn!(server = %request.server, "elicitation/create in a mode this build does not know: answered cancel");
            return Box::pin(async { ElicitResult::new(ElicitationAction::Cancel) });
        };
        tracing::info!(server = %request.server, id = shown.id, mode = shown.mode, "elicitation/create with no agent able to answer it: asking in the window");
        if let Err(e) = app.emit(ELICITATION_REQUESTED, &shown) {
            tracing::warn!(error = %e, "cannot show the elicitation in the window");
        }
        crate::tray::show_window(&app);
        let notice = Notice::asking(&shown.server, &shown.message, request.timeout);
        tauri::async_runtime::spawn(notify(app, notice, withdrawn));
        Box::pin(ticket.wait(request.timeout))
    }
}

/// Shows `notice` until the request closes (`withdrawn` resolves or its sender is dropped);
/// a click brings the window forward. Without a notification service the raised window is all.
/// Used for elicitations and for calls waiting for approval (`crate::approve`).
pub(crate) async fn notify<R: Runtime>(
    app: AppHandle<R>,
    notice: Notice,
    withdrawn: oneshot::Receiver<()>,
) {
    let mut shown = match Notification::show(&notice).await {
        Ok(shown) => shown,
        Err(e) => {
            tracing::info!(error = %e, "no desktop notification; the window is raised");
            return;
        }
    };
    tracing::info!(notification = shown.id(), "desktop notification shown");
    let outcome = tokio::select! {
        outcome = shown.outcome() => Some(outcome),
        _ = withdrawn => None,
    };
    match outcome {
        Some(Outcome::Clicked) => {
            tracing::info!(
                notification = shown.id(),
                "notification clicked: showing the window"
            );
            crate::tray::show_window(&app);
        }
        Some(Outcome::Dismissed) => {}
        // Answered, timed out or withdrawn: the notification has nothing left to ask.
        None => shown.close().await,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn shown(id: u64) -> Option<Elicitation> {
        Some(Elicitation {
            id,
            server: "s".into(),
            message: format!("question {id}"),
            mode: "form",
            requested_schema: None,
            url: None,
            host: None,
            timeout_s: 1,
        })
    }

    fn counting() -> (Arc<AtomicUsize>, impl FnOnce(u64) + Send + 'static) {
        let closes = Arc::new(AtomicUsize::new(0));
        let c = closes.clone();
        (closes, move |_| {
            c.fetch_add(1, Ordering::SeqCst);
        })
    }

    fn accept(value: serde_json::Value) -> ElicitResult {
        ElicitResult::new(ElicitationAction::Accept).with_content(value)
    }

    #[tokio::test]
    async fn several_open_requests_each_get_their_own_answer() {
        let pending = Pending::default();
        let (closes, on_close) = counting();
        let (first, t1) = pending.open(shown, on_close).expect("opened");
        let (second, t2) = pending.open(shown, |_| {}).expect("opened");
        assert_ne!(first.id, second.id);
        assert_eq!(pending.list(), vec![first.clone(), second.clone()]);
        let w1 = tokio::spawn(t1.wait(Duration::from_secs(10)));
        let w2 = tokio::spawn(t2.wait(Duration::from_secs(10)));
        pending
            .answer(second.id, ElicitResult::new(ElicitationAction::Decline))
            .expect("second open");
        pending
            .answer(first.id, accept(serde_json::json!({"name": "Ada"})))
            .expect("first open");
        let (r1, r2) = (w1.await.expect("joined"), w2.await.expect("joined"));
        assert_eq!(r1.action, ElicitationAction::Accept);
        assert_eq!(r1.content, Some(serde_json::json!({"name": "Ada"})));
        assert_eq!(r2.action, ElicitationAction::Decline);
        assert!(pending.list().is_empty());
        assert_eq!(closes.load(Ordering::SeqCst), 1);
        assert_eq!(
            pending.answer(first.id, ElicitResult::new(ElicitationAction::Decline)),
            Err(NotPending(first.id))
        );
    }

    #[tokio::test]
    async fn an_unanswered_request_times_out_with_cancel_and_closes() {
        let pending = Pending::default();
        let (closes, on_close) = counting();
        let (open, ticket) = pending.open(shown, on_close).expect("opened");
        let result = ticket.wait(Duration::from_millis(50)).await;
        assert_eq!(result.action, ElicitationAction::Cancel);
        assert_eq!(result.content, None);
        assert_eq!(pending.get(open.id), None);
        assert_eq!(closes.load(Ordering::SeqCst), 1);
        assert_eq!(
            pending.answer(open.id, accept(serde_json::json!({}))),
            Err(NotPending(open.id))
        );
    }

    #[tokio::test]
    async fn a_request_the_server_withdraws_is_forgotten_and_closes() {
        let pending = Pending::default();
        let (closes, on_close) = counting();
        let (open, ticket) = pending.open(shown, on_close).expect("opened");
        let (_, other) = pending.open(shown, |_| {}).expect("opened");
        // The core drops the elicitor's future when the server cancels its request.
        let waiting = tokio::spawn(ticket.wait(Duration::from_secs(10)));
        tokio::task::yield_now().await;
        waiting.abort();
        assert!(waiting.await.is_err_and(|e| e.is_cancelled()));
        assert_eq!(pending.get(open.id), None);
        assert_eq!(closes.load(Ordering::SeqCst), 1);
        assert_eq!(
            pending.answer(open.id, ElicitResult::new(ElicitationAction::Decline)),
            Err(NotPending(open.id))
        );
        assert_eq!(pending.list().len(), 1, "the other request stays open");
        drop(other);
        assert!(pending.list().is_empty());
    }

    #[test]
    fn hosts_of_urls() {
        for (url, host) in [
            ("https://example.com/sign-in", "example.com"),
            (
                "https://user:pw@pay.example.org:8443/x?y#z",
                "pay.example.org:8443",
            ),
            ("http://127.0.0.1:9", "127.0.0.1:9"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(host_of(url), host, "{url}");
        }
    }
}
