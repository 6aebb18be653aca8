//! Every OAuth HTTP request (protected resource metadata, authorization server metadata,
//! client registration, token, refresh) on the SSRF-guarded client.
//!
//! Those URLs come from the remote server's own answers, so a hostile server could aim them at
//! `169.254.169.254` or `localhost`. Each request is checked before it is sent
//! ([`Guard::check_url`]: scheme, IP literals, every address the host resolves to) and again at
//! connect time by the [`GuardedResolver`] (no DNS-rebinding gap); redirects, when rmcp asks to
//! follow them, are re-checked hop by hop by [`net::build_client`].
//!
//! Every credential that passes through here, sent (code, verifier, refresh token, client
//! secret) or received (tokens, registered secrets), is registered with the redaction set
//! ([`net::remember_credential`]) on the way.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use rmcp::transport::auth::{
    OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture, OAuthHttpRedirectPolicy,
    OAuthHttpRequest,
};

use crate::net::{self, ClientError, Guard, GuardedResolver, SsrfError};

/// Largest OAuth response body read, in bytes (metadata and token answers are small).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
/// Whole-request limit of one OAuth request.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

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
    #[error("{url}: the answer is larger than {MAX_BODY_BYTES} bytes")]
    TooLarge {
        /// The redacted URL.
        url: String,
    },
}

/// The [`OAuthHttpClient`] rmcp's authorization manager sends everything through.
pub struct GuardedOAuthHttp {
    follow: reqwest::Client,
    stop: reqwest::Client,
    guard: Guard,
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
        })
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
        let response = tokio::time::timeout(timeout, client.execute(request))
            .await
            .map_err(|_| OAuthHttpError::Request {
                url: url.clone(),
                reason: format!("no answer within {} s", timeout.as_secs()),
            })?
            .map_err(fail)?;
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
                return Err(OAuthHttpError::TooLarge { url });
            }
            body.extend_from_slice(&chunk);
        }
        // Tokens and client secrets are registered as they arrive, before anything can quote
        // them (a later refresh error, a 401 naming the token).
        if let Ok(json) = serde_json::from_slice::<serde_json::Value>(&body) {
            net::remember_oauth_json(&json);
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
