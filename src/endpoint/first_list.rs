//! Whether an agent's first listing waits for the servers still starting.
//!
//! The problem: an agent that reads the tool list once (nanobot) never sees a server that was
//! still starting when it asked, so its first `tools/list` (and `initialize`) waits until every
//! server has settled, at most `firstListTimeout`. But agents that give up on a slow
//! `initialize` after a second or two (Claude Code, Codex) then start with no tools at all,
//! not even the ready ones, although Claude Code re-reads the list on
//! `notifications/tools/list_changed`.
//!
//! The rule, by the agent's `clientInfo.name` (from `initialize`, or from the request's `_meta`
//! for an agent of MCP 2026-07-28, which never initializes; compared without regard to case):
//!
//! 1. the config's `firstListHold` names it: `true` holds, `false` answers at once;
//! 2. it is one of [`ANSWERED_AT_ONCE`]: answered with the servers that are ready after at
//!    most [`AT_ONCE_GRACE`], the others follow with `notifications/tools/list_changed` as
//!    they arrive (Codex does not re-read the list; it gets what was ready);
//! 3. any other agent is held, as before.
//!
//! MCP gives a client no way to declare that it re-reads the list on `list_changed` (the
//! `listChanged` flags are the server's), so the name is all there is to go by.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// How long the first listing of an agent answered at once still waits for the servers to
/// settle: long enough for servers that start in a moment (those of a companion the bridge has
/// just started, which would otherwise be listed as none), well short of the 2–3 s after which
/// Codex and Claude Code start without their MCP tools. Never longer than `firstListTimeout`.
pub const AT_ONCE_GRACE: Duration = Duration::from_secs(1);

/// The `clientInfo.name`s of agents that give up on a slow start: Claude Code, which re-reads
/// the tool list on `notifications/tools/list_changed`, and Codex CLI's MCP client, which does
/// not (0.171 keeps what its first listing had: better the ready tools than none).
pub const ANSWERED_AT_ONCE: &[&str] = &["claude-code", "codex-mcp-client", "codex"];

/// How the agents' first listings wait: the config's `firstListTimeout` and `firstListHold`.
#[derive(Clone, Debug, Default)]
pub struct FirstListPolicy {
    /// The longest a held agent waits.
    pub wait: Duration,
    /// `firstListHold`, names lower-cased.
    pub overrides: Arc<BTreeMap<String, bool>>,
}

impl FirstListPolicy {
    /// The policy of a config.
    pub fn of(config: &crate::config::Config) -> FirstListPolicy {
        FirstListPolicy {
            wait: config.first_list_timeout,
            overrides: Arc::new(config.first_list_hold.clone()),
        }
    }

    /// Holds every agent at most `wait` (no overrides).
    pub fn hold_all(wait: Duration) -> FirstListPolicy {
        FirstListPolicy {
            wait,
            overrides: Arc::default(),
        }
    }

    /// The wait of an agent that is not held: [`AT_ONCE_GRACE`], at most `firstListTimeout`.
    pub fn grace(&self) -> Duration {
        AT_ONCE_GRACE.min(self.wait)
    }

    /// Whether the agent named `client` (its `clientInfo.name`) is held (the module's rule).
    pub fn holds(&self, client: &str) -> bool {
        let name = client.to_lowercase();
        match self.overrides.get(&name) {
            Some(hold) => *hold,
            None => !ANSWERED_AT_ONCE.contains(&name.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_agents_are_answered_at_once_and_the_config_overrides_either_way() {
        let overrides = [("codex".to_owned(), true), ("nanobot".to_owned(), false)];
        let policy = FirstListPolicy {
            wait: Duration::from_secs(10),
            overrides: Arc::new(overrides.into_iter().collect()),
        };
        let cases = [
            ("claude-code", false),
            ("Claude-Code", false),
            ("codex-mcp-client", false),
            ("codex", true),
            ("nanobot", false),
            ("gemini-cli-mcp-client", true),
            ("", true),
        ];
        for (name, held) in cases {
            assert_eq!(policy.holds(name), held, "{name}");
        }
        assert!(FirstListPolicy::hold_all(Duration::ZERO).holds("nanobot"));
    }
}
