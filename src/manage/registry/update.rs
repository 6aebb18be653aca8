//! `update`: re-install a server from its registry's latest version, in place. The inputs
//! remembered in `source.inputs` are reused (the user may change some), the same kind of
//! package or remote is chosen again, and keys the user added by hand (`enabledTools`,
//! `toolTimeout`, `cwd`, `disabled`…) are kept.
//!
//! The remembered inputs (secret headers included) were given for the old URL. A new version
//! whose remote moves to another origin (scheme, host or port) would send them to a party
//! the person never chose, so [`plan_update`] reports every [`Move`] and callers save a plan
//! with [`Move::needs_consent`] only after the person's explicit yes (`update
//! --accept-new-origin`, a prompt on a terminal, a confirmation in the window). A path
//! change on the same origin is reported but needs no consent (the same server gets them).

use serde::Serialize;
use serde_json::Value;

use super::RegistryError;
use super::inputs::{SecretSink, Values};
use super::install::{self, Planned};
use super::sources::{self, Source};
use crate::config;

/// Keys the mapping owns; every other key of the old entry survives an update.
const MAPPED_KEYS: &[&str] = &["command", "args", "env", "url", "headers", "type", "source"];

/// Something an update changes about where the entry connects.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Move {
    /// `origin` (scheme, host or port of the URL), `path`, or `package`.
    pub what: MoveKind,
    /// Before, e.g. `https://mcp.example.com` (an origin never shows userinfo).
    pub from: String,
    /// After.
    pub to: String,
}

/// Which part of the URL moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MoveKind {
    /// Scheme, host or port: another party.
    Origin,
    /// The path on the same origin.
    Path,
    /// The program and package a stdio entry runs: its `env` inputs go to another one.
    Package,
}

impl Move {
    /// Whether saving needs the person's explicit yes (a new origin or package).
    pub fn needs_consent(&self) -> bool {
        self.what != MoveKind::Path
    }
}

impl std::fmt::Display for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.what {
            MoveKind::Origin => "origin",
            MoveKind::Path => "path",
            MoveKind::Package => "package",
        };
        write!(f, "{what} {} → {}", self.from, self.to)
    }
}

/// The origin and path of a URL config string. References (`${…}`) may stand anywhere, so
/// this reads the text: origin = `scheme://host[:port]` without userinfo, path = up to `?`
/// or `#`. Scheme and host compare case-insensitively.
fn origin_and_path(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let after = &rest[end..];
    let path = &after[..after.find(['?', '#']).unwrap_or(after.len())];
    let path = if path.is_empty() { "/" } else { path };
    let mut origin = format!(
        "{}://{}",
        scheme.to_ascii_lowercase(),
        host.to_ascii_lowercase()
    );
    for (s, port) in [("http://", ":80"), ("https://", ":443")] {
        if origin.starts_with(s) && origin.ends_with(port) {
            origin.truncate(origin.len() - port.len());
        }
    }
    Some((origin, path.to_owned()))
}

/// What changes between the `url` of entry `old` and of entry `new` (empty when neither is a
/// remote, or nothing moves). An entry that gains a URL counts as a new origin.
pub fn moves(old: &Value, new: &Value) -> Vec<Move> {
    let url = |e: &Value| e.get("url").and_then(Value::as_str).map(str::to_owned);
    let (Some(after), before) = (url(new), url(old)) else {
        return Vec::new();
    };
    let Some((to_origin, to_path)) = origin_and_path(&after) else {
        return Vec::new();
    };
    let (from_origin, from_path) = match before.as_deref().and_then(origin_and_path) {
        Some(p) => p,
        None => ("(no URL)".to_owned(), String::new()),
    };
    let mut out = Vec::new();
    if from_origin != to_origin {
        out.push(Move {
            what: MoveKind::Origin,
            from: from_origin,
            to: to_origin,
        });
    } else if from_path != to_path {
        out.push(Move {
            what: MoveKind::Path,
            from: from_path,
            to: to_path,
        });
    }
    out
}

/// A package move between stdio entry `old` and `new`, which runs package `identifier`: the
/// command changes, or no argument of `old` names that package (`id`, `id@v`, `id==v`, `id:v`).
pub fn package_moves(old: &Value, new: &Value, identifier: &str) -> Vec<Move> {
    let command = |e: &Value| e.get("command").and_then(Value::as_str).map(str::to_owned);
    let Some(to_command) = command(new) else {
        return Vec::new();
    };
    let args: Vec<&str> = old
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let names = |a: &&str| {
        a.strip_prefix(identifier).is_some_and(|rest| {
            rest.is_empty() || rest.starts_with(['@', ':']) || rest.starts_with("==")
        })
    };
    let from = match command(old) {
        Some(c) if c == to_command && args.iter().any(names) => return Vec::new(),
        Some(c) => {
            let package = args
                .iter()
                .find(|a| !a.starts_with('-') && !["run"].contains(a));
            format!("{c} {}", package.unwrap_or(&""))
        }
        None => "(no command)".to_owned(),
    };
    vec![Move {
        what: MoveKind::Package,
        from: from.trim_end().to_owned(),
        to: format!("{to_command} {identifier}"),
    }]
}

/// Every move from entry `old` to entry `new`, the mapping of `choice` of `detail`: its URL
/// ([`moves`]) and, for a package, its program and package ([`package_moves`]).
pub fn what_moves(
    old: &Value,
    new: &Value,
    detail: &super::model::ServerDetail,
    choice: super::entry::Choice,
) -> Vec<Move> {
    let mut out = moves(old, new);
    if let super::entry::Choice::Package(i) = choice
        && let Some(p) = detail.packages.get(i)
    {
        out.extend(package_moves(old, new, &p.identifier));
    }
    out
}

/// The result of asking for an update.
#[derive(Debug)]
pub enum UpdatePlan {
    /// Already at the registry's latest version (and no input changed).
    UpToDate(Source),
    /// The new entry to save over the old one, and what moves (see [`Move::needs_consent`]).
    Planned(Box<Planned>, Vec<Move>),
}

/// Plans updating server `server` of `cfg` to its registry's latest version, with `changes`
/// overriding remembered inputs. With `changes`, an entry already at the latest version is
/// re-planned too (to apply them).
///
/// # Errors
/// [`RegistryError::Config`] when there is no such server or it has no `source`; the
/// registry's errors; the mapping's errors (as [`install::plan`]).
pub async fn plan_update(
    cfg: &config::Config,
    server: &str,
    changes: Values,
    secrets: &dyn SecretSink,
    lookup: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<UpdatePlan, RegistryError> {
    let old = cfg
        .raw
        .get("mcpServers")
        .and_then(|s| s.get(server))
        .cloned()
        .ok_or_else(|| {
            RegistryError::Config(crate::config::UnknownServer::new(server).to_string())
        })?;
    let source = Source::of_entry(&old).ok_or_else(|| {
        RegistryError::Config(format!(
            "\"{server}\" was not installed from a registry (no \"source\")"
        ))
    })?;
    let configured = sources::registries(&cfg.raw)?;
    let client = install::client_for(&configured, &source.registry, cfg, lookup)?;
    let latest = client.version(&source.name, "latest").await?;
    let detail = &latest.server;
    let changed = !changes.plain.is_empty() || !changes.env.is_empty();
    if !sources::is_newer(&detail.version, &source.version) && !changed {
        return Ok(UpdatePlan::UpToDate(source));
    }
    let choice = install::choice_like(detail, source.kind.as_deref())?;
    let values = Values {
        stored: source.inputs.clone(),
        ..changes
    };
    let mut planned = install::plan(
        &source.registry,
        detail,
        choice,
        server,
        &values,
        secrets,
        &cfg.ssrf_whitelist,
        &install::on_path,
    )
    .await?;
    if let (Value::Object(old), Value::Object(new)) = (&old, &mut planned.entry) {
        for (k, v) in old {
            if !MAPPED_KEYS.contains(&k.as_str()) && !new.contains_key(k) {
                new.insert(k.clone(), v.clone());
            }
        }
    }
    let moved = what_moves(&old, &planned.entry, detail, choice);
    Ok(UpdatePlan::Planned(Box::new(planned), moved))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_new_origin_needs_consent_and_a_new_path_is_shown() {
        let e = |url: &str| json!({"type": "streamableHttp", "url": url});
        let cases = [
            ("https://a.example/mcp", "https://a.example/mcp", None),
            ("https://a.example/mcp", "https://A.example:443/mcp", None),
            (
                "https://a.example/mcp",
                "https://b.example/mcp",
                Some(MoveKind::Origin),
            ),
            (
                "https://a.example/mcp",
                "http://a.example/mcp",
                Some(MoveKind::Origin),
            ),
            (
                "https://a.example/mcp",
                "https://a.example:8443/mcp",
                Some(MoveKind::Origin),
            ),
            (
                "https://u:p@a.example/mcp",
                "https://a.example.evil/mcp",
                Some(MoveKind::Origin),
            ),
            (
                "https://${T}.example/mcp",
                "https://${T}.example.net/mcp",
                Some(MoveKind::Origin),
            ),
            (
                "https://a.example/mcp",
                "https://a.example/v2/mcp?x=1",
                Some(MoveKind::Path),
            ),
        ];
        for (from, to, want) in cases {
            let got = moves(&e(from), &e(to));
            assert_eq!(got.first().map(|m| m.what), want, "{from} → {to}: {got:?}");
        }
        let m = &moves(&e("https://u:pw@a.example/x"), &e("https://b.example/x"))[0];
        assert!(m.needs_consent());
        assert_eq!(
            m.to_string(),
            "origin https://a.example → https://b.example"
        );
        // A package that becomes a remote: its inputs would go to a URL for the first time.
        let pkg = json!({"command": "npx", "args": ["-y", "x"]});
        assert_eq!(
            moves(&pkg, &e("https://b.example/mcp"))[0].what,
            MoveKind::Origin
        );
        assert!(moves(&pkg, &pkg).is_empty());
    }

    #[test]
    fn a_package_that_changes_is_a_move_and_a_new_version_is_not() {
        let e = |cmd: &str, args: &[&str]| json!({"command": cmd, "args": args});
        let old = e("npx", &["-y", "@good/server@1.0.0"]);
        assert!(
            package_moves(
                &old,
                &e("npx", &["-y", "@good/server@2.0.0"]),
                "@good/server"
            )
            .is_empty()
        );
        let m = package_moves(
            &old,
            &e("npx", &["-y", "@evil/server@2.0.0"]),
            "@evil/server",
        );
        assert_eq!(
            m[0].to_string(),
            "package npx @good/server@1.0.0 → npx @evil/server"
        );
        assert!(m[0].needs_consent());
        // `@good/server-extra` is another package, whatever its prefix.
        assert!(!package_moves(&old, &old, "@good/server-extr").is_empty());
        let oci = e("docker", &["run", "-i", "--rm", "ghcr.io/x/db:1"]);
        assert!(
            package_moves(
                &oci,
                &e("docker", &["run", "ghcr.io/x/db:2"]),
                "ghcr.io/x/db"
            )
            .is_empty()
        );
        assert!(
            !package_moves(
                &oci,
                &e("podman", &["run", "ghcr.io/x/db:2"]),
                "ghcr.io/x/db"
            )
            .is_empty()
        );
    }
}
