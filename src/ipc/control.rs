//! The control API (DESIGN §10): a second local socket, `control.sock`, with the same
//! permissions as the MCP socket, that the CLI uses to drive a running companion.
//!
//! Wire format: one JSON object per line each way.
//!
//! ```text
//! → {"method":"status"}
//! ← {"ok":true,"result":{"pid":1234,"version":"0.1.0","servers":[{"name":"time","state":"running",…}]}}
//! → {"method":"logs","server":"time","lines":50}
//! ← {"ok":true,"result":{"lines":["…"]}}
//! → {"method":"start","server":"time"}      (also "stop")
//! ← {"ok":false,"error":"no server named \"tiem\""}
//! ```
//!
//! Each connection may send any number of requests; each gets exactly one answer line.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

use super::socket::{self, LocalListener};
use crate::hub::Hub;
use crate::supervisor::ServerStatus;

/// Longest request line accepted, in bytes.
const MAX_REQUEST_BYTES: usize = 64 * 1024;

/// A control request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "lowercase")]
pub enum ControlRequest {
    /// Every server's status plus the companion's pid and version.
    Status,
    /// The last `lines` stderr lines of `server`.
    Logs {
        /// Server name.
        server: String,
        /// How many lines (default 100).
        #[serde(default = "default_lines")]
        lines: usize,
    },
    /// Start `server`.
    Start {
        /// Server name.
        server: String,
    },
    /// Stop `server` and wait until its processes are gone.
    Stop {
        /// Server name.
        server: String,
    },
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

/// Serves the control API on `listener` until `shutdown`.
pub async fn serve(
    listener: LocalListener,
    hub: Hub,
    mcp_socket: PathBuf,
    shutdown: CancellationToken,
) {
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "control accept failed");
                    continue;
                }
            },
            () = shutdown.cancelled() => break,
        };
        let (hub, sock, stop) = (hub.clone(), mcp_socket.clone(), shutdown.clone());
        tokio::spawn(async move {
            tokio::select! {
                r = session(stream, &hub, &sock) => if let Err(e) = r {
                    tracing::debug!(error = %e, "control session ended");
                },
                () = stop.cancelled() => {}
            }
        });
    }
}

async fn session<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    hub: &Hub,
    mcp_socket: &Path,
) -> std::io::Result<()> {
    let (rd, mut wr) = tokio::io::split(stream);
    let mut lines = BufReader::new(rd).lines();
    while let Some(line) = lines.next_line().await? {
        let reply = if line.len() > MAX_REQUEST_BYTES {
            failure(format!("request longer than {MAX_REQUEST_BYTES} bytes"))
        } else {
            match serde_json::from_str::<ControlRequest>(&line) {
                Ok(req) => handle(req, hub, mcp_socket).await,
                Err(e) => failure(format!("bad request: {e}")),
            }
        };
        let mut out = serde_json::to_vec(&reply).map_err(std::io::Error::other)?;
        out.push(b'\n');
        wr.write_all(&out).await?;
        wr.flush().await?;
    }
    Ok(())
}

async fn handle(req: ControlRequest, hub: &Hub, mcp_socket: &Path) -> Reply {
    let server = |name: &str| {
        hub.server(name)
            .ok_or_else(|| format!("no server named \"{name}\""))
    };
    let outcome: Result<serde_json::Value, String> = match req {
        ControlRequest::Status => serde_json::to_value(StatusReport {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            socket: mcp_socket.to_path_buf(),
            servers: hub.statuses(),
        })
        .map_err(|e| e.to_string()),
        ControlRequest::Logs {
            server: name,
            lines,
        } => server(&name).map(|s| serde_json::json!({ "lines": s.log().tail(lines) })),
        ControlRequest::Start { server: name } => match server(&name) {
            Ok(s) if s.config().is_none() => Err(format!(
                "server \"{name}\" has an invalid config entry: {}",
                s.snapshot().status.last_error.unwrap_or_default()
            )),
            Ok(s) => {
                s.start().await;
                Ok(serde_json::json!({}))
            }
            Err(e) => Err(e),
        },
        ControlRequest::Stop { server: name } => match server(&name) {
            Ok(s) => {
                s.stop().await;
                Ok(serde_json::json!({}))
            }
            Err(e) => Err(e),
        },
    };
    match outcome {
        Ok(result) => Reply {
            ok: true,
            result: Some(result),
            error: None,
        },
        Err(e) => failure(e),
    }
}

fn failure(error: String) -> Reply {
    Reply {
        ok: false,
        result: None,
        error: Some(error),
    }
}

/// Sends one request to the companion whose control socket is `path` and returns its result.
///
/// # Errors
/// [`ControlError::NotRunning`] when nothing listens; [`ControlError::Refused`] with the
/// companion's message when it rejects the request.
pub async fn request(path: &Path, req: &ControlRequest) -> Result<serde_json::Value, ControlError> {
    let stream = socket::connect(path)
        .await
        .map_err(|_| ControlError::NotRunning {
            path: path.to_path_buf(),
        })?;
    let (rd, mut wr) = tokio::io::split(stream);
    let mut line = serde_json::to_vec(req).map_err(|e| ControlError::Io(e.to_string()))?;
    line.push(b'\n');
    wr.write_all(&line)
        .await
        .map_err(|e| ControlError::Io(e.to_string()))?;
    let mut answer = String::new();
    BufReader::new(rd)
        .read_line(&mut answer)
        .await
        .map_err(|e| ControlError::Io(e.to_string()))?;
    let reply: Reply = serde_json::from_str(&answer)
        .map_err(|e| ControlError::Io(format!("malformed answer: {e}")))?;
    match (reply.ok, reply.result, reply.error) {
        (true, Some(result), _) => Ok(result),
        (true, None, _) => Ok(serde_json::Value::Null),
        (false, _, error) => Err(ControlError::Refused(
            error.unwrap_or_else(|| "unknown error".into()),
        )),
    }
}
