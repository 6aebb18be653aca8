//! Who answers `elicitation/create` when no calling agent can: the [`Elicitor`] the companion
//! was started with. Headless (`serve`, the CLI, tests) that is [`Headless`]: `cancel` at once,
//! because nobody was asked, so nobody declined. The desktop shell implements it by asking the
//! person in its window.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
pub use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction};

/// One `elicitation/create` for a person to answer.
#[derive(Clone, Debug)]
pub struct ElicitationRequest {
    /// The asking server's name, as configured (shown to the person).
    pub server: Arc<str>,
    /// The server's request as sent: form mode (`message` + `requestedSchema`) or url mode
    /// (`message`, `url`, `elicitationId`). The message is plain text, never markup.
    pub params: ElicitRequestParams,
    /// How long the person has to answer: the entry's `toolTimeout`. Unanswered by then →
    /// `cancel`.
    pub timeout: Duration,
}

/// Answers `elicitation/create` on a person's behalf only by asking that person.
///
/// The three actions mean (MCP 2025-11-25, Elicitation): `accept` — the person submitted the
/// form (`content` holds values matching `requestedSchema`; in url mode, no content: they chose
/// to open the URL); `decline` — the person explicitly said no; `cancel` — nobody answered
/// (dismissed, timed out, nobody there to ask). An implementation never returns `decline` unless
/// a person chose it.
///
/// The future is dropped when the request is withdrawn (the server cancelled it with
/// `notifications/cancelled`, or its session ended); the implementation must then forget the
/// request (e.g. take the form down). It must itself resolve with `cancel` once
/// [`ElicitationRequest::timeout`] has passed.
pub trait Elicitor: Send + Sync + std::fmt::Debug {
    /// Asks for `request`; resolves with the person's answer or `cancel`.
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitResult>;
}

/// An [`Elicitor`] shared by every session of a companion.
pub type SharedElicitor = Arc<dyn Elicitor>;

/// Nobody to ask: `cancel` at once, logged with the server and its message.
#[derive(Clone, Copy, Debug, Default)]
pub struct Headless;

impl Elicitor for Headless {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'static, ElicitResult> {
        tracing::warn!(
            server = %request.server,
            message = %crate::net::capped(message(&request.params)),
            "elicitation/create with no agent able to answer it and no window: answered cancel (nobody was asked)"
        );
        Box::pin(async { ElicitResult::new(ElicitationAction::Cancel) })
    }
}

/// The headless elicitor, shared.
pub fn headless() -> SharedElicitor {
    Arc::new(Headless)
}

/// The request's `message`; empty for a mode newer than this build.
pub fn message(params: &ElicitRequestParams) -> &str {
    match params {
        ElicitRequestParams::FormElicitationParams { message, .. }
        | ElicitRequestParams::UrlElicitationParams { message, .. } => message,
        _ => "",
    }
}
