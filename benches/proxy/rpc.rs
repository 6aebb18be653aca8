//! A raw newline-delimited JSON-RPC client: requests are pre-formatted strings, responses are
//! parsed only as far as `id`, `error` and `result.isError`, so client cost stays small next to
//! the proxy cost being measured.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::net::UnixStream;
use tokio::process::{Child, Command};

type Reader = BufReader<Box<dyn AsyncRead + Unpin + Send>>;
type Writer = BufWriter<Box<dyn AsyncWrite + Unpin + Send>>;

/// One MCP connection: a Unix socket or a spawned process's stdio.
pub struct Conn {
    rd: Reader,
    wr: Writer,
    next_id: u64,
    line: Vec<u8>,
    child: Option<Child>,
}

#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(default)]
    result: Option<ResultHead>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ResultHead {
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
}

impl Conn {
    fn new(
        rd: Box<dyn AsyncRead + Unpin + Send>,
        wr: Box<dyn AsyncWrite + Unpin + Send>,
        child: Option<Child>,
    ) -> Conn {
        Conn {
            rd: BufReader::with_capacity(64 * 1024, rd),
            wr: BufWriter::new(wr),
            next_id: 0,
            line: Vec::with_capacity(64 * 1024),
            child,
        }
    }

    /// Connects to an MCP endpoint on a Unix socket.
    pub async fn unix(path: &Path) -> Result<Conn> {
        let s = UnixStream::connect(path)
            .await
            .with_context(|| format!("connect {}", path.display()))?;
        let (r, w) = s.into_split();
        Ok(Conn::new(Box::new(r), Box::new(w), None))
    }

    /// Spawns `program args…` and talks MCP over its stdio (stderr discarded).
    pub fn spawn(program: &str, args: &[String]) -> Result<Conn> {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("spawn {program}"))?;
        let out = child.stdout.take().context("stdout")?;
        let inp = child.stdin.take().context("stdin")?;
        Ok(Conn::new(Box::new(out), Box::new(inp), Some(child)))
    }

    /// `initialize` + `notifications/initialized`; returns the initialize result.
    pub async fn initialize(&mut self) -> Result<Value> {
        let init = self
            .request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "mcp-companion-bench", "version": "0.1"}}),
            )
            .await?;
        self.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await?;
        self.wr.flush().await?;
        Ok(init)
    }

    async fn send_line(&mut self, s: &str) -> Result<()> {
        self.wr.write_all(s.as_bytes()).await?;
        self.wr.write_all(b"\n").await?;
        Ok(())
    }

    /// Reads lines until a response; returns (id, failed?) where failed covers JSON-RPC errors
    /// and `isError` results. Notifications and server requests are skipped.
    async fn read_response(&mut self) -> Result<(u64, Option<String>)> {
        loop {
            self.line.clear();
            if self.rd.read_until(b'\n', &mut self.line).await? == 0 {
                bail!("peer closed the stream");
            }
            let head: Head = serde_json::from_slice(&self.line).context("bad JSON line")?;
            if head.method.is_some() {
                continue;
            }
            let Some(id) = head.id.as_ref().and_then(Value::as_u64) else {
                continue;
            };
            let failed = match (&head.error, &head.result) {
                (Some(e), _) => Some(e.to_string()),
                (
                    None,
                    Some(ResultHead {
                        is_error: Some(true),
                    }),
                ) => Some(String::from_utf8_lossy(&self.line[..self.line.len().min(300)]).into()),
                _ => None,
            };
            return Ok((id, failed));
        }
    }

    /// One request with a fully parsed result.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&msg.to_string()).await?;
        self.wr.flush().await?;
        loop {
            self.line.clear();
            if self.rd.read_until(b'\n', &mut self.line).await? == 0 {
                bail!("peer closed the stream during {method}");
            }
            let v: Value = serde_json::from_slice(&self.line)?;
            if v.get("method").is_none() && v.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(e) = v.get("error") {
                    bail!("{method} failed: {e}");
                }
                return Ok(v["result"].clone());
            }
        }
    }

    /// Every tool name, following `nextCursor`.
    pub async fn tool_names(&mut self) -> Result<Vec<String>> {
        let mut names = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = self.request("tools/list", params).await?;
            for t in page["tools"].as_array().context("no tools array")? {
                names.push(t["name"].as_str().unwrap_or_default().to_owned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) => cursor = Some(c.to_owned()),
                None => return Ok(names),
            }
        }
    }

    /// The full `tools/list` (every page), parsing only `nextCursor`; returns the bytes read.
    pub async fn list_raw(&mut self) -> Result<usize> {
        #[derive(Deserialize)]
        struct Page {
            result: PageResult,
        }
        #[derive(Deserialize)]
        struct PageResult {
            #[serde(default, rename = "nextCursor")]
            next_cursor: Option<String>,
        }
        let mut cursor: Option<String> = None;
        let mut bytes = 0;
        loop {
            self.next_id += 1;
            let id = self.next_id;
            let line = match &cursor {
                Some(c) => format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{"cursor":"{c}"}}}}"#
                ),
                None => format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#),
            };
            self.send_line(&line).await?;
            self.wr.flush().await?;
            let page = loop {
                self.line.clear();
                if self.rd.read_until(b'\n', &mut self.line).await? == 0 {
                    bail!("peer closed the stream during tools/list");
                }
                if let Ok(p) = serde_json::from_slice::<Page>(&self.line) {
                    break p;
                }
            };
            bytes += self.line.len();
            match page.result.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(bytes),
            }
        }
    }

    fn call_line(&mut self, tool: &str, args: &str) -> (u64, String) {
        self.next_id += 1;
        let id = self.next_id;
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
        );
        (id, line)
    }

    /// One timed `tools/call`; returns the time and the response line's length.
    pub async fn call(&mut self, tool: &str, args: &str) -> Result<(Duration, usize)> {
        let (id, line) = self.call_line(tool, args);
        let t = Instant::now();
        self.send_line(&line).await?;
        self.wr.flush().await?;
        let (got, failed) = self.read_response().await?;
        let dt = t.elapsed();
        if let Some(f) = failed {
            bail!("{tool} failed: {f}");
        }
        if got != id {
            bail!("response id {got}, expected {id}");
        }
        Ok((dt, self.line.len()))
    }

    /// `n` sequential calls; latencies in µs.
    pub async fn latencies(&mut self, tool: &str, args: &str, n: usize) -> Result<Vec<f64>> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(self.call(tool, args).await?.0.as_secs_f64() * 1e6);
        }
        Ok(out)
    }

    /// `total` calls keeping `in_flight` outstanding on this one connection; calls/s.
    pub async fn throughput(
        &mut self,
        tool: &str,
        args: &str,
        in_flight: usize,
        total: usize,
    ) -> Result<f64> {
        let start = Instant::now();
        let mut sent = 0;
        while sent < in_flight.min(total) {
            let (_, line) = self.call_line(tool, args);
            self.send_line(&line).await?;
            sent += 1;
        }
        self.wr.flush().await?;
        let mut done = 0;
        while done < total {
            let (_, failed) = self.read_response().await?;
            if let Some(f) = failed {
                bail!("{tool} failed: {f}");
            }
            done += 1;
            if sent < total {
                let (_, line) = self.call_line(tool, args);
                self.send_line(&line).await?;
                self.wr.flush().await?;
                sent += 1;
            }
        }
        Ok(total as f64 / start.elapsed().as_secs_f64())
    }

    /// Closes stdin (or the socket) and waits briefly for a spawned process.
    pub async fn close(mut self) {
        let _ = self.wr.shutdown().await;
        if let Some(mut c) = self.child.take()
            && tokio::time::timeout(Duration::from_secs(3), c.wait())
                .await
                .is_err()
        {
            let _ = c.kill().await;
        }
    }
}
