//! The Tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663) toward a
//! server of that era: `tools/call`, `tasks/get`, `tasks/update` and `tasks/cancel`, each
//! declaring the extension in the request's `_meta` capabilities.
//!
//! The extension is negotiated per request: "A server **MUST NOT** return `CreateTaskResult`
//! to a client that did not include the extension capability on its request", and a server
//! answers -32021 to `tasks/*` of a client that did not declare it. The companion's ordinary
//! requests do not declare it (an agent that cannot take a task must get a result), so only
//! the requests made for an agent that takes tasks, sent here, do: the companion's own
//! capabilities ([`super::handler::capabilities`]) plus the extension.

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelTaskParams, CancelTaskRequest, ClientRequest,
    GetTaskParams, GetTaskRequest, GetTaskResult, InputResponses, JsonObject, RequestMetaObject,
    ServerResult, TASKS_EXTENSION_ID, UpdateTaskParams, UpdateTaskRequest,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleClient};

/// Whether the session `peer` speaks 2026-07-28 and its server declared the extension (in
/// its `server/discover` answer).
pub fn offered(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| {
        super::era::is_modern(&info.protocol_version) && info.capabilities.supports_tasks()
    })
}

/// `tools/call` of the server's tool `name` with `arguments`, declaring the extension: the
/// server's answer, a `CreateTaskResult`, a `CallToolResult` or an `InputRequiredResult`.
///
/// # Errors
/// The server's JSON-RPC error; [`ServiceError::Timeout`] after `timeout`; a transport error.
pub async fn call(
    peer: &Peer<RoleClient>,
    name: &str,
    arguments: Option<JsonObject>,
    timeout: Duration,
) -> Result<ServerResult, ServiceError> {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    send(peer, request, timeout).await
}

/// `tasks/get` of the server's task `id`.
///
/// # Errors
/// As [`call`]; [`ServiceError::UnexpectedResponse`] for an answer that is no task.
pub async fn get(
    peer: &Peer<RoleClient>,
    id: &str,
    timeout: Duration,
) -> Result<GetTaskResult, ServiceError> {
    let params = GetTaskParams::new(id);
    let request = ClientRequest::GetTaskRequest(GetTaskRequest::new(params));
    match send(peer, request, timeout).await? {
        ServerResult::GetTaskResult(task) => Ok(task),
        _ => Err(ServiceError::UnexpectedResponse),
    }
}

/// `tasks/update` of the server's task `id` with `responses`.
///
/// # Errors
/// As [`call`].
pub async fn update(
    peer: &Peer<RoleClient>,
    id: &str,
    responses: InputResponses,
    timeout: Duration,
) -> Result<(), ServiceError> {
    let params = UpdateTaskParams::new(id, responses);
    let request = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(params));
    send(peer, request, timeout).await.map(drop)
}

/// `tasks/cancel` of the server's task `id`.
///
/// # Errors
/// As [`call`].
pub async fn cancel(
    peer: &Peer<RoleClient>,
    id: &str,
    timeout: Duration,
) -> Result<(), ServiceError> {
    let params = CancelTaskParams::new(id);
    let request = ClientRequest::CancelTaskRequest(CancelTaskRequest::new(params));
    send(peer, request, timeout).await.map(drop)
}

/// Sends `request` with the companion's capabilities plus the extension in its `_meta`.
async fn send(
    peer: &Peer<RoleClient>,
    request: ClientRequest,
    timeout: Duration,
) -> Result<ServerResult, ServiceError> {
    let mut capabilities = super::handler::capabilities();
    (capabilities.extensions.get_or_insert_with(Default::default))
        .insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
    let mut meta = RequestMetaObject::default();
    meta.set_client_capabilities(capabilities);
    let mut options = PeerRequestOptions::with_timeout(timeout);
    options.meta = Some(meta);
    peer.send_request_with_option(request, options)
        .await?
        .await_response()
        .await
}
