//! The per-server `enabledTools` allowlist (DESIGN §5, nanobot §3 with DESIGN's changes).
//!
//! Owns deciding which of one server's capabilities are served, and the single warning for
//! entries that match nothing.
//!
//! | `enabledTools` | served |
//! |---|---|
//! | contains `"*"` | everything: tools, resources, templates, prompts; other entries ignored |
//! | `[]` | nothing (the server still connects); no warning |
//! | names | a tool by raw or wrapped name; a resource, template or prompt **only** by wrapped name |
//!
//! Matching is exact and case-sensitive, without trimming. A "wrapped name" is the base name
//! from [`super::naming::base_name`] (the name served when there is no collision) or the
//! suffixed name (served when there is one), so either spelling a user copied from a tool list
//! keeps working.

use std::collections::HashSet;
use std::fmt;

use super::naming::CapabilityKind;

/// The `enabledTools` entry meaning "everything".
pub const WILDCARD: &str = "*";

/// What the allowlist needs to know about one capability.
#[derive(Clone, Copy, Debug)]
pub struct Candidate<'a> {
    /// Tool, resource, template or prompt.
    pub kind: CapabilityKind,
    /// The upstream name (tool name, resource name, template name, prompt name).
    pub raw: &'a str,
    /// The base wrapped name.
    pub wrapped: &'a str,
    /// The wrapped name with its collision suffix.
    pub suffixed: &'a str,
}

/// Entries of one server's `enabledTools` that matched no capability, with what was available.
///
/// Displays as one line (nanobot §3 rule 6, without the server, which callers log as a field):
///
/// ```text
/// enabledTools entries not found: X, Y. Available raw names: a, b. Available wrapped names: mcp_s_a, mcp_s_b
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnmatchedEntries {
    /// The unmatched entries, sorted, without repeats.
    pub entries: Vec<String>,
    /// Raw names that may be used (tools only), in server order.
    pub raw_names: Vec<String>,
    /// Wrapped names that may be used (every kind), in server order.
    pub wrapped_names: Vec<String>,
}

impl fmt::Display for UnmatchedEntries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn list(names: &[String]) -> String {
            if names.is_empty() {
                "(none)".to_owned()
            } else {
                names.join(", ")
            }
        }
        write!(
            f,
            "enabledTools entries not found: {}. Available raw names: {}. Available wrapped names: {}",
            self.entries.join(", "),
            list(&self.raw_names),
            list(&self.wrapped_names)
        )
    }
}

/// The outcome of applying one server's allowlist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// One flag per candidate, in candidate order: served or not.
    pub enabled: Vec<bool>,
    /// Set when some entries matched nothing.
    pub unmatched: Option<UnmatchedEntries>,
}

/// Applies `entries` (one server's `enabledTools`) to that server's `candidates`.
///
/// A wildcard anywhere wins and yields no warning; an empty list serves nothing and yields no
/// warning. Otherwise every entry that matches no candidate, in any allowed form, is reported
/// in one [`UnmatchedEntries`].
pub fn select(entries: &[String], candidates: &[Candidate<'_>]) -> Selection {
    if entries.iter().any(|e| e == WILDCARD) {
        return Selection {
            enabled: vec![true; candidates.len()],
            unmatched: None,
        };
    }
    let wanted: HashSet<&str> = entries.iter().map(String::as_str).collect();
    let mut matched: HashSet<&str> = HashSet::new();
    let mut enabled = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        let mut forms = vec![candidate.wrapped, candidate.suffixed];
        if candidate.kind == CapabilityKind::Tool {
            forms.push(candidate.raw);
        }
        let mut hit = false;
        for form in forms {
            if wanted.contains(form) {
                matched.insert(form);
                hit = true;
            }
        }
        enabled.push(hit);
    }

    let mut unmatched: Vec<String> = wanted
        .iter()
        .filter(|e| !matched.contains(*e))
        .map(|e| (*e).to_owned())
        .collect();
    unmatched.sort_unstable();
    let unmatched = (!unmatched.is_empty()).then(|| UnmatchedEntries {
        entries: unmatched,
        raw_names: candidates
            .iter()
            .filter(|c| c.kind == CapabilityKind::Tool)
            .map(|c| c.raw.to_owned())
            .collect(),
        wrapped_names: candidates.iter().map(|c| c.wrapped.to_owned()).collect(),
    });
    Selection { enabled, unmatched }
}

#[cfg(test)]
mod tests {
    use super::CapabilityKind::{Prompt, Resource, ResourceTemplate, Tool};
    use super::*;
    use crate::catalog::naming::{base_name, suffixed_name};

    /// The nanobot §3 server "test": tools demo, other; resource secret_data; prompt help;
    /// plus a template files.
    fn server() -> Vec<(CapabilityKind, &'static str, String, String)> {
        [
            (Tool, "demo"),
            (Tool, "other"),
            (Tool, "My Tool"),
            (Resource, "secret_data"),
            (ResourceTemplate, "files"),
            (Prompt, "help"),
        ]
        .into_iter()
        .map(|(kind, raw)| {
            (
                kind,
                raw,
                base_name("test", kind, raw),
                suffixed_name("test", kind, raw),
            )
        })
        .collect()
    }

    fn run(entries: &[&str]) -> (Vec<&'static str>, Option<String>) {
        let owned = server();
        let candidates: Vec<Candidate<'_>> = owned
            .iter()
            .map(|(kind, raw, wrapped, suffixed)| Candidate {
                kind: *kind,
                raw,
                wrapped,
                suffixed,
            })
            .collect();
        let entries: Vec<String> = entries.iter().map(|e| (*e).to_owned()).collect();
        let selection = select(&entries, &candidates);
        let served = owned
            .iter()
            .zip(&selection.enabled)
            .filter(|(_, on)| **on)
            .map(|((_, raw, ..), _)| *raw)
            .collect();
        (served, selection.unmatched.map(|u| u.to_string()))
    }

    #[test]
    fn entries_select_expected_capabilities() {
        let all = vec!["demo", "other", "My Tool", "secret_data", "files", "help"];
        let suffixed_demo = suffixed_name("test", Tool, "demo");
        let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
            (vec!["*"], all.clone()),
            (vec!["*", "foo"], all.clone()),
            (vec!["foo", "*"], all),
            (vec![], vec![]),
            (vec!["demo"], vec!["demo"]),
            (vec!["mcp_test_demo"], vec!["demo"]),
            (vec!["demo", "mcp_test_other"], vec!["demo", "other"]),
            (vec!["mcp_test_My_Tool"], vec!["My Tool"]),
            (vec![suffixed_demo.as_str()], vec!["demo"]),
            (vec!["mcp_test_resource_secret_data"], vec!["secret_data"]),
            (vec!["mcp_test_resource_files"], vec!["files"]),
            (vec!["mcp_test_prompt_help"], vec!["help"]),
        ];
        for (entries, want) in cases {
            let (served, warning) = run(&entries);
            assert_eq!(served, want, "{entries:?}");
            assert_eq!(warning, None, "{entries:?}");
        }
    }

    #[test]
    fn resources_and_prompts_never_match_by_raw_name() {
        let (served, warning) = run(&["secret_data", "help", "files", "demo"]);
        assert_eq!(served, ["demo"]);
        let warning = warning.expect("raw resource names are unknown entries");
        assert!(
            warning.starts_with("enabledTools entries not found: files, help, secret_data."),
            "{warning}"
        );
    }

    #[test]
    fn unknown_entries_give_one_warning_listing_available_names() {
        let (served, warning) = run(&["zeta", "unknown", "demo", "zeta"]);
        assert_eq!(served, ["demo"]);
        assert_eq!(
            warning.as_deref(),
            Some(
                "enabledTools entries not found: unknown, zeta. \
                 Available raw names: demo, other, My Tool. \
                 Available wrapped names: mcp_test_demo, mcp_test_other, mcp_test_My_Tool, \
                 mcp_test_resource_secret_data, mcp_test_resource_files, mcp_test_prompt_help"
            )
        );
    }

    #[test]
    fn empty_server_lists_none() {
        let selection = select(&["x".to_owned()], &[]);
        assert!(selection.enabled.is_empty());
        assert_eq!(
            selection.unmatched.map(|u| u.to_string()).as_deref(),
            Some(
                "enabledTools entries not found: x. Available raw names: (none). \
                 Available wrapped names: (none)"
            )
        );
    }

    #[test]
    fn matching_is_exact_and_case_sensitive() {
        let (served, warning) = run(&["Demo", " demo", "mcp_test_demo "]);
        assert!(served.is_empty());
        assert!(warning.is_some());
    }
}
