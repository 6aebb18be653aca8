//! Why a prompt, resource or template an agent named is not served, in words the agent can act
//! on: withheld until the person approves it, served by several servers only under other names
//! (then which names to use), or unknown.
//!
//! | the agent named | answer |
//! |---|---|
//! | a URI two or more servers claim, as they wrote it (or an expansion of a template two or more list) | -32002 (rmcp answers a 2026-07-28 agent -32602, that revision's code) for `resources/read` and `resources/subscribe`: `resource "<uri>" is served by "a" and "b": read it as "<a's>" or "<b's>"` |
//! | such a template, or URI, in a completion's `ref/resource` | -32602 `resource template "<uri>" is served by …: refer to it as …` |
//! | a prompt name two prompts would both take (`<server>_<prompt>`), served with a suffix each | -32602 `prompt "<name>" is served by …: get it as …` (`refer to it as` in a completion) |
//! | a prompt the pins hold back | -32602 naming the server and `mcp-companion trust` |
//! | anything else not served | -32002 `resource not found: …`, -32602 `unknown prompt …`, `unknown resource template …` |

use rmcp::ErrorData as McpError;
use serde_json::json;

use super::Hub;
use super::native::RESOURCE_NOT_FOUND;
use crate::catalog::{Claimant, Native, NativeRoute};

impl Hub {
    /// -32602 for a prompt not served (`verb`: what the agent does with it, "get" for
    /// `prompts/get`, "refer to" in a completion): served under other names, withheld, or
    /// unknown (module doc).
    pub(super) fn unknown_prompt(&self, name: &str, verb: &str) -> McpError {
        let catalog = self.catalog();
        let claimants = catalog.native().prompt_claimants(name);
        if claimants.len() > 1 {
            return McpError::invalid_params(ambiguous("prompt", name, verb, &claimants), None);
        }
        let view = self.view();
        match view.withheld(
            self.profile().as_deref(),
            crate::catalog::pin::Kind::Prompt,
            name,
        ) {
            Some(server) => McpError::invalid_params(
                format!(
                    "prompt \"{name}\" is withheld: server \"{server}\" changed or added it since the person approved its capabilities, and it waits for their approval (they can review and approve it with `mcp-companion trust {server}`)"
                ),
                None,
            ),
            None => McpError::invalid_params(format!("unknown prompt \"{name}\""), None),
        }
    }
}

/// Where a read or subscription (`verb`: "read", "subscribe to") of the agent's `uri` goes.
///
/// # Errors
/// -32002 for a URI no one server can be said to own; its message names the URIs to use
/// instead when several servers serve it rewritten (module doc).
pub(super) fn resource_route(
    native: &Native,
    uri: &str,
    verb: &str,
) -> Result<NativeRoute, McpError> {
    native.resource(uri).ok_or_else(|| {
        let claimants = native.claimants(uri);
        let message = if claimants.len() > 1 {
            ambiguous("resource", uri, verb, &claimants)
        } else {
            format!("resource not found: no running server offers \"{uri}\"")
        };
        McpError::new(
            rmcp::model::ErrorCode(RESOURCE_NOT_FOUND),
            message,
            Some(json!({ "uri": uri })),
        )
    })
}

/// Where a completion for the template (or resource URI) `uri` goes.
///
/// # Errors
/// -32602 for a template not served; its message names the templates to use instead when
/// several servers serve it rewritten (module doc).
pub(super) fn template_route(native: &Native, uri: &str) -> Result<NativeRoute, McpError> {
    native.template(uri).ok_or_else(|| {
        let claimants = native.template_claimants(uri);
        let message = if claimants.len() > 1 {
            ambiguous("resource template", uri, "refer to", &claimants)
        } else {
            format!("unknown resource template \"{uri}\"")
        };
        McpError::invalid_params(message, None)
    })
}

/// `<kind> "<name>" is served by "a" and "b": <verb> it as "<a's>" or "<b's>"`.
fn ambiguous(kind: &str, name: &str, verb: &str, claimants: &[Claimant]) -> String {
    let servers: Vec<String> = (claimants.iter())
        .map(|c| format!("\"{}\"", c.server))
        .collect();
    let served: Vec<String> = (claimants.iter())
        .map(|c| format!("\"{}\"", c.served))
        .collect();
    format!(
        "{kind} \"{name}\" is served by {}: {verb} it as {}",
        listed(&servers, "and"),
        listed(&served, "or")
    )
}

/// `a`, `a and b`, `a, b and c` (with `conjunction` for "and").
fn listed(items: &[String], conjunction: &str) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} {conjunction} {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn claimant(server: &str, served: &str) -> Claimant {
        Claimant {
            server: Arc::from(server),
            served: served.to_owned(),
        }
    }

    #[test]
    fn an_ambiguous_name_lists_each_server_and_the_name_to_use() {
        let two = [
            claimant("a", "mcp-companion://a/file:///x"),
            claimant("b", "mcp-companion://b/file:///x"),
        ];
        assert_eq!(
            ambiguous("resource", "file:///x", "read", &two),
            "resource \"file:///x\" is served by \"a\" and \"b\": read it as \"mcp-companion://a/file:///x\" or \"mcp-companion://b/file:///x\""
        );
        let three = [
            claimant("a", "p_1"),
            claimant("b", "p_2"),
            claimant("c", "p_3"),
        ];
        assert_eq!(
            ambiguous("prompt", "p", "get", &three),
            "prompt \"p\" is served by \"a\", \"b\" and \"c\": get it as \"p_1\", \"p_2\" or \"p_3\""
        );
    }
}
