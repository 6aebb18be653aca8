//! `outdated` and `update` for entries installed from a bundle: the `.mcpb` file the entry
//! remembers (`source.bundle`) is read again; a newer `version` in it, or other bytes at the
//! same version, is an update. `update` re-installs from that file with the remembered
//! `user_config` values, keeping the keys the person added to the entry by hand.

use serde::Serialize;
use serde_json::Value;

use super::install::{self, BundlePlan, BundleSource, Setup};
use super::{Archive, BundleError, manifest};
use crate::manage::registry::sources::is_newer;
use crate::manage::registry::{RegistryError, SecretSink, Values};

/// Keys the mapping owns; every other key of the old entry survives an update.
const MAPPED_KEYS: &[&str] = &["command", "args", "env", "type", "cwd", "source"];

/// One entry installed from a bundle, compared with the file it came from.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleOutdated {
    /// `mcpServers` key.
    pub server: String,
    /// Where it came from.
    pub source: BundleSource,
    /// The version the file holds now, when it could be read.
    pub latest: Option<String>,
    /// Whether the file holds a newer version, or other bytes.
    pub update_available: bool,
    /// Why the file could not be read.
    pub error: Option<String>,
}

/// Every entry of config document `doc` installed from a bundle, against its file.
pub fn outdated(doc: &Value, setup: &Setup<'_>) -> Vec<BundleOutdated> {
    let Some(servers) = doc.get("mcpServers").and_then(Value::as_object) else {
        return Vec::new();
    };
    servers
        .iter()
        .filter_map(|(server, entry)| {
            let source = BundleSource::of_entry(entry)?;
            let read = Archive::open(std::path::Path::new(&source.bundle), &setup.limits)
                .and_then(|a| Ok((manifest::parse(&a.manifest)?, a.sha256)));
            Some(match read {
                Ok((m, sha)) => BundleOutdated {
                    server: server.clone(),
                    update_available: is_newer(&m.version, &source.version)
                        || (m.version == source.version && sha != source.sha256),
                    latest: Some(m.version),
                    source,
                    error: None,
                },
                Err(e) => BundleOutdated {
                    server: server.clone(),
                    source,
                    latest: None,
                    update_available: false,
                    error: Some(e.to_string()),
                },
            })
        })
        .collect()
}

/// The result of asking for a bundle update.
pub enum BundleUpdate {
    /// The file holds the installed bytes (and no input changed).
    UpToDate(BundleSource),
    /// The new entry to save over the old one.
    Planned(Box<BundlePlan>),
}

/// Plans updating `server` (whose raw entry is `old`, installed from a bundle) from its file,
/// with `changes` overriding remembered values.
///
/// # Errors
/// [`BundleError::Input`] when `old` was not installed from a bundle; [`install::plan`]'s.
pub fn plan_update(
    old: &Value,
    server: &str,
    changes: Values,
    secrets: &dyn SecretSink,
    setup: &Setup<'_>,
) -> Result<BundleUpdate, BundleError> {
    let source = BundleSource::of_entry(old).ok_or_else(|| {
        RegistryError::Config(format!("\"{server}\" was not installed from a bundle"))
    })?;
    let changed = !changes.plain.is_empty() || !changes.env.is_empty();
    let values = Values {
        stored: source.inputs.clone(),
        ..changes
    };
    let mut plan = install::plan(
        std::path::Path::new(&source.bundle),
        Some(server),
        &values,
        secrets,
        setup,
    )?;
    if plan.archive.sha256 == source.sha256 && !changed {
        return Ok(BundleUpdate::UpToDate(source));
    }
    let now = plan.archive.signature.as_ref();
    if let Some(before) = &source.signer
        && now.is_none_or(|s| s.fingerprint != *before)
    {
        return Err(BundleError::SignerChanged {
            before: format!("the certificate with SHA-256 {before}"),
            now: now.map_or_else(
                || "not signed".to_owned(),
                |s| format!("signed by \"{}\" (SHA-256 {})", s.subject, s.fingerprint),
            ),
        });
    }
    if let (Value::Object(old), Value::Object(new)) = (old, &mut plan.planned.entry) {
        for (k, v) in old {
            if !MAPPED_KEYS.contains(&k.as_str()) && !new.contains_key(k) {
                new.insert(k.clone(), v.clone());
            }
        }
    }
    Ok(BundleUpdate::Planned(Box::new(plan)))
}
