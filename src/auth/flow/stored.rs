//! A sign-in kept in the keychain: loaded, its metadata fetched again, and its client
//! configured for refreshes.

use std::sync::Arc;

use rmcp::transport::auth::{AuthorizationManager, CredentialStore, OAuthClientConfig};

use super::{SignInError, Target, discover, manager, oauth_error};
use crate::auth::http::GuardedOAuthHttp;
use crate::auth::vault::TokenVault;

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
