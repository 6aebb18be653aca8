//! The `profiles` object of `config.json`: named subsets of the servers and of their tools,
//! prompts and resources, each with its own naming of tools.
//!
//! ```text
//! "profiles": {
//!   "coding": {"servers": ["git", "files"], "tools": ["git_*", "mcp_files_read_*"],
//!              "prompts": [], "resources": ["file:///home/me/notes/*"], "naming": "server"}
//! }
//! ```
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `servers` | every server | the servers whose capabilities the profile may serve |
//! | `tools` | `["*"]` | globs over a tool's raw name or its default wrapped name `mcp_<server>_<tool>` |
//! | `prompts` | `["*"]` | globs over a prompt's raw name or its default wrapped name |
//! | `resources` | `["*"]` | globs over a resource's or template's name, URI (template) or default wrapped name |
//! | `naming` | `"wrapped"` | [`ProfileNaming`]: how the profile's tools are named |
//! | `clients` | none | globs over an agent's `clientInfo.name`: a main-socket session whose agent matches gets this profile |
//! | `toolSearch`, `alwaysList` | the top-level values | [`ToolSearchConfig`]: list only the search tools and the pinned tools |
//!
//! Globs are the `glob` crate's: `*`, `?`, `[a-z]`, `[!x]`; matching is case-sensitive.
//!
//! Failure is contained as for server entries: a profile whose entry is wrong (not an object,
//! a name that cannot name a socket, an unknown server, a bad glob, a naming that would make
//! two servers' tools collide) is kept with its error ([`ProfileSpec::entry`] is `Err`) and
//! serves nothing; the other profiles and every server run as usual. Unknown keys in a
//! profile are warnings.

use glob::Pattern;
use serde_json::Value;

use super::ServerSpec;
use super::error::json_type;
use super::tool_search::{ToolSearchConfig, parse_tool_search};

/// The keys a profile entry may have.
const KNOWN_KEYS: &[&str] = &[
    "servers",
    "tools",
    "prompts",
    "resources",
    "naming",
    "clients",
    "toolSearch",
    "alwaysList",
];

/// The longest profile name: it becomes part of a socket file name.
pub const MAX_PROFILE_NAME_LEN: usize = 64;

/// How a profile names the tools it serves (prompts and resources keep their names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ProfileNaming {
    /// `"wrapped"`: `mcp_<server>_<tool>`, as the default view serves them.
    #[default]
    Wrapped,
    /// `"server"`: `<server>_<tool>`, without the `mcp_` prefix.
    Server,
    /// `"raw"`: the server's own tool name (sanitised); only for a profile of exactly one
    /// server, where no two tools can share a name.
    Raw,
}

impl ProfileNaming {
    /// The value as written in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            ProfileNaming::Wrapped => "wrapped",
            ProfileNaming::Server => "server",
            ProfileNaming::Raw => "raw",
        }
    }
}

/// One glob of a profile's `tools`, `prompts` or `resources`, with the text it was written as.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileGlob {
    /// As written in the file.
    pub text: String,
    pattern: Pattern,
}

impl ProfileGlob {
    /// The glob written as `text`, or why it is not one.
    pub(super) fn new(text: String) -> Result<ProfileGlob, String> {
        match Pattern::new(&text) {
            Ok(pattern) => Ok(ProfileGlob { text, pattern }),
            Err(e) => Err(format!(
                "\"{text}\" is not a valid glob: {} (at character {})",
                e.msg, e.pos
            )),
        }
    }

    /// Whether `name` matches the glob (whole string, case-sensitive).
    pub fn matches(&self, name: &str) -> bool {
        self.pattern.matches(name)
    }
}

/// A validated profile.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileConfig {
    /// The key under `profiles`.
    pub name: String,
    /// The servers it may serve from; `None` when `servers` is absent (every server).
    pub servers: Option<Vec<String>>,
    /// `tools` globs; `None` when absent (every tool).
    pub tools: Option<Vec<ProfileGlob>>,
    /// `prompts` globs; `None` when absent (every prompt).
    pub prompts: Option<Vec<ProfileGlob>>,
    /// `resources` globs; `None` when absent (every resource and template).
    pub resources: Option<Vec<ProfileGlob>>,
    /// How its tools are named.
    pub naming: ProfileNaming,
    /// `clients` globs over `clientInfo.name`; empty when absent.
    pub clients: Vec<ProfileGlob>,
    /// `toolSearch` and `alwaysList`, the top level's where absent.
    pub tool_search: ToolSearchConfig,
}

impl ProfileConfig {
    /// Whether an agent calling itself `client` (`clientInfo.name`) gets this profile on the
    /// main socket.
    pub fn matches_client(&self, client: &str) -> bool {
        self.clients.iter().any(|g| g.matches(client))
    }

    /// Whether the profile may serve from `server`.
    pub fn has_server(&self, server: &str) -> bool {
        self.servers
            .as_ref()
            .is_none_or(|s| s.iter().any(|n| n == server))
    }
}

/// Whether any of `globs` (absent = all) matches one of `names`.
pub fn any_match(globs: Option<&[ProfileGlob]>, names: &[&str]) -> bool {
    globs.is_none_or(|globs| globs.iter().any(|g| names.iter().any(|n| g.matches(n))))
}

/// One key of `profiles` and the outcome of validating it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileSpec {
    /// The key under `profiles`, as written.
    pub name: String,
    /// The validated profile, or why it cannot be served (one sentence naming the key).
    pub entry: Result<ProfileConfig, String>,
}

/// Reads the `profiles` value of the document against the servers in `servers`; unknown keys
/// and a `profiles` that is not an object are pushed onto `warnings`.
pub(super) fn parse_profiles(
    value: Option<&Value>,
    servers: &[ServerSpec],
    tool_search: &ToolSearchConfig,
    warnings: &mut Vec<String>,
) -> Vec<ProfileSpec> {
    let entries = match value {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Object(entries)) => entries,
        Some(other) => {
            warnings.push(format!(
                "\"profiles\" must be an object of named profiles, found {}; no profile is served",
                json_type(other)
            ));
            return Vec::new();
        }
    };
    entries
        .iter()
        .map(|(name, value)| ProfileSpec {
            name: name.clone(),
            entry: parse_profile(name, value, servers, tool_search, warnings),
        })
        .collect()
}

fn parse_profile(
    name: &str,
    value: &Value,
    servers: &[ServerSpec],
    tool_search: &ToolSearchConfig,
    warnings: &mut Vec<String>,
) -> Result<ProfileConfig, String> {
    let at = format!("profile \"{name}\"");
    check_name(name).map_err(|why| format!("{at}: {why}"))?;
    let entry = value
        .as_object()
        .ok_or_else(|| format!("{at} must be an object, found {}", json_type(value)))?;
    for key in entry.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())) {
        warnings.push(format!(
            "{at}: unknown key \"{key}\" is ignored (kept in the file)"
        ));
    }
    let list_servers = match entry.get("servers") {
        None | Some(Value::Null) => None,
        Some(v) => Some(strings(v).ok_or_else(|| {
            format!(
                "{at}: \"servers\" must be an array of server names, found {}",
                json_type(v)
            )
        })?),
    };
    if let Some(names) = &list_servers {
        let unknown: Vec<&str> = names
            .iter()
            .filter(|n| !servers.iter().any(|s| &s.name == *n))
            .map(String::as_str)
            .collect();
        if !unknown.is_empty() {
            let known: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
            return Err(format!(
                "{at} names unknown server(s): {}. Servers in this config: {}",
                unknown.join(", "),
                if known.is_empty() {
                    "(none)".to_owned()
                } else {
                    known.join(", ")
                }
            ));
        }
    }
    let naming = match entry.get("naming") {
        None | Some(Value::Null) => ProfileNaming::Wrapped,
        Some(Value::String(s)) if s == "wrapped" => ProfileNaming::Wrapped,
        Some(Value::String(s)) if s == "server" => ProfileNaming::Server,
        Some(Value::String(s)) if s == "raw" => ProfileNaming::Raw,
        Some(other) => {
            return Err(format!(
                "{at}: \"naming\" must be \"wrapped\", \"server\" or \"raw\", found {}",
                other
            ));
        }
    };
    if naming == ProfileNaming::Raw {
        let count = list_servers
            .as_ref()
            .map_or(servers.len(), std::vec::Vec::len);
        if count != 1 {
            return Err(format!(
                "{at}: \"naming\": \"raw\" needs exactly one server in \"servers\" (it has {count}): two servers' tools could share a name; use \"server\" instead"
            ));
        }
    }
    Ok(ProfileConfig {
        name: name.to_owned(),
        servers: list_servers,
        tools: globs(&at, "tools", entry.get("tools"))?,
        prompts: globs(&at, "prompts", entry.get("prompts"))?,
        resources: globs(&at, "resources", entry.get("resources"))?,
        naming,
        clients: globs(&at, "clients", entry.get("clients"))?.unwrap_or_default(),
        tool_search: parse_tool_search(&at, entry, tool_search)?,
    })
}

/// A profile name names a socket file: 1 to [`MAX_PROFILE_NAME_LEN`] ASCII letters, digits,
/// `-` and `_`.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_PROFILE_NAME_LEN {
        return Err(format!(
            "a profile name must be 1 to {MAX_PROFILE_NAME_LEN} characters"
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(
            "a profile name may hold only ASCII letters, digits, '-' and '_' (it names a socket file)"
                .to_owned(),
        );
    }
    Ok(())
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// The globs of `key` (`None` when absent or `null`), or one sentence naming `at` and the key.
pub(super) fn globs(
    at: &str,
    key: &str,
    value: Option<&Value>,
) -> Result<Option<Vec<ProfileGlob>>, String> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let texts = strings(value).ok_or_else(|| {
        format!(
            "{at}: \"{key}\" must be an array of names or globs, found {}",
            json_type(value)
        )
    })?;
    texts
        .into_iter()
        .map(|text| ProfileGlob::new(text).map_err(|why| format!("{at}: \"{key}\" entry {why}")))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn profiles(text: &str) -> Vec<super::ProfileSpec> {
        crate::config::parse(text, Path::new("c.json"))
            .map(|c| c.profiles)
            .unwrap_or_default()
    }

    const SERVERS: &str = r#""mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}"#;

    #[test]
    fn a_valid_profile_reads_its_fields() {
        let p = profiles(&format!(
            r#"{{{SERVERS}, "profiles": {{"one": {{"servers": ["a"], "tools": ["ec*", "mcp_a_add"], "naming": "raw"}}}}}}"#
        ));
        let one = p[0].entry.as_ref().expect("valid");
        assert_eq!(one.servers.as_deref(), Some(&["a".to_owned()][..]));
        assert!(one.has_server("a") && !one.has_server("b"));
        let tools = one.tools.as_deref().expect("tools");
        assert!(tools[0].matches("echo") && !tools[0].matches("add"));
        assert_eq!(one.naming, super::ProfileNaming::Raw);
        assert!(one.prompts.is_none() && one.resources.is_none());
    }

    #[test]
    fn each_broken_profile_fails_alone_with_its_reason() {
        let p = profiles(&format!(
            r#"{{{SERVERS}, "profiles": {{
                "ghost": {{"servers": ["a", "zz"]}},
                "badglob": {{"tools": ["[oops"]}},
                "rawtwo": {{"naming": "raw"}},
                "bad name": {{}},
                "odd": 3,
                "fine": {{"servers": ["b"]}}
            }}}}"#
        ));
        let errors: Vec<String> = p.iter().filter_map(|s| s.entry.clone().err()).collect();
        assert_eq!(errors.len(), 5, "{errors:?}");
        assert!(errors[0].contains("unknown server(s): zz") && errors[0].contains("a, b"));
        assert!(
            errors[1].contains("\"[oops\" is not a valid glob"),
            "{}",
            errors[1]
        );
        assert!(errors[2].contains("exactly one server"), "{}", errors[2]);
        assert!(errors[3].contains("ASCII letters"), "{}", errors[3]);
        assert!(errors[4].contains("must be an object"), "{}", errors[4]);
        assert!(p[5].entry.is_ok());
    }

    #[test]
    fn profiles_not_an_object_is_a_warning_and_servers_still_load() {
        let config = crate::config::parse(
            &format!(r#"{{{SERVERS}, "profiles": []}}"#),
            Path::new("c.json"),
        )
        .expect("loads");
        assert!(config.profiles.is_empty());
        assert_eq!(config.servers.len(), 2);
        assert!(config.warnings.iter().any(|w| w.contains("\"profiles\"")));
    }
}
