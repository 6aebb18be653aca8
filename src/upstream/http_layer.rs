//! A layer around rmcp's streamable HTTP client ([`StreamableHttpClient`]): one place that
//! forwards every request kind, so each layer writes only what it adds around a POST or a GET.
//!
//! Three layers use it: [`super::http::SessionCheck`] (answers meaning "this session is gone"),
//! [`super::signed_in::SignInWatch`] (refusals of a signed-in server) and
//! [`super::http_lane::stamp::Stamp`] (what rmcp attaches to a POST, for the fast lane). A
//! signed-in server stacks all three:
//! `Layered<Layered<Layered<AuthClient<GuardedHttp>, SignInWatch>, SessionCheck>, Stamp>`.

use std::collections::HashMap;
use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

/// An error of the streamable HTTP client on `reqwest`.
pub type HttpError = StreamableHttpError<reqwest::Error>;
/// What a POST gives rmcp: the answer (JSON, an event stream, or accepted) or the error.
pub type PostAnswer = Result<StreamableHttpPostResponse, HttpError>;
/// The server's event stream (a GET, or a POST answered with `text/event-stream`).
pub type SseStream =
    futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;

/// The custom headers rmcp adds to a request (`MCP-Protocol-Version` and any other).
type Headers = HashMap<HeaderName, HeaderValue>;

/// What one layer does around the POSTs and GETs of the client below it.
pub trait HttpLayer: Clone + Send + Sync + 'static {
    /// Sends `message` by awaiting `send()` — once, or again to send the same request anew — and
    /// returns the answer rmcp gets. `attached`: the request carries an `Mcp-Session-Id`.
    /// Sent once and answered as the client below answered, unless the layer says otherwise.
    fn post<F, Fut>(
        &self,
        message: &ClientJsonRpcMessage,
        attached: bool,
        send: F,
    ) -> impl Future<Output = PostAnswer> + Send
    where
        F: Fn() -> Fut + Send + Sync,
        Fut: Future<Output = PostAnswer> + Send,
    {
        let _ = (message, attached);
        send()
    }

    /// Sees what rmcp attached to a POST (its session, its own auth header and its custom
    /// headers) before [`HttpLayer::post`] sends it; nothing unless the layer says otherwise.
    fn attach(
        &self,
        session_id: Option<&Arc<str>>,
        auth_header: &Option<String>,
        custom_headers: &HashMap<HeaderName, HeaderValue>,
    ) {
        let _ = (session_id, auth_header, custom_headers);
    }

    /// The answer rmcp gets for a GET event stream that was answered `answer`; unchanged unless
    /// the layer says otherwise.
    fn get(
        &self,
        attached: bool,
        answer: Result<SseStream, HttpError>,
    ) -> Result<SseStream, HttpError> {
        let _ = attached;
        answer
    }
}

/// The client `inner` with `layer` around its POSTs and GETs; `DELETE` passes straight through.
#[derive(Clone)]
pub struct Layered<C, L> {
    /// The client below (the guarded `reqwest::Client`, rmcp's `AuthClient`, or another layer).
    pub inner: C,
    /// What is added around its requests.
    pub layer: L,
}

impl<C, L: HttpLayer> Layered<C, L> {
    /// A POST of `message` with what rmcp attached to it, through the layer: `send` makes one
    /// request of the client below from a copy of these parts, as often as the layer sends it.
    async fn post<F, Fut>(
        &self,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
        send: F,
    ) -> PostAnswer
    where
        F: Fn(ClientJsonRpcMessage, Option<Arc<str>>, Option<String>, Headers) -> Fut + Send + Sync,
        Fut: Future<Output = PostAnswer> + Send,
    {
        self.layer
            .attach(session_id.as_ref(), &auth_header, &custom_headers);
        self.layer
            .post(&message, session_id.is_some(), || {
                send(
                    message.clone(),
                    session_id.clone(),
                    auth_header.clone(),
                    custom_headers.clone(),
                )
            })
            .await
    }
}

impl<C, L> StreamableHttpClient for Layered<C, L>
where
    C: StreamableHttpClient<Error = reqwest::Error> + Sync,
    L: HttpLayer,
{
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> PostAnswer {
        self.post(
            message,
            session_id,
            auth_header,
            custom_headers,
            |m, s, a, h| self.inner.post_message(uri.clone(), m, s, a, h),
        )
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
    ) -> PostAnswer {
        self.post(
            message,
            session_id,
            auth_header,
            custom_headers,
            |m, s, a, h| {
                self.inner.post_message_with_max_sse_event_size(
                    uri.clone(),
                    m,
                    s,
                    a,
                    h,
                    max_sse_event_size,
                )
            },
        )
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
    ) -> PostAnswer {
        self.post(
            message,
            session_id,
            auth_header,
            custom_headers,
            |m, s, a, h| {
                self.inner
                    .post_message_with_response_limits(uri.clone(), m, s, a, h, limits)
            },
        )
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
    ) -> Result<SseStream, HttpError> {
        let attached = session_id.is_some();
        let answer = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await;
        self.layer.get(attached, answer)
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, HttpError> {
        let attached = session_id.is_some();
        let answer = self
            .inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.layer.get(attached, answer)
    }
}
