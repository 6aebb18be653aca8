//! The fast lane of a streamable HTTP session (MCP 2025-11-25 "Transports", Streamable HTTP):
//! an agent's `tools/call` sent as one POST on the session rmcp opened, from the calling task,
//! and its answer read there, without passing through rmcp's service loop and its worker.
//!
//! ```text
//!  fast call ──HttpTicket::call──▶ POST (the same client stack as rmcp's: SSRF guard, headers,
//!      ▲                            bearer token and refresh, "session gone" checks)
//!      │                                │
//!      └── the answer with our id ◀─────┤ JSON, or an event stream:
//!                                       └─ every other event (the server's requests and
//!                                          notifications) ──▶ rmcp, as if on its own stream
//! ```
//!
//! The POST carries the session id and the headers rmcp last attached ([`stamp::Stamp`]), the
//! request id `"fp-<n>"` (rmcp's ids are numbers) and the agent's request bytes. Everything the
//! client stack answers rmcp it answers here too: a 404 on the session fires
//! [`super::http::SessionGone`] and the call fails with [`CallError::SessionExpired`] (resent
//! on the next session), a refusal is quoted ([`super::http_failure::HttpFailure`]), a
//! signed-in server's 401 is refreshed below. A lane has no answer of its own to give: a call
//! fails with the same [`CallError`] the rmcp path would give it.

pub mod stamp;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use rmcp::model::{
    ClientJsonRpcMessage, GetExtensions, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use rmcp::service::{InboundStreamOrigin, ServiceError};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use rmcp::transport::{DynamicTransportError, StreamableHttpClientTransport};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use self::stamp::{Attached, Injected, Stamp, Stamped};
use super::bad_answer::BadAnswer;
use super::call::CallError;
use super::http::SessionGone;
use super::http_layer::{HttpError, PostAnswer};

/// rmcp's streamable HTTP transport on `C` with a fast lane beside it ([`transport`]).
pub type HttpLaneTransport<C> =
    Injected<StreamableHttpClientTransport<Stamped<super::http::SessionGuard<C>>>>;

/// rmcp's transport for `url` on `client` ([`super::http::transport`]) and the fast lane of
/// the session it will open.
pub fn transport<C>(
    client: C,
    url: &reqwest::Url,
    gone: SessionGone,
) -> (HttpLaneTransport<C>, HttpLane)
where
    C: StreamableHttpClient<Error = reqwest::Error> + Clone + Send + Sync + 'static,
{
    let stamp = Stamp::default();
    let guarded = super::http::SessionGuard {
        inner: client,
        layer: super::http::SessionCheck::new(gone.clone()),
    };
    let stamped = Stamped {
        inner: guarded.clone(),
        layer: stamp.clone(),
    };
    let (transport, inject) = Injected::new(super::http::transport_on(stamped, url));
    let lane = HttpLane::new(guarded, url, stamp, inject, gone);
    (transport, lane)
}

/// How long an answer's event stream is read after the answer ([`finish`]).
const DRAIN: std::time::Duration = std::time::Duration::from_millis(50);

/// Sends one message on the session (the client stack below rmcp).
type Post =
    Arc<dyn Fn(ClientJsonRpcMessage, Attached) -> BoxFuture<'static, PostAnswer> + Send + Sync>;

/// A handle on one streamable HTTP session's fast lane; cheap to clone.
#[derive(Clone)]
pub struct HttpLane {
    shared: Arc<Shared>,
}

struct Shared {
    post: Post,
    stamp: Stamp,
    inject: mpsc::UnboundedSender<ServerJsonRpcMessage>,
    gone: SessionGone,
    next: AtomicU64,
}

impl std::fmt::Debug for HttpLane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpLane")
            .field("ended", &self.ended())
            .finish()
    }
}

impl HttpLane {
    /// The lane of the session whose rmcp transport was built on `client` (below
    /// [`stamp::Stamped`]) for `uri`: `stamp` learns the session, `inject` reaches rmcp
    /// ([`stamp::Injected`]), `gone` fires when the server forgets the session.
    pub fn new<C>(
        client: C,
        uri: &reqwest::Url,
        stamp: Stamp,
        inject: mpsc::UnboundedSender<ServerJsonRpcMessage>,
        gone: SessionGone,
    ) -> HttpLane
    where
        C: StreamableHttpClient<Error = reqwest::Error> + Clone + Send + Sync + 'static,
    {
        let uri: Arc<str> = uri.as_str().into();
        let post: Post = Arc::new(move |message, attached: Attached| {
            let client = client.clone();
            let uri = uri.clone();
            Box::pin(async move {
                client
                    .post_message_with_response_limits(
                        uri,
                        message,
                        Some(attached.session),
                        attached.auth,
                        attached.headers,
                        StreamableHttpResponseLimits::default(),
                    )
                    .await
            })
        });
        HttpLane {
            shared: Arc::new(Shared {
                post,
                stamp,
                inject,
                gone,
                next: AtomicU64::new(1),
            }),
        }
    }

    /// Whether the session ended (rmcp's transport is gone, or the server forgot the session).
    pub fn ended(&self) -> bool {
        self.shared.inject.is_closed() || self.shared.gone.is_fired()
    }

    /// A new fast-lane request on the session, or `None` when the lane cannot carry one (the
    /// session ended, or rmcp has not attached a request to it yet): nothing was sent.
    pub fn open(&self) -> Option<HttpTicket> {
        if self.ended() {
            return None;
        }
        let attached = self.shared.stamp.get()?;
        let n = self.shared.next.fetch_add(1, Ordering::Relaxed);
        Some(HttpTicket {
            lane: self.clone(),
            n,
            attached,
        })
    }
}

/// One fast-lane request: its id and the session it goes on.
pub struct HttpTicket {
    lane: HttpLane,
    n: u64,
    attached: Attached,
}

/// The members of an event that tell an answer from the server's own messages.
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
}

impl HttpTicket {
    /// The request id as JSON: `"fp-<n>"`, quotes included.
    pub fn id_json(&self) -> String {
        format!("\"fp-{}\"", self.n)
    }

    /// The request id.
    pub fn id(&self) -> RequestId {
        RequestId::String(format!("fp-{}", self.n).into())
    }

    /// POSTs `frame` (one JSON-RPC request carrying [`Self::id_json`]) and returns the
    /// server's answer to it (a JSON-RPC response or error, as bytes). Other messages on the
    /// answer's event stream go to rmcp. Dropping the future abandons the request.
    ///
    /// # Errors
    /// The [`CallError`] the rmcp path gives the same failure.
    pub async fn call(&self, frame: &[u8]) -> Result<Vec<u8>, CallError> {
        let message: ClientJsonRpcMessage =
            serde_json::from_slice(frame).map_err(|e| CallError::Arguments {
                reason: e.to_string(),
            })?;
        let answer = (self.lane.shared.post)(message, self.attached.clone()).await;
        match answer.map_err(classify)? {
            StreamableHttpPostResponse::Json(message, _) => {
                // The client below already fails an answer under another id; this one would
                // answer another of rmcp's requests.
                if let Some(bad) = BadAnswer::not_the_answer(&self.id(), None, &message) {
                    self.hand_on(message);
                    return Err(CallError::BadAnswer(bad));
                }
                serde_json::to_vec(&message).map_err(|e| CallError::Unexpected {
                    what: e.to_string(),
                })
            }
            StreamableHttpPostResponse::Sse(mut events, _) => {
                let ours = self.id_json();
                while let Some(event) = events.next().await {
                    let event = event.map_err(|e| CallError::Transport {
                        reason: crate::net::scrub(&e.to_string()),
                    })?;
                    let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                        // A priming event (an id to resume from) or a comment.
                        continue;
                    };
                    if let Ok(peek) = serde_json::from_str::<Peek<'_>>(&data)
                        && peek.method.is_none()
                        && peek.id.is_some_and(|id| id.get() == ours)
                    {
                        finish(events);
                        return Ok(data.into_bytes());
                    }
                    match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                        // Our id, spelt another way (escaped).
                        Ok(message) if self.answers(&message) => {
                            finish(events);
                            return Ok(data.into_bytes());
                        }
                        Ok(mut message) => {
                            // The stream tells whose call a request belongs to (as rmcp marks
                            // its own streams' requests): [`super::askers`] picks by it.
                            if let JsonRpcMessage::Request(request) = &mut message {
                                request
                                    .request
                                    .extensions_mut()
                                    .insert(InboundStreamOrigin::OutboundRequest(self.id()));
                            }
                            self.hand_on(message);
                        }
                        Err(e) => tracing::debug!(error = %e, "skipped an unreadable event"),
                    }
                }
                Err(CallError::Transport {
                    reason: "the answer's event stream ended before the answer".into(),
                })
            }
            // `Accepted`: the client below fails a request answered so
            // ([`BadAnswer::NoResult`]); the same text if another client does not.
            _ => Err(CallError::BadAnswer(BadAnswer::NoResult { status: 202 })),
        }
    }

    /// Whether `message` is the answer to this request.
    fn answers(&self, message: &ServerJsonRpcMessage) -> bool {
        let id = self.id();
        match message {
            JsonRpcMessage::Response(r) => r.id == id,
            JsonRpcMessage::Error(e) => e.id.as_ref() == Some(&id),
            _ => false,
        }
    }

    /// Gives rmcp a message the server sent during the call.
    fn hand_on(&self, message: ServerJsonRpcMessage) {
        if self.lane.shared.inject.send(message).is_err() {
            tracing::debug!("the session ended: a message of the server's was dropped");
        }
    }

    /// Sends `notifications/cancelled` for this request with `reason`, in the background.
    pub fn cancel(self, reason: &str) {
        let note = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": { "requestId": format!("fp-{}", self.n), "reason": reason },
        });
        let Ok(message) = serde_json::from_value::<ClientJsonRpcMessage>(note) else {
            return;
        };
        let post = (self.lane.shared.post)(message, self.attached);
        tokio::spawn(async move {
            if let Err(e) = post.await {
                tracing::debug!(error = %e, "could not send notifications/cancelled upstream");
            }
        });
    }
}

/// Reads the rest of an answer's event stream, so its HTTP/1.1 connection goes back to the
/// pool (a body dropped before its end closes the connection): at once when the end is
/// already here, else in the background for at most 50 ms (as rmcp does).
fn finish(mut events: super::http_layer::SseStream) {
    loop {
        match events.next().now_or_never() {
            Some(Some(_)) => {}
            Some(None) => return,
            None => break,
        }
    }
    tokio::spawn(async move {
        let _ = tokio::time::timeout(DRAIN, async { while events.next().await.is_some() {} }).await;
    });
}

/// `e` as the rmcp path classifies the same failure of its transport.
fn classify(e: HttpError) -> CallError {
    let e = ServiceError::TransportSend(DynamicTransportError::from_parts(
        "streamable-http",
        std::any::TypeId::of::<HttpLane>(),
        Box::new(e),
    ));
    super::call::classify(e)
}
