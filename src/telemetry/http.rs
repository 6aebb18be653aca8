//! [`GuardedHttp`]: the HTTP client the OTLP exporters send through — the SSRF-guarded
//! `reqwest` client of [`crate::net`] (guarded resolver, redirect re-checks, the configured
//! headers as sensitive default headers), plus the IP-literal check on every request's URL,
//! since literals never reach the resolver.
//!
//! The SDK exports from its own threads with a plain executor; `reqwest` needs the Tokio
//! runtime, so each request runs as a task on the companion's runtime and the exporter's
//! thread waits for that task. Failures are logged once per kind (`HTTP 401`, `refused`,
//! `connect`…) until an export succeeds again, the collector's words quoted, capped and masked.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};

use crate::net::{Guard, capped, error_chain, redact, scrub_cut};

/// The most bytes of a collector's answer read (its error text; OTLP success bodies are
/// small).
const BODY_MAX: usize = 64 * 1024;

/// Exports through the guarded client on the companion's runtime.
#[derive(Debug)]
pub struct GuardedHttp {
    pub(super) client: reqwest::Client,
    pub(super) guard: Guard,
    pub(super) runtime: tokio::runtime::Handle,
    pub(super) timeout: Duration,
    pub(super) failures: Arc<Failures>,
}

/// The failure kinds already logged since the last export that worked.
#[derive(Debug, Default)]
pub struct Failures {
    logged: Mutex<HashSet<String>>,
}

impl Failures {
    /// Logs `text` (outside words already masked) unless a failure of `kind` was logged
    /// since the last success.
    fn note(&self, endpoint: &str, kind: &str, text: &str) {
        let first = self
            .logged
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(kind.to_owned());
        if first {
            tracing::warn!(
                endpoint = %redact(endpoint),
                error = %text,
                "telemetry export failed (said once per kind of failure until an export works)"
            );
        }
    }

    fn succeeded(&self) {
        let mut logged = self.logged.lock().unwrap_or_else(|p| p.into_inner());
        if !logged.is_empty() {
            logged.clear();
            tracing::info!("telemetry export works again");
        }
    }
}

/// Why one export request failed (what the exporter is told; the log line says more).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ExportFailed(String);

#[async_trait::async_trait]
impl HttpClient for GuardedHttp {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let endpoint = request.uri().to_string();
        let fail = |kind: &str, text: String| {
            self.failures.note(&endpoint, kind, &text);
            Box::new(ExportFailed(text)) as HttpError
        };
        let url =
            url::Url::parse(&endpoint).map_err(|e| fail("url", format!("bad export URL: {e}")))?;
        if let Err(e) = self.guard.check_url_literal(&url) {
            return Err(fail("refused", e.to_string()));
        }
        let mut request = reqwest::Request::try_from(request)
            .map_err(|e| fail("request", format!("cannot build the request: {e}")))?;
        *request.timeout_mut() = Some(self.timeout);
        let client = self.client.clone();
        let task = self.runtime.spawn(async move {
            let mut response = client.execute(request).await?;
            let status = response.status();
            let headers = response.headers().clone();
            let mut body = Vec::new();
            while body.len() < BODY_MAX
                && let Some(chunk) = response.chunk().await?
            {
                body.extend_from_slice(&chunk);
            }
            body.truncate(BODY_MAX);
            Ok::<_, reqwest::Error>((status, headers, body))
        });
        let (status, headers, body) = match task.await {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => {
                let text = match self.guard.take_refusal() {
                    Some(refusal) => return Err(fail("refused", refusal.to_string())),
                    None => error_chain(&e),
                };
                let kind = if e.is_timeout() {
                    "timeout"
                } else if e.is_connect() {
                    "connect"
                } else {
                    "transport"
                };
                return Err(fail(kind, text));
            }
            Err(e) => return Err(fail("stopped", format!("the export task ended: {e}"))),
        };
        if status.is_success() {
            self.failures.succeeded();
        } else {
            let said = String::from_utf8_lossy(&body);
            let said = crate::io::text::inert(&said);
            let text = if said.trim().is_empty() {
                format!("HTTP {status}")
            } else {
                format!("HTTP {status}: \"{}\"", capped(&scrub_cut(said.trim())))
            };
            self.failures
                .note(&endpoint, &format!("HTTP {}", status.as_u16()), &text);
        }
        let mut response = Response::builder().status(status);
        if let Some(h) = response.headers_mut() {
            *h = headers;
        }
        response
            .body(Bytes::from(body))
            .map_err(|e| Box::new(e) as HttpError)
    }
}
