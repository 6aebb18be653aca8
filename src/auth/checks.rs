//! What a sign-in refuses before the browser opens (each with a sentence saying why), and the
//! scopes a step-up asks for:
//!
//! - an authorization endpoint that is not `http`/`https`, or that the SSRF guard refuses;
//! - metadata without PKCE `S256` (MCP authorization 2025-11-25, "Authorization Code
//!   Protection");
//! - an authorization server other than the issuer of the stored sign-in.
//!
//! A browser is sent only where the companion itself could go, and only on the person's action
//! ([`super::flow::begin`] runs these; nothing calls it from an agent's request).

use rmcp::transport::auth::{AuthorizationMetadata, CredentialStore};

use super::challenge::param;
use super::flow::{SignInError, Target};
use super::store::VaultCredentialStore;
use crate::net;

/// Refuses an authorization endpoint the person could not safely open: only `http` and `https`
/// go to a browser, be it opened for them or printed for them to open (a `javascript:` or
/// `file:` URL would run or read something on their machine instead).
///
/// # Errors
/// [`SignInError::OAuth`] naming the scheme.
pub fn browsable(endpoint: &str) -> Result<(), SignInError> {
    let scheme = url::Url::parse(endpoint).map(|u| u.scheme().to_owned());
    match scheme.as_deref() {
        Ok("http" | "https") => Ok(()),
        Ok(other) => Err(SignInError::OAuth(format!(
            "the authorization server's authorization endpoint is a \"{other}:\" URL; only \
             http and https URLs are opened, so the sign-in was refused"
        ))),
        Err(e) => Err(SignInError::OAuth(format!(
            "the authorization server's authorization endpoint is not a URL ({e}); the sign-in \
             was refused"
        ))),
    }
}

/// Refuses an authorization server whose metadata does not list `S256` in
/// `code_challenge_methods_supported` (MCP authorization 2025-11-25, "Authorization Code
/// Protection": without the field the server does not support PKCE, and the client MUST refuse
/// to proceed). Without PKCE an authorization code caught on its way to the redirect listener
/// could be exchanged by whoever caught it.
///
/// # Errors
/// [`SignInError::OAuth`] naming what the metadata said.
pub fn pkce_s256(metadata: &AuthorizationMetadata) -> Result<(), SignInError> {
    match &metadata.code_challenge_methods_supported {
        Some(methods) if methods.iter().any(|m| m == "S256") => Ok(()),
        Some(methods) => Err(SignInError::OAuth(format!(
            "the authorization server supports PKCE only with {}, not S256 \
             (code_challenge_methods_supported); the sign-in was refused because a code taken \
             on its way back could be used by whoever took it",
            if methods.is_empty() {
                "no method".to_owned()
            } else {
                methods
                    .iter()
                    .map(|m| format!("\"{}\"", printable(m)))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ))),
        None => Err(SignInError::OAuth(
            "the authorization server's metadata has no code_challenge_methods_supported, so \
             it does not support PKCE; the sign-in was refused because a code taken on its way \
             back could be used by whoever took it (MCP authorization requires PKCE with S256)"
                .to_owned(),
        )),
    }
}

/// Refuses a sign-in whose authorization server is not the one the stored sign-in came from:
/// a server's later challenge (a 403 `insufficient_scope` naming other resource metadata) must
/// not send the person to another authorization server under this server's name. Signing out
/// first (`logout`) forgets the old issuer.
///
/// # Errors
/// [`SignInError::OAuth`] naming both issuers.
pub(crate) async fn same_issuer(
    target: &Target,
    store: &VaultCredentialStore,
    metadata: &AuthorizationMetadata,
) -> Result<(), SignInError> {
    let Ok(Some(saved)) = store.load().await else {
        return Ok(());
    };
    match (saved.issuer.as_deref(), metadata.issuer.as_deref()) {
        (Some(before), Some(now)) if before != now => Err(SignInError::OAuth(format!(
            "the server now names another authorization server ({}) than the one it was \
             signed in with ({}); no browser was opened. If the server really moved, run \
             `mcp-companion logout {}` and sign in again",
            printable_url(now),
            printable_url(before),
            target.server
        ))),
        _ => Ok(()),
    }
}

/// Refuses an authorization endpoint the SSRF rules do not allow (a private, loopback or
/// link-local address not in `ssrfWhitelist`, the cloud metadata address): a browser on this
/// machine would reach what the companion itself may not.
///
/// # Errors
/// [`SignInError::OAuth`] naming the address and the whitelist entry that would allow it.
pub(crate) async fn reachable(target: &Target, endpoint: &str) -> Result<(), SignInError> {
    let url = url::Url::parse(endpoint).map_err(|e| {
        SignInError::OAuth(format!(
            "the authorization endpoint is not a URL ({e}); the sign-in was refused"
        ))
    })?;
    target.guard.check_url(&url).await.map_err(|e| {
        SignInError::OAuth(format!(
            "the authorization endpoint {} is refused: {e}; no browser was opened",
            printable_url(endpoint)
        ))
    })
}

/// The scopes of a step-up: the stored grant (or the entry's `oauth.scopes`) plus those
/// `challenge` asks for, when it is a 403 `insufficient_scope` (MCP authorization 2025-11-25,
/// "Scope Challenge Handling"); `None` otherwise (the usual choice applies).
///
/// # Errors
/// [`SignInError::Vault`] when the keychain cannot be read.
pub(crate) async fn step_up_scopes(
    target: &Target,
    store: &VaultCredentialStore,
    challenge: Option<&str>,
) -> Result<Option<Vec<String>>, SignInError> {
    let Some(challenge) = challenge else {
        return Ok(None);
    };
    if param(challenge, "error").as_deref() != Some("insufficient_scope") {
        return Ok(None);
    }
    let mut scopes = match &target.oauth.scopes {
        Some(configured) => configured.clone(),
        None => store.granted_scopes().await?,
    };
    for s in param(challenge, "scope")
        .iter()
        .flat_map(|s| s.split_whitespace())
    {
        if !scopes.iter().any(|have| have == s) {
            scopes.push(s.to_owned());
        }
    }
    Ok(Some(scopes))
}

/// A URL from the other side, redacted and without control characters, for a message.
fn printable_url(url: &str) -> String {
    net::redact(url)
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect()
}

/// `text` without control characters, at most 40 characters: a value from the other side
/// quoted in a message for the terminal.
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(40).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::config::OAuthConfig;
    use crate::net::Guard;

    #[tokio::test]
    async fn a_sign_in_through_another_issuer_than_the_stored_one_is_refused() {
        use rmcp::transport::auth::StoredCredentials;
        let target = Target {
            server: "s".to_owned(),
            url: url::Url::parse("https://mcp.example/mcp").unwrap(),
            oauth: OAuthConfig::default(),
            guard: Guard::default(),
        };
        let store = target.store(Arc::new(crate::auth::vault::MemoryVault::default()));
        let issued_by = |issuer: &str| {
            let mut m = AuthorizationMetadata::default();
            m.issuer = Some(issuer.to_owned());
            m
        };
        // No stored sign-in: any issuer.
        assert!(
            same_issuer(&target, &store, &issued_by("https://evil.example"))
                .await
                .is_ok()
        );
        let mut saved = StoredCredentials::new("cid".into(), None, vec![], None);
        saved.issuer = Some("https://as.example".to_owned());
        store.save(saved).await.unwrap();
        assert!(
            same_issuer(&target, &store, &issued_by("https://as.example"))
                .await
                .is_ok()
        );
        let refused = same_issuer(&target, &store, &issued_by("http://10.0.0.7/\r\nx"))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("another authorization server (http://10.0.0.7/")
                && !refused.contains('\r')
                && refused.contains("signed in with (https://as.example/)")
                && refused.contains("mcp-companion logout s"),
            "{refused}"
        );
    }
}
