//! The control API's server side: one task per connection, each request answered by
//! [`handle`] with exactly one [`Reply`] line (a followed `logs` keeps sending).

use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::lines::{self, Line};
use super::protocol::{
    ActivityStatus, ApprovalsReport, ChildEnvironment, ControlRequest, ControlResponse, Done,
    ErrorKind, LogLines, Refusal, Reply, StatusReport, TrustReport, TrustServer,
};
use super::{CONTROL_WRITE_TIMEOUT, ControlContext, MAX_REQUEST_BYTES};
use crate::config::{self, UnknownServer};
use crate::ipc::accept::{ConnectionLimit, Handshake, accept_loop};
use crate::ipc::socket::LocalListener;

/// Serves the control API on `listener` until `shutdown`; each connection is a task on
/// `sessions` that ends when its client hangs up or at shutdown, at most `max_connections` at
/// once (see [`accept_loop`] for what happens at the cap; a connection's handshake is its
/// first request).
pub async fn serve(
    listener: LocalListener,
    ctx: ControlContext,
    sessions: TaskTracker,
    shutdown: CancellationToken,
    max_connections: usize,
) {
    let stop = shutdown.clone();
    let limit = ConnectionLimit {
        max: max_connections,
        refusal: busy_reply(max_connections),
    };
    accept_loop(
        listener,
        "control",
        limit,
        sessions,
        shutdown,
        move |stream, handshake| {
            let (ctx, stop) = (ctx.clone(), stop.clone());
            async move {
                tokio::select! {
                    r = session_with(stream, &ctx, &handshake) => if let Err(e) = r {
                        tracing::debug!(error = %e, "control session ended");
                    },
                    () = stop.cancelled() => {}
                }
            }
        },
    )
    .await;
}

/// The reply a connection over `max` gets before it is closed.
fn busy_reply(max: usize) -> Vec<u8> {
    let refusal = Refusal::new(
        ErrorKind::Busy,
        format!(
            "the companion is running but at its limit of {max} control connections, all busy; try again when one has closed"
        ),
    );
    let mut line = serde_json::to_vec(&Reply::from_outcome(Err(refusal))).unwrap_or_default();
    line.push(b'\n');
    line
}

/// Answers requests on one connection until the client hangs up.
pub async fn session<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    ctx: &ControlContext,
) -> std::io::Result<()> {
    session_with(stream, ctx, &Handshake::default()).await
}

/// [`session`], marking `handshake` done once the first request line has been read.
async fn session_with<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    ctx: &ControlContext,
    handshake: &Handshake,
) -> std::io::Result<()> {
    let (rd, mut wr) = tokio::io::split(stream);
    let mut rd = lines::reader(BufReader::new(rd), MAX_REQUEST_BYTES);
    while let Some(line) = lines::read_line(&mut rd).await? {
        handshake.done();
        let req = match line {
            Line::Text(text) => serde_json::from_str::<ControlRequest>(&text)
                .map_err(|e| Refusal::new(ErrorKind::BadRequest, format!("bad request: {e}"))),
            Line::TooLong => Err(Refusal::new(
                ErrorKind::TooLong,
                format!("request longer than {MAX_REQUEST_BYTES} bytes"),
            )),
            Line::NotUtf8 => Err(Refusal::new(
                ErrorKind::BadRequest,
                "bad request: not UTF-8",
            )),
        };
        match req {
            Ok(ControlRequest::Logs {
                server,
                lines: n,
                follow: true,
            }) => return follow_logs(&mut rd, &mut wr, ctx, &server, n).await,
            Ok(ControlRequest::Approvals { watch: true }) => {
                return super::approvals::watch(&mut rd, &mut wr, ctx).await;
            }
            Ok(ControlRequest::Login { server }) => {
                // Two answers: the URL at once, the outcome when the browser came back.
                match super::login::start(ctx, &server).await {
                    Ok((first, phase)) => {
                        send(&mut wr, Reply::from_outcome(Ok(first))).await?;
                        let last = super::login::outcome(&server, phase).await;
                        send(&mut wr, Reply::from_outcome(last)).await?;
                    }
                    Err(refusal) => send(&mut wr, Reply::from_outcome(Err(refusal))).await?,
                }
            }
            Ok(req) => send(&mut wr, Reply::from_outcome(handle(req, ctx).await)).await?,
            Err(refusal) => send(&mut wr, Reply::from_outcome(Err(refusal))).await?,
        }
    }
    Ok(())
}

/// Writes `reply`; a client that has not taken it after [`CONTROL_WRITE_TIMEOUT`] loses its
/// connection (the error ends the session).
pub(super) async fn send<W: AsyncWrite + Unpin>(wr: &mut W, reply: Reply) -> std::io::Result<()> {
    let mut out = serde_json::to_vec(&reply).map_err(std::io::Error::other)?;
    out.push(b'\n');
    let write = async {
        wr.write_all(&out).await?;
        wr.flush().await
    };
    match tokio::time::timeout(CONTROL_WRITE_TIMEOUT, write).await {
        Ok(written) => written,
        Err(_) => {
            tracing::info!(
                "control client did not read its reply within {} s; closing the connection",
                CONTROL_WRITE_TIMEOUT.as_secs()
            );
            Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client did not read its reply",
            ))
        }
    }
}

/// Streams `server`'s stderr: the last `n` lines, then each new batch as soon as it is written,
/// until the client hangs up (end of its input, or a failed write).
async fn follow_logs<R, W>(
    rd: &mut crate::io::LineReader<R>,
    wr: &mut W,
    ctx: &ControlContext,
    name: &str,
    n: usize,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let Some(server) = ctx.hub.server(name) else {
        let refusal = Refusal::from(UnknownServer::new(name));
        return send(wr, Reply::from_outcome(Err(refusal))).await;
    };
    let log = server.log().clone();
    let mut pushed = log.subscribe();
    let mut seen = *pushed.borrow_and_update();
    let first = LogLines { lines: log.tail(n) };
    send(wr, Reply::from_outcome(Ok(ControlResponse::Logs(first)))).await?;
    loop {
        tokio::select! {
            changed = pushed.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                let (lines, total) = log.since(seen);
                seen = total;
                if !lines.is_empty() {
                    send(wr, Reply::from_outcome(Ok(ControlResponse::Logs(LogLines { lines })))).await?;
                }
            }
            // Nothing more is expected from a follower; its end of input means it left.
            more = lines::read_line(rd) => match more {
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => return Ok(()),
            },
        }
    }
}

/// Answers one request (every verb but a followed `logs`).
async fn handle(req: ControlRequest, ctx: &ControlContext) -> Result<ControlResponse, Refusal> {
    let hub = &ctx.hub;
    let done = |r: Result<(), crate::hub::HubError>| {
        r.map(|()| ControlResponse::Done(Done {}))
            .map_err(Refusal::from)
    };
    match req {
        ControlRequest::Status => Ok(ControlResponse::Status(StatusReport {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            socket: ctx.mcp_socket.clone(),
            config: ctx.config_path.clone(),
            servers: hub.statuses_with_sign_ins(),
            warnings: hub.config_warnings().to_vec(),
            activity: hub.activity().path().map(|path| ActivityStatus {
                path: path.to_owned(),
                dropped: hub.activity().dropped(),
            }),
            profiles: hub.profiles(),
            telemetry: ctx.telemetry.clone(),
        })),
        ControlRequest::Logs { server, lines, .. } => hub
            .server(&server)
            .map(|s| {
                ControlResponse::Logs(LogLines {
                    lines: s.log().tail(lines),
                })
            })
            .ok_or_else(|| UnknownServer::new(server).into()),
        ControlRequest::Start { server } => done(hub.start_server(&server).await),
        ControlRequest::Stop { server } => done(hub.stop_server(&server).await),
        ControlRequest::Restart { server } => done(hub.restart_server(&server).await),
        ControlRequest::Reload => reload(ctx).await,
        ControlRequest::Show => {
            if ctx.show_window.run() {
                Ok(ControlResponse::Done(Done {}))
            } else {
                Err(Refusal::new(
                    ErrorKind::NoWindow,
                    "this companion has no window (it is `mcp-companion serve`)",
                ))
            }
        }
        ControlRequest::Environment => Ok(ControlResponse::Environment(
            ChildEnvironment::of_this_process().await,
        )),
        // Without waiting for the outcome (a session waits: see `session`).
        ControlRequest::Login { server } => super::login::start(ctx, &server)
            .await
            .map(|(first, _)| first),
        ControlRequest::Logout { server } => super::login::logout(ctx, &server).await,
        ControlRequest::Trust {
            server,
            approve,
            expect,
        } => trust(hub, server.as_deref(), approve, expect).await,
        ControlRequest::Approvals { .. } => Ok(ControlResponse::Approvals(ApprovalsReport {
            open: hub.approvals().open(),
        })),
        ControlRequest::Approve { id, answer } => super::approvals::approve(ctx, id, answer).await,
        ControlRequest::Agents => Ok(ControlResponse::Agents(super::protocol::AgentsReport {
            agents: hub.agents(),
        })),
        ControlRequest::Listings => Ok(ControlResponse::Listings(hub.listings())),
        ControlRequest::AgentProfile { id, profile } => {
            hub.set_agent_profile(id, profile.as_deref())?;
            Ok(ControlResponse::Done(super::protocol::Done {}))
        }
    }
}

/// Shows, and with `approve` approves, the tools waiting for approval.
async fn trust(
    hub: &crate::hub::Hub,
    server: Option<&str>,
    approve: bool,
    expect: Option<Vec<String>>,
) -> Result<ControlResponse, Refusal> {
    if let Some(name) = server
        && hub.server(name).is_none()
    {
        return Err(UnknownServer::new(name).into());
    }
    let servers: Vec<TrustServer> = if approve {
        hub.trust(server, expect)
            .await
            .map_err(Refusal::from)?
            .into_iter()
            .map(|(server, tools)| TrustServer { server, tools })
            .collect()
    } else {
        hub.waiting()
            .iter()
            .filter(|(name, _)| server.is_none_or(|s| s == &***name))
            .map(|(name, tools)| TrustServer {
                server: name.to_string(),
                tools: tools.to_vec(),
            })
            .collect()
    };
    Ok(ControlResponse::Trust(TrustReport {
        approved: approve,
        servers,
    }))
}

/// Re-reads the config file; a file that fails to load is rejected and nothing changes.
async fn reload(ctx: &ControlContext) -> Result<ControlResponse, Refusal> {
    let path = ctx.config_path.as_deref().ok_or_else(|| {
        Refusal::new(
            ErrorKind::NoConfigFile,
            "this companion has no config file to reload",
        )
    })?;
    let config = config::load(path).map_err(|e| {
        Refusal::new(
            ErrorKind::InvalidConfig,
            format!("config not reloaded, the running servers are untouched: {e}"),
        )
    })?;
    let mut report = ctx.hub.reload(&config).await;
    report.warnings = config.warnings.clone();
    let touched = |name: &str| {
        report
            .added
            .iter()
            .chain(&report.changed)
            .any(|n| n == name)
    };
    report.failed = ctx
        .hub
        .statuses()
        .into_iter()
        .filter(|s| s.state == crate::supervisor::ServerState::Failed && touched(&s.name))
        .map(|s| {
            let why = s
                .last_error
                .unwrap_or_else(|| "it failed to start".to_owned());
            format!("{}: {why}", s.name)
        })
        .collect();
    Ok(ControlResponse::Reloaded(report))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::time::{Duration, Instant};

    use super::*;
    use crate::hub::Hub;

    fn context(config: &str) -> ControlContext {
        let cfg = config::parse(config, std::path::Path::new("test")).unwrap();
        ControlContext {
            hub: Hub::start(&cfg),
            mcp_socket: PathBuf::from("/tmp/mcp.sock"),
            config_path: None,
            show_window: Default::default(),
            telemetry: None,
        }
    }

    /// Runs a session on an in-memory stream; returns our end, split.
    fn connect(
        ctx: ControlContext,
    ) -> (
        tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ) {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move { session(theirs, &ctx).await });
        let (rd, wr) = tokio::io::split(ours);
        (BufReader::new(rd).lines(), wr)
    }

    #[tokio::test]
    async fn every_request_line_gets_one_answer_with_a_stable_kind() {
        let (mut answers, mut wr) = connect(context(r#"{"mcpServers":{}}"#));
        let long = format!("{{\"method\":\"{}\"}}\n", "x".repeat(MAX_REQUEST_BYTES));
        let lines = [
            long.as_str(),
            "not json\n",
            "{\"method\":\"stop\",\"server\":\"nope\"}\n",
            "{\"method\":\"reload\"}\n",
            "{\"method\":\"status\"}\n",
        ];
        for line in lines {
            wr.write_all(line.as_bytes()).await.unwrap();
        }
        let mut kinds = Vec::new();
        for _ in lines {
            let answer: serde_json::Value =
                serde_json::from_str(&answers.next_line().await.unwrap().unwrap()).unwrap();
            kinds.push(answer["kind"].as_str().unwrap_or("ok").to_owned());
        }
        assert_eq!(
            kinds,
            [
                "tooLong",
                "badRequest",
                "unknownServer",
                "noConfigFile",
                "ok"
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn followed_logs_are_pushed_as_soon_as_a_line_is_written() {
        let ctx = context(r#"{"mcpServers":{"s":{"command":"unused","disabled":true}}}"#);
        let log = ctx.hub.server("s").unwrap().log().clone();
        log.push("before".into());
        let (mut answers, mut wr) = connect(ctx);
        wr.write_all(b"{\"method\":\"logs\",\"server\":\"s\",\"lines\":5,\"follow\":true}\n")
            .await
            .unwrap();
        let first = answers.next_line().await.unwrap().unwrap();
        assert!(first.contains("before"), "{first}");
        let at = Instant::now();
        // On the paused clock, any polling interval would show up as elapsed time.
        log.push("after".into());
        let next = answers.next_line().await.unwrap().unwrap();
        assert!(next.contains("after"), "{next}");
        assert_eq!(at.elapsed(), Duration::ZERO);
        // The follower hangs up (end of its input): the session ends.
        wr.shutdown().await.unwrap();
        assert!(answers.next_line().await.unwrap().is_none());
    }
}
