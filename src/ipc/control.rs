//! The control API (DESIGN §10): a second local socket, `control.sock`, with the same
//! permissions as the MCP socket, that the CLI (and scripts) use to drive a running companion.
//!
//! Wire format: one JSON object per line each way; every request gets exactly one answer line,
//! except `logs` with `"follow": true`, which keeps sending lines until the client hangs up.
//!
//! ```text
//! → {"method":"status"}
//! ← {"ok":true,"result":{"pid":1234,"version":"0.1.0","socket":"…","servers":[{"name":"time","state":"running",…}]}}
//! → {"method":"start","server":"time"}            (also "stop", "restart")
//! ← {"ok":true,"result":{}}
//! → {"method":"reload"}
//! ← {"ok":true,"result":{"added":["git"],"removed":[],"changed":[],"unchanged":["time"]}}
//! → {"method":"logs","server":"time","lines":50,"follow":true}
//! ← {"ok":true,"result":{"lines":["…"]}}          (then one {"ok":true,"result":{"lines":[…]}} per batch)
//! → {"method":"show"}                           (the desktop app shows its window; `serve` refuses)
//! ← {"ok":true,"result":{}}
//! → {"method":"environment"}
//! ← {"ok":true,"result":{"pid":1234,"vars":{"PATH":"…","SSL_CERT_FILE":"…"},"gui":null}}
//! → {"method":"stop","server":"tiem"}
//! ← {"ok":false,"error":"no server named \"tiem\""}
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use super::socket::{self, LocalListener};
use crate::config;
use crate::hub::Hub;
use crate::supervisor::ServerStatus;

/// Longest request line accepted, in bytes.
const MAX_REQUEST_BYTES: usize = 64 * 1024;
/// How often a followed log is checked for new lines.
const FOLLOW_POLL: Duration = Duration::from_millis(200);

/// A control request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "lowercase")]
pub enum ControlRequest {
    /// Every server's status plus the companion's pid and version.
    Status,
    /// The last `lines` stderr lines of `server`; with `follow`, then every new line.
    Logs {
        /// Server name.
        server: String,
        /// How many lines (default 100).
        #[serde(default = "default_lines")]
        lines: usize,
        /// Keep streaming new lines.
        #[serde(default)]
        follow: bool,
    },
    /// Start `server` (forgetting past failures).
    Start {
        /// Server name.
        server: String,
    },
    /// Stop `server` and wait until its processes are gone.
    Stop {
        /// Server name.
        server: String,
    },
    /// Stop and start `server`.
    Restart {
        /// Server name.
        server: String,
    },
    /// Re-read the config file and apply the differences.
    Reload,
    /// Sign `server` in with OAuth: one answer with the authorization URL at once, a second
    /// when the sign-in finished (see `ipc::login`).
    Login {
        /// Server name.
        server: String,
    },
    /// Forget `server`'s OAuth tokens and client registration.
    Logout {
        /// Server name.
        server: String,
    },
    /// Bring up the desktop window (a second launch of the app without D-Bus asks this).
    Show,
    /// What children inherit from this companion ([`ChildEnvironment`]), so `doctor` plans
    /// with the companion's environment instead of its caller's.
    Environment,
}

/// The `environment` answer: the inputs of a child's environment that come from the companion.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildEnvironment {
    /// Process id of the companion.
    pub pid: u32,
    /// The companion's values of every pass-through variable that is set
    /// ([`crate::launch::env::passthrough`]).
    pub vars: std::collections::BTreeMap<String, String>,
    /// The login shell's PATH when the companion runs in GUI mode.
    pub gui: Option<crate::launch::shell_path::LoginPath>,
}

impl ChildEnvironment {
    /// What this process would give its children.
    pub async fn of_this_process() -> ChildEnvironment {
        let os = crate::launch::TargetOs::host();
        let vars = crate::launch::env::passthrough(os)
            .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_owned(), v)))
            .collect();
        let gui = if os != crate::launch::TargetOs::Windows && crate::launch::shell_path::gui_mode()
        {
            Some(crate::launch::shell_path::login_path().await.clone())
        } else {
            None
        };
        ChildEnvironment {
            pid: std::process::id(),
            vars,
            gui,
        }
    }
}

fn default_lines() -> usize {
    100
}

/// The `status` answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatusReport {
    /// Process id of the companion.
    pub pid: u32,
    /// Companion version.
    pub version: String,
    /// The MCP socket agents connect to.
    pub socket: PathBuf,
    /// The config file in use, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<PathBuf>,
    /// Every server, in config order.
    pub servers: Vec<ServerStatus>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Reply {
    ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// Errors of a control client.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// Nothing listens on the control socket.
    #[error(
        "no companion is running (nothing listens on {path}): start one with `mcp-companion serve`"
    )]
    NotRunning {
        /// The control socket path.
        path: PathBuf,
    },
    /// The companion answered with an error.
    #[error("{0}")]
    Refused(String),
    /// The connection failed mid-request or the answer was malformed.
    #[error("control connection failed: {0}")]
    Io(String),
}

/// What `show` runs: set once by the desktop shell; `serve` has none.
#[derive(Clone, Default)]
pub struct ShowWindow(std::sync::Arc<std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>>);

impl ShowWindow {
    /// Installs `f` as what `show` runs; a second call is ignored.
    pub fn set(&self, f: impl Fn() + Send + Sync + 'static) {
        let _ = self.0.set(Box::new(f));
    }

    /// Runs the installed function; false when there is none.
    fn run(&self) -> bool {
        self.0.get().map(|f| f()).is_some()
    }
}

impl std::fmt::Debug for ShowWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "ShowWindow(set)"
        } else {
            "ShowWindow(none)"
        })
    }
}

/// What the control API serves.
#[derive(Clone, Debug)]
pub struct ControlContext {
    /// The hub to drive.
    pub hub: Hub,
    /// The MCP socket (reported by `status`).
    pub mcp_socket: PathBuf,
    /// The config file `reload` re-reads; `None` refuses reloads.
    pub config_path: Option<PathBuf>,
    /// What `show` runs.
    pub show_window: ShowWindow,
}

/// Serves the control API on `listener` until `shutdown`.
pub async fn serve(listener: LocalListener, ctx: ControlContext, shutdown: CancellationToken) {
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "control accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        let (ctx, stop) = (ctx.clone(), shutdown.clone());
        tokio::spawn(async move {
            tokio::select! {
                r = session(stream, &ctx) => if let Err(e) = r {
                    tracing::debug!(error = %e, "control session ended");
                },
                () = stop.cancelled() => {}
            }
        });
    }
}

async fn session<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    ctx: &ControlContext,
) -> std::io::Result<()> {
    let (rd, mut wr) = tokio::io::split(stream);
    let mut lines = BufReader::new(rd).lines();
    while let Some(line) = lines.next_line().await? {
        if line.len() > MAX_REQUEST_BYTES {
            send(
                &mut wr,
                &failure(format!("request longer than {MAX_REQUEST_BYTES} bytes")),
            )
            .await?;
            continue;
        }
        match serde_json::from_str::<ControlRequest>(&line) {
            Ok(ControlRequest::Logs {
                server,
                lines: n,
                follow: true,
            }) => return follow_logs(&mut wr, ctx, &server, n).await,
            Ok(ControlRequest::Login { server }) => match super::login::start(ctx, &server).await {
                Ok((first, phase)) => {
                    send(&mut wr, &success(first)).await?;
                    let last = match crate::auth::pending::outcome(phase).await {
                        Ok(()) => success(serde_json::json!({ "signedIn": true })),
                        Err(e) => failure(format!("sign-in to \"{server}\" failed: {e}")),
                    };
                    send(&mut wr, &last).await?;
                }
                Err(e) => send(&mut wr, &failure(e)).await?,
            },
            Ok(req) => send(&mut wr, &handle(req, ctx).await).await?,
            Err(e) => send(&mut wr, &failure(format!("bad request: {e}"))).await?,
        }
    }
    Ok(())
}

async fn send<W: AsyncWrite + Unpin>(wr: &mut W, reply: &Reply) -> std::io::Result<()> {
    let mut out = serde_json::to_vec(reply).map_err(std::io::Error::other)?;
    out.push(b'\n');
    wr.write_all(&out).await?;
    wr.flush().await
}

/// Streams `server`'s stderr: the last `n` lines, then new ones as they come, until the client
/// hangs up (a write fails) or the server is removed.
async fn follow_logs<W: AsyncWrite + Unpin>(
    wr: &mut W,
    ctx: &ControlContext,
    name: &str,
    n: usize,
) -> std::io::Result<()> {
    let Some(server) = ctx.hub.server(name) else {
        return send(wr, &failure(format!("no server named \"{name}\""))).await;
    };
    let log = server.log().clone();
    let (_, mut seen) = log.since(0);
    send(wr, &success(serde_json::json!({ "lines": log.tail(n) }))).await?;
    loop {
        tokio::time::sleep(FOLLOW_POLL).await;
        let (new, total) = log.since(seen);
        seen = total;
        if !new.is_empty() {
            send(wr, &success(serde_json::json!({ "lines": new }))).await?;
        }
    }
}

async fn handle(req: ControlRequest, ctx: &ControlContext) -> Reply {
    let hub = &ctx.hub;
    let done = |r: Result<(), crate::hub::HubError>| {
        r.map(|()| serde_json::json!({})).map_err(|e| e.to_string())
    };
    let outcome: Result<serde_json::Value, String> = match req {
        ControlRequest::Status => serde_json::to_value(StatusReport {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            socket: ctx.mcp_socket.clone(),
            config: ctx.config_path.clone(),
            servers: super::login::with_sign_in_urls(hub.statuses()),
        })
        .map_err(|e| e.to_string()),
        ControlRequest::Logs { server, lines, .. } => hub
            .server(&server)
            .map(|s| serde_json::json!({ "lines": s.log().tail(lines) }))
            .ok_or_else(|| format!("no server named \"{server}\"")),
        ControlRequest::Start { server } => done(hub.start_server(&server).await),
        ControlRequest::Stop { server } => done(hub.stop_server(&server).await),
        ControlRequest::Restart { server } => done(hub.restart_server(&server).await),
        ControlRequest::Reload => reload(ctx).await,
        ControlRequest::Login { server } => super::login::start(ctx, &server)
            .await
            .map(|(first, _)| first),
        ControlRequest::Logout { server } => super::login::logout(ctx, &server).await,
        ControlRequest::Show => {
            if ctx.show_window.run() {
                Ok(serde_json::json!({}))
            } else {
                Err("this companion has no window (it is `mcp-companion serve`)".to_owned())
            }
        }
        ControlRequest::Environment => {
            serde_json::to_value(ChildEnvironment::of_this_process().await)
                .map_err(|e| e.to_string())
        }
    };
    match outcome {
        Ok(result) => success(result),
        Err(e) => failure(e),
    }
}

/// Re-reads the config file; a file that fails to load is rejected and nothing changes.
async fn reload(ctx: &ControlContext) -> Result<serde_json::Value, String> {
    let path = ctx
        .config_path
        .as_deref()
        .ok_or("this companion has no config file to reload")?;
    let config = config::load(path)
        .map_err(|e| format!("config not reloaded, the running servers are untouched: {e}"))?;
    let report = ctx.hub.reload(&config).await;
    serde_json::to_value(report).map_err(|e| e.to_string())
}

fn success(result: serde_json::Value) -> Reply {
    Reply {
        ok: true,
        result: Some(result),
        error: None,
    }
}

fn failure(error: String) -> Reply {
    Reply {
        ok: false,
        result: None,
        error: Some(error),
    }
}

/// A client connection to a companion's control socket.
pub struct ControlClient {
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<socket::ClientStream>>>,
    wr: tokio::io::WriteHalf<socket::ClientStream>,
}

impl ControlClient {
    /// Connects to the control socket at `path`.
    ///
    /// # Errors
    /// [`ControlError::NotRunning`] when nothing listens.
    pub async fn connect(path: &Path) -> Result<ControlClient, ControlError> {
        let stream = socket::connect(path)
            .await
            .map_err(|_| ControlError::NotRunning {
                path: path.to_path_buf(),
            })?;
        let (rd, wr) = tokio::io::split(stream);
        Ok(ControlClient {
            lines: BufReader::new(rd).lines(),
            wr,
        })
    }

    /// Sends `req` without waiting for the answer.
    ///
    /// # Errors
    /// [`ControlError::Io`] when the connection fails.
    pub async fn send(&mut self, req: &ControlRequest) -> Result<(), ControlError> {
        let mut line = serde_json::to_vec(req).map_err(|e| ControlError::Io(e.to_string()))?;
        line.push(b'\n');
        self.wr
            .write_all(&line)
            .await
            .map_err(|e| ControlError::Io(e.to_string()))
    }

    /// The next answer's result; `Ok(None)` when the companion closed the connection.
    ///
    /// # Errors
    /// [`ControlError::Refused`] with the companion's message, or [`ControlError::Io`].
    pub async fn next(&mut self) -> Result<Option<serde_json::Value>, ControlError> {
        let Some(line) = self
            .lines
            .next_line()
            .await
            .map_err(|e| ControlError::Io(e.to_string()))?
        else {
            return Ok(None);
        };
        let reply: Reply = serde_json::from_str(&line)
            .map_err(|e| ControlError::Io(format!("malformed answer: {e}")))?;
        match (reply.ok, reply.result, reply.error) {
            (true, result, _) => Ok(Some(result.unwrap_or(serde_json::Value::Null))),
            (false, _, error) => Err(ControlError::Refused(
                error.unwrap_or_else(|| "unknown error".into()),
            )),
        }
    }
}

/// Sends one request to the companion whose control socket is `path` and returns its result.
///
/// # Errors
/// [`ControlError::NotRunning`] when nothing listens; [`ControlError::Refused`] with the
/// companion's message when it rejects the request.
pub async fn request(path: &Path, req: &ControlRequest) -> Result<serde_json::Value, ControlError> {
    let mut client = ControlClient::connect(path).await?;
    client.send(req).await?;
    client.next().await?.ok_or_else(|| {
        ControlError::Io("the companion closed the connection without answering".into())
    })
}
