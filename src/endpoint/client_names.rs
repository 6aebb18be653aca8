//! Tool names that fit an agent's own prefix.
//!
//! The problem: the companion keeps every wrapped name within 64 characters, the limit model
//! APIs put on tool names, but some agents put a prefix of their own before each name before
//! the model sees it: Claude Code sends `mcp__<entry>__<name>`, 20 characters more for the
//! `mcp-companion` entry `connect` writes, so a 45-character name reached the model as 65;
//! opencode sends `<entry>_<name>`, 14 characters more.
//!
//! The rule: an agent whose `clientInfo.name` is in [`PREFIXES`] gets, in its own session,
//! every tool name longer than `64 - prefix` shortened by the catalog's rule with that smaller
//! limit ([`limit_length_to`]: kept head, `_`, 8 hex digits of SHA-1 of the full name), so the
//! same name always gives the same short name and two names give two. Its `tools/list` shows
//! the short names and its `tools/call` takes them; every other agent, the activity log and
//! the CLI keep the full names. Such a session's `tools/list` and calls of shortened names
//! take the rmcp path, not the fast path.

use std::borrow::Cow;

use rmcp::model::RequestMetaObject;
use rmcp::{Peer, RoleServer};

use crate::catalog::Catalog;
use crate::catalog::naming::{MAX_NAME_LEN, limit_length_to};

/// The agents (by `clientInfo.name`) that prefix tool names, with the prefix they put before
/// the names of the entry `connect` writes (`mcp-companion`).
pub const PREFIXES: &[(&str, &str)] = &[
    ("claude-code", "mcp__mcp-companion__"),
    ("opencode", "mcp-companion_"),
];

/// The longest tool name the agent named `client` can take: 64 less its prefix.
pub fn budget(client: &str) -> usize {
    PREFIXES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(client))
        .map_or(MAX_NAME_LEN, |(_, prefix)| {
            MAX_NAME_LEN.saturating_sub(prefix.len())
        })
}

/// The budget of the agent on `peer`'s session (64 before it initialized).
pub fn budget_of(peer: &Peer<RoleServer>) -> usize {
    peer.peer_info()
        .map_or(MAX_NAME_LEN, |info| budget(&info.client_info.name))
}

/// The `clientInfo.name` of the agent sending a request: from its `initialize` (the
/// session's peer info), else from the request's `_meta` (`io.modelcontextprotocol/clientInfo`,
/// which a 2026-07-28 agent such as Claude Code puts on every request instead of initializing);
/// `None` when neither names it.
pub fn client_name(peer: &Peer<RoleServer>, meta: &RequestMetaObject) -> Option<String> {
    peer.peer_info()
        .map(|info| info.client_info.name.clone())
        .or_else(|| meta.client_info().map(|info| info.name))
}

/// The budget of the agent sending a request with `meta` on `peer`'s session (64 when it
/// names no client).
pub fn budget_for(peer: &Peer<RoleServer>, meta: &RequestMetaObject) -> usize {
    client_name(peer, meta).map_or(MAX_NAME_LEN, |name| budget(&name))
}

/// The name `wrapped` goes by in a session whose budget is `budget`.
pub fn shown(wrapped: &str, budget: usize) -> Cow<'_, str> {
    limit_length_to(wrapped, budget)
}

/// Whether some tool of `catalog` goes by another name under `budget`.
pub fn any_shortened(catalog: &Catalog, budget: usize) -> bool {
    budget < MAX_NAME_LEN
        && catalog
            .tools()
            .iter()
            .any(|t| t.name.chars().count() > budget)
}

/// The wrapped name of the tool a session with `budget` calls `name`: `name` itself unless it
/// is one of the shortened names.
pub fn wrapped_of<'a>(catalog: &'a Catalog, name: &'a str, budget: usize) -> Cow<'a, str> {
    if budget >= MAX_NAME_LEN || catalog.route(name).is_some() {
        return Cow::Borrowed(name);
    }
    catalog
        .tools()
        .iter()
        .find(|t| t.name.chars().count() > budget && shown(&t.name, budget) == name)
        .map_or(Cow::Borrowed(name), |t| Cow::Owned(t.name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_names_fit_with_its_prefix_and_stay_stable() {
        assert_eq!(budget("claude-code"), 44);
        assert_eq!(budget("Claude-Code"), 44);
        assert_eq!(budget("nanobot"), 64);
        assert_eq!(budget("opencode"), 50);
        let long = format!("mcp_{}_echo", "s".repeat(50));
        let short = shown(&long, 44);
        assert_eq!(short.len(), 44);
        assert!(short.starts_with(&long[..35]));
        assert_eq!(short, shown(&long, 44), "stable");
        let other = format!("mcp_{}_echp", "s".repeat(50));
        assert_ne!(shown(&other, 44), short, "two names give two");
        assert_eq!(shown("mcp_demo_echo", 44), "mcp_demo_echo");
    }
}
