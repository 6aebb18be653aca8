//! rmcp's OAuth errors as the person reads them: the causes on one line, the guard's refusal
//! first, a failed request named, the server URL redacted and every credential masked.

use rmcp::transport::auth::AuthError;

use super::{SignInError, Target};
use crate::auth::http::GuardedOAuthHttp;
use crate::net;

/// What the `oauth2` crate says of a request its HTTP client could not complete.
const REQUEST_FAILED: &str = "Request failed";

/// rmcp's error with its causes; a refusal by the SSRF guard, when there was one, is the
/// real reason and comes first.
/// A failed request of `http` (slow, oversize, a refused token) is named in place of the
/// "Request failed" rmcp passes on.
pub(crate) fn oauth_error(e: &AuthError, target: &Target, http: &GuardedOAuthHttp) -> SignInError {
    let mut text = e.to_string();
    let mut cur = std::error::Error::source(e);
    while let Some(cause) = cur {
        let c = cause.to_string();
        if !text.contains(&c) {
            text.push_str(": ");
            text.push_str(&c);
        }
        cur = cause.source();
    }
    if let Some(failure) = http.take_failure() {
        if text.contains(REQUEST_FAILED) {
            text = text.replace(REQUEST_FAILED, &failure);
        } else if !text.contains(&failure) {
            text = format!("{text}: {failure}");
        }
    }
    // rmcp itself skips authorization servers on link-local or cloud metadata hosts without
    // asking our client; name the address as the guard would.
    let refusal = target.guard.take_refusal().or_else(|| match e {
        AuthError::AuthorizationServersUnavailable {
            authorization_servers,
            ..
        } => authorization_servers.iter().find_map(|s| {
            let url = url::Url::parse(s).ok()?;
            target.guard.check_url_literal(&url).err()
        }),
        _ => None,
    });
    if let Some(refusal) = refusal
        && !text.contains(&refusal.to_string())
    {
        text = format!("{refusal} ({text})");
    }
    SignInError::OAuth(scrub(&text, target))
}

/// Replaces the server URL (it may carry a key in its query) with its redacted form, and
/// masks every registered credential (a token endpoint quoting the code or verifier it
/// refused; the text reaches `login`'s output and the log).
pub(super) fn scrub(text: &str, target: &Target) -> String {
    let full = target.url.as_str();
    net::scrub_known(&text.replace(full, &net::redact(full)))
}
