//! The HTTP client of one registry: the generic registry API's read side (OpenAPI
//! `docs/reference/api/openapi.yaml` of `modelcontextprotocol/registry`):
//!
//! | method | path |
//! |---|---|
//! | [`RegistryClient::list`] | `GET /v0.1/servers?search=&cursor=&limit=` |
//! | [`RegistryClient::versions`] | `GET /v0.1/servers/{serverName}/versions` |
//! | [`RegistryClient::version`] | `GET /v0.1/servers/{serverName}/versions/{version}` (`latest` allowed) |
//!
//! Every request goes through the SSRF guard (the config's `ssrfWhitelist`), carries the
//! optional bearer token (marked sensitive, never logged), is bounded in time
//! ([`REQUEST_TIMEOUT`]) and size ([`MAX_BODY_BYTES`]), and its answer is decoded strictly.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use ipnet::IpNet;
use serde::de::DeserializeOwned;

use super::RegistryError;
use super::model::{RawList, ServerList, ServerResponse};
use crate::net::{Guard, build_client, redact};

/// Largest answer accepted, in bytes (a page of 100 full `server.json` documents is far below).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Time allowed for one request, connect to last byte.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Longest piece of a registry's own text (error bodies, decode errors) quoted in an error.
const QUOTE_CHARS: usize = 300;

/// A client of one registry base URL.
#[derive(Clone, Debug)]
pub struct RegistryClient {
    base: url::Url,
    http: reqwest::Client,
    guard: Guard,
}

impl RegistryClient {
    /// A client for the registry at `base` (e.g. `https://registry.modelcontextprotocol.io`),
    /// sending `Authorization: Bearer <token>` when `token` is given, allowed to reach the
    /// private networks in `whitelist` only.
    ///
    /// # Errors
    /// [`RegistryError::Url`] for a URL that is not http(s) with a host;
    /// [`RegistryError::Http`] when the HTTP client cannot be built.
    pub fn new(
        base: &str,
        token: Option<&str>,
        whitelist: &[IpNet],
    ) -> Result<RegistryClient, RegistryError> {
        let base = url::Url::parse(base).map_err(|e| RegistryError::Url {
            url: redact(base),
            reason: e.to_string(),
        })?;
        if !matches!(base.scheme(), "http" | "https") || base.host().is_none() {
            return Err(RegistryError::Url {
                url: redact(base.as_str()),
                reason: "a registry URL must be http or https with a host".into(),
            });
        }
        let guard = Guard::new(whitelist);
        let mut headers = BTreeMap::new();
        if let Some(token) = token.filter(|t| !t.is_empty()) {
            headers.insert("Authorization".to_owned(), format!("Bearer {token}"));
        }
        let http = build_client(&guard, &headers, Duration::from_secs(10)).map_err(|e| {
            RegistryError::Http {
                url: redact(base.as_str()),
                reason: e.to_string(),
            }
        })?;
        Ok(RegistryClient { base, http, guard })
    }

    /// The base URL, as given.
    pub fn base(&self) -> &url::Url {
        &self.base
    }

    /// `GET /v0.1/servers`: one page of servers whose name contains `search`, starting at
    /// `cursor` (from the previous page's `metadata.nextCursor`), at most `limit` items.
    ///
    /// # Errors
    /// Any [`RegistryError`].
    pub async fn list(
        &self,
        search: Option<&str>,
        cursor: Option<&str>,
        limit: Option<u32>,
    ) -> Result<ServerList, RegistryError> {
        let mut url = self.endpoint(&["servers"]);
        {
            let mut q = url.query_pairs_mut();
            if let Some(s) = search.filter(|s| !s.is_empty()) {
                q.append_pair("search", s);
            }
            if let Some(c) = cursor.filter(|c| !c.is_empty()) {
                q.append_pair("cursor", c);
            }
            if let Some(l) = limit {
                q.append_pair("limit", &l.to_string());
            }
        }
        if url.query() == Some("") {
            url.set_query(None);
        }
        self.get::<RawList>(url).await.map(RawList::decode)
    }

    /// `GET /v0.1/servers/{serverName}/versions`: every version of `name`, newest first.
    ///
    /// # Errors
    /// [`RegistryError::NotFound`] for an unknown server, else any [`RegistryError`].
    pub async fn versions(&self, name: &str) -> Result<ServerList, RegistryError> {
        let url = self.endpoint(&["servers", name, "versions"]);
        self.get::<RawList>(url)
            .await
            .map(RawList::decode)
            .map_err(|e| e.not_found_as(name, None))
    }

    /// `GET /v0.1/servers/{serverName}/versions/{version}`; `version` may be `latest`.
    ///
    /// # Errors
    /// [`RegistryError::NotFound`] for an unknown server or version, else any
    /// [`RegistryError`].
    pub async fn version(
        &self,
        name: &str,
        version: &str,
    ) -> Result<ServerResponse, RegistryError> {
        let url = self.endpoint(&["servers", name, "versions", version]);
        self.get(url)
            .await
            .map_err(|e| e.not_found_as(name, Some(version)))
    }

    /// `base` + `/v0.1/` + the segments, each percent-encoded (a `/` in a name becomes `%2F`).
    fn endpoint(&self, segments: &[&str]) -> url::Url {
        let mut url = self.base.clone();
        url.set_query(None);
        url.set_fragment(None);
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().push("v0.1").extend(segments);
        }
        url
    }

    async fn get<T: DeserializeOwned>(&self, url: url::Url) -> Result<T, RegistryError> {
        let shown = redact(url.as_str());
        self.guard.check_url(&url).await.map_err(|e| {
            if e.is_refusal() {
                RegistryError::Ssrf {
                    url: shown.clone(),
                    reason: e.to_string(),
                }
            } else {
                RegistryError::Http {
                    url: shown.clone(),
                    reason: e.to_string(),
                }
            }
        })?;
        let fetch = async {
            let response = self
                .http
                .get(url.clone())
                .header("Accept", "application/json")
                .send()
                .await
                .map_err(|e| self.http_error(&shown, e))?;
            let status = response.status();
            let body = read_limited(response, &shown).await?;
            if !status.is_success() {
                return Err(RegistryError::Status {
                    url: shown.clone(),
                    status: status.as_u16(),
                    message: crate::net::scrub_known(&error_message(&body)),
                });
            }
            serde_json::from_slice::<T>(&body).map_err(|e| RegistryError::BadJson {
                url: shown.clone(),
                reason: quote(&e.to_string()),
            })
        };
        tokio::time::timeout(REQUEST_TIMEOUT, fetch)
            .await
            .map_err(|_| RegistryError::Timeout {
                url: shown.clone(),
                seconds: REQUEST_TIMEOUT.as_secs(),
            })?
    }

    fn http_error(&self, shown: &str, e: reqwest::Error) -> RegistryError {
        if let Some(refusal) = self.guard.take_refusal() {
            return RegistryError::Ssrf {
                url: shown.to_owned(),
                reason: refusal.to_string(),
            };
        }
        let e = e.without_url();
        let mut reason = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            reason = format!("{reason}: {s}");
            source = s.source();
        }
        RegistryError::Http {
            url: shown.to_owned(),
            reason,
        }
    }
}

/// Reads the body, refusing more than [`MAX_BODY_BYTES`] (by `Content-Length` up front, else
/// while streaming).
async fn read_limited(response: reqwest::Response, shown: &str) -> Result<Vec<u8>, RegistryError> {
    let too_large = || RegistryError::TooLarge {
        url: shown.to_owned(),
        limit: MAX_BODY_BYTES,
    };
    if response
        .content_length()
        .is_some_and(|n| n > MAX_BODY_BYTES as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| RegistryError::Http {
            url: shown.to_owned(),
            reason: e.without_url().to_string(),
        })?;
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The `error` field of a JSON error body, else the start of the body as text.
fn error_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let message = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or_else(|| text.trim().to_owned());
    quote(&message)
}

/// `text` cut to 300 characters (then `…`), control characters replaced by spaces.
pub fn quote(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(QUOTE_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().count() > QUOTE_CHARS {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_percent_encode_names_and_versions() {
        let c = RegistryClient::new("https://r.example/base/", None, &[]).unwrap();
        assert_eq!(
            c.endpoint(&["servers", "io.github.a/b", "versions", "1.0.0+build"])
                .as_str(),
            "https://r.example/base/v0.1/servers/io.github.a%2Fb/versions/1.0.0+build"
        );
        let c = RegistryClient::new("https://r.example", None, &[]).unwrap();
        assert_eq!(
            c.endpoint(&["servers"]).as_str(),
            "https://r.example/v0.1/servers"
        );
    }

    #[test]
    fn bad_base_urls_are_refused_with_the_reason() {
        for bad in ["ftp://x", "not a url", "file:///etc"] {
            let err = RegistryClient::new(bad, None, &[]).unwrap_err();
            assert!(matches!(err, RegistryError::Url { .. }), "{bad}: {err}");
        }
    }

    #[test]
    fn error_bodies_are_quoted_short_and_without_control_characters() {
        assert_eq!(
            error_message(br#"{"error":"Server not found"}"#),
            "Server not found"
        );
        let long = "x\n".repeat(1000);
        let q = error_message(long.as_bytes());
        assert!(
            q.chars().count() <= QUOTE_CHARS + 1 && !q.contains('\n'),
            "{q}"
        );
    }
}
