//! Peer aggregators in the same path as ours: client → the peer's stdio bridge → the peer's
//! server process → server-everything. Installed by benches/run.sh; skipped with a reason when
//! absent.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use tokio::process::{Child, Command};

use crate::procs::peers_dir;
use crate::rpc::Conn;

/// A running peer aggregator and a connection through its stdio bridge.
pub struct Peer {
    pub name: String,
    pub conn: Conn,
    pub tool: String,
    pub server: Child,
    /// Keeps the peer's config and state files until the peer is gone.
    pub dir: Option<tempfile::TempDir>,
}

/// The npm peers' install dir (benches/run.sh installs them, pinned).
fn node_bin(name: &str) -> PathBuf {
    peers_dir()
        .join("bench-peers/node/node_modules/.bin")
        .join(name)
}

/// Connects through `program args` (a stdio client bridge) and finds the echo tool.
async fn connect_echo(name: &str, program: &str, args: &[String]) -> Result<(Conn, String)> {
    let mut conn = Conn::spawn(program, args)?;
    conn.initialize().await?;
    let names = conn.tool_names().await?;
    let tool = names
        .into_iter()
        .find(|n| n == "echo" || n.ends_with("_echo"))
        .with_context(|| format!("no echo tool behind {name}"))?;
    Ok((conn, tool))
}

/// `supergateway` (npm), as its README says: `supergateway --stdio "<server command>" --port P`
/// serves SSE; `supergateway --sse URL` is its stdio bridge.
pub async fn supergateway(everything: &Path) -> Result<Peer> {
    let exe = node_bin("supergateway");
    if !exe.is_file() {
        bail!(
            "{} not installed (benches/run.sh installs it from npm)",
            exe.display()
        );
    }
    let port = free_port()?;
    let command = format!("node {} stdio", everything.display());
    let mut server = Command::new(&exe)
        .args(["--stdio", &command, "--port", &port.to_string()])
        .args(["--logLevel", "none"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("spawn supergateway server")?;
    wait_port(port, &mut server).await?;
    let url = format!("http://127.0.0.1:{port}/sse");
    let args = ["--sse", &url, "--logLevel", "none"].map(str::to_owned);
    let name = "supergateway 4.0.0 (npm)";
    let (conn, tool) = connect_echo(name, &exe.to_string_lossy(), &args).await?;
    Ok(Peer {
        name: name.to_owned(),
        conn,
        tool,
        server,
        dir: None,
    })
}

/// `mcp-hub` (npm), as its README says: `mcp-hub --port P --config cfg.json` serves every
/// configured server on one MCP endpoint, `/mcp`, using the SSE transport. It has no stdio
/// bridge of its own; clients that only speak stdio reach it through one, here mcp-proxy's.
pub async fn mcp_hub(everything: &Path) -> Result<Peer> {
    let exe = node_bin("mcp-hub");
    if !exe.is_file() {
        bail!(
            "{} not installed (benches/run.sh installs it from npm)",
            exe.display()
        );
    }
    let bridge: PathBuf = peers_dir().join("bench-peers/venv-proxy/bin/mcp-proxy");
    if !bridge.is_file() {
        bail!("its stdio bridge (mcp-proxy) is not installed");
    }
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("mcp-hub.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"everything": {
            "command": "node", "args": [everything, "stdio"]}}})
        .to_string(),
    )?;
    let port = free_port()?;
    let mut server = Command::new(&exe)
        .args(["--port", &port.to_string(), "--config"])
        .arg(&config)
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("spawn mcp-hub")?;
    wait_port(port, &mut server).await?;
    // mcp-hub 4.2.1 serves MCP at `/mcp` with the SSE transport (GET `/mcp`, POST
    // `/messages`), not streamable HTTP: its bridge is mcp-proxy's SSE client.
    let url = format!("http://127.0.0.1:{port}/mcp");
    let args = ["--transport", "sse", "--log-level", "WARNING", &url].map(str::to_owned);
    // mcp-hub listens before its servers are connected: retry until the echo tool is listed.
    let name = "mcp-hub 4.2.1 (npm, via mcp-proxy's stdio bridge)";
    let t = Instant::now();
    let (conn, tool) = loop {
        match connect_echo(name, &bridge.to_string_lossy(), &args).await {
            Ok(found) => break found,
            Err(e) if t.elapsed() > Duration::from_secs(30) => return Err(e),
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    };
    Ok(Peer {
        name: name.to_owned(),
        conn,
        tool,
        server,
        dir: Some(dir),
    })
}

pub fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

pub async fn wait_port(port: u16, server: &mut Child) -> Result<()> {
    let t = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        if let Some(st) = server.try_wait()? {
            bail!("exited before listening ({st})");
        }
        if t.elapsed() > Duration::from_secs(30) {
            bail!("not listening on {port} after 30 s");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// `mcp-proxy` (PyPI): `mcp-proxy --port P -- node everything stdio` serves streamable HTTP;
/// `mcp-proxy --transport streamablehttp URL` is its stdio bridge.
pub async fn mcp_proxy(everything: &Path) -> Result<Peer> {
    let exe: PathBuf = peers_dir().join("bench-peers/venv-proxy/bin/mcp-proxy");
    if !exe.is_file() {
        bail!(
            "{} not installed (benches/run.sh installs it from PyPI)",
            exe.display()
        );
    }
    let port = free_port()?;
    let mut server = Command::new(&exe)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--log-level", "WARNING", "--", "node"])
        .arg(everything)
        .arg("stdio")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("spawn mcp-proxy server")?;
    wait_port(port, &mut server).await?;
    let exe = exe.to_string_lossy().into_owned();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let args = [
        "--transport",
        "streamablehttp",
        "--log-level",
        "WARNING",
        &url,
    ]
    .map(str::to_owned);
    let mut conn = Conn::spawn(&exe, &args)?;
    conn.initialize().await?;
    let names = conn.tool_names().await?;
    let tool = names
        .into_iter()
        .find(|n| n == "echo" || n.ends_with("_echo"))
        .context("no echo tool behind mcp-proxy")?;
    Ok(Peer {
        name: "mcp-proxy 0.13 (PyPI)".to_owned(),
        conn,
        tool,
        server,
        dir: None,
    })
}

/// Why `@1mcp/agent` is not measured.
pub fn one_mcp_skip_reason() -> String {
    let dir = peers_dir().join("bench-peers");
    if dir
        .join("node/node_modules/@1mcp/agent/package.json")
        .is_file()
    {
        return "installed, but its bench path is not wired up yet".to_owned();
    }
    let log = std::fs::read_to_string(dir.join("1mcp-install.log")).unwrap_or_default();
    match log
        .lines()
        .find(|l| l.contains("E404") || l.contains("404 Not Found"))
    {
        Some(_) => "not installable: the npm registry reachable here answers 404 for @1mcp/agent"
            .to_owned(),
        None => "not installed (benches/run.sh tries `npm install @1mcp/agent`)".to_owned(),
    }
}

/// The floor any proxy on this path pays: `socat`, a C byte relay that parses nothing, on the
/// same topology as the companion (client → Unix socket → relay → the server's stdin/stdout
/// pipes). Its added time is two process hops and nothing else. Returns the relay (kill it
/// after), a connection through it and the dir holding its socket.
pub async fn byte_relay(
    program: &str,
    args: &[String],
) -> Result<(Child, Conn, tempfile::TempDir)> {
    let socat =
        which::which("socat").context("socat not installed (benches/run.sh installs it)")?;
    let dir = tempfile::tempdir()?;
    let socket = dir.path().join("relay.sock");
    // socat's EXEC splits its command on spaces; the bench's paths and arguments have none.
    let exec = std::iter::once(program.to_owned())
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let mut relay = Command::new(socat)
        .arg(format!("UNIX-LISTEN:{}", socket.display()))
        .arg(format!("EXEC:{exec},pipes"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .context("spawn socat")?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !socket.exists() {
        if let Some(status) = relay.try_wait()? {
            bail!("socat exited ({status}) before listening");
        }
        if Instant::now() > deadline {
            bail!("socat did not listen within 10 s");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let conn = Conn::unix(&socket).await?;
    Ok((relay, conn, dir))
}
