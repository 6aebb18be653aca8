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
use tokio::sync::mpsc;

use crate::upstream::http_layer::{HttpLayer, Layered};

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
    /// The session rmcp last attached a request to, if any.
    pub fn get(&self) -> Option<Attached> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The client `inner` recording into its [`Stamp`] what rmcp attaches to each POST; its GETs
/// and DELETEs pass straight through.
pub type Stamped<C> = Layered<C, Stamp>;

impl HttpLayer for Stamp {
    /// Keeps what rmcp attached to a POST that carries a session id.
    fn attach(
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
