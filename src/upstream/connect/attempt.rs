//! How one connection attempt failed (for good, or as a sign to try the other protocol era),
//! and a failed handshake step as a [`ConnectError`].

use std::time::Duration;

use super::Stage;
use crate::upstream::ConnectError;

pub(in crate::upstream) fn failed(
    stage: Stage,
    reason: String,
    stderr: Vec<String>,
    retry_after: Option<Duration>,
) -> ConnectError {
    match stage {
        Stage::Initialize => ConnectError::Initialize {
            reason,
            stderr,
            retry_after,
        },
        Stage::List => ConnectError::List {
            reason,
            stderr,
            retry_after,
        },
    }
}

/// How one attempt at a stdio or streamable HTTP server failed.
pub(in crate::upstream) enum Attempt {
    /// For good (this time).
    Failed(ConnectError),
    /// The server refused `initialize` saying it speaks only 2026-07-28.
    ModernOnly(ConnectError),
    /// The server answered `server/discover` with an error: it no longer speaks 2026-07-28
    /// alone, so it gets `initialize`.
    NotModern(ConnectError),
}

impl Attempt {
    pub(in crate::upstream) fn into_error(self) -> ConnectError {
        match self {
            Attempt::Failed(e) | Attempt::ModernOnly(e) | Attempt::NotModern(e) => e,
        }
    }
}

impl From<ConnectError> for Attempt {
    fn from(e: ConnectError) -> Self {
        Attempt::Failed(e)
    }
}
