//! The install flow shared by the CLI and the window: fetch a version, map it to an entry,
//! check what the registry cannot be trusted with (remote URL through the SSRF guard, the
//! runtime being installed), then write `config.json` atomically. Any error writes nothing.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::entry::{self, Built, Choice};
use super::inputs::{SecretSink, Values};
use super::model::ServerDetail;
use super::sources::{self, Source};
use super::{RegistryClient, RegistryError};
use crate::config::{self, SsrfWhitelist};
use crate::manage::edit;
use crate::net::Guard;

/// An entry ready to save.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Planned {
    /// The server name in `mcpServers`.
    pub server: String,
    /// The entry, `source` included.
    pub entry: Value,
    /// The mapping's details (fields, inputs, exports).
    pub built: Built,
    /// Things the user should know (runtime not on PATH, a remote host that did not resolve).
    pub warnings: Vec<String>,
}

/// The default `mcpServers` key for registry name `name`: the part after the `/`, lower case,
/// other characters than `a-z0-9-_` as `-`.
pub fn default_server_name(name: &str) -> String {
    let last = name.rsplit('/').next().unwrap_or(name);
    let cleaned: String = last
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed = cleaned.trim_matches('-');
    if trimmed.is_empty() {
        "server".into()
    } else {
        trimmed.to_owned()
    }
}

/// Whether `program` is found on this process's PATH (the `on_path` of [`plan`]).
pub fn on_path(program: &str) -> bool {
    which::which(program).is_ok()
}

/// What kind of thing `choice` installs, remembered in `source.kind`.
fn kind_of(detail: &ServerDetail, choice: Choice) -> String {
    match choice {
        Choice::Package(i) => detail
            .packages
            .get(i)
            .map(|p| p.registry_type.clone())
            .unwrap_or_default(),
        Choice::Remote(_) => "remote".into(),
    }
}

/// The option of `detail` of the same kind as `kind` (for updates), else the default.
///
/// # Errors
/// As [`entry::default_choice`].
pub fn choice_like(detail: &ServerDetail, kind: Option<&str>) -> Result<Choice, RegistryError> {
    let same = entry::options(detail)
        .into_iter()
        .find(|o| o.unsupported.is_none() && kind.is_some_and(|k| kind_of(detail, o.choice) == k));
    match same {
        Some(o) => Ok(o.choice),
        None => entry::default_choice(detail),
    }
}

/// Maps `detail` to a checked entry for server `server`.
///
/// `on_path` says whether a program is installed (tests pass a fake PATH). An `oci` package
/// without `docker`/`podman` is an error; a missing `npx`/`uvx` is a warning (the entry is
/// still right once Node.js / uv is installed, and `doctor` will say so).
///
/// # Errors
/// As [`entry::build`], [`RegistryError::Ssrf`] for a remote URL to a blocked address,
/// [`RegistryError::MissingRuntime`], [`RegistryError::Config`] when the entry does not
/// validate.
#[allow(clippy::too_many_arguments)]
pub async fn plan(
    registry_url: &str,
    detail: &ServerDetail,
    choice: Choice,
    server: &str,
    values: &Values,
    secrets: &dyn SecretSink,
    whitelist: &SsrfWhitelist,
    on_path: &(dyn Fn(&str) -> bool + Sync),
) -> Result<Planned, RegistryError> {
    let built = entry::build(detail, choice, server, values, secrets, false)?;
    let mut warnings = Vec::new();
    if let Some(program) = &built.program
        && !on_path(program)
    {
        let hint = match program.as_str() {
            "docker" | "podman" => {
                return Err(RegistryError::MissingRuntime {
                    program: program.clone(),
                    what: format!("the oci package of {}", detail.name),
                    hint: "install Docker (https://docs.docker.com/engine/install/) or choose another package or a remote".into(),
                });
            }
            "npx" | "bunx" => "install Node.js (it brings npx)",
            _ => "install uv (https://docs.astral.sh/uv/, it brings uvx)",
        };
        warnings.push(format!("{program} is not on PATH: {hint}"));
    }
    if let Some(url) = built.entry.get("url").and_then(Value::as_str) {
        warnings.extend(check_remote_url(url, whitelist).await?);
    }
    let source = Source {
        registry: registry_url.to_owned(),
        name: detail.name.clone(),
        version: detail.version.clone(),
        inputs: built.inputs.clone(),
        kind: Some(kind_of(detail, choice)),
    };
    let mut entry = built.entry.clone();
    if let Value::Object(obj) = &mut entry {
        obj.insert("source".into(), source.to_value());
    }
    edit::validate_entry(server, &entry).map_err(|e| RegistryError::Config(e.to_string()))?;
    Ok(Planned {
        server: server.to_owned(),
        entry,
        built,
        warnings,
    })
}

/// Checks a remote server's URL: scheme, IP literals, and the addresses its host resolves to.
/// `${…}` references in the path or query are checked as plain text; a host that holds one
/// (which only the person can have typed) is a warning, checked when the server connects.
/// A host that does not resolve now is a warning, not an error.
///
/// # Errors
/// [`RegistryError::Ssrf`] / [`RegistryError::Hostile`].
pub async fn check_remote_url(
    url: &str,
    whitelist: &SsrfWhitelist,
) -> Result<Vec<String>, RegistryError> {
    let shown = crate::net::redact(url);
    let hostile = |reason: String| RegistryError::Hostile {
        what: "remote url".into(),
        value: shown.clone(),
        reason,
    };
    let authority = url.split_once("://").map_or(url, |(_, rest)| {
        rest.split(['/', '?', '#']).next().unwrap_or(rest)
    });
    if authority.contains("${") {
        // Only the person can have written a reference here (registry text is escaped); the
        // guard checks the host it expands to when the server connects.
        return Ok(vec![format!(
            "{shown}: the host is read from a ${{…}} reference, so it is checked when the \
             server connects, not now"
        )]);
    }
    // References elsewhere (path, query) do not change where the request goes: the URL is
    // checked with each one replaced by plain text.
    let parsed = url::Url::parse(&without_references(url)).map_err(|e| hostile(e.to_string()))?;
    let guard = Guard::new(&whitelist.nets);
    let ssrf = |e: crate::net::SsrfError| RegistryError::Ssrf {
        url: shown.clone(),
        reason: e.to_string(),
    };
    guard.check_url_literal(&parsed).map_err(ssrf)?;
    match guard.check_url(&parsed).await {
        Ok(()) => Ok(Vec::new()),
        Err(e @ crate::net::SsrfError::Blocked { .. }) => Err(ssrf(e)),
        Err(e) => Ok(vec![format!(
            "{shown}: {e} (not checked now; checked again at connect time)"
        )]),
    }
}

/// `url` with every `${…}` replaced by `x`.
fn without_references(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let mut rest = url;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        out.push('x');
        rest = rest[at..].find('}').map_or("", |end| &rest[at + end + 1..]);
    }
    out.push_str(rest);
    out
}

/// Adds (or, with `replace`, replaces) `planned` in the config file at `path`, atomically
/// with a `.bak`, after storing its secret values through `secrets`.
///
/// Checks come first, writes after: the name must be free (unless `replace`) before any
/// secret is stored, so a refused install never overwrites the keychain entry of the server
/// that holds the name; a keychain failure leaves the file untouched.
///
/// # Errors
/// [`RegistryError::Config`] (the name is taken, the file does not parse…);
/// [`RegistryError::Secret`] when the keychain refuses. Nothing is written then (secrets stored
/// before a later keychain refusal stay stored).
pub fn save(
    path: &Path,
    planned: &Planned,
    replace: bool,
    secrets: &dyn SecretSink,
) -> Result<(), RegistryError> {
    let config_error =
        |e: &dyn std::fmt::Display| RegistryError::Config(format!("{}: {e}", path.display()));
    if !replace {
        check_name_free(path, &planned.server)?;
    }
    store_secrets(planned, secrets)?;
    edit::update_file(path, |doc| {
        edit::set_server(doc, &planned.server, planned.entry.clone(), replace)
    })
    .map(|_| ())
    .map_err(|e| config_error(&e))
}

/// Stores the secret values of `planned` through `secrets` (for callers that save the entry
/// themselves, after their own checks).
///
/// # Errors
/// [`RegistryError::Secret`] naming the input the keychain refused.
pub fn store_secrets(planned: &Planned, secrets: &dyn SecretSink) -> Result<(), RegistryError> {
    planned
        .built
        .secrets
        .iter()
        .try_for_each(|s| s.store(secrets))
}

/// Refuses `server` when the config at `path` already has an entry of that name (a missing
/// file has none).
///
/// # Errors
/// [`RegistryError::Config`]: the name is taken, or the file cannot be read as a config.
pub fn check_name_free(path: &Path, server: &str) -> Result<(), RegistryError> {
    let cfg = match config::load(path) {
        Ok(cfg) => cfg,
        Err(config::ConfigError::Io {
            kind: std::io::ErrorKind::NotFound,
            ..
        }) => return Ok(()),
        Err(e) => return Err(RegistryError::Config(format!("{}: {e}", path.display()))),
    };
    match cfg.raw.get("mcpServers").and_then(|s| s.get(server)) {
        Some(_) => Err(RegistryError::Config(format!(
            "{}: {}",
            path.display(),
            edit::EditError::Exists {
                name: server.to_owned()
            }
        ))),
        None => Ok(()),
    }
}

/// One installed server compared with its registry.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outdated {
    /// `mcpServers` key.
    pub server: String,
    /// Where it came from.
    pub source: Source,
    /// The registry's latest version, when it answered.
    pub latest: Option<String>,
    /// Whether `latest` is newer than the installed version.
    pub update_available: bool,
    /// Why the registry could not be asked.
    pub error: Option<String>,
    /// Where the latest version connects instead (a new origin needs consent to update).
    pub moves: Vec<super::update::Move>,
}

/// Every entry of `cfg` with a `source`, compared with `versions/latest` of its registry.
/// Registries are matched by URL with the configured ones (for their token); an unknown
/// registry URL is asked without a token.
pub async fn outdated(
    cfg: &config::Config,
    lookup: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Vec<Outdated> {
    let configured = sources::registries(&cfg.raw).unwrap_or_default();
    let mut out = Vec::new();
    let Some(servers) = cfg.raw.get("mcpServers").and_then(Value::as_object) else {
        return out;
    };
    for (server, entry) in servers {
        let Some(source) = Source::of_entry(entry) else {
            continue;
        };
        let latest = async {
            let client = client_for(&configured, &source.registry, cfg, lookup)?;
            client.version(&source.name, "latest").await
        }
        .await;
        let (latest, error, moves) = match latest {
            Ok(r) => {
                let moves = moves_to(entry, server, &source, &r.server);
                (Some(r.server.version), None, moves)
            }
            Err(e) => (None, Some(e.to_string()), Vec::new()),
        };
        out.push(Outdated {
            moves,
            server: server.clone(),
            update_available: latest
                .as_deref()
                .is_some_and(|l| sources::is_newer(l, &source.version)),
            source,
            latest,
            error,
        });
    }
    out
}

/// Where `entry` (installed from `source`) would connect at version `detail`: mapped with the
/// remembered inputs, nothing stored (no keychain is touched).
fn moves_to(
    entry: &Value,
    server: &str,
    source: &Source,
    detail: &ServerDetail,
) -> Vec<super::update::Move> {
    let values = Values {
        stored: source.inputs.clone(),
        ..Values::default()
    };
    choice_like(detail, source.kind.as_deref())
        .and_then(|choice| {
            let built = entry::build(
                detail,
                choice,
                server,
                &values,
                &super::inputs::NoKeychainSink,
                true,
            )?;
            Ok(super::update::what_moves(
                entry,
                &built.entry,
                detail,
                choice,
            ))
        })
        .unwrap_or_default()
}

/// The client for registry URL `url`, with the configured token when it is configured.
///
/// # Errors
/// As [`sources::RegistryRef::client`].
pub fn client_for(
    configured: &[sources::RegistryRef],
    url: &str,
    cfg: &config::Config,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<RegistryClient, RegistryError> {
    let found = configured
        .iter()
        .find(|r| r.url.trim_end_matches('/') == url.trim_end_matches('/'))
        .cloned()
        .unwrap_or(sources::RegistryRef {
            name: url.to_owned(),
            url: url.to_owned(),
            token: None,
        });
    found.client(&cfg.ssrf_whitelist, lookup)
}

#[cfg(test)]
#[path = "install_tests.rs"]
mod tests;
