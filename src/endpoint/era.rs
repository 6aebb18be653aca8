//! The two protocol eras an agent may speak to the endpoint (MCP 2025-11-25 "Lifecycle" and
//! MCP 2026-07-28 "Stateless requests"), and what each one gets.
//!
//! | era | how the agent starts | what differs |
//! |---|---|---|
//! | `initialize` (2024-11-05 … 2025-11-25) | `initialize`, then `notifications/initialized` | server-initiated requests (`elicitation/create`, `sampling/createMessage`, `roots/list`) go to it while its call is in flight, also those a 2026-07-28 server asks by `InputRequiredResult` ([`crate::upstream::mrtr`]); `notifications/tools/list_changed` is pushed on the connection |
//! | 2026-07-28 | `server/discover` (optional), then requests whose `_meta` carries `io.modelcontextprotocol/protocolVersion`, `clientInfo` and `clientCapabilities` | every result carries `resultType`; lists carry `ttlMs`/`cacheScope`; no server-initiated requests: a server's `elicitation/create`, `sampling/createMessage` or `roots/list` during its `tools/call` (and a 2026-07-28 server's `InputRequiredResult`) parks the call and reaches it in the endpoint's own `InputRequiredResult`, with a signed `requestState` ([`super::park`]); list and resource changes only on a `subscriptions/listen` stream that asked for them ([`super::listen`]) |
//!
//! rmcp's server session does the envelope work (it answers `server/discover`, checks every
//! request's `_meta` against [`supported`], adds `resultType` and the cache hints); this module
//! says which versions we serve; [`super::listen`] runs the `subscriptions/listen` streams.

use rmcp::model::{
    CallToolResult, CompleteResult, GetPromptResponse, InitializeResult, ProtocolVersion,
    ReadResourceResponse, ResultType, ServerConfig, TASKS_EXTENSION_ID,
};
use rmcp::{Peer, RoleServer};

/// Every protocol version the endpoint serves, oldest first: the `initialize` era and
/// 2026-07-28. `server/discover` lists them; a request naming another gets -32022.
pub fn supported() -> &'static [ProtocolVersion] {
    ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28)
}

/// Whether `version` is of the 2026-07-28 era (no `initialize`, per-request `_meta`).
pub fn is_modern(version: &ProtocolVersion) -> bool {
    version.as_str() >= ProtocolVersion::V_2026_07_28.as_str()
}

/// Whether the agent on `peer` started with `initialize` on a version before 2026-07-28 (the
/// session model). A session that started with a request carrying the modern `_meta` has no
/// peer info.
pub fn is_initialize_session(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info()
        .is_some_and(|info| !is_modern(&info.protocol_version))
}

/// `result` marked `resultType: "complete"`, which 2026-07-28 requires on every result; rmcp
/// removes the mark again for agents of the `initialize` era.
pub fn complete(mut result: CallToolResult) -> CallToolResult {
    result.result_type = Some(ResultType::COMPLETE);
    result
}

/// A `prompts/get` answer marked like [`complete`]: results of `initialize`-era servers carry
/// no `resultType`.
pub fn complete_prompt(response: GetPromptResponse) -> GetPromptResponse {
    match response {
        GetPromptResponse::Complete(mut result) => {
            result.result_type.get_or_insert(ResultType::COMPLETE);
            GetPromptResponse::Complete(result)
        }
        other => other,
    }
}

/// A `resources/read` answer marked like [`complete`].
pub fn complete_read(response: ReadResourceResponse) -> ReadResourceResponse {
    match response {
        ReadResourceResponse::Complete(mut result) => {
            result.result_type.get_or_insert(ResultType::COMPLETE);
            ReadResourceResponse::Complete(result)
        }
        other => other,
    }
}

/// A `completion/complete` answer marked like [`complete`].
pub fn complete_completion(mut result: CompleteResult) -> CompleteResult {
    result.result_type.get_or_insert(ResultType::COMPLETE);
    result
}

/// An `initialize` answer without the 2026-07-28 Tasks extension: that era's agents get the
/// `tasks` capability of their own (MCP 2025-11-25), which the same answer carries.
pub fn without_extension_tasks(mut result: InitializeResult) -> InitializeResult {
    if let Some(extensions) = &mut result.capabilities.extensions {
        extensions.remove(TASKS_EXTENSION_ID);
        if extensions.is_empty() {
            result.capabilities.extensions = None;
        }
    }
    result
}

/// The server info a `server/discover` answer is made of, without the `initialize` era's
/// `tasks` capability (carried in `experimental` inside the companion,
/// [`crate::catalog::execution::TASKS_STASH`]): a 2026-07-28 agent has the extension instead.
pub fn without_legacy_tasks(mut info: ServerConfig) -> ServerConfig {
    if let Some(experimental) = &mut info.capabilities.experimental {
        experimental.remove(crate::catalog::execution::TASKS_STASH);
        if experimental.is_empty() {
            info.capabilities.experimental = None;
        }
    }
    info
}
