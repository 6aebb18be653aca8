//! A layer around rmcp's streamable HTTP client ([`StreamableHttpClient`]): one place that
//! forwards every request kind, so each layer writes only what it adds around a POST or a GET.
//!
//! Two layers use it: [`super::http::SessionCheck`] (answers meaning "this session is gone") and
//! [`super::signed_in::SignInWatch`] (refusals of a signed-in server). A signed-in server
//! stacks both: `Layered<Layered<AuthClient<reqwest::Client>, SignInWatch>, SessionCheck>`.

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

/// What one layer does around the POSTs and GETs of the client below it.
pub trait HttpLayer: Clone + Send + Sync + 'static {
    /// Sends `message` by awaiting `send()` — once, or again to send the same request anew — and
    /// returns the answer rmcp gets. `attached`: the request carries an `Mcp-Session-Id`.
    fn post<F, Fut>(
        &self,
        message: &ClientJsonRpcMessage,
        attached: bool,
        send: F,
    ) -> impl Future<Output = PostAnswer> + Send
    where
        F: Fn() -> Fut + Send + Sync,
        Fut: Future<Output = PostAnswer> + Send;

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
        let attached = session_id.is_some();
        self.layer
            .post(&message, attached, || {
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
    ) -> PostAnswer {
        let attached = session_id.is_some();
        self.layer
            .post(&message, attached, || {
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
    ) -> PostAnswer {
        let attached = session_id.is_some();
        self.layer
            .post(&message, attached, || {
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
