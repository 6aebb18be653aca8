//! The companion under test: a release `mcp-companion serve` with a temp config and socket,
//! its status over the control socket, and its memory from /proc.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use mcp_companion::control::{StatusReport, status};
use mcp_companion::supervisor::ServerState;
use serde_json::{Map, Value, json};
use tokio::process::{Child, Command};

/// The binary under test: `MCP_COMPANION_BIN`, else the one cargo built for this bench.
pub fn companion_bin() -> String {
    std::env::var("MCP_COMPANION_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_mcp-companion").to_owned())
}

/// A config entry running our rmcp test server.
pub fn demo_entry(start_delay_ms: u64, extra_tools: usize) -> Value {
    json!({"command": companion_bin(), "args": demo_args(start_delay_ms, extra_tools)})
}

/// Arguments of `mcp-companion demo-server --test-tools …`.
pub fn demo_args(start_delay_ms: u64, extra_tools: usize) -> Vec<String> {
    let mut a = vec!["demo-server".to_owned(), "--test-tools".to_owned()];
    if start_delay_ms > 0 {
        a.extend(["--start-delay-ms".to_owned(), start_delay_ms.to_string()]);
    }
    if extra_tools > 0 {
        a.extend(["--extra-tools".to_owned(), extra_tools.to_string()]);
    }
    a
}

/// A running `mcp-companion serve`.
pub struct Companion {
    child: Child,
    pub pid: u32,
    pub socket: PathBuf,
    control: PathBuf,
    _dir: tempfile::TempDir,
}

impl Companion {
    /// Starts the companion on `servers` and waits until every one is `running`; returns it
    /// and the time from spawn until then.
    pub async fn start(servers: Map<String, Value>) -> Result<(Companion, Duration)> {
        Self::start_env(servers, &[]).await
    }

    /// Like [`Companion::start`], with `env` set for the companion (e.g. the fast-path switch).
    pub async fn start_env(
        servers: Map<String, Value>,
        env: &[(&str, &str)],
    ) -> Result<(Companion, Duration)> {
        Self::start_config(json!({ "mcpServers": servers }), env).await
    }

    /// Like [`Companion::start_env`], with a whole config file (`mcpServers` and top-level
    /// settings such as `ssrfWhitelist`).
    pub async fn start_config(
        config_json: Value,
        env: &[(&str, &str)],
    ) -> Result<(Companion, Duration)> {
        let dir = tempfile::tempdir()?;
        let config = dir.path().join("config.json");
        let n = config_json["mcpServers"].as_object().map_or(0, Map::len);
        // `MCP_BENCH_ACTIVITY=off`: the same run with the activity log off, to measure its cost.
        let mut config_json = config_json;
        if std::env::var("MCP_BENCH_ACTIVITY").as_deref() == Ok("off") {
            config_json["activity"] = serde_json::json!({ "enabled": false });
        }
        std::fs::write(&config, config_json.to_string())?;
        let socket = dir.path().join("mcp.sock");
        let log = std::fs::File::create(dir.path().join("serve.log"))?;
        let t = Instant::now();
        let child = Command::new(companion_bin())
            .arg("--config")
            .arg(&config)
            .arg("--socket")
            .arg(&socket)
            .args(["serve", "--log-level", "warn"])
            // Its own home in its temp dir: one companion runs per user (a lock under HOME)
            // and the bench runs several at once; the activity log (on, as by default) goes
            // there too, not to the user's.
            .env("HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path())
            .env("XDG_STATE_HOME", dir.path())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .context("spawn mcp-companion serve")?;
        let pid = child.id().context("pid")?;
        let c = Companion {
            child,
            pid,
            control: dir.path().join("control.sock"),
            socket,
            _dir: dir,
        };
        loop {
            if let Ok(st) = c.status().await {
                let running = st
                    .servers
                    .iter()
                    .filter(|s| s.state == ServerState::Running)
                    .count();
                if running == n {
                    return Ok((c, t.elapsed()));
                }
                if let Some(bad) = st.servers.iter().find(|s| s.state == ServerState::Failed) {
                    bail!("server {} failed: {:?}", bad.name, bad.last_error);
                }
            }
            if t.elapsed() > Duration::from_secs(60) {
                bail!("servers not running after 60 s; see {}", c.log().display());
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    fn log(&self) -> PathBuf {
        self._dir.path().join("serve.log")
    }

    /// The control API's `status`.
    pub async fn status(&self) -> Result<StatusReport> {
        Ok(status(&self.control).await?)
    }

    /// (VmRSS, VmHWM) of the companion process alone, in KiB.
    pub fn rss_kib(&self) -> (u64, u64) {
        rss_kib(self.pid)
    }

    /// Resets VmHWM to the current RSS (Linux `clear_refs` 5); false when not allowed.
    pub fn reset_peak(&self) -> bool {
        std::fs::write(format!("/proc/{}/clear_refs", self.pid), "5").is_ok()
    }

    /// SIGTERM, then wait (SIGKILL after 10 s).
    pub async fn stop(mut self) {
        // SAFETY: plain kill(2) on our own child's pid.
        unsafe {
            libc::kill(self.pid as libc::pid_t, libc::SIGTERM);
        }
        if tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// (VmRSS, VmHWM) of `pid` in KiB, 0 when unreadable.
pub fn rss_kib(pid: u32) -> (u64, u64) {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |k: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(k))
            .and_then(|r| r.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The server-everything entry point when Node and the peers dir are present.
pub fn everything_js() -> Option<PathBuf> {
    let dir = peers_dir();
    let js = dir.join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let node_ok = std::process::Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (node_ok && js.is_file()).then_some(js)
}

/// `$MCP_PEERS_DIR`, else ~/.cache/mcp-companion/peers.
pub fn peers_dir() -> PathBuf {
    std::env::var_os("MCP_PEERS_DIR").map_or_else(
        || {
            dirs::home_dir()
                .unwrap_or_else(|| PathBuf::from("/tmp"))
                .join(".cache/mcp-companion/peers")
        },
        PathBuf::from,
    )
}
