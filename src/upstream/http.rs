//! Streamable HTTP upstream (MCP 2025-03-26 and later, "Streamable HTTP") on rmcp's transport
//! and our client on the guarded `reqwest::Client` ([`super::http_client::GuardedHttp`]).
//!
//! rmcp keeps `Mcp-Session-Id`, accepts JSON and event-stream answers, opens the GET stream for
//! server-initiated notifications, and sends `DELETE` with the session id when the transport
//! closes. The config `headers` ride on the client as default headers, so they go out on every
//! request and same-origin redirect; a redirect to another origin is refused
//! ([`crate::net::CrossOriginRedirect`]).
//!
//! **A session the server no longer knows.** A restarted server answers the old session id
//! with HTTP 404 (the spec's answer) or, like the TypeScript SDK's servers, with HTTP 400 and a
//! JSON-RPC error without an `id` ("Bad Request: No valid session ID provided"). rmcp turns a
//! 404 into `SessionExpired` but forwards the 400's id-less error as a message nobody waits for,
//! so the call would sit out its whole `toolTimeout`. [`SessionCheck`] wraps the HTTP client and
//! treats both alike: the request that got the answer fails with `SessionExpired` (the server
//! did not run it), and the session's [`SessionGone`] fires, which ends the [`super::Session`]
//! so the supervisor reconnects (initialize, list, announce) and `status` shows it. A GET
//! event stream refused with 400/404 on our session id fires it too, and so does one whose
//! connection is refused (the server is gone, and its sessions with it). rmcp's own silent
//! re-initialisation is switched off: nobody would re-list or tell agents.

use std::sync::{Arc, Mutex};

use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId};
use rmcp::service::ServiceError;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
    StreamableHttpPostResponse,
};
use tokio_util::sync::CancellationToken;

use super::http_failure::HttpFailure;
use super::http_layer::{HttpError, HttpLayer, Layered, PostAnswer, SseStream};

/// The HTTP client `C` with [`SessionCheck`] around it.
pub type SessionGuard<C> = Layered<C, SessionCheck>;

/// The transport for `url` on `client` ([`super::http_client::GuardedHttp`], or
/// [`super::signed_in::SignedInClient`] on top of it for a signed-in server), reporting
/// a forgotten session to `gone`.
pub fn transport<C>(
    client: C,
    url: &reqwest::Url,
    gone: SessionGone,
) -> StreamableHttpClientTransport<SessionGuard<C>>
where
    C: StreamableHttpClient<Error = reqwest::Error> + Sync,
{
    transport_on(
        Layered {
            inner: client,
            layer: SessionCheck { gone },
        },
        url,
    )
}

/// rmcp's transport for `url` on `client`, which already checks sessions ([`SessionGuard`]),
/// with rmcp's own re-initialisation off.
pub fn transport_on<C>(client: C, url: &reqwest::Url) -> StreamableHttpClientTransport<C>
where
    C: StreamableHttpClient,
{
    let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
        .reinit_on_expired_session(false);
    StreamableHttpClientTransport::with_client(client, config)
}

/// Why a session ended under a healthy-looking connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gone {
    /// The server no longer knows our session; what it said, e.g. `HTTP 400: Bad Request: No
    /// valid session ID provided`.
    Session(String),
    /// The sign-in is no longer valid (a 401 the refresh could not fix,
    /// [`super::signed_in`]): the server needs a new sign-in.
    SignIn {
        /// What happened and the command that fixes it, quoting the servers (masked).
        why: String,
        /// The 401's `WWW-Authenticate`, for the next `login`.
        challenge: Option<String>,
    },
}

/// Fires once when the session ends under a healthy-looking connection; says why.
#[derive(Clone, Debug, Default)]
pub struct SessionGone {
    fired: CancellationToken,
    what: Arc<Mutex<Option<Gone>>>,
}

impl SessionGone {
    /// Records `what` the server said (the first answer wins) and fires.
    fn fire(&self, what: String) {
        tracing::info!(answer = %what, "the server no longer knows our session");
        self.fire_gone(Gone::Session(what));
    }

    /// Records why the session ended (the first reason wins) and fires.
    pub fn fire_gone(&self, why: Gone) {
        if let Ok(mut slot) = self.what.lock()
            && slot.is_none()
        {
            *slot = Some(why);
        }
        self.fired.cancel();
    }

    /// Whether it fired.
    pub fn is_fired(&self) -> bool {
        self.fired.is_cancelled()
    }

    /// Resolves once fired, with why.
    pub async fn wait(&self) -> Gone {
        self.fired.cancelled().await;
        self.what
            .lock()
            .ok()
            .and_then(|w| w.clone())
            .unwrap_or_else(|| Gone::Session("the server ended the session".to_owned()))
    }
}

/// Whether `e` means the server no longer knows our session (see the module docs).
pub fn is_session_expired(e: &ServiceError) -> bool {
    let ServiceError::TransportSend(dynamic) = e else {
        return false;
    };
    chain(dynamic.error.as_ref()).any(|err| {
        matches!(
            err.downcast_ref::<HttpError>(),
            Some(StreamableHttpError::SessionExpired)
        )
    })
}

/// Whether a request whose send failed with `e` may still have reached the server: an HTTP
/// request that went out and then lost its answer (streamable HTTP, or a legacy SSE POST,
/// [`super::sse::MaybeDelivered`]). A refused connection, a session-gone answer, a legacy SSE
/// POST the server refused, and a failed write to a stdio pipe mean it did not.
pub fn maybe_delivered(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut http = false;
    for err in chain(e) {
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && io
                .get_ref()
                .is_some_and(|inner| inner.is::<super::sse::MaybeDelivered>())
        {
            return true;
        }
        if let Some(r) = err.downcast_ref::<reqwest::Error>() {
            if r.is_connect() || r.is_builder() {
                return false;
            }
            http = true;
        }
        match err.downcast_ref::<HttpError>() {
            Some(StreamableHttpError::SessionExpired) => return false,
            // rmcp's `Client` variant does not give its error as a source: look inside.
            Some(StreamableHttpError::Client(r)) if r.is_connect() || r.is_builder() => {
                return false;
            }
            Some(_) => http = true,
            None => {}
        }
    }
    http
}

fn chain<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(e), |err| err.source())
}

/// Whether a server's error text is about the session (the TypeScript SDK: "Bad Request: No
/// valid session ID provided"; others: "Session not found", "invalid session").
fn names_the_session(text: &str) -> bool {
    text.to_ascii_lowercase().contains("session")
}

/// The id of `message` when it is a request (an answer is expected).
fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        JsonRpcMessage::Request(r) => Some(r.id.clone()),
        _ => None,
    }
}

/// Recognises "this session is gone" answers (see the module docs).
#[derive(Clone)]
pub struct SessionCheck {
    gone: SessionGone,
}

impl SessionCheck {
    /// The check reporting to `gone`.
    pub fn new(gone: SessionGone) -> SessionCheck {
        SessionCheck { gone }
    }

    /// Turns a session-gone answer to a POST that carried our session id into
    /// `SessionExpired`, firing [`SessionGone`].
    ///
    /// Any other error without an `id` answering a request is given that request's id: it is
    /// the server's answer to it (an HTTP 4xx/5xx whose body is a JSON-RPC error), and without
    /// the id the caller would wait out its whole `toolTimeout` instead of reading it.
    fn check_post(
        &self,
        request: Option<RequestId>,
        attached: bool,
        answer: PostAnswer,
    ) -> PostAnswer {
        let answer = match (answer, request) {
            (
                Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(mut e), session)),
                Some(id),
            ) if e.id.is_none() && !(attached && names_the_session(&e.error.message)) => {
                e.id = Some(id);
                return Ok(StreamableHttpPostResponse::Json(
                    JsonRpcMessage::Error(e),
                    session,
                ));
            }
            (answer, _) => answer,
        };
        if !attached {
            return answer;
        }
        let what = match &answer {
            Err(StreamableHttpError::SessionExpired) => "HTTP 404 Not Found".to_owned(),
            // The TypeScript SDK: 400 with `{"jsonrpc":"2.0","error":{…}}` and no id. Nobody
            // could match an id-less error to our request: it is the answer to this POST.
            Ok(StreamableHttpPostResponse::Json(JsonRpcMessage::Error(e), _))
                if e.id.is_none() && names_the_session(&e.error.message) =>
            {
                format!("{} (JSON-RPC error {})", e.error.message, e.error.code.0)
            }
            // The same 400 with a body that is not JSON-RPC.
            Err(e)
                if HttpFailure::of(e)
                    .is_some_and(|f| f.status == 400 && names_the_session(&f.body)) =>
            {
                super::error_text::describe(e)
            }
            _ => return answer,
        };
        self.gone.fire(crate::net::scrub(&what));
        Err(StreamableHttpError::SessionExpired)
    }

    /// A GET event stream refused with 400/404 on our session id means the session is gone,
    /// and so does one whose connection is refused: rmcp re-opens a broken event stream
    /// (after 1 s, 2 s, 4 s, … without end), and a server that no longer accepts connections
    /// has lost the session with its process. rmcp decides what to do with the stream; the
    /// session ends either way, so `status` shows it without waiting for a call.
    fn check_get(
        &self,
        attached: bool,
        answer: Result<SseStream, HttpError>,
    ) -> Result<SseStream, HttpError> {
        let (true, Err(error)) = (attached, &answer) else {
            return answer;
        };
        if let Some(refused) = HttpFailure::of(error).filter(|f| matches!(f.status, 400 | 404)) {
            self.gone
                .fire(format!("the event stream was refused: {refused}"));
        } else if let StreamableHttpError::Client(e) = error
            && e.is_connect()
        {
            self.gone.fire(format!(
                "the event stream could not be opened again: {}",
                super::error_text::describe(e)
            ));
        }
        answer
    }
}

impl HttpLayer for SessionCheck {
    async fn post<F, Fut>(
        &self,
        message: &ClientJsonRpcMessage,
        attached: bool,
        send: F,
    ) -> PostAnswer
    where
        F: Fn() -> Fut + Send + Sync,
        Fut: Future<Output = PostAnswer> + Send,
    {
        let request = request_id(message);
        let answer = send().await;
        self.check_post(request, attached, answer)
    }

    fn get(
        &self,
        attached: bool,
        answer: Result<SseStream, HttpError>,
    ) -> Result<SseStream, HttpError> {
        self.check_get(attached, answer)
    }
}

#[cfg(test)]
#[path = "http_tests.rs"]
mod tests;
