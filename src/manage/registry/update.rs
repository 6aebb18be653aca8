//! `update`: re-install a server from its registry's latest version, in place. The inputs
//! remembered in `source.inputs` are reused (the user may change some), the same kind of
//! package or remote is chosen again, and keys the user added by hand (`enabledTools`,
//! `toolTimeout`, `cwd`, `disabled`…) are kept.

use serde_json::Value;

use super::RegistryError;
use super::inputs::{SecretSink, Values};
use super::install::{self, Planned};
use super::sources::{self, Source};
use crate::config;

/// Keys the mapping owns; every other key of the old entry survives an update.
const MAPPED_KEYS: &[&str] = &["command", "args", "env", "url", "headers", "type", "source"];

/// The result of asking for an update.
#[derive(Debug)]
pub enum UpdatePlan {
    /// Already at the registry's latest version (and no input changed).
    UpToDate(Source),
    /// The new entry to save over the old one.
    Planned(Box<Planned>),
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
        .ok_or_else(|| RegistryError::Config(format!("no server named \"{server}\"")))?;
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
    Ok(UpdatePlan::Planned(Box::new(planned)))
}
