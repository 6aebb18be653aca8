//! The `reqwest::Client` of one remote server: the [`GuardedResolver`], the config `headers` on
//! every request (marked sensitive), and a redirect policy that re-checks every hop.
//!
//! Redirects to another origin (scheme, host or port differs from the request's first URL):
//! `reqwest` would carry the config `headers` along (it strips only `Authorization`, cookies and
//! proxy credentials) and offers no hook to drop them, so when a server has `headers` such a
//! redirect is refused with [`CrossOriginRedirect`] and none of them is sent there. Without
//! `headers` the redirect is followed (still SSRF-checked).
//!
//! Proxies: `reqwest` reads `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY` / `NO_PROXY` itself. The
//! proxy host is the user's choice and is exempt from the guard; the target host is still
//! checked before connecting (see [`super::Guard::check_url`]) and on every redirect hop.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::{Guard, GuardedResolver, SsrfError, redact};

/// Redirect hops followed before giving up.
const MAX_REDIRECTS: usize = 10;

/// Why the HTTP client could not be built. Never contains a header value.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// A `headers` key is not a valid HTTP header name.
    #[error("header \"{name}\" is not a valid HTTP header name")]
    HeaderName {
        /// The key as written.
        name: String,
    },
    /// A `headers` value is not a valid HTTP header value (the value is not shown).
    #[error("the value of header \"{name}\" is not a valid HTTP header value")]
    HeaderValue {
        /// The header's name.
        name: String,
    },
    /// `reqwest` refused the configuration (TLS backend…).
    #[error("cannot build the HTTP client: {reason}")]
    Build {
        /// What reqwest said.
        reason: String,
    },
}

/// A redirect to another origin refused because the config `headers` would have gone along.
#[derive(Debug, thiserror::Error)]
#[error(
    "redirected from {from} to another origin {to}; refused because the configured headers are \
     only sent to {from} (point the server's url at the new address if it is trusted)"
)]
pub struct CrossOriginRedirect {
    /// The origin the headers are for (`scheme://host:port`).
    pub from: String,
    /// The redirect target, redacted.
    pub to: String,
}

/// The URL a remote server's transport connects to: `url` without its userinfo when `headers`
/// (the entry's `headers`) has an `Authorization` header, or when `signed_in` (an OAuth sign-in
/// sends its own bearer token); otherwise `url` as it is.
///
/// reqwest turns a URL's `user:password@` into `Authorization: Basic …` on every request, and
/// default headers (where the configured `headers` ride) only fill in what a request lacks, so
/// the userinfo's Basic credential would replace the configured header, or go out beside the
/// bearer token. The explicit header or the sign-in is the one meant.
pub fn connect_url(
    url: &reqwest::Url,
    headers: &BTreeMap<String, String>,
    signed_in: bool,
) -> reqwest::Url {
    let has_userinfo = !url.username().is_empty() || url.password().is_some();
    if !has_userinfo || !(signed_in || has_authorization(headers)) {
        return url.clone();
    }
    let mut bare = url.clone();
    // Only "cannot-be-a-base" URLs refuse these, and an http(s) URL never is one.
    let _ = bare.set_username("");
    let _ = bare.set_password(None);
    bare
}

/// Whether `headers` sets `Authorization` (header names are case-insensitive).
pub fn has_authorization(headers: &BTreeMap<String, String>) -> bool {
    headers
        .keys()
        .any(|k| k.trim().eq_ignore_ascii_case("authorization"))
}

/// Builds the client for one remote server.
///
/// `connect_timeout` bounds each TCP + TLS connect; whole-request limits come from the MCP
/// layer (`connectTimeout`, `toolTimeout`), since SSE streams stay open for as long as the
/// session lives.
///
/// # Errors
/// [`ClientError`], naming the header at fault but never its value.
pub fn build_client(
    guard: &Guard,
    headers: &BTreeMap<String, String>,
    connect_timeout: Duration,
) -> Result<reqwest::Client, ClientError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let key = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| ClientError::HeaderName { name: name.clone() })?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| ClientError::HeaderValue { name: name.clone() })?;
        value.set_sensitive(true);
        map.insert(key, value);
    }
    let hop_guard = guard.clone();
    let proxies = proxy_hosts(&|k| std::env::var(k).ok());
    let proxied = !proxies.is_empty();
    let has_headers = !headers.is_empty();
    let redirects = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        if has_headers
            && let Some(first) = attempt.previous().first()
            && first.origin() != attempt.url().origin()
        {
            let refused = CrossOriginRedirect {
                from: first.origin().ascii_serialization(),
                to: redact(attempt.url().as_str()),
            };
            tracing::warn!(error = %refused, "redirect refused");
            return attempt.error(refused);
        }
        // Host names are checked by the resolver when the hop connects; literals never are.
        // Through a proxy the target is never resolved here, so resolve the hop now (blocking,
        // but only on redirects and only when a proxy is configured).
        let checked =
            hop_guard
                .check_url_literal(attempt.url())
                .and_then(|()| match attempt.url().host() {
                    Some(url::Host::Domain(host)) if proxied => {
                        check_blocking(&hop_guard, host, attempt.url().port_or_known_default())
                    }
                    _ => Ok(()),
                });
        match checked {
            Ok(()) => {
                tracing::debug!(to = %redact(attempt.url().as_str()), "following redirect");
                attempt.follow()
            }
            Err(e) => {
                tracing::warn!(to = %redact(attempt.url().as_str()), error = %e, "redirect refused");
                attempt.error(e)
            }
        }
    });
    let resolver = GuardedResolver::new(guard.clone(), proxies);
    reqwest::Client::builder()
        .default_headers(map)
        .dns_resolver(Arc::new(resolver))
        .redirect(redirects)
        .connect_timeout(connect_timeout)
        .build()
        .map_err(|e| ClientError::Build {
            reason: e.to_string(),
        })
}

/// Resolves `host` with the blocking system resolver and checks every address.
fn check_blocking(guard: &Guard, host: &str, port: Option<u16>) -> Result<(), SsrfError> {
    use std::net::ToSocketAddrs;
    let addrs = (host, port.unwrap_or(80))
        .to_socket_addrs()
        .map_err(|e| SsrfError::Resolve {
            host: host.to_owned(),
            reason: e.to_string(),
        })?;
    for a in addrs {
        guard.check_addr(host, a.ip())?;
    }
    Ok(())
}

/// The hosts of the proxies configured in the environment (either case).
fn proxy_hosts(env: &dyn Fn(&str) -> Option<String>) -> HashSet<String> {
    ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"]
        .iter()
        .flat_map(|k| [env(k), env(&k.to_lowercase())])
        .flatten()
        .filter_map(|v| {
            let with_scheme = if v.contains("://") {
                v
            } else {
                format!("http://{v}")
            };
            url::Url::parse(&with_scheme)
                .ok()?
                .host_str()
                .map(|h| h.trim_matches(['[', ']']).to_owned())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_hosts_come_from_either_case() {
        let env = |k: &str| match k {
            "https_proxy" => Some("http://user:pw@proxy.local:3128".to_owned()),
            "HTTP_PROXY" => Some("other:8080".to_owned()),
            _ => None,
        };
        let hosts = proxy_hosts(&env);
        assert_eq!(
            hosts,
            HashSet::from(["proxy.local".to_owned(), "other".to_owned()])
        );
    }

    #[test]
    fn blocking_hop_checks_refuse_names_resolving_to_loopback() {
        let err = check_blocking(&Guard::default(), "localhost", Some(80)).unwrap_err();
        assert!(
            matches!(err, SsrfError::Blocked { ref host, .. } if host == "localhost"),
            "{err}"
        );
    }

    #[test]
    fn bad_headers_are_named_without_their_value() {
        let headers = BTreeMap::from([("X-Token".to_owned(), "bad\nsecret".to_owned())]);
        let err = build_client(&Guard::default(), &headers, Duration::from_secs(1)).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("X-Token") && !text.contains("secret"),
            "{text}"
        );
    }
}
