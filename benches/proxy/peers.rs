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
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

async fn wait_port(port: u16, server: &mut Child) -> Result<()> {
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
