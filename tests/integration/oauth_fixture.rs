//! An OAuth-protected MCP server on loopback for the sign-in tests: protected resource metadata
//! (RFC 9728), authorization server metadata (RFC 8414), dynamic registration, an authorize
//! endpoint that "clicks Allow" by redirecting at once, a token endpoint checking PKCE, and the
//! echo MCP server at `/mcp` behind a bearer check. Everything it saw is recorded.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::{RawQuery, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The access token the fixture hands out first: tests grep logs and outputs for it.
pub const PLANTED_ACCESS: &str = "planted-access-7c1e5a9d0b";
/// The refresh token: likewise never to be seen.
pub const PLANTED_REFRESH: &str = "planted-refresh-3f8e2d6c4a";

/// Knobs and records.
#[derive(Default)]
pub struct OAuthShared {
    /// Base URL, filled in once bound (`http://127.0.0.1:PORT`).
    pub base: Mutex<String>,
    /// Overrides `authorization_servers` of the resource metadata.
    pub hostile_as: Mutex<Option<String>>,
    /// Overrides `authorization_endpoint` of the authorization server metadata.
    pub hostile_authorization_endpoint: Mutex<Option<String>>,
    /// Overrides `token_endpoint` of the authorization server metadata.
    pub hostile_token_endpoint: Mutex<Option<String>>,
    /// Replaces `code_challenge_methods_supported` of the authorization server metadata;
    /// `Some(Value::Null)` leaves the field out.
    pub pkce_methods: Mutex<Option<Value>>,
    /// Query parameters of every authorization request.
    pub authorize: Mutex<Vec<HashMap<String, String>>>,
    /// Form bodies of every token request.
    pub token: Mutex<Vec<HashMap<String, String>>>,
    /// Registrations made.
    pub registrations: AtomicUsize,
    /// Access tokens the MCP endpoint accepts.
    pub valid: Mutex<Vec<String>>,
    /// Tokens handed out so far.
    issued: AtomicUsize,
    /// Set: the next MCP request answers 401 however good its token (a revoked token).
    pub revoke_next: AtomicBool,
    /// `expires_in` of issued tokens, in seconds (0: 3600).
    pub expires_in: AtomicUsize,
    /// 401 answers of the MCP endpoint.
    pub refusals: AtomicUsize,
    /// Set: refusals quote the credential refused (a careless server): the 401's
    /// `error_description` names the access token, the token endpoint refuses every grant
    /// quoting the code, verifier or refresh token it got.
    pub echo_secrets: AtomicBool,
    /// Set: refresh grants are refused with `invalid_grant` (a revoked refresh token).
    pub refuse_refresh: AtomicBool,
    /// Set: `tools/call` requests with a good token get 403 with this `WWW-Authenticate`.
    pub insufficient_scope: Mutex<Option<String>>,
    /// Replaces the access token handed out.
    pub token_override: Mutex<Option<String>>,
    /// Set: the token endpoint sends its headers and the start of a body, then nothing.
    pub stall_token_body: AtomicBool,
    challenge: Mutex<Option<String>>,
}

impl OAuthShared {
    /// The form field `field` (`grant_type`, `code_verifier`) of every token request that had
    /// it, in order.
    pub fn token_field(&self, field: &str) -> Vec<String> {
        self.token
            .lock()
            .unwrap()
            .iter()
            .filter_map(|t| t.get(field).cloned())
            .collect()
    }
}

/// What the fixture says when it refuses a refresh token.
pub const REFRESH_REFUSAL: &str = "The refresh token has been revoked";

fn form(bytes: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(bytes).into_owned().collect()
}

fn json_response(status: StatusCode, v: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        v.to_string(),
    )
        .into_response()
}

async fn resource_metadata(State(s): State<Arc<OAuthShared>>) -> Response {
    let base = s.base.lock().unwrap().clone();
    let servers = s.hostile_as.lock().unwrap().clone().unwrap_or(base.clone());
    json_response(
        StatusCode::OK,
        json!({"resource": format!("{base}/mcp"), "authorization_servers": [servers],
               "scopes_supported": ["echo"]}),
    )
}

async fn server_metadata(State(s): State<Arc<OAuthShared>>) -> Response {
    let base = s.base.lock().unwrap().clone();
    let token = s
        .hostile_token_endpoint
        .lock()
        .unwrap()
        .clone()
        .unwrap_or(format!("{base}/token"));
    let authorize = s
        .hostile_authorization_endpoint
        .lock()
        .unwrap()
        .clone()
        .unwrap_or(format!("{base}/authorize"));
    let mut metadata = json!({"issuer": base, "authorization_endpoint": authorize,
           "token_endpoint": token, "registration_endpoint": format!("{base}/register"),
           "response_types_supported": ["code"], "grant_types_supported":
           ["authorization_code", "refresh_token"], "code_challenge_methods_supported": ["S256"],
           "token_endpoint_auth_methods_supported": ["none"]});
    match s.pkce_methods.lock().unwrap().clone() {
        Some(Value::Null) => {
            metadata
                .as_object_mut()
                .expect("an object")
                .remove("code_challenge_methods_supported");
        }
        Some(methods) => metadata["code_challenge_methods_supported"] = methods,
        None => {}
    }
    json_response(StatusCode::OK, metadata)
}

async fn register(State(s): State<Arc<OAuthShared>>, body: Bytes) -> Response {
    s.registrations.fetch_add(1, Ordering::SeqCst);
    let req: Value = serde_json::from_slice(&body).unwrap_or_default();
    json_response(
        StatusCode::CREATED,
        json!({"client_id": "fixture-client", "redirect_uris": req["redirect_uris"],
               "token_endpoint_auth_method": "none"}),
    )
}

async fn authorize(State(s): State<Arc<OAuthShared>>, RawQuery(q): RawQuery) -> Response {
    let params = form(q.unwrap_or_default().as_bytes());
    s.authorize.lock().unwrap().push(params.clone());
    let mut to = url::Url::parse(params.get("redirect_uri").map_or("", |s| s)).expect("redirect");
    to.query_pairs_mut()
        .append_pair("code", "the-code")
        .append_pair("state", params.get("state").map_or("", |s| s));
    Redirect::to(to.as_str()).into_response()
}

async fn token(State(s): State<Arc<OAuthShared>>, body: Bytes) -> Response {
    let params = form(&body);
    s.token.lock().unwrap().push(params.clone());
    if s.stall_token_body.load(Ordering::SeqCst) {
        let start = futures::stream::once(async {
            Ok::<_, std::io::Error>(Bytes::from_static(b"{\"access_token\":"))
        });
        return Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/json")
            .body(axum::body::Body::from_stream(futures::StreamExt::chain(
                start,
                futures::stream::pending(),
            )))
            .expect("response");
    }
    if s.refuse_refresh.load(Ordering::SeqCst)
        && params.get("grant_type").map(String::as_str) == Some("refresh_token")
    {
        return json_response(
            StatusCode::BAD_REQUEST,
            json!({"error": "invalid_grant", "error_description": REFRESH_REFUSAL}),
        );
    }
    if s.echo_secrets.load(Ordering::SeqCst) {
        let p = |k: &str| params.get(k).cloned().unwrap_or_default();
        let description = format!(
            "rejected code {} with verifier {}, refresh token {}",
            p("code"),
            p("code_verifier"),
            p("refresh_token")
        );
        return json_response(
            StatusCode::BAD_REQUEST,
            json!({"error": "invalid_grant", "error_description": description}),
        );
    }
    if params.get("grant_type").map(String::as_str) == Some("authorization_code") {
        let challenge = s
            .authorize
            .lock()
            .unwrap()
            .last()
            .and_then(|a| a.get("code_challenge").cloned());
        let verifier = params.get("code_verifier").cloned().unwrap_or_default();
        let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(Sha256::digest(verifier.as_bytes()));
        if challenge.as_deref() != Some(computed.as_str()) {
            return json_response(
                StatusCode::BAD_REQUEST,
                json!({"error": "invalid_grant", "error_description": "PKCE mismatch"}),
            );
        }
    }
    let n = s.issued.fetch_add(1, Ordering::SeqCst);
    let access = match s.token_override.lock().unwrap().clone() {
        Some(token) => token,
        None if n == 0 => PLANTED_ACCESS.to_owned(),
        None => format!("{PLANTED_ACCESS}-{n}"),
    };
    s.valid.lock().unwrap().push(access.clone());
    let expires_in = match s.expires_in.load(Ordering::SeqCst) {
        0 => 3600,
        n => n,
    };
    json_response(
        StatusCode::OK,
        json!({"access_token": access, "token_type": "Bearer", "expires_in": expires_in,
               "refresh_token": PLANTED_REFRESH, "scope": "echo"}),
    )
}

async fn bearer(State(s): State<Arc<OAuthShared>>, req: Request, next: Next) -> Response {
    let presented = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let ok = presented
        .as_ref()
        .is_some_and(|t| s.valid.lock().unwrap().contains(t));
    if !ok || s.revoke_next.swap(false, Ordering::SeqCst) {
        s.refusals.fetch_add(1, Ordering::SeqCst);
        if let Some(t) = &presented {
            s.valid.lock().unwrap().retain(|v| v != t);
        }
        let mut challenge = s.challenge.lock().unwrap().clone().unwrap_or_default();
        if s.echo_secrets.load(Ordering::SeqCst) {
            challenge.push_str(&format!(
                ", error=\"invalid_token\", error_description=\"the token {} is revoked\"",
                presented.as_deref().unwrap_or("(none)")
            ));
        }
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, challenge)],
            "unauthorized",
        )
            .into_response();
    }
    let wanted = s.insufficient_scope.lock().unwrap().clone();
    let Some(wanted) = wanted else {
        return next.run(req).await;
    };
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    if String::from_utf8_lossy(&body).contains("\"tools/call\"") {
        return (
            StatusCode::FORBIDDEN,
            [(header::WWW_AUTHENTICATE, wanted)],
            "insufficient scope",
        )
            .into_response();
    }
    next.run(Request::from_parts(parts, axum::body::Body::from(body)))
        .await
}

/// A running fixture; stopped when dropped.
pub struct OAuthFixture {
    pub port: u16,
    pub shared: Arc<OAuthShared>,
    task: tokio::task::JoinHandle<()>,
}

impl OAuthFixture {
    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for OAuthFixture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts the fixture on 127.0.0.1.
pub async fn start() -> OAuthFixture {
    start_with(axum::Router::new().nest_service("/mcp", crate::remote_fixture::echo_service()))
        .await
}

/// [`start`] with `mcp` (a router serving `/mcp`) behind the bearer check.
pub async fn start_with(mcp: axum::Router) -> OAuthFixture {
    let shared = Arc::new(OAuthShared::default());
    let protected = mcp.layer(axum::middleware::from_fn_with_state(shared.clone(), bearer));
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(resource_metadata),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(server_metadata),
        )
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(shared.clone())
        .merge(protected);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let base = format!("http://127.0.0.1:{port}");
    *shared.challenge.lock().unwrap() = Some(format!(
        "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\", scope=\"echo\""
    ));
    *shared.base.lock().unwrap() = base;
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    OAuthFixture { port, shared, task }
}
