//! Every OAuth HTTP request (protected resource metadata, authorization server metadata,
//! client registration, token, refresh) on the SSRF-guarded client.
//!
//! Those URLs come from the remote server's own answers, so a hostile server could aim them at
//! `169.254.169.254` or `localhost`. Each request is checked before it is sent
//! ([`Guard::check_url`]: scheme, IP literals, every address the host resolves to) and again at
//! connect time by the [`GuardedResolver`] (no DNS-rebinding gap); redirects, when rmcp asks to
//! follow them, are re-checked hop by hop by [`net::build_client`].
//!
//! Each request is bounded as a whole ([`REQUEST_TIMEOUT`]: connecting, headers and body) and
//! in size ([`MAX_BODY_BYTES`]); a token answer whose tokens are absurdly long or hold control
//! characters is refused before rmcp can store it ([`MAX_TOKEN_BYTES`]).
//!
//! Every credential that passes through here, sent (code, verifier, refresh token, client
//! secret) or received (tokens, registered secrets), is registered with the redaction set
//! ([`net::remember_credential`]) on the way.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};

use crate::net::{self, ClientError, Guard, GuardedResolver, SsrfError};

/// Largest OAuth response body read, in bytes (metadata and token answers are small).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Whole-request limit of one OAuth request: connecting, the headers and the whole body.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Longest token accepted from a token endpoint, in bytes. An access token travels in the
/// `Authorization` header of every request, and HTTP servers commonly refuse request heads
/// over 8–16 KiB; real tokens (JWTs included) stay far below. A larger one could only fail on
/// every request after it was stored.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// The token fields of a token endpoint answer that [`MAX_TOKEN_BYTES`] and the control
/// character rule apply to.
const TOKEN_FIELDS: [&str; 3] = ["access_token", "refresh_token", "id_token"];

/// Why an OAuth request was not sent or not read. Never contains a token.
#[derive(Debug, thiserror::Error)]
pub enum OAuthHttpError {
    /// The SSRF guard refused the URL.
    #[error("refused {url}: {source}")]
    Refused {
        /// The redacted URL.
        url: String,
        /// Which host, which address, which whitelist entry would allow it.
        source: SsrfError,
    },
    /// The request failed on the wire.
    #[error("{url}: {reason}")]
    Request {
        /// The redacted URL.
        url: String,
        /// What reqwest said, without the URL.
        reason: String,
    },
    /// The answer was larger than [`MAX_BODY_BYTES`].
    #[error("{url}: the answer is larger than {} KiB; it was not read further", MAX_BODY_BYTES / 1024)]
    TooLarge {
        /// The redacted URL.
        url: String,
    },
    /// The answer was not complete within [`REQUEST_TIMEOUT`].
    #[error("{url}: {}", slow_text(*headers, *timeout))]
    Slow {
        /// The redacted URL.
        url: String,
        /// Whether the headers had come (then the body stalled).
        headers: bool,
        /// The limit that passed.
        timeout: Duration,
    },
    /// A token endpoint answered with a token that cannot be used; it is not stored.
    #[error("{url}: the {field} {why}; it was refused, not stored")]
    BadToken {
        /// The redacted URL.
        url: String,
        /// `access_token`, `refresh_token` or `id_token`.
        field: &'static str,
        /// What is wrong with it (never the token).
        why: String,
    },
}

fn slow_text(headers: bool, timeout: Duration) -> String {
    if headers {
        format!(
            "the server sent its headers but not the whole answer within {} s",
            timeout.as_secs()
        )
    } else {
        format!("no answer within {} s", timeout.as_secs())
    }
}

/// The [`OAuthHttpClient`] rmcp's authorization manager sends everything through.
pub struct GuardedOAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    guard: Guard,
    /// The last request that failed, as a sentence: rmcp passes token request failures on as
    /// a bare "Request failed" ([`GuardedOAuthHttp::take_failure`] says what happened).
    failure: Mutex<Option<String>>,
    /// The error answer of the last request answered (`error: error_description`), masked;
    /// `None` when that answer was not an OAuth error.
    refusal: Mutex<Option<String>>,
}

impl GuardedOAuthHttp {
    /// Clients applying `guard`: one following (re-checked) redirects, one that never follows.
    ///
    /// # Errors
    /// [`ClientError`] when reqwest refuses the configuration.
    pub fn new(guard: &Guard) -> Result<GuardedOAuthHttp, ClientError> {
        let follow = net::build_client(guard, &BTreeMap::new(), REQUEST_TIMEOUT)?;
        // The non-following client is used for token requests; proxy hosts get no exemption
        // here (a proxy on a private address needs an ssrfWhitelist entry for sign-in).
        let stop = reqwest::Client::builder()
            .dns_resolver(Arc::new(GuardedResolver::new(
                guard.clone(),
                HashSet::new(),
            )))
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| ClientError::Build {
                reason: e.to_string(),
            })?;
        Ok(GuardedOAuthHttp {
            follow,
            stop,
            guard: guard.clone(),
            failure: Mutex::default(),
            refusal: Mutex::default(),
        })
    }

    /// Why the last failed request failed (taken: the next call sees only a newer failure).
    pub fn take_failure(&self) -> Option<String> {
        self.failure.lock().ok()?.take()
    }

    /// The last answer's OAuth error, `error: error_description` with every known credential
    /// masked (taken), e.g. a token endpoint refusing a refresh token with `invalid_grant`.
    pub fn take_refusal(&self) -> Option<String> {
        self.refusal.lock().ok()?.take()
    }

    /// `GET url` (redirects followed and re-checked): the body of a 2xx answer.
    ///
    /// # Errors
    /// [`OAuthHttpError`]; another status is an [`OAuthHttpError::Request`].
    pub async fn get(&self, url: &url::Url) -> Result<Vec<u8>, OAuthHttpError> {
        let redacted = net::redact(url.as_str());
        let request = http::Request::get(url.as_str())
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())
            .map_err(|e| OAuthHttpError::Request {
                url: redacted.clone(),
                reason: e.to_string(),
            })?;
        let response = self
            .send(request, OAuthHttpRedirectPolicy::Follow, REQUEST_TIMEOUT)
            .await?;
        if !response.status().is_success() {
            return Err(OAuthHttpError::Request {
                url: redacted,
                reason: format!("HTTP {}", response.status()),
            });
        }
        Ok(response.into_body())
    }

    async fn run(
        &self,
        request: OAuthHttpRequest,
    ) -> Result<http::Response<Vec<u8>>, OAuthHttpError> {
        let timeout = request
            .timeout
            .unwrap_or(REQUEST_TIMEOUT)
            .min(REQUEST_TIMEOUT);
        self.send(request.request, request.redirect_policy, timeout)
            .await
    }

    async fn send(
        &self,
        request: http::Request<Vec<u8>>,
        redirects: OAuthHttpRedirectPolicy,
        timeout: Duration,
    ) -> Result<http::Response<Vec<u8>>, OAuthHttpError> {
        let client = match redirects {
            OAuthHttpRedirectPolicy::Stop => &self.stop,
            _ => &self.follow,
        };
        let request = reqwest::Request::try_from(request).map_err(|e| OAuthHttpError::Request {
            url: "(invalid URL)".to_owned(),
            reason: e.to_string(),
        })?;
        let url = net::redact(request.url().as_str());
        self.guard
            .check_url(request.url())
            .await
            .map_err(|source| {
                if source.is_refusal() {
                    OAuthHttpError::Refused {
                        url: url.clone(),
                        source,
                    }
                } else {
                    OAuthHttpError::Request {
                        url: url.clone(),
                        reason: source.to_string(),
                    }
                }
            })?;
        remember_sent(&request);
        tracing::debug!(method = %request.method(), url = %url, "OAuth request");
        let fail = |e: reqwest::Error| match self.guard.take_refusal() {
            Some(source) => OAuthHttpError::Refused {
                url: url.clone(),
                source,
            },
            None => OAuthHttpError::Request {
                url: url.clone(),
                reason: error_text(e),
            },
        };
        let headers = AtomicBool::new(false);
        let exchange = async {
            let response = client.execute(request).await.map_err(fail)?;
            headers.store(true, Ordering::Relaxed);
            let mut builder = http::Response::builder()
                .status(response.status())
                .version(response.version());
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            let mut body = Vec::new();
            let mut stream = response.bytes_stream();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(fail)?;
                if body.len() + chunk.len() > MAX_BODY_BYTES {
                    return Err(OAuthHttpError::TooLarge { url: url.clone() });
                }
                body.extend_from_slice(&chunk);
            }
            Ok((builder, body))
        };
        let (builder, body) = tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| OAuthHttpError::Slow {
                url: url.clone(),
                headers: headers.load(Ordering::Relaxed),
                timeout,
            })??;
        // Tokens and client secrets are registered as they arrive, before anything can quote
        // them (a later refresh error, a 401 naming the token).
        let json = serde_json::from_slice::<serde_json::Value>(&body).ok();
        if let Some(json) = &json {
            net::remember_oauth_json(json);
            check_tokens(json, &url)?;
        }
        if let Ok(mut slot) = self.refusal.lock() {
            *slot = json.as_ref().and_then(error_answer);
        }
        builder.body(body).map_err(|e| OAuthHttpError::Request {
            url,
            reason: e.to_string(),
        })
    }
}

impl OAuthHttpClient for GuardedOAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            self.run(request).await.map_err(|e| {
                tracing::warn!(error = %e, "OAuth request failed");
                if let Ok(mut slot) = self.failure.lock() {
                    *slot = Some(e.to_string());
                }
                Box::new(e) as OAuthHttpClientError
            })
        })
    }
}

/// Registers the credentials `request` carries (the authorization code, PKCE verifier, refresh
/// token, client secret in its form body; its `Authorization` header) with the redaction set
/// before it is sent, so an answer quoting them back is masked.
fn remember_sent(request: &reqwest::Request) {
    if let Some(body) = request.body().and_then(reqwest::Body::as_bytes) {
        net::remember_oauth_form(body);
    }
    if let Some(auth) = request
        .headers()
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    {
        net::remember_authorization(auth);
    }
}

/// Refuses a token in `answer` that is longer than [`MAX_TOKEN_BYTES`] or holds a control
/// character (a CR or LF would end the `Authorization` header it is sent in; reqwest refuses
/// to send it, so every request would fail).
fn check_tokens(answer: &serde_json::Value, url: &str) -> Result<(), OAuthHttpError> {
    for field in TOKEN_FIELDS {
        let Some(token) = answer.get(field).and_then(serde_json::Value::as_str) else {
            continue;
        };
        let why = if token.len() > MAX_TOKEN_BYTES {
            format!(
                "is {} bytes; tokens over {} KiB are refused (it would be sent in a header of \
                 every request, and servers refuse headers that large)",
                token.len(),
                MAX_TOKEN_BYTES / 1024
            )
        } else if token.chars().any(char::is_control) {
            "contains control characters (such as CR or LF), which cannot be sent in a header"
                .to_owned()
        } else {
            continue;
        };
        return Err(OAuthHttpError::BadToken {
            url: url.to_owned(),
            field,
            why,
        });
    }
    Ok(())
}

/// `error: error_description` of an OAuth error answer (RFC 6749 §5.2), masked and capped.
fn error_answer(answer: &serde_json::Value) -> Option<String> {
    let error = answer.get("error")?.as_str()?;
    let text = match answer
        .get("error_description")
        .and_then(serde_json::Value::as_str)
    {
        Some(d) => format!("{error}: {d}"),
        None => error.to_owned(),
    };
    Some(net::capped(&net::scrub_known(&text)).into_owned())
}

/// reqwest's message without the URL (it may carry secrets), with its causes.
fn error_text(e: reqwest::Error) -> String {
    let e = e.without_url();
    let mut text = e.to_string();
    let mut cur = std::error::Error::source(&e);
    while let Some(cause) = cur {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        cur = cause.source();
    }
    text
}
