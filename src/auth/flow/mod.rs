//! The sign-in itself (MCP authorization 2025-11-25, with 2025-03-26 fallbacks), on rmcp's
//! [`AuthorizationManager`]:
//!
//! 1. discovery: protected resource metadata (RFC 9728) from the 401's `WWW-Authenticate`
//!    `resource_metadata`, else the well-known paths; then authorization server metadata
//!    (RFC 8414, then OpenID discovery, path-inserted first), else the 2025-03-26 root
//!    metadata and default endpoints;
//! 2. client identity: `oauth.clientId` (+ `clientSecret`) from the entry, else the client ID
//!    metadata document `oauth.clientMetadataUrl` when the server advertises support, else
//!    dynamic client registration (RFC 7591);
//! 3. scopes: `oauth.scopes`, else the challenge's `scope`, else the resource's
//!    `scopes_supported`, else none (the parameter is omitted);
//! 4. the authorization request with PKCE S256, `state` and `resource` (RFC 8707), opened in
//!    the browser; the one-shot loopback listener takes the redirect; the code is exchanged.
//!
//! Tokens and the registered client land in the keychain ([`VaultCredentialStore`]). Every HTTP
//! request goes through [`GuardedOAuthHttp`].
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | [`Target`], [`SignInError`], the authorization manager every step starts from |
//! | `discover.rs` | step 1: the authorization server's metadata, with the 2025-03-26 issuer relaxation |
//! | `begin.rs` | [`begin`] / [`PendingSignIn::finish`]: steps 2–4, the browser's round trip and the code exchange |
//! | `stored.rs` | [`stored`]: a sign-in kept in the keychain, ready to hand out tokens |
//! | `error.rs` | rmcp's OAuth errors as one line for the person: the guard's refusal first, secrets masked |

mod begin;
mod discover;
mod error;
mod stored;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::AuthorizationManager;

use super::callback::CallbackError;
use super::http::GuardedOAuthHttp;
use super::store::VaultCredentialStore;
use super::vault::{TokenVault, VaultError};
use crate::config::OAuthConfig;
use crate::net::{self, ClientError, Guard};

pub use begin::{PendingSignIn, begin};
use discover::discover;
pub(crate) use error::oauth_error;
use error::scrub;
pub use stored::{StoredSignIn, stored};

/// The name the companion registers under (dynamic client registration `client_name`).
pub const CLIENT_NAME: &str = "MCP Companion";
/// How long a sign-in waits for the browser to come back.
pub const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);

/// What a sign-in needs to know about one server.
#[derive(Clone, Debug)]
pub struct Target {
    /// The server's name in the config.
    pub server: String,
    /// The MCP endpoint (also the RFC 8707 resource and the keychain key).
    pub url: url::Url,
    /// The entry's `oauth` object, expanded.
    pub oauth: OAuthConfig,
    /// The SSRF guard built from `ssrfWhitelist`.
    pub guard: Guard,
}

impl Target {
    /// The keychain entry of this server and resource.
    pub fn store(&self, vault: Arc<dyn TokenVault>) -> VaultCredentialStore {
        VaultCredentialStore::new(vault, &self.server, self.url.as_str())
    }
}

/// Why a sign-in (or loading a stored one) failed. Never contains a token or secret.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// Discovery, registration or the token exchange failed; the text quotes the server.
    #[error("{0}")]
    OAuth(String),
    /// The redirect did not bring a code.
    #[error(transparent)]
    Callback(#[from] CallbackError),
    /// The keychain could not be read or written.
    #[error("keychain: {0}")]
    Vault(#[from] VaultError),
    /// No keychain answered before the sign-in began; nothing was opened.
    #[error(
        "the keychain is not available ({0}), so the tokens could not be kept; the sign-in was \
         not started. Start a keychain (on Linux a Secret Service such as gnome-keyring or \
         KeePassXC) and sign in again"
    )]
    NoKeychain(VaultError),
    /// The HTTP client could not be built.
    #[error(transparent)]
    Client(#[from] ClientError),
}

/// An authorization manager for `target` on the guarded client and the keychain store, and
/// that client.
pub(super) async fn manager(
    target: &Target,
    vault: Arc<dyn TokenVault>,
) -> Result<(AuthorizationManager, Arc<GuardedOAuthHttp>), SignInError> {
    if let Some(secret) = &target.oauth.client_secret {
        net::remember_credential(secret);
    }
    let http = Arc::new(GuardedOAuthHttp::new(&target.guard)?);
    let mut m = AuthorizationManager::new_with_oauth_http_client(target.url.clone(), http.clone())
        .await
        .map_err(|e| oauth_error(&e, target, &http))?;
    m.set_credential_store(target.store(vault));
    Ok((m, http))
}
