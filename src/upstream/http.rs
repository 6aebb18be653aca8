//! Streamable HTTP upstream (MCP 2025-03-26 and later, "Streamable HTTP") on rmcp's client and
//! our guarded `reqwest::Client`.
//!
//! rmcp keeps `Mcp-Session-Id`, accepts JSON and event-stream answers, opens the GET stream for
//! server-initiated notifications, and sends `DELETE` with the session id when the transport
//! closes. The config `headers` ride on the client as default headers, so they go out on every
//! request and same-origin redirect; a redirect to another origin is refused
//! ([`crate::net::CrossOriginRedirect`]).
//!
//! Session expiry (HTTP 404 on a known session id): rmcp can silently re-initialize, but then
//! nobody re-lists or tells agents. We switch that off and treat [`is_session_expired`] errors
//! as "session gone": the supervisor reconnects (initialize, list, announce) and the hub
//! retries the call once (DESIGN §7).

use rmcp::service::ServiceError;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
};

/// The transport for `url` on `client` (the guarded `reqwest::Client`, or
/// [`crate::auth::transport::SignedInClient`] on top of it for a signed-in server).
pub fn transport<C: StreamableHttpClient>(
    client: C,
    url: &reqwest::Url,
) -> StreamableHttpClientTransport<C> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
        .reinit_on_expired_session(false);
    StreamableHttpClientTransport::with_client(client, config)
}

/// Whether `e` means the server no longer knows our session (HTTP 404 on a session id).
pub fn is_session_expired(e: &ServiceError) -> bool {
    let ServiceError::TransportSend(dynamic) = e else {
        return false;
    };
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(dynamic.error.as_ref());
    while let Some(err) = cur {
        if matches!(
            err.downcast_ref::<StreamableHttpError<reqwest::Error>>(),
            Some(StreamableHttpError::SessionExpired)
        ) {
            return true;
        }
        cur = err.source();
    }
    false
}
