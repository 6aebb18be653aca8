//! A minimal MCP client over the companion's socket, for `tools` and `call`.
//!
//! Neither hangs on a companion that accepts the connection but never answers (stopped with
//! SIGSTOP, wedged): the handshake and `tools/list` are answered within the quick-answer bound
//! ([`mcp_companion::ipc::quick`]) or fail saying so. A `tools/call` may legitimately run long
//! (the server's `toolTimeout`, moved by progress up to 10 ×, an approval wait, one retry), so
//! it has no total bound here; instead the companion must answer a `ping` within the quick bound
//! while the call runs, and the call fails when it does not.

use std::path::Path;

use anyhow::Context;
use mcp_companion::ipc::quick;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest,
    Implementation, JsonObject, PingRequest, ProtocolVersion, Tool,
};

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("mcp-companion-cli", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

type Client = rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>;

/// `step` (`what` the companion is asked for), failing when the companion does not answer
/// within the quick-answer bound.
async fn quickly<T>(
    what: &str,
    step: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    let bound = quick::bound();
    tokio::time::timeout(bound, step)
        .await
        .map_err(|_| anyhow::anyhow!(quick::unanswered(what, bound)))?
}

async fn connect(path: &Path) -> anyhow::Result<Client> {
    let stream = mcp_companion::ipc::socket::connect(path).await.with_context(|| {
        format!("no companion is running (nothing listens on {}): start one with `mcp-companion serve`", path.display())
    })?;
    // The same message-size limit as the companion's own sessions (rmcp's default is 16 MiB).
    let (rd, wr) = tokio::io::split(stream);
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new(rd, wr)
        .with_max_line_length(mcp_companion::upstream::MAX_MESSAGE_BYTES);
    quickly("the MCP handshake", async {
        client_info().serve(transport).await.map_err(|e| {
            anyhow::anyhow!(
                "MCP handshake with the companion failed: {}",
                mcp_companion::upstream::error_text::describe(&e)
            )
        })
    })
    .await
}

/// Resolves once the companion leaves a `ping` unanswered for the quick-answer bound; pings
/// every half bound while it answers.
async fn unresponsive(peer: &rmcp::Peer<rmcp::RoleClient>) -> anyhow::Error {
    let bound = quick::bound();
    loop {
        tokio::time::sleep(bound / 2).await;
        let ping = ClientRequest::PingRequest(PingRequest::default());
        // An error answer is an answer; a closed connection ends the call itself.
        if tokio::time::timeout(bound, peer.send_request(ping))
            .await
            .is_err()
        {
            return anyhow::anyhow!(
                "tools/call failed: {}; the call may or may not have run",
                quick::unanswered("a ping while the call ran", bound)
            );
        }
    }
}

/// Every wrapped tool, following `nextCursor`.
pub async fn list_tools(path: &Path) -> anyhow::Result<Vec<Tool>> {
    let client = connect(path).await?;
    let tools = quickly("tools/list", async {
        client.list_all_tools().await.context("tools/list failed")
    })
    .await?;
    let _ = client.cancel().await;
    Ok(tools)
}

/// One `tools/call`.
pub async fn call_tool(
    path: &Path,
    name: &str,
    args: JsonObject,
) -> anyhow::Result<CallToolResult> {
    let client = connect(path).await?;
    let call = client.call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args));
    let result = tokio::select! {
        result = call => result,
        e = unresponsive(client.peer()) => return Err(e),
    };
    let result = result
        .map_err(|e| {
            let why = mcp_companion::upstream::error_text::describe(&e);
            match e {
                // Sent, then the companion went away: it cannot say whether the call ran.
                rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_) => {
                    anyhow::anyhow!(
                        "tools/call failed: {why} (the companion went away); the call may or may not have run"
                    )
                }
                _ => anyhow::anyhow!("tools/call failed: {why}"),
            }
        })?;
    let _ = client.cancel().await;
    Ok(result)
}
