//! A session with a server at the other end of an in-process stream: no process, no network,
//! the same handshake as every transport.

use std::time::Duration;

use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::DuplexStream;
use tokio::sync::mpsc;

use super::{Opened, failed, handshake};
use crate::upstream::ask::AskContext;
use crate::upstream::handler::UpstreamHandler;
use crate::upstream::progress::ProgressRoutes;
use crate::upstream::session::Session;
use crate::upstream::{ConnectError, MAX_MESSAGE_BYTES};

/// A session with a server at the other end of an in-process stream (an embedded server, or a
/// test's fake): the same handshake as every transport, within `timeout`, no process; the
/// server's requests are answered through `asks`.
///
/// # Errors
/// [`ConnectError::Initialize`], [`ConnectError::List`] or [`ConnectError::Timeout`].
pub async fn connect_stream(
    stream: DuplexStream,
    progress: ProgressRoutes,
    asks: AskContext,
    timeout: Duration,
) -> Result<Session, ConnectError> {
    let (events_tx, events) = mpsc::unbounded_channel();
    let logs = asks.logs();
    let handler = UpstreamHandler::new(events_tx, asks);
    let (rd, wr) = tokio::io::split(stream);
    let opened = Opened::Stream(progress.tap(
        AsyncRwTransport::new(rd, wr).with_max_line_length(MAX_MESSAGE_BYTES),
        logs,
    ));
    let (service, listing) = tokio::time::timeout(timeout, handshake(handler, opened))
        .await
        .map_err(|_| ConnectError::Timeout {
            timeout,
            stderr: Vec::new(),
        })?
        .map_err(|e| failed(e.stage, e.reason, Vec::new(), None))?;
    Ok(Session::new(service, listing, None, events))
}
