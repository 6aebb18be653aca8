//! The streamable HTTP client of a signed-in server: rmcp's [`AuthClient`] (bearer token on
//! every request, refreshed before expiry and once on a 401) plus scope step-up.
//!
//! Step-up (MCP authorization 2025-11-25, "Scope Challenge Handling"): a 403 with
//! `error="insufficient_scope"` starts a new authorization asking for the granted scopes plus
//! the challenged ones, in the browser, then the request is sent again. At most
//! [`MAX_STEP_UPS`] step-ups per request; after that the 403 stands and the server goes to
//! `needs sign-in` instead of looping.
//!
//! It lives with the other transports, not in [`crate::auth`]: it is a layer on the MCP
//! client connection ([`HttpLayer`]), and `auth` (discovery, PKCE, the keychain store, the
//! redirect listener) stays below `upstream` in the layer order.

use std::sync::Arc;

use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::CredentialStore;
use rmcp::transport::auth::{AuthClient, AuthorizationManager, OAuthClientConfig};
use rmcp::transport::streamable_http_client::{InsufficientScopeError, StreamableHttpError};
use tokio::sync::Mutex;

use super::http_layer::{HttpError, HttpLayer, Layered, PostAnswer};
use crate::auth::flow::{self, SIGN_IN_TIMEOUT, SignInError, Target};
use crate::auth::vault::{self, TokenVault};
use crate::auth::{browser, challenge};

/// Step-ups tried for one request before the 403 is reported.
pub const MAX_STEP_UPS: u32 = 2;

/// rmcp's [`AuthClient`] on our guarded `reqwest::Client`, with [`StepUp`].
pub type SignedInClient = Layered<AuthClient<reqwest::Client>, StepUp>;

/// The client of a signed-in server: `http` carries the server's headers and SSRF guard;
/// `manager` the stored sign-in.
pub fn signed_in_client(
    http: reqwest::Client,
    manager: AuthorizationManager,
    target: Target,
    vault: Arc<dyn TokenVault>,
) -> SignedInClient {
    let inner = AuthClient::new(http, manager);
    let layer = StepUp {
        auth_manager: inner.auth_manager.clone(),
        target: Arc::new(target),
        vault,
        step_up_lock: Arc::default(),
    };
    Layered { inner, layer }
}

/// The client for a streamable HTTP server: [`SignedInClient`] when the keychain
/// holds a sign-in for this server and resource, else `None` (connect without a token; a 401
/// then leads to `needs sign-in`).
///
/// # Errors
/// [`SignInError`] when the keychain or the authorization server metadata cannot be read.
pub async fn connect_client(
    target: Target,
    http: reqwest::Client,
) -> Result<Option<SignedInClient>, SignInError> {
    let vault = vault::vault();
    let Some(manager) = flow::stored(&target, vault.clone()).await? else {
        return Ok(None);
    };
    tracing::debug!(server = %target.server, "using the stored sign-in");
    Ok(Some(signed_in_client(
        http,
        manager,
        target,
        Arc::clone(&vault),
    )))
}

/// Scope step-up around the requests of a signed-in server (see the module docs).
#[derive(Clone)]
pub struct StepUp {
    /// The [`AuthClient`]'s own manager: a step-up may switch it to a new client registration.
    auth_manager: Arc<Mutex<AuthorizationManager>>,
    target: Arc<Target>,
    vault: Arc<dyn TokenVault>,
    /// One step-up at a time per server.
    step_up_lock: Arc<Mutex<()>>,
}

impl StepUp {
    /// Runs `call`, stepping up on `insufficient_scope` at most [`MAX_STEP_UPS`] times.
    async fn with_step_up<T, F, Fut>(&self, call: F) -> Result<T, HttpError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let mut attempts = 0;
        loop {
            match call().await {
                Err(StreamableHttpError::InsufficientScope(denied)) if attempts < MAX_STEP_UPS => {
                    attempts += 1;
                    if let Err(e) = self.step_up(&denied).await {
                        tracing::warn!(server = %self.target.server, error = %e, "step-up failed");
                        return Err(StreamableHttpError::InsufficientScope(denied));
                    }
                }
                other => return other,
            }
        }
    }

    /// A new authorization for the granted plus the challenged scopes.
    async fn step_up(&self, denied: &InsufficientScopeError) -> Result<(), SignInError> {
        let _one_at_a_time = self.step_up_lock.lock().await;
        let store = self.target.store(self.vault.clone());
        let mut scopes = store.granted_scopes().await?;
        let challenged = denied
            .required_scope
            .clone()
            .or_else(|| challenge::param(&denied.www_authenticate_header, "scope"));
        for s in challenged.iter().flat_map(|s| s.split_whitespace()) {
            if !scopes.iter().any(|have| have == s) {
                scopes.push(s.to_owned());
            }
        }
        tracing::info!(server = %self.target.server, scopes = %scopes.join(" "), "the server asks for more access: signing in again");
        let pending = flow::begin(
            &self.target,
            self.vault.clone(),
            Some(&denied.www_authenticate_header),
            Some(scopes),
        )
        .await?;
        browser::open(pending.url()).map_err(|e| SignInError::OAuth(e.to_string()))?;
        pending.finish(SIGN_IN_TIMEOUT).await?;
        // The new grant may belong to a newly registered client: refreshes must use it.
        if let Ok(Some(saved)) = store.load().await {
            let mut config = OAuthClientConfig::new(saved.client_id, self.target.url.as_str());
            if let Some(secret) = store.client_secret().await? {
                config = config.with_client_secret(secret);
            }
            let mut manager = self.auth_manager.lock().await;
            if let Err(e) = manager.configure_client(config) {
                tracing::warn!(error = %e, "cannot switch to the new client registration");
            }
        }
        Ok(())
    }
}

impl HttpLayer for StepUp {
    async fn post<F, Fut>(
        &self,
        _message: &ClientJsonRpcMessage,
        _attached: bool,
        send: F,
    ) -> PostAnswer
    where
        F: Fn() -> Fut + Send + Sync,
        Fut: Future<Output = PostAnswer> + Send,
    {
        self.with_step_up(send).await
    }
}
