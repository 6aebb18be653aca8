//! How a supervisor connects its server, as a value: [`Connect`]. The companion uses
//! [`upstream_connect`] (expand `${VAR}`s, then [`upstream::connect`]); tests inject their own
//! to drive the restart policy on Tokio's paused clock without real processes.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::config::{ServerConfig, SsrfWhitelist};
use crate::upstream::ask::AskContext;
use crate::upstream::askers::Askers;
use crate::upstream::elicitor::{self, SharedElicitor};
use crate::upstream::handler::ProgressRoutes;
use crate::upstream::notice::Notices;
use crate::upstream::roots::EntryRoots;
use crate::upstream::stderr::LogRing;
use crate::upstream::{self, Session};

/// What a connect attempt gets.
#[derive(Clone, Debug)]
pub struct ConnectArgs {
    /// The validated entry, `${VAR}`s not yet expanded.
    pub cfg: Arc<ServerConfig>,
    /// The server's stderr ring.
    pub log: LogRing,
    /// `ssrfWhitelist` as loaded with this entry (remote servers only).
    pub whitelist: SsrfWhitelist,
    /// Where the session's handler forwards progress notifications.
    pub progress: ProgressRoutes,
    /// The calls in flight on the session, for the server's requests to find their agent.
    pub askers: Askers,
    /// The entry's `roots`, as edited by reloads since it was loaded.
    pub roots: EntryRoots,
    /// The era the server's last session spoke (kept by its supervisor across restarts).
    pub era: crate::upstream::era::Remembered,
}

/// Why a start failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartFailure {
    /// Readable by a person; becomes the server's `lastError`.
    pub message: String,
    /// Retrying cannot help (command not found, missing variable, bad cwd…): go to `failed`
    /// at once instead of backing off.
    pub permanent: bool,
    /// The server wants an OAuth sign-in (HTTP 401): go to `needs sign-in` and wait for
    /// `login` instead of retrying.
    pub sign_in: bool,
    /// With `sign_in`: the server's `WWW-Authenticate` challenge, kept for the next `login`.
    pub challenge: Option<String>,
    /// How long the server asked us to wait (HTTP `Retry-After`): the next try waits at
    /// least that long (at most `MAX_RETRY_AFTER`, 15 minutes).
    pub retry_after: Option<std::time::Duration>,
}

/// A connect function: one attempt per call.
pub type Connect =
    Arc<dyn Fn(ConnectArgs) -> BoxFuture<'static, Result<Session, StartFailure>> + Send + Sync>;

/// The real connect: expands the entry and connects it with [`upstream::connect()`]; nobody to
/// ask for elicitations ([`elicitor::Headless`]).
pub fn upstream_connect() -> Connect {
    upstream_connect_with(elicitor::headless(), Notices::default())
}

/// The real connect, whose sessions ask `elicitor` when a server's `elicitation/create` has no
/// calling agent able to answer it, and pass resource updates and log messages to `notices`.
pub fn upstream_connect_with(elicitor: SharedElicitor, notices: Notices) -> Connect {
    Arc::new(move |args: ConnectArgs| Box::pin(connect(args, elicitor.clone(), notices.clone())))
}

async fn connect(
    args: ConnectArgs,
    elicitor: SharedElicitor,
    notices: Notices,
) -> Result<Session, StartFailure> {
    // `${secret:…}` reads may wait on the keychain: they run off the runtime's workers.
    let cfg = crate::config::expand_for_start(args.cfg.clone())
        .await
        .map_err(|e| StartFailure {
            message: e.to_string(),
            permanent: true,
            sign_in: false,
            challenge: None,
            retry_after: None,
        })?;
    let asks = AskContext::new(&cfg.name, args.askers, args.roots, cfg.tool_timeout)
        .with_elicitor(elicitor)
        .with_notices(notices);
    upstream::connect(
        &cfg,
        &args.log,
        args.progress,
        asks,
        &args.whitelist,
        &args.era,
    )
    .await
    .map_err(|e| StartFailure {
        permanent: e.is_permanent(),
        sign_in: matches!(e, upstream::ConnectError::NeedsSignIn { .. }),
        challenge: match &e {
            upstream::ConnectError::NeedsSignIn { challenge, .. } => challenge.clone(),
            _ => None,
        },
        retry_after: e.retry_after(),
        message: e.to_string(),
    })
}
