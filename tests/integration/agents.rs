//! `mcp-companion agents` over real processes: two agents of different profiles connected at
//! once — `bridge --profile alpha` spawned by this test (so the agent is this process, the
//! bridge's parent) and a Python process on beta's socket — are listed with their process,
//! executable, `clientInfo`, profile and calls; moving one to another profile with
//! `agents --set` reaches it as `list_changed` and its next listing.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{BIN, Companion, demo, eventually};

fn config() -> Value {
    json!({
        "mcpServers": { "a": demo(&[]), "b": demo(&[]) },
        "profiles": {
            "alpha": { "servers": ["a"], "tools": ["echo"], "prompts": [], "resources": [], "naming": "raw" },
            "beta": { "servers": ["b"], "tools": ["add"], "prompts": [], "resources": [], "naming": "raw" }
        }
    })
}

/// A process speaking newline JSON-RPC on its stdio, its stdout read on a thread.
struct LineAgent {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
}

impl LineAgent {
    fn spawn(mut command: Command) -> LineAgent {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn agent");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str(&line)
                    && tx.send(v).is_err()
                {
                    return;
                }
            }
        });
        LineAgent {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("write to agent");
    }

    /// The next message that `pick` accepts, within 30 s.
    fn wait_for(&self, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) if pick(&v) => return v,
                Ok(_) => {}
                Err(_) => panic!("no {what} within 30 s"),
            }
        }
    }

    fn answer(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        self.wait_for(method, |v| v["id"] == json!(id))
    }

    fn open(&mut self, client: &str) {
        let init = self.answer(
            1,
            "initialize",
            json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": client, "version": "1.2" } }),
        );
        assert!(init["result"].is_object(), "{init}");
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    }

    fn tool_names(&mut self, id: i64) -> Vec<String> {
        let listed = self.answer(id, "tools/list", json!({}));
        listed["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    }
}

impl Drop for LineAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Python process that relays its stdio to the Unix socket at `path` (an agent that
/// connects to a socket itself).
fn python_on_socket(path: &std::path::Path) -> Command {
    let script = r#"
import socket, sys, threading
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
def up():
    for line in sys.stdin.buffer:
        s.sendall(line)
    s.shutdown(socket.SHUT_WR)
threading.Thread(target=up, daemon=True).start()
for line in s.makefile("rb"):
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
"#;
    let mut c = Command::new("python3");
    c.arg("-c").arg(script).arg(path);
    c
}

fn agents_json(c: &Companion) -> Vec<Value> {
    let out = c.cli(&["agents", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("agents json");
    report["agents"].as_array().expect("agents").clone()
}

fn exe_of(pid: u32) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/exe")).expect("exe")
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn agents_lists_two_sessions_of_two_profiles_with_their_processes() {
    let c = Companion::start(config());
    c.settled().await;
    let beta_socket = mcp_companion::ipc::paths::profile_socket(&c.socket, "beta");
    assert!(eventually(Duration::from_secs(30), || beta_socket.exists()).await);

    let mut bridged = {
        let mut cmd = Command::new(BIN);
        cmd.args(["bridge", "--profile", "alpha", "--socket"])
            .arg(&c.socket);
        LineAgent::spawn(cmd)
    };
    let mut direct = LineAgent::spawn(python_on_socket(&beta_socket));
    let (agents, bridge_pid, python_pid) = tokio::task::block_in_place(|| {
        bridged.open("bridged-agent");
        direct.open("python-agent");
        assert_eq!(bridged.tool_names(2), ["echo"]);
        assert_eq!(direct.tool_names(2), ["add"]);
        let echoed = bridged.answer(
            3,
            "tools/call",
            json!({ "name": "echo", "arguments": { "message": "hi" } }),
        );
        assert_eq!(
            echoed["result"]["content"][0]["text"],
            json!("hi"),
            "{echoed}"
        );
        (agents_json(&c), bridged.child.id(), direct.child.id())
    });
    assert_eq!(agents.len(), 2, "{agents:#?}");
    let find = |client: &str| {
        agents
            .iter()
            .find(|a| a["client"] == json!(client))
            .unwrap_or_else(|| panic!("{client} not listed: {agents:#?}"))
            .clone()
    };

    let b = find("bridged-agent");
    assert_eq!(b["clientVersion"], json!("1.2"));
    assert_eq!(b["protocolVersion"], json!("2025-11-25"));
    assert_eq!(b["profile"], json!("alpha"));
    assert_eq!(b["profileSource"], json!("socket"));
    assert_eq!(b["calls"], json!(1));
    // The agent of a bridge session is the bridge's parent: this test process.
    assert_eq!(b["process"]["pid"], json!(std::process::id()), "{b:#}");
    let me = std::env::current_exe().expect("current exe");
    assert_eq!(b["process"]["exe"], json!(me), "{b:#}");
    assert_eq!(b["bridge"]["pid"], json!(bridge_pid), "{b:#}");
    assert_eq!(b["bridge"]["exe"], json!(exe_of(bridge_pid)), "{b:#}");

    let d = find("python-agent");
    assert_eq!(d["profile"], json!("beta"));
    assert_eq!(d["calls"], json!(0));
    assert_eq!(d["process"]["pid"], json!(python_pid), "{d:#}");
    assert_eq!(d["process"]["exe"], json!(exe_of(python_pid)), "{d:#}");
    assert!(d.get("bridge").is_none(), "{d:#}");

    // The person moves the Python agent to alpha: it hears list_changed and sees alpha's tools.
    let id = d["id"].as_u64().expect("id").to_string();
    let out = c.cli(&["agents", "--set", &id, "--profile", "alpha"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tokio::task::block_in_place(|| {
        direct.wait_for("list_changed", |v| {
            v["method"] == json!("notifications/tools/list_changed")
        });
        assert_eq!(direct.tool_names(4), ["echo"]);
        let refused = direct.answer(
            5,
            "tools/call",
            json!({ "name": "add", "arguments": { "a": 1, "b": 2 } }),
        );
        assert_eq!(
            refused["result"]["content"][0]["text"],
            json!("unknown tool \"add\""),
            "{refused}"
        );
    });
    let moved = agents_json(&c)
        .into_iter()
        .find(|a| a["client"] == json!("python-agent"))
        .expect("still listed");
    assert_eq!(moved["profile"], json!("alpha"));
    assert_eq!(moved["profileSource"], json!("person"));

    // Unknown ids and profiles are refused by kind.
    let out = c.cli(&["agents", "--set", "999", "--profile", "alpha"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no connected agent has id 999"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = c.cli(&["agents", "--set", &id, "--profile", "nosuch"]);
    assert!(!out.status.success());

    // A session that ends leaves the list.
    drop(direct);
    assert!(
        eventually(Duration::from_secs(30), || agents_json(&c).len() == 1).await,
        "the Python agent left the list"
    );
    drop(bridged);
}
