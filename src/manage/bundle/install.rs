//! The bundle install flow shared by the CLI and the window: [`plan`] reads and checks
//! everything and writes nothing; [`save`] unpacks, stores secrets and writes `config.json`,
//! undoing the unpack when a later step fails; [`remove`] deletes the entry and its
//! directory.
//!
//! The entry's `source` remembers the bundle (for `outdated`, `update` and `remove`):
//!
//! ```json
//! "source": { "kind": "mcpb", "name": "hello", "version": "1.0.0",
//!             "bundle": "/home/me/Downloads/hello-1.0.0.mcpb", "sha256": "…",
//!             "dir": "/home/me/.local/share/mcp-companion/bundles/hello-0123abcd",
//!             "inputs": { "api_key": "${secret:hello.api_key}" } }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use super::archive::{self, Archive, Limits};
use super::entry::{self, Context};
use super::manifest::{self, Manifest};
use super::{BundleError, paths, runtime};
use crate::manage::edit;
use crate::manage::registry::install::{self as registry_install, Planned};
use crate::manage::registry::{RegistryError, SecretSink, Values};

/// `source.kind` of an entry installed from a bundle.
pub const KIND: &str = "mcpb";

/// What an entry installed from a bundle remembers (`source`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleSource {
    /// The manifest's `name`.
    pub name: String,
    /// The manifest's `version`.
    pub version: String,
    /// The `.mcpb` file installed from (absolute).
    pub bundle: String,
    /// SHA-256 of that file as installed, lower-case hex.
    pub sha256: String,
    /// The directory it was unpacked into.
    pub dir: String,
    /// Config strings of the `user_config` values (secrets as references), reused by `update`.
    pub inputs: BTreeMap<String, String>,
    /// SHA-256 of the signing certificate's DER (lower-case hex) when the file was signed;
    /// `update` refuses a file signed otherwise or not at all.
    pub signer: Option<String>,
}

impl BundleSource {
    /// The `source` object.
    pub fn to_value(&self) -> Value {
        let mut v = json!({
            "kind": KIND, "name": self.name, "version": self.version,
            "bundle": self.bundle, "sha256": self.sha256, "dir": self.dir,
        });
        if !self.inputs.is_empty() {
            v["inputs"] = json!(self.inputs);
        }
        if let Some(signer) = &self.signer {
            v["signer"] = json!(signer);
        }
        v
    }

    /// The bundle source of a raw entry, if it has one.
    pub fn of_entry(entry: &Value) -> Option<BundleSource> {
        let s = entry.get("source")?;
        if s.get("kind")?.as_str()? != KIND {
            return None;
        }
        let text = |k: &str| s.get(k).and_then(Value::as_str).map(str::to_owned);
        Some(BundleSource {
            name: text("name")?,
            version: text("version")?,
            bundle: text("bundle")?,
            sha256: text("sha256")?,
            dir: text("dir")?,
            inputs: s
                .get("inputs")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                        .collect()
                })
                .unwrap_or_default(),
            signer: text("signer"),
        })
    }
}

/// A bundle checked and mapped, nothing written yet.
pub struct BundlePlan {
    /// The entry (with `source`), its fields and pending secrets, warnings.
    pub planned: Planned,
    /// The manifest.
    pub manifest: Manifest,
    /// The archive, kept in memory to unpack.
    pub archive: Archive,
    /// Where it will be unpacked (does not exist yet).
    pub dir: PathBuf,
    /// A file of the bundle the entry runs, made executable on unpack.
    pub executable: Option<String>,
}

/// Where to put things and how to look at this machine (tests replace each).
pub struct Setup<'a> {
    /// The bundles directory ([`paths::bundles_root`]).
    pub root: PathBuf,
    /// The user's directories and platform; `dir` is replaced by the bundle's.
    pub context: Context,
    /// Whether a program is on PATH.
    pub on_path: &'a (dyn Fn(&str) -> bool + Sync),
    /// The version a runtime program reports.
    pub version_of: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// Size limits.
    pub limits: Limits,
}

impl Setup<'_> {
    /// This machine: the OS data dir, PATH, `--version`.
    ///
    /// # Errors
    /// [`BundleError::Io`] when the OS reports no data directory.
    pub fn here() -> Result<Setup<'static>, BundleError> {
        let root = paths::bundles_root().ok_or_else(|| BundleError::Io {
            path: "(data directory)".into(),
            reason: "the OS reports no per-user data directory".into(),
        })?;
        Ok(Setup {
            context: Context::here(root.clone()),
            root,
            on_path: &registry_install::on_path,
            version_of: &runtime::installed_version,
            limits: Limits::default(),
        })
    }
}

/// Reads and checks `file`, and maps it to an entry named `server` (default: the manifest's
/// name, cleaned as registry names are) with `values`. Writes nothing.
///
/// # Errors
/// Every [`BundleError`]: the archive, its entries, the manifest, the platform or runtime,
/// the values, an entry that does not validate.
pub fn plan(
    file: &Path,
    server: Option<&str>,
    values: &Values,
    secrets: &dyn SecretSink,
    setup: &Setup<'_>,
) -> Result<BundlePlan, BundleError> {
    let archive = Archive::open(file, &setup.limits)?;
    plan_archive(file, archive, server, values, secrets, setup, false)
}

/// The form fields of `file` (nothing required yet), for prompting before [`plan`].
///
/// # Errors
/// As [`plan`].
pub fn fields(
    file: &Path,
    setup: &Setup<'_>,
) -> Result<Vec<crate::manage::registry::Field>, BundleError> {
    let plan = plan_listing(
        file,
        &Values::default(),
        &crate::manage::registry::NoKeychainSink,
        setup,
    )?;
    Ok(plan.planned.built.fields)
}

/// [`plan`] for showing a form: a missing required value is no error and the entry is not
/// validated. Writes nothing.
///
/// # Errors
/// As [`plan`], except missing values.
pub fn plan_listing(
    file: &Path,
    values: &Values,
    secrets: &dyn SecretSink,
    setup: &Setup<'_>,
) -> Result<BundlePlan, BundleError> {
    let archive = Archive::open(file, &setup.limits)?;
    plan_archive(file, archive, None, values, secrets, setup, true)
}

fn plan_archive(
    file: &Path,
    archive: Archive,
    server: Option<&str>,
    values: &Values,
    secrets: &dyn SecretSink,
    setup: &Setup<'_>,
    listing: bool,
) -> Result<BundlePlan, BundleError> {
    let manifest = manifest::parse(&archive.manifest)?;
    let platform = setup.context.platform.as_str();
    if !manifest.platforms.is_empty() && !manifest.platforms.iter().any(|p| p == platform) {
        return Err(BundleError::Incompatible {
            reason: format!(
                "it runs on {} and this is {platform}",
                manifest.platforms.join(", ")
            ),
        });
    }
    let entry_point = paths::relative(&manifest.entry_point)
        .map_err(|r| manifest_error("server.entry_point", r))?
        .join("/");
    if !archive.files.contains(&entry_point) {
        return Err(manifest_error(
            "server.entry_point",
            format!(
                "names \"{}\", which the bundle does not hold",
                manifest::quote(&manifest.entry_point)
            ),
        ));
    }
    let server = server
        .map(str::to_owned)
        .unwrap_or_else(|| registry_install::default_server_name(&manifest.name));
    let dir = paths::fresh_dir(&setup.root, &server, &archive.sha256[..8]);
    let ctx = Context {
        dir: dir.clone(),
        ..setup.context.clone()
    };
    let built = entry::build(&manifest, &ctx, &server, values, secrets, listing)?;
    let mut warnings = Vec::new();
    let executable = match &built.program {
        None => {
            let command = built.entry["command"].as_str().unwrap_or_default();
            let inner = command
                .strip_prefix(&crate::manage::registry::inputs::escape(
                    &dir.display().to_string(),
                ))
                .map(|r| r.trim_start_matches(['/', '\\']).replace('\\', "/"))
                .unwrap_or_default();
            if !archive.files.contains(&inner) {
                return Err(manifest_error(
                    "server.mcp_config.command",
                    format!(
                        "runs \"{}\", which the bundle does not hold",
                        manifest::quote(&inner)
                    ),
                ));
            }
            Some(inner)
        }
        Some(program) => {
            if !(setup.on_path)(program) {
                warnings.push(format!(
                    "{program} is not on PATH: install it before starting \"{server}\""
                ));
            }
            None
        }
    };
    runtime::check_manifest(&manifest, &built, setup, &mut warnings)?;
    if let Some(signer) = &archive.signature
        && signer.expired
    {
        warnings.push(format!(
            "the signing certificate ({}) is outside its validity period",
            signer.subject
        ));
    }
    let source = BundleSource {
        name: manifest.name.clone(),
        version: manifest.version.clone(),
        bundle: std::path::absolute(file)
            .unwrap_or_else(|_| file.to_path_buf())
            .display()
            .to_string(),
        sha256: archive.sha256.clone(),
        dir: dir.display().to_string(),
        inputs: built.inputs.clone(),
        signer: archive.signature.as_ref().map(|s| s.fingerprint.clone()),
    };
    let mut entry_value = built.entry.clone();
    entry_value["source"] = source.to_value();
    if !listing {
        edit::validate_entry(&server, &entry_value)
            .map_err(|e| BundleError::Input(RegistryError::Config(e.to_string())))?;
    }
    Ok(BundlePlan {
        planned: Planned {
            server,
            entry: entry_value,
            built,
            warnings,
        },
        manifest,
        archive,
        dir,
        executable,
    })
}

fn manifest_error(field: &str, reason: impl std::fmt::Display) -> BundleError {
    BundleError::Manifest {
        field: field.to_owned(),
        reason: reason.to_string(),
    }
}

/// Adds (or with `replace` replaces) the planned entry in the config file at `path`: unpacks
/// the bundle, stores its secret values, writes the file atomically with a `.bak`. A failing
/// step removes the directory it unpacked; a replaced bundle's old directory is removed once
/// the file is written.
///
/// # Errors
/// [`BundleError::Input`] (name taken, keychain, config file), [`BundleError::Io`].
pub fn save(
    path: &Path,
    plan: &BundlePlan,
    replace: bool,
    secrets: &dyn SecretSink,
    root: &Path,
) -> Result<Option<PathBuf>, BundleError> {
    let planned = &plan.planned;
    let old = old_entry(path, &planned.server)?;
    if !replace {
        registry_install::check_name_free(path, &planned.server)?;
    }
    plan.archive.unpack(&plan.dir)?;
    let undo = |e: BundleError| {
        let _ = std::fs::remove_dir_all(&plan.dir);
        e
    };
    if let Some(inner) = &plan.executable {
        let file = paths::inside(&plan.dir, inner)
            .map_err(|r| undo(BundleError::Archive { reason: r }))?;
        archive::set_mode(&file, true).map_err(|e| {
            undo(BundleError::Io {
                path: file.display().to_string(),
                reason: e.to_string(),
            })
        })?;
    }
    registry_install::store_secrets(planned, secrets).map_err(|e| undo(e.into()))?;
    let written = edit::update_file(path, |doc| {
        edit::set_server(doc, &planned.server, planned.entry.clone(), replace)
    })
    .map_err(|e| undo(RegistryError::Config(format!("{}: {e}", path.display())).into()))?;
    let old_dir = old
        .as_ref()
        .and_then(BundleSource::of_entry)
        .map(|s| PathBuf::from(s.dir))
        .filter(|d| *d != plan.dir && paths::is_bundle_dir(root, d))
        .filter(|d| entry_naming(&written.raw, d).is_none());
    if let Some(d) = &old_dir {
        let _ = std::fs::remove_dir_all(d);
    }
    Ok(old_dir)
}

/// The raw entry `server` of the config at `path`, if the file and the entry exist.
fn old_entry(path: &Path, server: &str) -> Result<Option<Value>, BundleError> {
    match crate::config::load(path) {
        Ok(cfg) => Ok(cfg
            .raw
            .get("mcpServers")
            .and_then(|s| s.get(server))
            .cloned()),
        Err(crate::config::ConfigError::Io {
            kind: std::io::ErrorKind::NotFound,
            ..
        }) => Ok(None),
        Err(e) => Err(RegistryError::Config(format!("{}: {e}", path.display())).into()),
    }
}

/// Removes entry `server` from the config at `path`, then [`remove_dir`] of the old entry
/// against what the config holds afterwards.
/// Returns what became of its bundle directory (the entry is gone either way).
///
/// # Errors
/// [`BundleError::Input`] (no such server, the file does not load); nothing is removed then.
pub fn remove(path: &Path, server: &str, root: &Path) -> Result<Option<DirOutcome>, BundleError> {
    let old = old_entry(path, server)?;
    let remaining = edit::update_file(path, |doc| edit::remove_server(doc, server))
        .map_err(|e| RegistryError::Config(format!("{}: {e}", path.display())))?;
    Ok(old
        .as_ref()
        .and_then(|e| remove_dir(e, root, &remaining.raw)))
}

/// What [`remove_dir`] did with a removed entry's bundle directory.
#[derive(Debug)]
pub enum DirOutcome {
    /// Deleted.
    Deleted(PathBuf),
    /// Kept: another entry (named) points into it, e.g. one copied from it by hand.
    InUse {
        /// The directory.
        dir: PathBuf,
        /// The first other server whose entry names it.
        by: String,
    },
    /// Deleting it failed.
    Failed(BundleError),
}

/// Deletes the directory raw entry `entry` was unpacked into, when it was installed from a
/// bundle, that directory is directly inside `root` (whatever an edited `source.dir` says) and
/// no entry of `remaining` (the config document after the removal) names it. `None` when
/// there is nothing to delete.
pub fn remove_dir(entry: &Value, root: &Path, remaining: &Value) -> Option<DirOutcome> {
    let dir = BundleSource::of_entry(entry)
        .map(|s| PathBuf::from(s.dir))
        .filter(|d| paths::is_bundle_dir(root, d))?;
    if let Some(by) = entry_naming(remaining, &dir) {
        return Some(DirOutcome::InUse { dir, by });
    }
    Some(match std::fs::remove_dir_all(&dir) {
        Ok(()) => DirOutcome::Deleted(dir),
        Err(e) => DirOutcome::Failed(BundleError::Io {
            path: dir.display().to_string(),
            reason: e.to_string(),
        }),
    })
}

/// The first server of config document `doc` whose entry names `dir` or a path inside it in
/// any string (its `source`, `command`, `args`, `cwd`…): an entry copied by hand shares its
/// bundle's files. Paths compare by component, so a sibling `…-2` does not count.
fn entry_naming(doc: &Value, dir: &Path) -> Option<String> {
    fn names(v: &Value, dir: &Path) -> bool {
        match v {
            Value::String(s) => Path::new(s).starts_with(dir),
            Value::Array(a) => a.iter().any(|v| names(v, dir)),
            Value::Object(o) => o.values().any(|v| names(v, dir)),
            _ => false,
        }
    }
    doc.get("mcpServers")?
        .as_object()?
        .iter()
        .find(|(_, e)| names(e, dir))
        .map(|(name, _)| name.clone())
}

#[cfg(test)]
#[path = "install_tests.rs"]
mod tests;
