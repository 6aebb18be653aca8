//! An entry's `toolPolicy`: which of the server's tools run at once (`allow`), wait for the
//! person's approval (`ask`) or never run (`deny`); and `approvalTimeout`, how long an `ask`
//! waits for an answer.
//!
//! ```text
//! "toolPolicy": { "read_*": "allow", "write_file": "ask", "delete_*": "deny", "*": "ask" }
//! ```
//!
//! Keys are tool names or globs, never empty (the glob rule of profiles: `*`, `?`, `[…]`, whole
//! name, case-sensitive), matched against the tool's upstream name and its default wrapped name
//! (`mcp_<server>_<tool>`, `catalog::naming::base_name`) — never a profile's or a client's own
//! renaming, so every view of a server decides the same (the route gives the names,
//! `catalog::Route::policy_names`). Which entry decides ([`ToolPolicy::decider`]), order-free:
//!
//! 1. a key that matches exactly one name, and that name is one of the tool's: a plain name,
//!    or a name whose glob characters are each escaped as a one-character class (`add[[]1[]]`
//!    names the tool `add[1]` and nothing else; [`exact_key`] writes it);
//! 2. else a key equal to one of the names character for character, glob characters or not
//!    (`add[1]` written as is names the tool `add[1]`; as a glob it also matches `add1`);
//! 3. else the longest matching glob (so `"*"` is the server's default and `"read_*"` beats it);
//!
//! and within a step, the strictest (`deny` over `ask` over `allow`).
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

impl PolicyEntry {
    /// Whether this key matches one name only, and it is one of `names` (step 1 of the rule of
    /// the module doc).
    pub fn names_only(&self, names: &[&str]) -> bool {
        literal(&self.glob.text).is_some_and(|l| names.contains(&l.as_str()))
    }
}

impl ToolPolicy {
    /// The configured policy of a tool known by `names` (its upstream and default wrapped
    /// names), by the rule of the module doc; `None` when no key matches.
    pub fn decide(&self, names: &[&str]) -> Option<Policy> {
        self.decider(names).map(|e| e.policy)
    }

    /// The entry that decides for a tool known by `names` (module doc), if any.
    pub fn decider(&self, names: &[&str]) -> Option<&PolicyEntry> {
        let strictest = |step: &dyn Fn(&PolicyEntry) -> bool| {
            self.entries
                .iter()
                .filter(|e| step(e))
                .max_by_key(|e| e.policy)
        };
        strictest(&|e| e.names_only(names))
            .or_else(|| strictest(&|e| names.contains(&e.glob.text.as_str())))
            .or_else(|| {
                self.entries
                    .iter()
                    .filter(|e| names.iter().any(|n| e.glob.matches(n)))
                    .max_by_key(|e| (e.glob.text.len(), e.policy))
            })
    }

    /// The keys to set to `allow` so that the tool known by `names` (`raw` its upstream name)
    /// runs from now on without touching any other tool: every key that names this tool only
    /// (step 1), else the exact key of `raw` ([`exact_key`]).
    pub fn allow_keys(&self, names: &[&str], raw: &str) -> Vec<String> {
        let own: Vec<String> = self
            .entries
            .iter()
            .filter(|e| e.names_only(names))
            .map(|e| e.glob.text.clone())
            .collect();
        if own.is_empty() {
            vec![exact_key(raw)]
        } else {
            own
        }
    }
}

/// The key that names the tool `name` and nothing else: `name` with each glob character
/// (`*`, `?`, `[`, `]`) escaped as a one-character class (`add[1]` → `add[[]1[]]`).
pub fn exact_key(name: &str) -> String {
    glob::Pattern::escape(name)
}

/// The one name the glob `text` matches, when it matches one only: its characters, with
/// one-character classes (`[x]`) read as that character; `None` when it has `*`, `?`, a
/// negated or wider class, or an unclosed `[`.
fn literal(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' => return None,
            '[' => {
                let inner = chars.next().filter(|&c| c != '!')?;
                if chars.next() != Some(']') {
                    return None;
                }
                out.push(inner);
            }
            c => out.push(c),
        }
    }
    Some(out)
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
        if key.is_empty() {
            return Err(ConfigError::field(
                server,
                "toolPolicy",
                "an empty key names no tool: give a tool's name or a glob such as \"*\"",
            ));
        }
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

    #[test]
    fn an_empty_key_is_refused_saying_what_to_give() {
        let e = parse_tool_policy("s", Some(&serde_json::json!({"": "allow"})))
            .expect_err("an empty key");
        let said = e.to_string();
        assert!(
            said.contains("toolPolicy") && said.contains("empty key names no tool"),
            "{said}"
        );
    }

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
    fn a_name_with_glob_characters_is_targeted_exactly() {
        let names = &["add[1]", "mcp_s_add_1_"][..];
        let as_is = policy(r#"{"add[1]": "deny", "*": "allow"}"#);
        assert_eq!(as_is.decide(names), Some(Policy::Deny), "written as is");
        assert_eq!(as_is.decide(&["add1"]), Some(Policy::Deny), "and as a glob");
        let escaped = policy(r#"{"add[[]1[]]": "allow", "add[1]": "ask", "a*[1]": "deny"}"#);
        assert_eq!(escaped.decide(names), Some(Policy::Allow), "escaped first");
        assert_eq!(escaped.decide(&["add1"]), Some(Policy::Ask));
        assert_eq!(exact_key("add[1]*?"), "add[[]1[]][*][?]");
        for name in ["add[1]", "a*b", "q?", "plain", "]["] {
            let key = policy(&format!(r#"{{"{}": "deny"}}"#, exact_key(name)));
            assert_eq!(key.decide(&[name]), Some(Policy::Deny), "{name}");
            assert!(key.entries[0].names_only(&[name]), "{name}");
            for other in ["add1", "ab", "a", "q", "qq", "plai", "x"] {
                assert_eq!(key.decide(&[other]), None, "{name} must not match {other}");
            }
        }
    }

    #[test]
    fn always_replaces_the_key_that_names_the_tool_else_writes_its_exact_name() {
        let names = &["slow", "mcp_h_slow"][..];
        let p = policy(r#"{"mcp_h_slow": "ask", "*": "allow"}"#);
        assert_eq!(p.allow_keys(names, "slow"), ["mcp_h_slow"]);
        let p = policy(r#"{"mcp_h_*": "ask", "s*": "ask"}"#);
        assert_eq!(p.allow_keys(names, "slow"), ["slow"]);
        let p = policy(r#"{"add[1]": "ask"}"#);
        assert_eq!(p.allow_keys(&["add[1]"], "add[1]"), ["add[[]1[]]"]);
        let mut written = policy(r#"{"add[1]": "ask", "add[[]1[]]": "allow"}"#);
        assert_eq!(written.decide(&["add[1]"]), Some(Policy::Allow));
        written.entries.reverse();
        assert_eq!(written.decide(&["add[1]"]), Some(Policy::Allow));
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
