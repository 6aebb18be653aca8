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

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
    AuthorizationRequest, AuthorizationSession, CredentialStore, OAuthClientConfig,
};

use super::callback::{CallbackError, CallbackListener};
use super::checks::{browsable, pkce_s256, reachable, same_issuer, step_up_scopes};
use super::http::GuardedOAuthHttp;
use super::store::VaultCredentialStore;
use super::vault::{TokenVault, VaultError};
use crate::config::OAuthConfig;
use crate::net::{self, ClientError, Guard};

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
async fn manager(
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

/// Discovery (see the module doc), then sets the metadata on `m`. The second value is `true`
/// when the metadata came from a document the authorization server published, `false` for the
/// 2025-03-26 default endpoints (no document: nothing to check PKCE support against).
///
/// One relaxation of RFC 8414 §3.3 (the `issuer` must equal the URL the metadata was found
/// under): in 2025-03-26 discovery, the authorization server is the MCP server's own origin,
/// and some servers of that era name an issuer with a path on that same origin
/// (`https://h/oauth` for metadata at `https://h/.well-known/oauth-authorization-server`).
/// Such metadata is accepted when expected and received issuer share the server URL's origin;
/// any other mismatch is refused (mix-up protection).
async fn discover(
    m: &mut AuthorizationManager,
    http: &GuardedOAuthHttp,
    target: &Target,
    challenge: Option<&str>,
) -> Result<(AuthorizationMetadata, bool), SignInError> {
    match m.resolve_metadata_from_challenge(challenge).await {
        Ok(resolution) => {
            tracing::info!(
                server = %target.server,
                source = ?resolution.source,
                "found the authorization server"
            );
            m.set_metadata(resolution.metadata.clone());
            let published =
                resolution.source != AuthorizationMetadataSource::LegacyEndpointFallback;
            Ok((resolution.metadata, published))
        }
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) if same_origin(&target.url, &expected_issuer)
            && same_origin(&target.url, &received_issuer) =>
        {
            let mut at = target.url.clone();
            at.set_path("/.well-known/oauth-authorization-server");
            at.set_query(None);
            at.set_fragment(None);
            let body = http
                .get(&at)
                .await
                .map_err(|e| SignInError::OAuth(scrub(&e.to_string(), target)))?;
            let metadata: AuthorizationMetadata = serde_json::from_slice(&body).map_err(|e| {
                SignInError::OAuth(format!("authorization server metadata is malformed: {e}"))
            })?;
            tracing::info!(
                server = %target.server,
                issuer = %received_issuer,
                "2025-03-26 discovery: accepting the issuer on the server's own origin"
            );
            m.set_metadata(metadata.clone());
            Ok((metadata, true))
        }
        Err(e) => Err(oauth_error(&e, target, http)),
    }
}

/// Whether `other` parses as a URL on `url`'s origin (scheme, host, port).
fn same_origin(url: &url::Url, other: &str) -> bool {
    url::Url::parse(other).is_ok_and(|o| o.origin() == url.origin())
}

/// The stored sign-in, ready to hand out (and refresh) tokens; `None` when this
/// server has no stored tokens for this resource (nothing is fetched then).
///
/// # Errors
/// [`SignInError`] when the keychain fails or the authorization server metadata cannot be
/// fetched again.
pub async fn stored(
    target: &Target,
    vault: Arc<dyn TokenVault>,
) -> Result<Option<StoredSignIn>, SignInError> {
    let store = target.store(vault.clone());
    // No keychain (a headless box without a Secret Service) means no stored sign-in: servers
    // that need none still connect; one that answers 401 waits in `needs sign-in`, and `login`
    // reports the keychain error.
    let saved = match store.load().await {
        Ok(Some(saved)) => saved,
        Ok(None) => return Ok(None),
        Err(e) => {
            tracing::debug!(server = %target.server, error = %e, "no stored sign-in readable");
            return Ok(None);
        }
    };
    if saved.token_response.is_none() {
        return Ok(None);
    }
    let (mut m, http) = manager(target, vault).await?;
    // Refreshing needs no PKCE: a sign-in made before is kept whatever the metadata says now.
    discover(&mut m, &http, target, None).await?;
    if !m
        .initialize_from_store()
        .await
        .map_err(|e| oauth_error(&e, target, &http))?
    {
        return Ok(None);
    }
    // A confidential client needs its secret for refreshes: from the entry, else from the
    // registration saved with the tokens.
    let secret = match (&target.oauth.client_id, &target.oauth.client_secret) {
        (Some(id), Some(secret)) if *id == saved.client_id => Some(secret.clone()),
        _ => store.client_secret().await?,
    };
    if let Some(secret) = secret {
        let config = OAuthClientConfig::new(saved.client_id.clone(), target.url.as_str())
            .with_client_secret(secret);
        m.configure_client(config)
            .map_err(|e| oauth_error(&e, target, &http))?;
    }
    Ok(Some(StoredSignIn { manager: m, http }))
}

/// A stored sign-in, ready to use: the manager and the OAuth client it refreshes through
/// (which keeps the token endpoint's last refusal, [`GuardedOAuthHttp::take_refusal`]).
pub struct StoredSignIn {
    /// Hands out (and refreshes) the tokens.
    pub manager: AuthorizationManager,
    /// The guarded OAuth HTTP client `manager` uses.
    pub http: Arc<GuardedOAuthHttp>,
}

/// A started sign-in: the authorization URL to open, and the listener waiting for the redirect.
pub struct PendingSignIn {
    session: AuthorizationSession,
    listener: CallbackListener,
    state: String,
    target: Target,
    store: VaultCredentialStore,
    client_secret: Option<String>,
    http: Arc<GuardedOAuthHttp>,
}

impl std::fmt::Debug for PendingSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingSignIn")
            .field("server", &self.target.server)
            .finish_non_exhaustive()
    }
}

/// Starts a sign-in: discovery, client identity, the authorization URL and the listener.
/// `challenge` is the `WWW-Authenticate` header of the 401 (or 403) that asked for it;
/// `scopes` replaces the spec's scope choice (a step-up passes the union of the granted and
/// the challenged scopes).
///
/// # Errors
/// [`SignInError`], quoting the server or naming the refused address.
pub async fn begin(
    target: &Target,
    vault: Arc<dyn TokenVault>,
    challenge: Option<&str>,
    scopes: Option<Vec<String>>,
) -> Result<PendingSignIn, SignInError> {
    // The tokens can only be kept in the keychain: find out before the person signs in.
    target
        .store(vault.clone())
        .check()
        .await
        .map_err(SignInError::NoKeychain)?;
    let listener = CallbackListener::bind().await?;
    let redirect = listener.redirect_uri();
    let (mut m, http) = manager(target, vault.clone()).await?;
    let (metadata, published) = discover(&mut m, &http, target, challenge).await?;
    if published {
        pkce_s256(&metadata)?;
    }
    browsable(&metadata.authorization_endpoint)?;
    let store = target.store(vault.clone());
    same_issuer(target, &store, &metadata).await?;
    reachable(target, &metadata.authorization_endpoint).await?;

    let mut request = AuthorizationRequest::new(redirect.clone()).with_client_name(CLIENT_NAME);
    let scopes = match scopes {
        Some(scopes) => Some(scopes),
        None => step_up_scopes(target, &store, challenge).await?,
    };
    match scopes.or_else(|| target.oauth.scopes.clone()) {
        Some(scopes) if !scopes.is_empty() => request = request.with_scopes(scopes),
        _ => request = request.with_initial_scope_selection(),
    }
    let supports_cimd = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(|v| v.as_bool())
        .unwrap_or(false);
    let mut client_secret = None;
    if let Some(id) = &target.oauth.client_id {
        request = request.with_preregistered_client(id.clone());
        if let Some(secret) = &target.oauth.client_secret {
            request = request.with_client_secret(secret.clone());
        }
    } else if let (Some(doc), true) = (&target.oauth.client_metadata_url, supports_cimd) {
        request = request.with_client_metadata_url(doc.clone());
    } else {
        // Registered here rather than inside rmcp so the secret of a confidential client can
        // be kept for refreshes after a restart.
        let scopes = if request.scopes.is_empty() {
            m.select_initial_scopes(&[]).await
        } else {
            request.scopes.clone()
        };
        let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let registered = m
            .register_client(CLIENT_NAME, &redirect, &refs)
            .await
            .map_err(|e| oauth_error(&e, target, &http))?;
        request = request.with_preregistered_client(registered.client_id);
        if let Some(secret) = registered.client_secret {
            request = request.with_client_secret(secret.clone());
            client_secret = Some(secret);
        }
    }
    let session = AuthorizationSession::new(m, request)
        .await
        .map_err(|(_, e)| oauth_error(&e, target, &http))?;
    let state = url::Url::parse(session.get_authorization_url())
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or_else(|| SignInError::OAuth("the authorization URL has no state".to_owned()))?;
    Ok(PendingSignIn {
        session,
        listener,
        state,
        target: target.clone(),
        store: target.store(vault),
        client_secret,
        http,
    })
}

impl PendingSignIn {
    /// The authorization URL to open in the browser (no secret in it).
    pub fn url(&self) -> &str {
        self.session.get_authorization_url()
    }

    /// Waits for the redirect (at most `timeout`), checks `state`, exchanges the code and
    /// stores the tokens.
    ///
    /// # Errors
    /// [`SignInError`]: timeout, refusal, or a failed token exchange quoting the server.
    pub async fn finish(self, timeout: Duration) -> Result<(), SignInError> {
        let callback = self.listener.wait(&self.state, timeout).await?;
        self.session
            .handle_callback_with_issuer(
                &callback.code,
                &callback.state,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| oauth_error(&e, &self.target, &self.http))?;
        self.store.set_client_secret(self.client_secret).await?;
        tracing::info!(server = %self.target.server, "signed in");
        Ok(())
    }
}

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
fn scrub(text: &str, target: &Target) -> String {
    let full = target.url.as_str();
    net::scrub_known(&text.replace(full, &net::redact(full)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_issuers_on_the_server_origin_get_the_2025_03_26_relaxation() {
        let server = url::Url::parse("http://localhost:4000/mcp").unwrap();
        assert!(same_origin(&server, "http://localhost:4000/oauth"));
        assert!(same_origin(&server, "http://localhost:4000/"));
        assert!(!same_origin(&server, "http://localhost:4001/oauth"));
        assert!(!same_origin(&server, "https://localhost:4000/oauth"));
        assert!(!same_origin(&server, "http://evil.example/oauth"));
        assert!(!same_origin(&server, "not a url"));
    }

    /// A keychain that never answers.
    struct Broken;

    impl TokenVault for Broken {
        fn get(&self, _: &str) -> Result<Option<String>, VaultError> {
            Err(VaultError("no OS keychain is available".to_owned()))
        }
        fn set(&self, _: &str, _: &str) -> Result<(), VaultError> {
            Err(VaultError("no OS keychain is available".to_owned()))
        }
        fn delete(&self, _: &str) -> Result<bool, VaultError> {
            Err(VaultError("no OS keychain is available".to_owned()))
        }
    }

    #[tokio::test]
    async fn without_a_keychain_servers_connect_without_a_token() {
        let target = Target {
            server: "s".to_owned(),
            url: url::Url::parse("http://127.0.0.1:9/mcp").unwrap(),
            oauth: OAuthConfig::default(),
            guard: Guard::default(),
        };
        assert!(stored(&target, Arc::new(Broken)).await.unwrap().is_none());
        let refused = begin(&target, Arc::new(Broken), None, None)
            .await
            .unwrap_err();
        assert!(
            refused
                .to_string()
                .starts_with("the keychain is not available (no OS keychain is available)"),
            "{refused}"
        );
    }
}
