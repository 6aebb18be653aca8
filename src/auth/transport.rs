//! The streamable HTTP client of a signed-in server: rmcp's [`AuthClient`] (bearer token on
//! every request, refreshed before expiry and once on a 401) plus scope step-up.
//!
//! Step-up (MCP authorization 2025-11-25, "Scope Challenge Handling"): a 403 with
//! `error="insufficient_scope"` starts a new authorization asking for the granted scopes plus
//! the challenged ones, in the browser, then the request is sent again. At most
//! [`MAX_STEP_UPS`] step-ups per request; after that the 403 stands and the server goes to
//! `needs sign-in` instead of looping.

use std::collections::HashMap;
use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::CredentialStore;
use rmcp::transport::auth::{AuthClient, AuthorizationManager, OAuthClientConfig};
use rmcp::transport::streamable_http_client::{
    InsufficientScopeError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::flow::{self, SIGN_IN_TIMEOUT, SignInError, Target};
use super::vault::TokenVault;
use super::{browser, challenge};

/// Step-ups tried for one request before the 403 is reported.
pub const MAX_STEP_UPS: u32 = 2;

type HttpError = StreamableHttpError<reqwest::Error>;

/// rmcp's [`AuthClient`] on our guarded `reqwest::Client`, with step-up.
#[derive(Clone)]
pub struct SignedInClient {
    inner: AuthClient<reqwest::Client>,
    target: Arc<Target>,
    vault: Arc<dyn TokenVault>,
    /// One step-up at a time per server.
    step_up_lock: Arc<tokio::sync::Mutex<()>>,
}

impl SignedInClient {
    /// `http` carries the server's headers and SSRF guard; `manager` the stored sign-in.
    pub fn new(
        http: reqwest::Client,
        manager: AuthorizationManager,
        target: Target,
        vault: Arc<dyn TokenVault>,
    ) -> SignedInClient {
        SignedInClient {
            inner: AuthClient::new(http, manager),
            target: Arc::new(target),
            vault,
            step_up_lock: Arc::default(),
        }
    }

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
            let mut manager = self.inner.auth_manager.lock().await;
            if let Err(e) = manager.configure_client(config) {
                tracing::warn!(error = %e, "cannot switch to the new client registration");
            }
        }
        Ok(())
    }
}

impl StreamableHttpClient for SignedInClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.with_step_up(|| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.with_step_up(|| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.with_step_up(|| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        HttpError,
    > {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        HttpError,
    > {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}
