//! An entry's `toolPolicy`: which of the server's tools run at once (`allow`), wait for the
//! person's approval (`ask`) or never run (`deny`); and `approvalTimeout`, how long an `ask`
//! waits for an answer.
//!
//! ```text
//! "toolPolicy": { "read_*": "allow", "write_file": "ask", "delete_*": "deny", "*": "ask" }
//! ```
//!
//! Keys are tool names or globs (the glob rule of profiles: `*`, `?`, `[…]`, whole name,
//! case-sensitive), matched against the tool's upstream name and its wrapped name
//! (`mcp_<server>_<tool>`). Which entry decides ([`ToolPolicy::decide`]), order-free:
//!
//! 1. a key without glob characters that equals one of the names;
//! 2. else the longest matching glob (so `"*"` is the server's default and `"read_*"` beats it);
//! 3. between globs of the same length, the strictest (`deny` over `ask` over `allow`).
//!
//! A tool no key matches takes its default from its annotations (`hub::approve`). The policy
//! changes without restarting the server (`hub::reload`).

use std::time::Duration;

use serde_json::Value;

use super::ConfigError;
use super::error::json_type;
use super::profiles::ProfileGlob;

/// `approvalTimeout` when absent: 60 seconds.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(60);

/// What happens to a call of a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Policy {
    /// It runs.
    Allow,
    /// It waits for the person's approval.
    Ask,
    /// It never runs.
    Deny,
}

impl Policy {
    /// The value as written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Allow => "allow",
            Policy::Ask => "ask",
            Policy::Deny => "deny",
        }
    }

    /// The policy written as `text`, if it is one.
    pub fn parse(text: &str) -> Option<Policy> {
        match text {
            "allow" => Some(Policy::Allow),
            "ask" => Some(Policy::Ask),
            "deny" => Some(Policy::Deny),
            _ => None,
        }
    }
}

/// One key of `toolPolicy` and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyEntry {
    /// The name or glob, as written.
    pub glob: ProfileGlob,
    /// Its policy.
    pub policy: Policy,
}

/// A server's `toolPolicy`, in file order; empty when absent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolPolicy {
    /// The entries.
    pub entries: Vec<PolicyEntry>,
}

impl ToolPolicy {
    /// The configured policy of a tool known by `names` (its upstream and wrapped names), by
    /// the rule of the module doc; `None` when no key matches.
    pub fn decide(&self, names: &[&str]) -> Option<Policy> {
        let matching = || {
            self.entries
                .iter()
                .filter(|e| names.iter().any(|n| e.glob.matches(n)))
        };
        if let Some(exact) = matching()
            .filter(|e| names.contains(&e.glob.text.as_str()))
            .map(|e| e.policy)
            .max()
        {
            return Some(exact);
        }
        matching()
            .max_by_key(|e| (e.glob.text.len(), e.policy))
            .map(|e| e.policy)
    }
}

/// Reads `toolPolicy` of entry `server` (`None` or `null`: empty).
///
/// # Errors
/// [`ConfigError::Field`] naming `toolPolicy` or the bad key.
pub fn parse_tool_policy(server: &str, value: Option<&Value>) -> Result<ToolPolicy, ConfigError> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(ToolPolicy::default());
    };
    let object = value.as_object().ok_or_else(|| {
        ConfigError::field(
            server,
            "toolPolicy",
            format!(
                "expected an object of tool names or globs to \"allow\", \"ask\" or \"deny\", found {}",
                json_type(value)
            ),
        )
    })?;
    let mut entries = Vec::with_capacity(object.len());
    for (key, policy) in object {
        let field = format!("toolPolicy.{key}");
        let policy = policy.as_str().and_then(Policy::parse).ok_or_else(|| {
            ConfigError::field(
                server,
                &field,
                format!("expected \"allow\", \"ask\" or \"deny\", found {policy}"),
            )
        })?;
        let glob =
            ProfileGlob::new(key.clone()).map_err(|why| ConfigError::field(server, &field, why))?;
        entries.push(PolicyEntry { glob, policy });
    }
    Ok(ToolPolicy { entries })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(json: &str) -> ToolPolicy {
        parse_tool_policy("s", Some(&serde_json::from_str(json).unwrap())).unwrap()
    }

    #[test]
    fn the_most_specific_key_decides_in_any_order() {
        let p = policy(
            r#"{"*": "ask", "read_*": "allow", "read_secret": "deny", "r*": "deny", "write_?": "deny", "write_*": "allow"}"#,
        );
        let cases = [
            (&["read_file", "mcp_s_read_file"][..], Some(Policy::Allow)),
            (
                &["read_secret", "mcp_s_read_secret"][..],
                Some(Policy::Deny),
            ),
            (&["remove", "mcp_s_remove"][..], Some(Policy::Deny)),
            (&["list", "mcp_s_list"][..], Some(Policy::Ask)),
            (&["write_a"][..], Some(Policy::Deny)),
            (&["write_ab"][..], Some(Policy::Allow)),
        ];
        for (names, want) in cases {
            assert_eq!(p.decide(names), want, "{names:?}");
        }
        assert_eq!(ToolPolicy::default().decide(&["x"]), None);
        let same_length = policy(r#"{"a*": "allow", "*b": "deny"}"#);
        assert_eq!(same_length.decide(&["ab"]), Some(Policy::Deny));
    }

    #[test]
    fn wrapped_names_match_too() {
        let p = policy(r#"{"mcp_s_*": "deny"}"#);
        assert_eq!(p.decide(&["echo", "mcp_s_echo"]), Some(Policy::Deny));
    }

    #[test]
    fn bad_values_name_the_field() {
        for (json, says) in [
            (r#"["x"]"#, "field \"toolPolicy\": expected an object"),
            (
                r#"{"x": "maybe"}"#,
                "field \"toolPolicy.x\": expected \"allow\"",
            ),
            (r#"{"[x": "deny"}"#, "is not a valid glob"),
        ] {
            let e = parse_tool_policy("s", Some(&serde_json::from_str(json).unwrap()))
                .unwrap_err()
                .to_string();
            assert!(e.contains(says), "{json}: {e}");
        }
    }
}
