//! Test harness: a real `mcp-companion serve` process in a private temp dir (own HOME, config
//! and socket), driven through its real socket, control API and CLI.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use mcp_companion::control::{self, StatusReport};
use mcp_companion::supervisor::{ServerState, ServerStatus};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProtocolVersion,
};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

pub mod activity;
pub mod asking;
pub mod fidelity;

/// The CLI binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-companion");

/// A config entry running our demo server with its test tools.
pub fn demo(extra_args: &[&str]) -> Value {
    let mut args = vec!["demo-server", "--test-tools"];
    args.extend_from_slice(extra_args);
    json!({ "command": BIN, "args": args })
}

/// `entry` with `autoApproveChanges`: its changed and new tools are served at once, for tests
/// of list changes themselves (pinning is tested in `pinning.rs`).
pub fn auto_approved(mut entry: Value) -> Value {
    entry["autoApproveChanges"] = json!(true);
    entry
}

/// The switch of the forwarding fast path (`src/upstream/lane.rs`, `SWITCH_ENV`).
pub const FAST_PATH_ENV: &str = "MCP_COMPANION_FAST_PATH";

/// Which way a companion forwards agents' `tools/call`: the fast path (the default) or the rmcp
/// session path. Call behaviour is specified once and checked on both ([`on_both_paths`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallPath {
    /// `MCP_COMPANION_FAST_PATH=1`.
    Fast,
    /// `MCP_COMPANION_FAST_PATH=0`.
    Slow,
}

impl CallPath {
    fn env_value(self) -> &'static str {
        match self {
            CallPath::Fast => "1",
            CallPath::Slow => "0",
        }
    }
}

/// Runs the scenario `async fn $scenario(path: CallPath)` (a sibling of the call site) as two
/// tests, `$name::fast_path` and `$name::slow_path`; a third argument `multi_thread` runs them
/// on a two-worker runtime.
macro_rules! on_both_paths {
    ($name:ident, $scenario:ident) => {
        mod $name {
            #[tokio::test]
            async fn fast_path() {
                super::$scenario(crate::common::CallPath::Fast).await
            }
            #[tokio::test]
            async fn slow_path() {
                super::$scenario(crate::common::CallPath::Slow).await
            }
        }
    };
    ($name:ident, $scenario:ident, multi_thread) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn fast_path() {
                super::$scenario(crate::common::CallPath::Fast).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn slow_path() {
                super::$scenario(crate::common::CallPath::Slow).await
            }
        }
    };
}
pub(crate) use on_both_paths;

/// A running `serve` process and everything it owns.
pub struct Companion {
    pub dir: tempfile::TempDir,
    pub child: Option<Child>,
    pub socket: PathBuf,
    pub control: PathBuf,
    pub config: PathBuf,
    pub home: PathBuf,
}

impl Companion {
    /// Writes `config` and starts `serve` with an explicit `--socket`.
    pub fn start(config: Value) -> Companion {
        Self::start_with(config, true)
    }

    /// Like [`Companion::start`]; with `explicit_socket == false` the socket path comes from the
    /// default rules (HOME is private to the test, XDG_RUNTIME_DIR is removed).
    pub fn start_with(config: Value, explicit_socket: bool) -> Companion {
        Self::spawn(config, explicit_socket, &[])
    }

    /// Like [`Companion::start`], with `env` applied to the `serve` process last (`None`
    /// removes a variable), e.g. to strip PATH or point SHELL at a fake login shell.
    pub fn start_with_env(config: Value, env: &[(&str, Option<&str>)]) -> Companion {
        Self::spawn(config, true, env)
    }

    /// Like [`Companion::start`], with agents' calls taking `path`.
    pub fn start_on(config: Value, path: CallPath) -> Companion {
        Self::spawn(config, true, &[(FAST_PATH_ENV, Some(path.env_value()))])
    }

    /// Like [`Companion::start_with`] without `--socket`, with `XDG_RUNTIME_DIR` set to
    /// `<temp>/<runtime>`: the socket lands in `<temp>/<runtime>/mcp-companion/`.
    pub fn start_in_runtime_dir(config: Value, runtime: &str) -> Companion {
        Self::spawn_at(config, Some(runtime), false, &[], None)
    }

    fn spawn(config: Value, explicit_socket: bool, env: &[(&str, Option<&str>)]) -> Companion {
        Self::spawn_at(config, None, explicit_socket, env, None)
    }

    /// Like [`Companion::start`], with the process's descriptor limit (`RLIMIT_NOFILE`, soft and
    /// hard) set to `nofile` before `serve` starts.
    pub fn start_with_nofile(config: Value, nofile: u64) -> Companion {
        Self::spawn_at(config, None, true, &[], Some(nofile))
    }

    fn spawn_at(
        config: Value,
        runtime: Option<&str>,
        explicit_socket: bool,
        env: &[(&str, Option<&str>)],
        nofile: Option<u64>,
    ) -> Companion {
        let dir = tempfile::Builder::new()
            .prefix("mcpc")
            .tempdir()
            .expect("tempdir");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        let config_path = dir.path().join("config.json");
        std::fs::write(
            &config_path,
            serde_json::to_vec_pretty(&config).expect("json"),
        )
        .expect("write config");
        let runtime = runtime.map(|r| dir.path().join(r));
        let socket = if let Some(runtime) = &runtime {
            runtime.join("mcp-companion/mcp.sock")
        } else if explicit_socket {
            dir.path().join("run/mcp.sock")
        } else {
            default_socket_for(&home)
        };
        let mut cmd = match nofile {
            None => Command::new(BIN),
            Some(n) => {
                // `ulimit -n` in sh sets both the soft and the hard limit.
                let mut sh = Command::new("sh");
                sh.arg("-c")
                    .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
                    .arg(BIN);
                sh
            }
        };
        cmd.arg("serve").arg("--config").arg(&config_path);
        if explicit_socket {
            cmd.arg("--socket").arg(&socket);
        }
        let log = std::fs::File::create(dir.path().join("serve.log")).expect("log file");
        cmd.env("HOME", &home)
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("MCP_COMPANION_SOCKET")
            .env_remove("MCP_COMPANION_CONFIG")
            .env("RUST_LOG", "info,mcp_companion=debug,rmcp=warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        if let Some(runtime) = &runtime {
            cmd.env("XDG_RUNTIME_DIR", runtime);
        }
        for (k, v) in env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let child = cmd.spawn().expect("spawn serve");
        let control = socket.with_file_name("control.sock");
        let c = Companion {
            dir,
            child: Some(child),
            socket,
            control,
            config: config_path,
            home,
        };
        c.wait_for_socket();
        c
    }

    fn wait_for_socket(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if self.control.exists() && self.socket.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("serve did not open its sockets; log:\n{}", self.log());
    }

    /// The serve process's stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("serve.log")).unwrap_or_default()
    }

    /// `status` through the control API.
    pub async fn status(&self) -> StatusReport {
        control::status(&self.control).await.expect("status")
    }

    /// Waits until no server is `starting`, returning the statuses: every `running` server's
    /// tools are then listed.
    pub async fn settled(&self) -> Vec<ServerStatus> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let report = self.status().await;
            if report
                .servers
                .iter()
                .all(|s| s.state != ServerState::Starting)
            {
                // `running` means the server's tools are in the merged catalog (Hub::statuses).
                return report.servers;
            }
            assert!(
                Instant::now() < deadline,
                "servers still starting: {:?}\n{}",
                report.servers,
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// [`Companion::settled`], asserting that every server ended `running` (the statuses and
    /// the log in the message when one did not).
    pub async fn running(&self) -> Vec<ServerStatus> {
        let servers = self.settled().await;
        assert!(
            servers.iter().all(|s| s.state == ServerState::Running),
            "{servers:?}\n{}",
            self.log()
        );
        servers
    }

    /// `mcp-companion restart name`, then waits (30 s at most) until `name` runs again in a new
    /// process.
    pub async fn restart_process(&self, name: &str) {
        let before = self.server(name).await;
        let out = self.cli(&["restart", name]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let now = self.server(name).await;
            if now.state == ServerState::Running && now.pid != before.pid {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{name} did not restart: {now:?}\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The serve process's resident set size in KiB (`VmRSS` of /proc/<pid>/status).
    pub fn rss_kib(&self) -> u64 {
        let pid = self.child.as_ref().expect("running").id();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS")
    }

    /// The status of `name` (panics if absent).
    pub async fn server(&self, name: &str) -> ServerStatus {
        self.status()
            .await
            .servers
            .into_iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no server {name}"))
    }

    /// An rmcp client session on the MCP socket.
    pub async fn client(&self) -> RunningService<RoleClient, ClientConfig> {
        self.client_with(client_config()).await
    }

    /// A client session with a custom handler (e.g. one that records notifications).
    pub async fn client_with<H: ClientHandler>(&self, handler: H) -> RunningService<RoleClient, H> {
        let stream = mcp_companion::ipc::socket::connect(&self.socket)
            .await
            .expect("connect socket");
        handler.serve(stream).await.expect("handshake")
    }

    /// Runs the CLI against this companion.
    pub fn cli(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .args(args)
            .arg("--socket")
            .arg(&self.socket)
            .env("HOME", &self.home)
            .env_remove("XDG_DATA_HOME")
            .env_remove("RUST_LOG")
            .output()
            .expect("run cli")
    }

    /// SIGTERM, then waits for exit (at most `timeout`).
    pub fn terminate(&mut self, timeout: Duration) -> ExitStatus {
        let mut child = self.child.take().expect("still running");
        sigterm(child.id());
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!(
                    "serve did not exit within {timeout:?} after SIGTERM; log:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Companion {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            sigterm(child.id());
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Where `serve` puts its socket for a given HOME when no override is set (mirrors
/// `EndpointPaths` rules 3 and 4, with XDG_RUNTIME_DIR removed).
pub fn default_socket_for(home: &Path) -> PathBuf {
    let uid = rustix::process::getuid().as_raw();
    let run_user = PathBuf::from(format!("/run/user/{uid}"));
    if run_user.is_dir() {
        run_user.join("mcp-companion/mcp.sock")
    } else {
        home.join(".config/mcp-companion/run/mcp.sock")
    }
}

/// Sends `signal` to the process `pid` (one we spawned and have not reaped).
pub fn signal(pid: u32, signal: rustix::process::Signal) {
    if let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// SIGTERM to the process `pid`.
pub fn sigterm(pid: u32) {
    signal(pid, rustix::process::Signal::TERM);
}

/// The client identity tests use.
pub fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("it", "0"),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// Calls `name` with JSON `args`.
pub async fn call<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let args = args.as_object().cloned().expect("args object");
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("call {name} failed at the protocol level: {e}"))
}

/// The text of every text block, joined by newlines.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Names of every wrapped tool the companion lists (following cursors).
pub async fn tool_names<H: ClientHandler>(client: &RunningService<RoleClient, H>) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect()
}

/// Processes (pid, pgid) alive on this machine, read from /proc.
pub fn live_processes() -> Vec<(u32, u32, String)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in entries.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the ")" that ends the command name: state ppid pgrp ...
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") {
            continue;
        }
        let Some(pgid) = fields.get(2).and_then(|f| f.parse::<u32>().ok()) else {
            continue;
        };
        let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
            .unwrap_or_default()
            .replace('\0', " ");
        out.push((pid, pgid, cmd));
    }
    out
}

/// Processes still alive in any of the process groups led by `leaders`.
pub fn survivors(leaders: &[u32]) -> Vec<(u32, u32, String)> {
    live_processes()
        .into_iter()
        .filter(|(pid, pgid, _)| leaders.contains(pgid) || leaders.contains(pid))
        .collect()
}

/// Polls `f` until it returns true or `timeout` passes.
pub async fn eventually(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if f() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Where `tests/peers/setup.sh` installs the third-party peers: `$MCP_PEERS_DIR`, else
/// `~/.cache/mcp-companion/peers`.
pub fn peers_root() -> PathBuf {
    match std::env::var_os("MCP_PEERS_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => dirs::home_dir()
            .unwrap_or_else(|| PathBuf::from("/root"))
            .join(".cache/mcp-companion/peers"),
    }
}

/// server-everything's entry point under the peers dir (`node <it> stdio`).
pub fn everything_js(peers: &Path) -> PathBuf {
    peers.join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// The PyPI `mcp-server-time` under the peers dir.
pub fn time_server(peers: &Path) -> PathBuf {
    peers.join("venv/bin/mcp-server-time")
}

/// Python with the current SDK (`mcp` 2.x).
pub fn python_sdk2(peers: &Path) -> PathBuf {
    peers.join("venv/bin/python")
}

/// Python with the last 1.x SDK (`mcp` 1.30).
pub fn python_sdk1(peers: &Path) -> PathBuf {
    peers.join("venv-v1/bin/python")
}

/// The peers dir when every third-party peer is installed; otherwise prints a loud SKIPPED line
/// naming the calling test and returns `None` (the test then returns early).
pub fn peers_dir() -> Option<PathBuf> {
    let dir = peers_root();
    let needed = [
        everything_js(&dir),
        time_server(&dir),
        python_sdk2(&dir),
        python_sdk1(&dir),
    ];
    if needed.iter().all(|p| p.exists()) {
        return Some(dir);
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("<test>");
    // The README's test command installs the peers, so there a missing peer is a failure.
    assert!(
        std::env::var_os("MCP_REQUIRE_PEERS").is_none(),
        "{test}: MCP_REQUIRE_PEERS is set but the peers are missing in {}",
        dir.display()
    );
    eprintln!(
        "SKIPPED {test}: third-party peers not installed in {}; run tests/peers/setup.sh",
        dir.display()
    );
    None
}

/// The scripted Python SDK agent (`tests/peers/agent.py`).
pub const AGENT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/agent.py");

/// Runs `python agent.py ARGS` with the environment cleared except `PATH` and `HOME=home`, as a
/// client passing a minimal environment would; kills it after `timeout`. Returns the JSON it
/// printed, with the process's exit code under `"exit"` and its stderr under `"stderr"`.
pub fn run_agent(python: &Path, args: &[&str], home: &Path, timeout: Duration) -> Value {
    run_script(python, Path::new(AGENT), args, home, timeout)
}

/// Like [`run_agent`] for another script that prints one JSON object (e.g.
/// `tests/peers/asking_agent.py`).
pub fn run_script(
    python: &Path,
    script: &Path,
    args: &[&str],
    home: &Path,
    timeout: Duration,
) -> Value {
    use std::io::{Read, Seek};
    let name = script.file_name().map_or_else(
        || script.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut stdout = tempfile::tempfile().expect("stdout file");
    let mut stderr = tempfile::tempfile().expect("stderr file");
    let mut child = Command::new(python)
        .arg(script)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .stdin(Stdio::null())
        .stdout(stdout.try_clone().expect("dup"))
        .stderr(stderr.try_clone().expect("dup"))
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {name}: {e}"));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait agent") {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let read = |f: &mut std::fs::File| {
        let mut s = String::new();
        f.rewind().expect("rewind");
        f.read_to_string(&mut s).expect("read");
        s
    };
    let (out, err) = (read(&mut stdout), read(&mut stderr));
    let Some(status) = status else {
        panic!("{name} {args:?} hung for {timeout:?}; stdout:\n{out}\nstderr:\n{err}");
    };
    let mut v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| {
        panic!("{name} {args:?} printed no JSON ({e}; {status:?}); stdout:\n{out}\nstderr:\n{err}")
    });
    v["exit"] = json!(status.code());
    v["stderr"] = json!(err);
    v
}

/// The `calls[i].result` an agent recorded for tool `name` (the first call of that name).
pub fn agent_call<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["calls"]
        .as_array()
        .and_then(|calls| calls.iter().find(|c| c["name"] == name))
        .map(|c| &c["result"])
        .unwrap_or_else(|| panic!("no call of {name} in {run:#}"))
}

/// A client session over `stream` that accepts messages up to the companion's own limit.
pub trait ServeWithLimit {
    /// Handshakes on `stream` with [`mcp_companion::upstream::MAX_MESSAGE_BYTES`] as the line limit.
    fn serve_with_limit<S>(
        self,
        stream: S,
    ) -> impl std::future::Future<Output = RunningService<RoleClient, ClientConfig>>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + 'static;
}

impl ServeWithLimit for ClientConfig {
    async fn serve_with_limit<S>(self, stream: S) -> RunningService<RoleClient, ClientConfig>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + 'static,
    {
        let (rd, wr) = tokio::io::split(stream);
        let transport = rmcp::transport::async_rw::AsyncRwTransport::new(rd, wr)
            .with_max_line_length(mcp_companion::upstream::MAX_MESSAGE_BYTES);
        self.serve(transport).await.expect("handshake")
    }
}
