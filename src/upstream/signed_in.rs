//! The streamable HTTP client of a signed-in server: rmcp's [`AuthClient`] (bearer token on
//! every request, refreshed before expiry and once on a 401) plus [`SignInWatch`], which reads
//! the refusals that outlive those refreshes.
//!
//! - **More scope** (MCP authorization 2025-11-25, "Scope Challenge Handling"): a 403 with
//!   `error="insufficient_scope"` to a request is answered to the caller as a JSON-RPC error
//!   saying what the server asks for and how the person grants it (`mcp-companion login`, or the
//!   window's **Sign in** button); the challenge goes to the supervisor (`UpstreamEvent::MoreScope`),
//!   where `login` finds it and asks for the granted plus the challenged scopes. No browser is
//!   ever opened on an agent's call: the challenge may name any authorization server, and only
//!   the person's own action, through the checks of [`crate::auth::flow::begin`], may lead a
//!   browser there. The session keeps running for the tools the grant covers.
//! - **Sign-in lost**: a 401 that rmcp's refresh could not fix (the refresh token was revoked or
//!   expired — the token endpoint answered `invalid_grant` — or there is none) ends the session
//!   as [`Gone::SignIn`], quoting the authorization server (masked): the supervisor moves the
//!   server to `needs sign-in`. The request gets the same text as a JSON-RPC error: the server
//!   refused it, so it did not run.
//!
//! The `initialize` request is left alone: its 401 or 403 already leads to `needs sign-in`
//! through the connect error ([`crate::auth::challenge`]).
//!
//! It lives with the other transports, not in [`crate::auth`]: it is a layer on the MCP
//! client connection ([`HttpLayer`]), and `auth` (discovery, PKCE, the keychain store, the
//! redirect listener) stays below `upstream` in the layer order.

use std::sync::Arc;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, JsonRpcMessage};
use rmcp::transport::auth::AuthClient;
use rmcp::transport::streamable_http_client::{StreamableHttpError, StreamableHttpPostResponse};
use tokio::sync::mpsc;

use super::handler::UpstreamEvent;
use super::http::{Gone, SessionGone};
use super::http_client::GuardedHttp;
use super::http_layer::{HttpLayer, Layered, PostAnswer};
use crate::auth::challenge::SignInNeeded;
use crate::auth::flow::{self, SignInError, StoredSignIn, Target};
use crate::auth::http::GuardedOAuthHttp;
use crate::auth::vault;

/// The JSON-RPC error code of a request the server refused for want of access (the
/// implementation-defined server error range of JSON-RPC 2.0).
pub const REFUSED_ACCESS_CODE: i32 = -32001;

/// rmcp's [`AuthClient`] on our guarded client ([`GuardedHttp`]), with [`SignInWatch`].
pub type SignedInClient = Layered<AuthClient<GuardedHttp>, SignInWatch>;

/// Where [`SignInWatch`] reports: the session's end, and the supervisor's events.
#[derive(Clone, Debug)]
pub struct Reports {
    /// Fired when the sign-in is lost.
    pub gone: SessionGone,
    /// Receives [`UpstreamEvent::MoreScope`].
    pub events: mpsc::UnboundedSender<UpstreamEvent>,
}

/// The client of a signed-in server: `http` carries the server's headers and SSRF guard;
/// `stored` the stored sign-in.
pub fn signed_in_client(
    http: reqwest::Client,
    stored: StoredSignIn,
    server: &str,
    reports: Reports,
) -> SignedInClient {
    let inner = AuthClient::new(GuardedHttp(http), stored.manager);
    let layer = SignInWatch {
        server: Arc::from(server),
        oauth: stored.http,
        reports,
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
    reports: Reports,
) -> Result<Option<SignedInClient>, SignInError> {
    let Some(stored) = flow::stored(&target, vault::vault()).await? else {
        return Ok(None);
    };
    tracing::debug!(server = %target.server, "using the stored sign-in");
    Ok(Some(signed_in_client(
        http,
        stored,
        &target.server,
        reports,
    )))
}

/// Reads the refusals of a signed-in server (see the module docs).
#[derive(Clone)]
pub struct SignInWatch {
    server: Arc<str>,
    /// The OAuth client rmcp refreshes through: it kept the token endpoint's last refusal.
    oauth: Arc<GuardedOAuthHttp>,
    reports: Reports,
}

impl SignInWatch {
    fn judge(&self, message: &ClientJsonRpcMessage, answer: PostAnswer) -> PostAnswer {
        let JsonRpcMessage::Request(request) = message else {
            return answer;
        };
        if matches!(request.request, ClientRequest::InitializeRequest(_)) {
            return answer;
        }
        let text = match &answer {
            Err(StreamableHttpError::InsufficientScope(denied)) => {
                let challenge = denied.www_authenticate_header.clone();
                let needed = SignInNeeded {
                    challenge: Some(challenge.clone()),
                    insufficient_scope: true,
                };
                let text = format!(
                    "{} (or the window's Sign in button); the request was not run",
                    needed.describe(&self.server)
                );
                tracing::warn!(server = %self.server, reason = %crate::net::scrub_known(&text), "the server asks for more access");
                let _ = self
                    .reports
                    .events
                    .send(UpstreamEvent::MoreScope(challenge));
                text
            }
            Err(StreamableHttpError::AuthRequired(refused)) => {
                let challenge = refused.www_authenticate_header.clone();
                let needed = SignInNeeded {
                    challenge: Some(challenge.clone()),
                    insufficient_scope: false,
                };
                let why = match self.oauth.take_refusal() {
                    Some(refusal) => format!(
                        "the sign-in is no longer valid: the authorization server refused the \
                         refresh token ({refusal}) and {}",
                        needed.describe(&self.server)
                    ),
                    None => format!(
                        "the sign-in is no longer valid: {}",
                        needed.describe(&self.server)
                    ),
                };
                let why = crate::net::scrub_known(&why);
                self.reports.gone.fire_gone(Gone::SignIn {
                    why: why.clone(),
                    challenge: Some(challenge),
                });
                why
            }
            _ => return answer,
        };
        Ok(StreamableHttpPostResponse::Json(
            JsonRpcMessage::error(
                ErrorData::new(ErrorCode(REFUSED_ACCESS_CODE), text, None),
                Some(request.id.clone()),
            ),
            None,
        ))
    }
}

impl HttpLayer for SignInWatch {
    async fn post<F, Fut>(
        &self,
        message: &ClientJsonRpcMessage,
        _attached: bool,
        send: F,
    ) -> PostAnswer
    where
        F: Fn() -> Fut + Send + Sync,
        Fut: Future<Output = PostAnswer> + Send,
    {
        let answer = send().await;
        self.judge(message, answer)
    }
}
