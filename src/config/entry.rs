//! One server entry of `mcpServers`: validation and defaults (DESIGN §3).
//!
//! Per-entry rules: `null` counts as absent for every field; the first problem found fails the
//! entry with [`ConfigError::Field`] (or [`ConfigError::Entry`] when it is not an object);
//! unknown keys only produce a warning. URLs holding `${VAR}` are fully checked only after
//! expansion (see `expand.rs`), because the variable may supply the scheme or host.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::error::json_type;
use super::expand::check_references;
use super::fields::Fields;
use super::transport::{Kind, check_url, detect};
use super::{ConfigError, HttpConfig, ServerConfig, StdioConfig, TransportConfig};

/// `toolTimeout` when absent: 30 seconds.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(30);
/// `connectTimeout` when absent: 30 seconds.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Every key a server entry may have.
pub(crate) const KNOWN_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "toolTimeout",
    "enabledTools",
    "disabled",
    "connectTimeout",
    "source",
    "oauth",
    "roots",
    "autoApproveChanges",
    "toolPolicy",
    "approvalTimeout",
];

/// Validates the entry `value` of server `name`, pushing one warning per unknown key.
pub(crate) fn parse_entry(
    name: &str,
    value: &Value,
    warnings: &mut Vec<String>,
) -> Result<ServerConfig, ConfigError> {
    let obj = value.as_object().ok_or_else(|| ConfigError::Entry {
        server: name.to_owned(),
        found: json_type(value),
    })?;
    if name.trim().is_empty() {
        // An empty name would make tools look like they belong to a server named after them.
        return Err(ConfigError::field(name, "name", "the server name is empty"));
    }
    for key in obj.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())) {
        // A key of the file's top level put inside an entry: say where it goes.
        let hint = if key == "ssrfWhitelist" {
            "; it belongs at the top level of the file, beside \"mcpServers\""
        } else {
            ""
        };
        warnings.push(format!(
            "server \"{name}\": unknown key \"{key}\" is ignored (kept in the file){hint}"
        ));
    }
    let f = Fields { name, obj };

    let explicit = match f.string("type")? {
        Some(t) => Some(Kind::from_type(t).ok_or_else(|| {
            ConfigError::field(
                name,
                "type",
                format!("unknown transport \"{t}\" (expected stdio, sse or streamableHttp; http and streamable-http are read as streamableHttp)"),
            )
        })?),
        None => None,
    };
    let command = f.string("command")?;
    let url = f.string("url")?;
    let kind = explicit
        .or_else(|| detect(command.is_some(), url))
        .ok_or_else(|| {
            ConfigError::field(
                name,
                "command",
                "missing: set `command` (stdio) or `url` (sse, streamableHttp)",
            )
        })?;

    match (explicit, kind, command.is_some(), url.is_some()) {
        (None, _, true, true) => warnings.push(format!(
            "server \"{name}\": both \"command\" and \"url\" are set; \"command\" is run and \"url\" is ignored (set \"type\" to choose)"
        )),
        (Some(_), Kind::Stdio, _, true) => warnings.push(format!(
            "server \"{name}\": \"url\" is ignored for type stdio"
        )),
        (Some(_), Kind::Sse | Kind::StreamableHttp, true, _) => warnings.push(format!(
            "server \"{name}\": \"command\" is ignored for type {}",
            kind.name()
        )),
        _ => {}
    }
    let transport = match kind {
        Kind::Stdio => {
            let command = command
                .ok_or_else(|| ConfigError::field(name, "command", "is required for type stdio"))?;
            if command.is_empty() {
                return Err(ConfigError::field(name, "command", "must not be empty"));
            }
            check_references(name, "command", command)?;
            let args = f.string_list("args")?.unwrap_or_default();
            for (i, a) in args.iter().enumerate() {
                check_references(name, &format!("args[{i}]"), a)?;
            }
            let env = f.string_map("env")?;
            let cwd = f.string("cwd")?.filter(|c| !c.is_empty());
            if let Some(c) = cwd {
                check_references(name, "cwd", c)?;
            }
            TransportConfig::Stdio(StdioConfig {
                command: command.to_owned(),
                args,
                env,
                cwd: cwd.map(PathBuf::from),
            })
        }
        Kind::Sse | Kind::StreamableHttp => {
            let url = url.ok_or_else(|| {
                ConfigError::field(name, "url", format!("is required for type {}", kind.name()))
            })?;
            check_references(name, "url", url)?;
            if !url.contains("${") {
                check_url(name, url)?;
            }
            let http = HttpConfig {
                url: url.to_owned(),
                headers: f.string_map("headers")?,
                oauth: super::oauth::parse_oauth(name, obj.get("oauth"), warnings)?,
            };
            if has_userinfo(url) && crate::net::has_authorization(&http.headers) {
                warnings.push(format!(
                    "server \"{name}\": the user and password in \"url\" are not sent: the \"Authorization\" header is"
                ));
            }
            if kind == Kind::Sse {
                TransportConfig::Sse(http)
            } else {
                TransportConfig::StreamableHttp(http)
            }
        }
    };

    Ok(ServerConfig {
        name: name.to_owned(),
        transport,
        tool_timeout: f.seconds("toolTimeout")?.unwrap_or(DEFAULT_TOOL_TIMEOUT),
        connect_timeout: f
            .seconds("connectTimeout")?
            .unwrap_or(DEFAULT_CONNECT_TIMEOUT),
        enabled_tools: f
            .string_list("enabledTools")?
            .unwrap_or_else(|| vec!["*".to_owned()]),
        disabled: f.boolean("disabled")?.unwrap_or(false),
        auto_approve_changes: f.boolean("autoApproveChanges")?.unwrap_or(false),
        roots: parse_roots(name, f.string_list("roots")?.unwrap_or_default())?,
        tool_policy: super::policy::parse_tool_policy(name, obj.get("toolPolicy"))?,
        approval_timeout: f
            .seconds("approvalTimeout")?
            .unwrap_or(super::policy::DEFAULT_APPROVAL_TIMEOUT),
    })
}

/// Whether `url` carries `user[:password]@` (a `${VAR}` inside it is not expanded here; the
/// connection drops such userinfo all the same, see [`crate::net::connect_url`]).
fn has_userinfo(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| !u.username().is_empty() || u.password().is_some())
}

/// `roots`: absolute directory paths (a leading `~/` is the home directory), sent to the server
/// as `file://` URIs in `roots/list` when no calling agent answers it (MCP "Roots").
fn parse_roots(name: &str, roots: Vec<String>) -> Result<Vec<PathBuf>, ConfigError> {
    roots
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let field = format!("roots[{i}]");
            let path = match r.strip_prefix("~/") {
                Some(rest) => dirs::home_dir()
                    .ok_or_else(|| {
                        ConfigError::field(name, &field, "\"~/\" but there is no home directory")
                    })?
                    .join(rest),
                None => PathBuf::from(&r),
            };
            if !path.is_absolute() {
                return Err(ConfigError::field(
                    name,
                    &field,
                    format!("must be an absolute directory path (or start with ~/), found \"{r}\""),
                ));
            }
            Ok(path)
        })
        .collect()
}

#[cfg(test)]
mod tests;
