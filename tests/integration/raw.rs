//! A line-level agent on the companion's socket (or through `mcp-companion bridge`), for claims
//! an rmcp client cannot check: the order messages arrive in (rmcp hands notifications to
//! spawned tasks), and answers to lines rmcp would never send.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, Lines};

/// Longest wait for one line; only a hung companion reaches it.
const LINE_TIMEOUT: Duration = Duration::from_secs(60);

/// One raw agent connection.
pub struct RawAgent {
    lines: Lines<BufReader<Box<dyn AsyncRead + Send + Unpin>>>,
    write: Box<dyn AsyncWrite + Send + Unpin>,
    /// The `bridge` process the agent talks through, when it does (killed when dropped).
    _bridge: Option<tokio::process::Child>,
}

/// How a test agent reaches the companion.
#[derive(Clone, Copy, Debug)]
pub enum Via {
    /// The companion's socket.
    Socket,
    /// `mcp-companion bridge` on that socket.
    Bridge,
}

impl RawAgent {
    /// Connects and completes `initialize` + `notifications/initialized`.
    pub async fn connect(socket: &Path) -> RawAgent {
        let mut agent = Self::connect_only(socket).await;
        agent.handshake().await;
        agent
    }

    /// `initialize` (id 0) + `notifications/initialized`.
    pub async fn handshake(&mut self) {
        self.handshake_on("2025-06-18").await;
    }

    /// [`Self::handshake`] asking for protocol version `version`.
    pub async fn handshake_on(&mut self, version: &str) {
        let agent = self;
        agent
            .send(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "raw-agent", "version": "0"}}}),
            )
            .await;
        let reply = agent.recv().await;
        assert_eq!(reply["id"], 0, "{reply}");
        assert!(reply["result"]["serverInfo"].is_object(), "{reply}");
        agent
            .send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// Connects `via` the socket or `bridge`, without the handshake.
    pub async fn via(socket: &Path, via: Via) -> RawAgent {
        match via {
            Via::Socket => RawAgent::connect_only(socket).await,
            Via::Bridge => RawAgent::bridge_only(socket).await,
        }
    }

    /// Connects without any handshake.
    pub async fn connect_only(socket: &Path) -> RawAgent {
        let stream = mcp_companion::ipc::socket::connect(socket)
            .await
            .expect("connect socket");
        let (read, write) = tokio::io::split(stream);
        RawAgent {
            lines: BufReader::new(Box::new(read) as Box<dyn AsyncRead + Send + Unpin>).lines(),
            write: Box::new(write),
            _bridge: None,
        }
    }

    /// Spawns `mcp-companion bridge --socket socket` with pipes for its stdio, as an agent
    /// does, and talks through it; no handshake.
    pub async fn bridge_only(socket: &Path) -> RawAgent {
        let mut child = tokio::process::Command::new(crate::common::BIN)
            .arg("bridge")
            .arg("--socket")
            .arg(socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn bridge");
        let read = child.stdout.take().expect("bridge stdout");
        let write = child.stdin.take().expect("bridge stdin");
        RawAgent {
            lines: BufReader::new(Box::new(read) as Box<dyn AsyncRead + Send + Unpin>).lines(),
            write: Box::new(write),
            _bridge: Some(child),
        }
    }

    /// Writes `message` as one line.
    pub async fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string()).await;
    }

    /// Writes `line` plus a newline, as is.
    pub async fn send_line(&mut self, line: &str) {
        self.write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write to the socket");
    }

    /// The next line, parsed.
    pub async fn recv(&mut self) -> Value {
        let line = self.recv_line().await;
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// The next line as it came, without its newline.
    pub async fn recv_line(&mut self) -> String {
        let line = tokio::time::timeout(LINE_TIMEOUT, self.lines.next_line())
            .await
            .expect("a line within the timeout")
            .expect("read from the socket")
            .expect("the companion closed the connection");
        no_inner_key(&line);
        line
    }

    /// The next line if one comes within `wait`.
    pub async fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        let line = tokio::time::timeout(wait, self.lines.next_line())
            .await
            .ok()?;
        let line = line.expect("read from the socket")?;
        no_inner_key(&line);
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
    }

    /// Reads until the response with `id`; returns it and the messages that came before it.
    pub async fn until_response(&mut self, id: &Value) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let msg = self.recv().await;
            if &msg["id"] == id && msg.get("method").is_none() {
                return (msg, before);
            }
            before.push(msg);
        }
    }

    /// Request `method` with `params` as request `id`; its response and the messages that came
    /// before it.
    pub async fn request(&mut self, id: u64, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.until_response(&json!(id)).await
    }

    /// `tools/call` of `tool` with `arguments` as request `id`; its response.
    pub async fn call_tool(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        let params = json!({"name": tool, "arguments": arguments});
        self.request(id, "tools/call", params).await.0
    }

    /// `tools/call` of `name` with `arguments`, asking for progress as `token`.
    pub async fn call_with_progress(&mut self, id: u64, name: &str, arguments: Value, token: &str) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": name, "arguments": arguments, "_meta": {"progressToken": token}}}),
        )
        .await;
    }
}

/// The `progress` values of the `notifications/progress` for `token` among `messages`, in order.
pub fn progress_for(messages: &[Value], token: &str) -> Vec<f64> {
    messages
        .iter()
        .filter(|m| {
            m["method"] == "notifications/progress" && m["params"]["progressToken"] == token
        })
        .map(|m| {
            m["params"]["progress"]
                .as_f64()
                .expect("progress is a number")
        })
        .collect()
}

/// Panics when `line` carries the `_meta` key under which the companion keeps a server's text
/// inside itself: it must never reach an agent.
fn no_inner_key(line: &str) {
    assert!(
        !line.contains(mcp_companion::upstream::exact::EXACT_KEY),
        "the companion's inner key reached the agent: {line}"
    );
}
