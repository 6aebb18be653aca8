//! How a supervisor connects its server, as a value: [`Connect`]. The companion uses
//! [`upstream_connect`] (expand `${VAR}`s, then [`upstream::connect`]); tests inject their own
//! to drive the restart policy on Tokio's paused clock without real processes.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::config::{ServerConfig, SsrfWhitelist};
use crate::upstream::handler::ProgressRoutes;
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
}

/// Why a start failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartFailure {
    /// Readable by a person; becomes the server's `lastError`.
    pub message: String,
    /// Retrying cannot help (command not found, missing variable, bad cwd…): go to `failed`
    /// at once instead of backing off.
    pub permanent: bool,
}

/// A connect function: one attempt per call.
pub type Connect =
    Arc<dyn Fn(ConnectArgs) -> BoxFuture<'static, Result<Session, StartFailure>> + Send + Sync>;

/// The real connect: expands the entry and connects it with [`upstream::connect()`].
pub fn upstream_connect() -> Connect {
    Arc::new(|args: ConnectArgs| Box::pin(connect(args)))
}

async fn connect(args: ConnectArgs) -> Result<Session, StartFailure> {
    // `${secret:…}` reads may wait on the keychain: they run off the runtime's workers.
    let cfg = crate::config::expand_for_start(args.cfg.clone())
        .await
        .map_err(|e| StartFailure {
            message: e.to_string(),
            permanent: true,
        })?;
    upstream::connect(&cfg, &args.log, args.progress, &args.whitelist)
        .await
        .map_err(|e| StartFailure {
            permanent: e.is_permanent(),
            message: e.to_string(),
        })
}
