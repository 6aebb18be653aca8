//! A new sign-in: the checks, the client identity and scopes, the authorization URL with the
//! listener waiting for the browser, and the code exchange once it comes back.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthorizationRequest, AuthorizationSession};

use super::{CLIENT_NAME, SignInError, Target, discover, manager, oauth_error};
use crate::auth::callback::CallbackListener;
use crate::auth::checks::{browsable, pkce_s256, reachable, same_issuer, step_up_scopes};
use crate::auth::http::GuardedOAuthHttp;
use crate::auth::store::VaultCredentialStore;
use crate::auth::vault::TokenVault;

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
