//! What the fast lane needs from rmcp's streamable HTTP session, learnt from rmcp's own
//! requests ([`Stamped`]), and the way back into rmcp for what the lane reads but does not
//! answer ([`Injected`]).
//!
//! rmcp keeps the session id and the headers it adds after `initialize` (`MCP-Protocol-Version`)
//! inside its worker. [`Stamped`] sits between rmcp and the client stack and copies them from
//! every request that carries a session id, so a fast-lane POST goes out exactly as rmcp's own
//! would (the client stack below adds the configured headers, a bearer token and the SSRF
//! guard to both alike).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use http::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpResponseLimits};
use tokio::sync::mpsc;

use crate::upstream::http_layer::{HttpError, PostAnswer, SseStream};

/// The session rmcp attached its last request to: its id, the `Authorization` rmcp set (none
/// unless configured in rmcp) and rmcp's custom headers.
#[derive(Clone, Debug)]
pub struct Attached {
    /// `Mcp-Session-Id`.
    pub session: Arc<str>,
    /// rmcp's own auth header (a signed-in client adds its token below, not here).
    pub auth: Option<String>,
    /// `MCP-Protocol-Version` and any other header rmcp adds.
    pub headers: HashMap<HeaderName, HeaderValue>,
}

/// The last [`Attached`] seen; shared by [`Stamped`] and the lane.
#[derive(Clone, Debug, Default)]
pub struct Stamp(Arc<Mutex<Option<Attached>>>);

impl Stamp {
    fn record(
        &self,
        session: Option<&Arc<str>>,
        auth: &Option<String>,
        headers: &HashMap<HeaderName, HeaderValue>,
    ) {
        let Some(session) = session else { return };
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        // Unchanged after the handshake: compare before cloning the headers.
        if slot
            .as_ref()
            .is_some_and(|a| a.session == *session && a.auth == *auth && a.headers == *headers)
        {
            return;
        }
        *slot = Some(Attached {
            session: session.clone(),
            auth: auth.clone(),
            headers: headers.clone(),
        });
    }

    /// The session rmcp last attached a request to, if any.
    pub fn get(&self) -> Option<Attached> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The client `inner` recording into `stamp` what rmcp attaches to each request.
#[derive(Clone)]
pub struct Stamped<C> {
    /// The client stack below ([`super::super::http::SessionGuard`]).
    pub inner: C,
    /// Where the session is recorded.
    pub stamp: Stamp,
}

impl<C> StreamableHttpClient for Stamped<C>
where
    C: StreamableHttpClient<Error = reqwest::Error> + Sync,
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
        self.stamp
            .record(session_id.as_ref(), &auth_header, &custom_headers);
        self.inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
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
        self.stamp
            .record(session_id.as_ref(), &auth_header, &custom_headers);
        self.inner
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
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
        self.stamp
            .record(session_id.as_ref(), &auth_header, &custom_headers);
        self.inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
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
    ) -> Result<SseStream, HttpError> {
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

/// rmcp's transport `inner`, also receiving the messages the fast lane hands it: the server's
/// requests and notifications that arrived on a fast-lane POST's event stream.
pub struct Injected<T> {
    inner: T,
    injected: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
    /// `false` once every sender is gone.
    open: bool,
}

impl<T> Injected<T> {
    /// `inner`, and the sender the lane hands messages to.
    pub fn new(inner: T) -> (Injected<T>, mpsc::UnboundedSender<ServerJsonRpcMessage>) {
        let (tx, injected) = mpsc::unbounded_channel();
        let transport = Injected {
            inner,
            injected,
            open: true,
        };
        (transport, tx)
    }
}

impl<T> Transport<RoleClient> for Injected<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if !self.open {
                return self.inner.receive().await;
            }
            // Both receives are channel reads: cancel-safe.
            tokio::select! {
                biased;
                message = self.inner.receive() => return message,
                message = self.injected.recv() => match message {
                    Some(message) => return Some(message),
                    None => self.open = false,
                },
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
