//! A raw MCP client over streamable HTTP and legacy HTTP+SSE, the "direct" side of the remote
//! rows: requests are pre-formatted strings and responses are parsed only as far as `id`, as
//! [`super::rpc::Conn`] does on a socket, so client cost stays small next to what is measured.
//!
//! Over streamable HTTP it offers the protocol version the companion offers its servers
//! ([`ProtocolVersion::LATEST_WITH_INITIALIZE`]) and sends the negotiated one as
//! `MCP-Protocol-Version` on every later request, as the spec requires (MCP 2025-11-25
//! "Transports", Protocol Version Header) and as the companion does: a server may answer
//! versions differently (server-everything opens each answer stream from 2025-11-25 on with a
//! priming event, and its HTTP layer then waits a timer tick before the first write), so
//! "direct" and "through the companion" must speak the same one to be compared.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use futures::StreamExt;
use rmcp::model::ProtocolVersion;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::oneshot;

/// Which HTTP transport.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// POST `/mcp`, answered as JSON or one SSE stream per request (MCP 2025-03-26).
    Streamable,
    /// GET `/sse` for the stream, POST to its `endpoint` (MCP 2024-11-05).
    Sse,
}

/// The part of an `initialize` answer the client keeps.
#[derive(Deserialize)]
struct InitAnswer {
    result: InitResult,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitResult {
    protocol_version: String,
}

#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<serde::de::IgnoredAny>,
}

type Waiters = Arc<Mutex<HashMap<u64, oneshot::Sender<()>>>>;

/// One MCP session over HTTP.
#[derive(Clone)]
pub struct HttpConn {
    client: reqwest::Client,
    /// Where requests are POSTed.
    post: String,
    session: Option<String>,
    /// Streamable HTTP: the negotiated protocol version, sent as `MCP-Protocol-Version`.
    version: Option<String>,
    kind: Kind,
    /// Legacy SSE: requests waiting for their response on the stream.
    waiters: Waiters,
    next: Arc<std::sync::atomic::AtomicU64>,
}

/// The responses (`id` without `method`) in one SSE `data:` payload.
fn response_id(data: &str) -> Option<u64> {
    let h: Head = serde_json::from_str(data).ok()?;
    if h.method.is_some() {
        return None;
    }
    h.id.as_ref().and_then(Value::as_u64)
}

impl HttpConn {
    /// Opens a session on `url` (`…/mcp` or `…/sse`) and initializes it, offering `version`
    /// (default: the companion's, see the module docs).
    pub async fn open(url: &str, kind: Kind, version: Option<&str>) -> Result<HttpConn> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(128)
            .build()?;
        let mut c = HttpConn {
            client,
            post: url.to_owned(),
            session: None,
            version: None,
            kind,
            waiters: Arc::default(),
            next: Arc::new(std::sync::atomic::AtomicU64::new(1)),
        };
        if let Kind::Sse = kind {
            c.post = c.open_stream(url).await?;
        }
        let offered = version.unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE.as_str());
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{offered}","capabilities":{{}},"clientInfo":{{"name":"mcp-companion-bench","version":"0.1"}}}}}}"#
        );
        c.exchange(0, init).await.context("initialize")?;
        c.notify(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await?;
        Ok(c)
    }

    /// Legacy SSE: opens the stream, hands responses to their waiters, returns the POST URL.
    async fn open_stream(&self, url: &str) -> Result<String> {
        let resp = self
            .client
            .get(url)
            .header("accept", "text/event-stream")
            .send()
            .await?
            .error_for_status()?;
        let base = reqwest::Url::parse(url)?;
        let (tx, rx) = oneshot::channel();
        let waiters = self.waiters.clone();
        tokio::spawn(async move {
            let mut tx = Some(tx);
            let mut body = resp.bytes_stream();
            let mut buf = Vec::new();
            let mut event = String::new();
            while let Some(Ok(chunk)) = body.next().await {
                buf.extend_from_slice(&chunk);
                while let Some(nl) = buf.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=nl).collect();
                    let line = String::from_utf8_lossy(&line);
                    let line = line.trim_end_matches(['\r', '\n']);
                    if let Some(e) = line.strip_prefix("event:") {
                        event = e.trim().to_owned();
                    } else if let Some(d) = line.strip_prefix("data:") {
                        let d = d.trim();
                        if event == "endpoint" {
                            if let (Some(tx), Ok(u)) = (tx.take(), base.join(d)) {
                                let _ = tx.send(u.to_string());
                            }
                        } else if let Some(id) = response_id(d)
                            && let Some(w) = waiters
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .remove(&id)
                        {
                            let _ = w.send(());
                        }
                    } else if line.is_empty() {
                        event.clear();
                    }
                }
            }
        });
        rx.await.context("no endpoint event on the SSE stream")
    }

    fn post(&self, body: String) -> reqwest::RequestBuilder {
        let mut r = self
            .client
            .post(&self.post)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(s) = &self.session {
            r = r.header("mcp-session-id", s);
        }
        if let Some(v) = &self.version {
            r = r.header("mcp-protocol-version", v);
        }
        r
    }

    async fn notify(&self, body: &str) -> Result<()> {
        self.post(body.to_owned())
            .send()
            .await?
            .error_for_status()?;
        Ok(())
    }

    /// Sends `initialize` (id `id`) and keeps the session id and the negotiated version.
    async fn exchange(&mut self, id: u64, body: String) -> Result<()> {
        let (session, answer) = self.round_trip(id, body).await?;
        if self.session.is_none() {
            self.session = session;
        }
        if let Some(answer) = answer {
            let init: InitAnswer =
                serde_json::from_str(&answer).context("the answer to initialize")?;
            self.version = Some(init.result.protocol_version);
        }
        Ok(())
    }

    /// One request: returns the session id the server gave, if any, and (streamable HTTP) the
    /// response's text.
    async fn round_trip(&self, id: u64, body: String) -> Result<(Option<String>, Option<String>)> {
        match self.kind {
            Kind::Sse => {
                let (tx, rx) = oneshot::channel();
                self.waiters
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(id, tx);
                self.post(body).send().await?.error_for_status()?;
                rx.await.context("SSE stream ended")?;
                Ok((None, None))
            }
            Kind::Streamable => {
                let resp = self.post(body).send().await?.error_for_status()?;
                let session = resp
                    .headers()
                    .get("mcp-session-id")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let sse = resp
                    .headers()
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|t| t.starts_with("text/event-stream"));
                if !sse {
                    let bytes = resp.bytes().await?;
                    let text = String::from_utf8_lossy(&bytes);
                    if response_id(&text) != Some(id) {
                        bail!("no response for {id}");
                    }
                    return Ok((session, Some(text.into_owned())));
                }
                let mut body = resp.bytes_stream();
                let mut buf = Vec::new();
                while let Some(chunk) = body.next().await {
                    buf.extend_from_slice(&chunk?);
                    while let Some(nl) = buf.iter().position(|&b| b == b'\n') {
                        let line: Vec<u8> = buf.drain(..=nl).collect();
                        if let Some(d) = line.strip_prefix(b"data:") {
                            let d = String::from_utf8_lossy(d);
                            if response_id(d.trim()) == Some(id) {
                                return Ok((session, Some(d.trim().to_owned())));
                            }
                        }
                    }
                }
                bail!("stream ended without the response to {id}")
            }
        }
    }

    fn call_body(&self, tool: &str, args: &str) -> (u64, String) {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        (
            id,
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
            ),
        )
    }

    /// `n` sequential calls; each one's round trip in µs.
    pub async fn latencies(&self, tool: &str, args: &str, n: usize) -> Result<Vec<f64>> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let (id, body) = self.call_body(tool, args);
            let t = Instant::now();
            self.round_trip(id, body).await?;
            out.push(t.elapsed().as_secs_f64() * 1e6);
        }
        Ok(out)
    }

    /// Calls per second with `k` in flight, `total` calls.
    pub async fn throughput(&self, tool: &str, args: &str, k: usize, total: usize) -> Result<f64> {
        let t = Instant::now();
        let per = total / k;
        let mut tasks = Vec::new();
        for _ in 0..k {
            let c = self.clone();
            let (tool, args) = (tool.to_owned(), args.to_owned());
            tasks.push(tokio::spawn(async move {
                for _ in 0..per {
                    let (id, body) = c.call_body(&tool, &args);
                    c.round_trip(id, body).await?;
                }
                Ok::<_, anyhow::Error>(())
            }));
        }
        for task in tasks {
            task.await??;
        }
        Ok((per * k) as f64 / t.elapsed().as_secs_f64())
    }
}
