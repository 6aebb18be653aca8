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
    ReadResourceResponse, ResultType, ServerCapabilities, ServerConfig, TASKS_EXTENSION_ID,
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

/// An `initialize` answer carrying only what its negotiated version defines (each version's
/// `ServerCapabilities` and `Implementation` in the MCP schema):
///
/// | member | defined since |
/// |---|---|
/// | `capabilities.completions` | 2025-03-26 |
/// | `serverInfo.title` | 2025-06-18 |
/// | `capabilities.tasks` (in `experimental` inside the companion, [`crate::catalog::execution::TASKS_STASH`]); `serverInfo.description`, `icons`, `websiteUrl` | 2025-11-25 |
/// | `capabilities.extensions` (the 2026-07-28 Tasks extension) | never in an `initialize` answer: that era's agents do not initialize |
///
/// An agent of an older version would read a newer member as a promise the session cannot
/// keep: a 2025-06-18 agent offered `tasks` has no `tasks/*` methods to use it.
pub fn as_negotiated(mut result: InitializeResult) -> InitializeResult {
    let version = result.protocol_version.as_str().to_owned();
    let before = |v: &ProtocolVersion| version.as_str() < v.as_str();
    if let Some(extensions) = &mut result.capabilities.extensions {
        extensions.remove(TASKS_EXTENSION_ID);
        if extensions.is_empty() {
            result.capabilities.extensions = None;
        }
    }
    if before(&ProtocolVersion::V_2025_11_25) {
        result.capabilities = without_legacy_tasks_capability(result.capabilities);
        let info = &mut result.server_info;
        (info.description, info.icons, info.website_url) = (None, None, None);
    }
    if before(&ProtocolVersion::V_2025_06_18) {
        result.server_info.title = None;
    }
    if before(&ProtocolVersion::V_2025_03_26) {
        result.capabilities.completions = None;
    }
    result
}

/// The server info a `server/discover` answer is made of, without the `initialize` era's
/// `tasks` capability: a 2026-07-28 agent has the extension instead.
pub fn without_legacy_tasks(mut info: ServerConfig) -> ServerConfig {
    info.capabilities = without_legacy_tasks_capability(info.capabilities);
    info
}

/// `capabilities` without the `initialize` era's `tasks` capability (MCP 2025-11-25), carried
/// in `experimental` inside the companion ([`crate::catalog::execution::TASKS_STASH`]).
fn without_legacy_tasks_capability(mut capabilities: ServerCapabilities) -> ServerCapabilities {
    if let Some(experimental) = &mut capabilities.experimental {
        experimental.remove(crate::catalog::execution::TASKS_STASH);
        if experimental.is_empty() {
            capabilities.experimental = None;
        }
    }
    capabilities
}

#[cfg(test)]
mod tests {
    use rmcp::model::{Implementation, ServerCapabilities};
    use serde_json::{Value, json};

    use super::*;

    /// An answer with every member some version added, on `version`.
    fn everything_on(version: ProtocolVersion) -> Value {
        let mut caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_completions()
            .build();
        caps.experimental.get_or_insert_default().insert(
            crate::catalog::execution::TASKS_STASH.to_owned(),
            crate::catalog::execution::tasks_capability(),
        );
        caps.extensions
            .get_or_insert_default()
            .insert(TASKS_EXTENSION_ID.to_owned(), serde_json::Map::new());
        let mut info = Implementation::new("mcp-companion", "1");
        info.title = Some("MCP Companion".into());
        info.description = Some("hub".into());
        info.website_url = Some("https://example.org".into());
        info.icons = Some(Vec::new());
        let result = InitializeResult::new(caps)
            .with_server_info(info)
            .with_protocol_version(version);
        let mut value = serde_json::to_value(as_negotiated(result)).expect("serialises");
        crate::catalog::execution::unstash_capabilities(&mut value);
        value
    }

    fn keys(value: &Value) -> Vec<&str> {
        let mut keys: Vec<&str> = value
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        keys.sort_unstable();
        keys
    }

    #[test]
    fn each_version_is_answered_with_what_it_defines() {
        for (version, capabilities, server_info) in [
            (
                ProtocolVersion::V_2024_11_05,
                vec!["tools"],
                vec!["name", "version"],
            ),
            (
                ProtocolVersion::V_2025_03_26,
                vec!["completions", "tools"],
                vec!["name", "version"],
            ),
            (
                ProtocolVersion::V_2025_06_18,
                vec!["completions", "tools"],
                vec!["name", "title", "version"],
            ),
            (
                ProtocolVersion::V_2025_11_25,
                vec!["completions", "tasks", "tools"],
                vec![
                    "description",
                    "icons",
                    "name",
                    "title",
                    "version",
                    "websiteUrl",
                ],
            ),
        ] {
            let answer = everything_on(version.clone());
            assert_eq!(
                keys(&answer["capabilities"]),
                capabilities,
                "{version}: {answer}"
            );
            assert_eq!(
                keys(&answer["serverInfo"]),
                server_info,
                "{version}: {answer}"
            );
        }
        assert_eq!(
            everything_on(ProtocolVersion::V_2025_11_25)["capabilities"]["tasks"],
            json!(crate::catalog::execution::tasks_capability())
        );
    }
}
