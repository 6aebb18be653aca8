//! Legacy HTTP+SSE client transport (MCP 2024-11-05, "HTTP with SSE"), which rmcp no longer
//! ships (removed in rmcp 0.11).
//!
//! Wire behaviour: `GET url` with `Accept: text/event-stream` opens the server→client stream;
//! its first `endpoint` event carries the URL (usually relative) that client→server messages
//! are POSTed to; every later `message` event (or an event with no name) carries one JSON-RPC
//! message. The endpoint must be same-origin as `url` (scheme, host and port), otherwise a
//! server could send our headers — and requests — anywhere.
//!
//! When the stream ends, [`LegacySseTransport::receive`] yields `None` and rmcp reports the
//! session closed.

use std::sync::Arc;

use futures::StreamExt;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

use crate::net::{error_chain, redact};

/// Why the SSE stream could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    /// The GET failed (connection, SSRF refusal, or an HTTP status, quoted with the server's
    /// text or `WWW-Authenticate` error).
    #[error("GET {url} failed: {reason}")]
    Open {
        /// The redacted URL.
        url: String,
        /// What reqwest said (including the SSRF reason when the resolver refused).
        reason: String,
    },
    /// The stream ended or broke before the `endpoint` event.
    #[error("the event stream ended before the endpoint event: {reason}")]
    NoEndpoint {
        /// Why it ended.
        reason: String,
    },
    /// The `endpoint` event named another origin.
    #[error("endpoint {endpoint} is not same-origin as {url}; refused")]
    CrossOrigin {
        /// The redacted endpoint.
        endpoint: String,
        /// The redacted configured URL.
        url: String,
    },
}

/// A client [`Transport`] over legacy HTTP+SSE.
pub struct LegacySseTransport {
    http: reqwest::Client,
    post_url: Arc<reqwest::Url>,
    rx: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

impl LegacySseTransport {
    /// Opens the event stream at `url` and waits for the `endpoint` event.
    ///
    /// # Errors
    /// [`SseError`]; URLs in it are redacted.
    pub async fn connect(http: reqwest::Client, url: &reqwest::Url) -> Result<Self, SseError> {
        let open_err = |reason: String| SseError::Open {
            url: redact(url.as_str()),
            reason,
        };
        let resp = http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| open_err(error_chain(&e)))?;
        if !resp.status().is_success() {
            return Err(open_err(super::error_text::http_failure(resp).await));
        }
        let mut events = sse_stream::SseStream::from_bytes_stream(resp.bytes_stream());
        let endpoint = loop {
            match events.next().await {
                Some(Ok(ev)) if ev.event.as_deref() == Some("endpoint") => {
                    break ev.data.unwrap_or_default();
                }
                Some(Ok(_)) => continue,
                Some(Err(e)) => {
                    return Err(SseError::NoEndpoint {
                        reason: e.to_string(),
                    });
                }
                None => {
                    return Err(SseError::NoEndpoint {
                        reason: "end of stream".to_owned(),
                    });
                }
            }
        };
        let post_url = url
            .join(endpoint.trim())
            .ok()
            .filter(|p| p.origin() == url.origin())
            .ok_or_else(|| SseError::CrossOrigin {
                endpoint: redact(endpoint.trim()),
                url: redact(url.as_str()),
            })?;
        tracing::debug!(endpoint = %redact(post_url.as_str()), "sse endpoint");
        let (tx, rx) = mpsc::channel(256);
        let reader = tokio::spawn(async move {
            while let Some(item) = events.next().await {
                let ev = match item {
                    Ok(ev) => ev,
                    Err(e) => {
                        tracing::debug!(error = %e, "sse stream broke");
                        break;
                    }
                };
                if !matches!(ev.event.as_deref(), None | Some("message")) {
                    continue;
                }
                let Some(data) = ev.data else { continue };
                match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&data) {
                    Ok(m) => {
                        if tx.send(m).await.is_err() {
                            break;
                        }
                    }
                    Err(e) => tracing::debug!(error = %e, "non JSON-RPC sse message skipped"),
                }
            }
        });
        Ok(LegacySseTransport {
            http,
            post_url: Arc::new(post_url),
            rx,
            reader,
        })
    }
}

/// A POST that failed after it may have reached the server (the connection broke before the
/// answer): the hub must not assume the server did not run it (`hub::route`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MaybeDelivered(String);

impl Transport<RoleClient> for LegacySseTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let (http, url) = (self.http.clone(), self.post_url.clone());
        async move {
            let resp = http
                .post((*url).clone())
                .json(&item)
                .send()
                .await
                .map_err(|e| match e.is_connect() {
                    // Never reached the server.
                    true => std::io::Error::other(error_chain(&e)),
                    false => std::io::Error::other(MaybeDelivered(error_chain(&e))),
                })?;
            if resp.status().is_success() {
                Ok(())
            } else {
                Err(std::io::Error::other(
                    super::error_text::http_failure(resp).await,
                ))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.rx.recv()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.reader.abort();
        std::future::ready(Ok(()))
    }
}
