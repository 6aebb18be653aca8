//! A minimal MCP client over the companion's socket, for `tools` and `call`.

use std::path::Path;

use anyhow::Context;
use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    JsonObject, ProtocolVersion, Tool,
};

fn client_info() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("mcp-companion-cli", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

async fn connect(
    path: &Path,
) -> anyhow::Result<rmcp::service::RunningService<rmcp::RoleClient, ClientConfig>> {
    let stream = mcp_companion::ipc::socket::connect(path).await.with_context(|| {
        format!("no companion is running (nothing listens on {}): start one with `mcp-companion serve`", path.display())
    })?;
    // The same message-size limit as the companion's own sessions (rmcp's default is 16 MiB).
    let (rd, wr) = tokio::io::split(stream);
    let transport = rmcp::transport::async_rw::AsyncRwTransport::new(rd, wr)
        .with_max_line_length(mcp_companion::upstream::MAX_MESSAGE_BYTES);
    client_info().serve(transport).await.map_err(|e| {
        anyhow::anyhow!(
            "MCP handshake with the companion failed: {}",
            mcp_companion::upstream::error_text::describe(&e)
        )
    })
}

/// Every wrapped tool, following `nextCursor`.
pub async fn list_tools(path: &Path) -> anyhow::Result<Vec<Tool>> {
    let client = connect(path).await?;
    let tools = client.list_all_tools().await.context("tools/list failed")?;
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
    let result = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
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
