//! `manifest.json` of an MCP bundle: the fields the companion reads, checked.
//!
//! Reference: the MCPB manifest spec (`MANIFEST.md` of `anthropics/mcpb`) and the JSON schemas
//! shipped in `@anthropic-ai/mcpb` 2.1.2 for `manifest_version` 0.1 to 0.4 (`dxt_version` is
//! the older name of the same field). Fields the companion does not use (icons, tools,
//! prompts, `_meta`…) are not checked; unknown keys are ignored, as the reference loader's
//! loose schema does.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::BundleError;
use super::paths;
pub use super::user_config::{OptionType, UserOption};

/// The manifest versions this companion reads.
pub const VERSIONS: &[&str] = &["0.1", "0.2", "0.3", "0.4"];

/// How the bundle's server runs (`server.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerType {
    /// A Node.js script (`node`).
    Node,
    /// A Python script (`python`).
    Python,
    /// An executable in the bundle.
    Binary,
    /// A Python project run by `uv` (manifest 0.4).
    Uv,
}

impl ServerType {
    /// The manifest's name of it.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerType::Node => "node",
            ServerType::Python => "python",
            ServerType::Binary => "binary",
            ServerType::Uv => "uv",
        }
    }
}

/// `mcp_config` (or one of its `platform_overrides`): how to launch the server, with
/// `${…}` variables still in it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// Program.
    pub command: Option<String>,
    /// Arguments (`None`: not given, the base ones apply).
    pub args: Option<Vec<String>>,
    /// Environment (`None`: not given).
    pub env: Option<BTreeMap<String, String>>,
}

/// The checked manifest.
#[derive(Clone, Debug)]
pub struct Manifest {
    /// `manifest_version` (or `dxt_version`).
    pub manifest_version: String,
    /// Machine-readable name.
    pub name: String,
    /// Human name, when given.
    pub display_name: Option<String>,
    /// The bundle's version.
    pub version: String,
    /// Short description.
    pub description: String,
    /// `author.name`.
    pub author: String,
    /// `server.type`.
    pub server_type: ServerType,
    /// `server.entry_point`: a relative path inside the bundle.
    pub entry_point: String,
    /// `server.mcp_config` without its overrides.
    pub mcp_config: McpConfig,
    /// `mcp_config.platform_overrides` by platform (`darwin`, `win32`, `linux`).
    pub overrides: BTreeMap<String, McpConfig>,
    /// `compatibility.platforms` (empty: any).
    pub platforms: Vec<String>,
    /// `compatibility.runtimes` (`node`, `python`) → version range.
    pub runtimes: BTreeMap<String, String>,
    /// `user_config`, in the manifest's order.
    pub user_config: Vec<UserOption>,
}

/// The platform names of `compatibility.platforms` (Node's `process.platform`).
pub const PLATFORMS: &[&str] = &["darwin", "win32", "linux"];

/// This machine's platform name, as `compatibility.platforms` spells it.
pub fn this_platform() -> &'static str {
    if cfg!(target_os = "macos") {
        "darwin"
    } else if cfg!(windows) {
        "win32"
    } else {
        "linux"
    }
}

impl Manifest {
    /// The launch config for `platform`: the base one with the override's `command`, `args`
    /// and `env` each replacing the base's when given (as the reference loader does).
    pub fn config_for(&self, platform: &str) -> McpConfig {
        let mut c = self.mcp_config.clone();
        if let Some(o) = self.overrides.get(platform) {
            if o.command.is_some() {
                c.command.clone_from(&o.command);
            }
            if o.args.is_some() {
                c.args.clone_from(&o.args);
            }
            if o.env.is_some() {
                c.env.clone_from(&o.env);
            }
        }
        c
    }

    /// The option of key `key`.
    pub fn option(&self, key: &str) -> Option<&UserOption> {
        self.user_config.iter().find(|o| o.key == key)
    }
}

/// Parses and checks `bytes` (the archive's `manifest.json`).
///
/// # Errors
/// [`BundleError::Manifest`] naming the field and what is wrong.
pub fn parse(bytes: &[u8]) -> Result<Manifest, BundleError> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| bad("manifest.json", e))?;
    let obj = doc
        .as_object()
        .ok_or_else(|| bad("manifest.json", "expected a JSON object"))?;
    let manifest_version = match (obj.get("manifest_version"), obj.get("dxt_version")) {
        (Some(v), _) | (None, Some(v)) => v
            .as_str()
            .ok_or_else(|| bad("manifest_version", "must be a string"))?
            .to_owned(),
        (None, None) => return Err(bad("manifest_version", "is missing")),
    };
    if !VERSIONS.contains(&manifest_version.as_str()) {
        return Err(bad(
            "manifest_version",
            format!(
                "\"{}\" is not one this companion reads ({})",
                quote(&manifest_version),
                VERSIONS.join(", ")
            ),
        ));
    }
    let author = obj
        .get("author")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("author", "must be an object with a \"name\""))?;
    let server = obj
        .get("server")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("server", "must be an object"))?;
    let server_type = match text(server, "server.type", "type")?.as_str() {
        "node" => ServerType::Node,
        "python" => ServerType::Python,
        "binary" => ServerType::Binary,
        "uv" => ServerType::Uv,
        other => {
            return Err(bad(
                "server.type",
                format!("\"{}\" is not node, python, binary or uv", quote(other)),
            ));
        }
    };
    let entry_point = text(server, "server.entry_point", "entry_point")?;
    paths::relative(&entry_point)
        .map_err(|r| bad("server.entry_point", format!("is refused: {r}")))?;
    let config = server
        .get("mcp_config")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("server.mcp_config", "must be an object"))?;
    let base = read_config(config, "server.mcp_config")?;
    if base.command.is_none() {
        return Err(bad("server.mcp_config.command", "is missing"));
    }
    let mut overrides = BTreeMap::new();
    if let Some(o) = config.get("platform_overrides") {
        let o = o
            .as_object()
            .ok_or_else(|| bad("server.mcp_config.platform_overrides", "must be an object"))?;
        for (platform, c) in o {
            let field = format!("server.mcp_config.platform_overrides.{platform}");
            let c = c
                .as_object()
                .ok_or_else(|| bad(&field, "must be an object"))?;
            overrides.insert(platform.clone(), read_config(c, &field)?);
        }
    }
    let (platforms, runtimes) = compatibility(obj.get("compatibility"))?;
    Ok(Manifest {
        manifest_version,
        name: text(obj, "name", "name")?,
        display_name: obj
            .get("display_name")
            .and_then(Value::as_str)
            .map(str::to_owned),
        version: text(obj, "version", "version")?,
        description: text(obj, "description", "description")?,
        author: text(author, "author.name", "name")?,
        server_type,
        entry_point,
        mcp_config: base,
        overrides,
        platforms,
        runtimes,
        user_config: super::user_config::parse(obj.get("user_config"))?,
    })
}

pub(super) fn bad(field: &str, reason: impl std::fmt::Display) -> BundleError {
    BundleError::Manifest {
        field: field.to_owned(),
        reason: reason.to_string(),
    }
}

/// `text` cut to 80 characters with control characters shown as `?`, for error messages.
pub fn quote(text: &str) -> String {
    crate::manage::registry::client::quote(text)
}

/// The non-empty string `obj[key]`, named `field` in errors.
pub(super) fn text(
    obj: &Map<String, Value>,
    field: &str,
    key: &str,
) -> Result<String, BundleError> {
    match obj.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(bad(field, "is empty")),
        Some(_) => Err(bad(field, "must be a string")),
        None => Err(bad(field, "is missing")),
    }
}

fn read_config(obj: &Map<String, Value>, field: &str) -> Result<McpConfig, BundleError> {
    let command = match obj.get("command") {
        None => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(_) => {
            return Err(bad(
                &format!("{field}.command"),
                "must be a non-empty string",
            ));
        }
    };
    let args = match obj.get("args") {
        None => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| bad(&format!("{field}.args[{i}]"), "must be a string"))
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(_) => return Err(bad(&format!("{field}.args"), "must be a list of strings")),
    };
    let env = match obj.get("env") {
        None => None,
        Some(Value::Object(m)) => Some(
            m.iter()
                .map(|(k, v)| match v.as_str() {
                    Some(s) if super::entry::is_env_name(k) => Ok((k.clone(), s.to_owned())),
                    Some(_) => Err(bad(
                        &format!("{field}.env"),
                        format!("\"{}\" is not an environment variable name", quote(k)),
                    )),
                    None => Err(bad(&format!("{field}.env.{k}"), "must be a string")),
                })
                .collect::<Result<BTreeMap<_, _>, _>>()?,
        ),
        Some(_) => return Err(bad(&format!("{field}.env"), "must be an object of strings")),
    };
    Ok(McpConfig { command, args, env })
}

type Compatibility = (Vec<String>, BTreeMap<String, String>);

fn compatibility(value: Option<&Value>) -> Result<Compatibility, BundleError> {
    let Some(value) = value else {
        return Ok((Vec::new(), BTreeMap::new()));
    };
    let obj = value
        .as_object()
        .ok_or_else(|| bad("compatibility", "must be an object"))?;
    let mut platforms = Vec::new();
    if let Some(p) = obj.get("platforms") {
        let list = p
            .as_array()
            .ok_or_else(|| bad("compatibility.platforms", "must be a list"))?;
        for item in list {
            match item.as_str() {
                Some(s) if PLATFORMS.contains(&s) => platforms.push(s.to_owned()),
                _ => {
                    return Err(bad(
                        "compatibility.platforms",
                        format!("{} is not darwin, win32 or linux", quote(&item.to_string())),
                    ));
                }
            }
        }
    }
    let mut runtimes = BTreeMap::new();
    if let Some(r) = obj.get("runtimes") {
        let r = r
            .as_object()
            .ok_or_else(|| bad("compatibility.runtimes", "must be an object"))?;
        for (name, range) in r {
            if !["node", "python"].contains(&name.as_str()) {
                return Err(bad(
                    "compatibility.runtimes",
                    format!("\"{}\" is not node or python", quote(name)),
                ));
            }
            let range = range.as_str().ok_or_else(|| {
                bad(
                    &format!("compatibility.runtimes.{name}"),
                    "must be a string",
                )
            })?;
            runtimes.insert(name.clone(), range.to_owned());
        }
    }
    Ok((platforms, runtimes))
}

#[cfg(test)]
#[path = "manifest_tests.rs"]
mod tests;
