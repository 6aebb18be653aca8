//! OAuth sign-in for remote servers (MCP authorization, 2025-11-25 with 2025-03-26
//! compatibility), built on rmcp's `auth` feature.
//!
//! | file | owns |
//! |---|---|
//! | `flow/` | [`flow::begin`] / [`flow::PendingSignIn::finish`]: discovery, client identity, PKCE, the code exchange |
//! | `checks.rs` | what a sign-in refuses before the browser opens (scheme, SSRF, PKCE S256, another issuer); step-up scopes |
//! | `http.rs` | [`http::GuardedOAuthHttp`]: every OAuth HTTP request through the SSRF guard |
//! | `store.rs` | [`store::VaultCredentialStore`]: tokens and registration in the keychain, per server and resource |
//! | `vault.rs` | [`vault::TokenVault`]: the keychain face the store uses; [`vault::vault`] picks it |
//! | `callback.rs` | [`callback::CallbackListener`]: the one-shot loopback redirect listener (connections served side by side) |
//! | `browser.rs` | [`browser::open`]: `$BROWSER`, else the system's URL opener |
//! | `challenge.rs` | recognising a 401 / `insufficient_scope` in transport errors (the server's supervisor keeps the last one, for `login`) |
//! | `pending.rs` | sign-ins in progress inside a running companion (for `login` and `status`) |
//!
//! Lifecycle of a protected server: the first connect gets a 401 → the server enters
//! `needs sign-in` (no restart loop) → `mcp-companion login SERVER` (or the window's button)
//! asks the running companion to sign in: it opens the browser, the listener takes the
//! redirect, the tokens go to the keychain and the server restarts with them. Later connects
//! load the tokens ([`crate::upstream::signed_in::connect_client`], which also reads the
//! refusals a refresh cannot fix — more scope wanted, a refused refresh token — on the MCP
//! transport: the client connection is `upstream`'s, this module only signs in); rmcp refreshes
//! them before expiry and once on a 401. A browser opens only when the person asks.

pub mod browser;
pub mod callback;
pub mod challenge;
pub mod checks;
pub mod flow;
pub mod http;
pub mod pending;
pub mod store;
pub mod vault;

pub use flow::{SignInError, Target};

/// Log directives that keep secrets out of logs at any level: rmcp's OAuth code logs the
/// authorization code (and token responses) at `debug`, so it is capped at `info`.
pub const SECRET_SAFE_LOG_DIRECTIVES: &[&str] = &["rmcp::transport::auth=info", "oauth2=info"];

/// `filter` with [`SECRET_SAFE_LOG_DIRECTIVES`] added (they win over broader directives such
/// as `trace`).
pub fn secret_safe(mut filter: tracing_subscriber::EnvFilter) -> tracing_subscriber::EnvFilter {
    for d in SECRET_SAFE_LOG_DIRECTIVES {
        if let Ok(d) = d.parse() {
            filter = filter.add_directive(d);
        }
    }
    filter
}

/// Forgets `target`'s tokens and client registration. `true` when there was a sign-in.
///
/// # Errors
/// [`vault::VaultError`] when the keychain refuses.
pub async fn forget(target: &Target) -> Result<bool, vault::VaultError> {
    target.store(vault::vault()).forget().await
}
