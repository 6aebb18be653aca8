//! `toolSearch` and `alwaysList`: whether an agent's `tools/list` shows the whole catalog or
//! only the search tools (`search_tools`, `call_tool`) and the tools pinned as always listed.
//!
//! ```text
//! "toolSearch": true, "alwaysList": ["mcp_git_status"],          (the default view)
//! "profiles": {"big": {"toolSearch": true, "alwaysList": ["*_read_*"]}}
//! ```
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `toolSearch` | `false`; in a profile, the top-level value | `true`: `tools/list` shows the search tools and the pinned tools only |
//! | `alwaysList` | `[]`; in a profile, the top-level value | globs over a tool's name as the view serves it (its profile's naming), its raw name or its default wrapped name; matching tools stay listed under `toolSearch` |
//!
//! At the top level a wrong value is a warning and the default is used; in a profile it is
//! the profile's error, as for its other keys.

use serde_json::{Map, Value};

use super::error::json_type;
use super::profiles::{ProfileGlob, globs};

/// How a view (the default view or one profile) lists its tools.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolSearchConfig {
    /// `toolSearch`: list only the search tools and the pinned ones.
    pub enabled: bool,
    /// `alwaysList`: the tools listed under `toolSearch` besides the search tools.
    pub always_list: Vec<ProfileGlob>,
}

impl ToolSearchConfig {
    /// Whether a tool going by any of `names` is pinned as always listed.
    pub fn pinned(&self, names: &[&str]) -> bool {
        self.always_list
            .iter()
            .any(|g| names.iter().any(|n| g.matches(n)))
    }
}

/// Reads `toolSearch` and `alwaysList` from `entry`, each absent key taking its value from
/// `inherit`. `at` names the object in errors (`the top level`, `profile "x"`).
///
/// # Errors
/// One sentence naming the key, when `toolSearch` is not a boolean or `alwaysList` not an
/// array of valid globs.
pub(super) fn parse_tool_search(
    at: &str,
    entry: &Map<String, Value>,
    inherit: &ToolSearchConfig,
) -> Result<ToolSearchConfig, String> {
    let enabled = match entry.get("toolSearch") {
        None | Some(Value::Null) => inherit.enabled,
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            return Err(format!(
                "{at}: \"toolSearch\" must be true or false, found {}",
                json_type(v)
            ));
        }
    };
    let always_list = match globs(at, "alwaysList", entry.get("alwaysList"))? {
        Some(globs) => globs,
        None => inherit.always_list.clone(),
    };
    Ok(ToolSearchConfig {
        enabled,
        always_list,
    })
}

/// The top level's settings; a wrong value is pushed onto `warnings` and the default used.
pub(super) fn parse_top(top: &Map<String, Value>, warnings: &mut Vec<String>) -> ToolSearchConfig {
    parse_tool_search("the top level", top, &ToolSearchConfig::default()).unwrap_or_else(|why| {
        warnings.push(format!("{why}; tool search is off for the default view"));
        ToolSearchConfig::default()
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn a_profile_inherits_the_top_level_unless_it_says_otherwise() {
        let config = crate::config::parse(
            r#"{"mcpServers": {"a": {"command": "x"}}, "toolSearch": true, "alwaysList": ["echo"],
                "profiles": {"same": {}, "off": {"toolSearch": false, "alwaysList": []},
                             "bad": {"toolSearch": "yes"}}}"#,
            Path::new("c.json"),
        )
        .expect("parses");
        assert!(config.tool_search.enabled);
        assert!(config.tool_search.pinned(&["echo"]) && !config.tool_search.pinned(&["add"]));
        let same = config.profiles[0].entry.as_ref().expect("valid");
        assert_eq!(same.tool_search, config.tool_search);
        let off = config.profiles[1].entry.as_ref().expect("valid");
        assert!(!off.tool_search.enabled && off.tool_search.always_list.is_empty());
        let bad = config.profiles[2].entry.as_ref().expect_err("invalid");
        assert!(
            bad.contains("\"toolSearch\" must be true or false"),
            "{bad}"
        );
    }

    #[test]
    fn a_wrong_top_level_value_is_a_warning() {
        let config = crate::config::parse(
            r#"{"toolSearch": 1, "alwaysList": ["[x"]}"#,
            Path::new("c.json"),
        )
        .expect("parses");
        assert!(!config.tool_search.enabled);
        assert!(
            config.warnings.iter().any(|w| w.contains("toolSearch")),
            "{:?}",
            config.warnings
        );
    }
}
