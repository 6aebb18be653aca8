//! What the window shows of a bundle before installing it ([`preview`]), and where a bundle
//! whose bytes came without a path (the window's file picker gives bytes, not a path) is kept
//! ([`keep_received`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::BundleError;
use super::install::{self, Setup};
use super::signature::{self, Signer};
use crate::manage::registry::{Field, NoKeychainSink, Values};

/// A bundle read and checked (the archive, manifest, signature and platform), for a form.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    /// The file, absolute.
    pub file: String,
    /// The manifest's `name`.
    pub name: String,
    /// `display_name`, else `name`.
    pub title: String,
    /// `version`.
    pub version: String,
    /// `description`.
    pub description: String,
    /// `author.name`.
    pub author: String,
    /// The suggested server name.
    pub server: String,
    /// The `user_config` options as form fields (nothing required yet).
    pub fields: Vec<Field>,
    /// The signer, when the bundle is signed (it verified).
    pub signature: Option<Signer>,
    /// [`signature::describe`] of it.
    pub signature_text: String,
    /// Files in the bundle.
    pub files: usize,
    /// Bytes unpacked.
    pub total_bytes: u64,
}

/// Reads and checks `file` as [`install::plan`] does, with no values; writes nothing.
///
/// # Errors
/// As [`install::plan`], except missing required values.
pub fn preview(file: &Path, setup: &Setup<'_>) -> Result<Preview, BundleError> {
    let plan = install::plan_listing(file, &Values::default(), &NoKeychainSink, setup)?;
    let m = &plan.manifest;
    Ok(Preview {
        file: std::path::absolute(file)
            .unwrap_or_else(|_| file.to_path_buf())
            .display()
            .to_string(),
        name: m.name.clone(),
        title: m.display_name.clone().unwrap_or_else(|| m.name.clone()),
        version: m.version.clone(),
        description: m.description.clone(),
        author: m.author.clone(),
        server: plan.planned.server.clone(),
        fields: plan.planned.built.fields.clone(),
        signature_text: signature::describe(plan.archive.signature.as_ref()),
        signature: plan.archive.signature.clone(),
        files: plan.archive.files.len(),
        total_bytes: plan.archive.total_bytes,
    })
}

/// The directory received bundle files are kept in: `bundle-files` beside `root` (the
/// bundles directory), so no bundle's directory can be it.
pub fn received_dir(root: &Path) -> PathBuf {
    root.with_file_name("bundle-files")
}

/// Writes `bytes` (a bundle picked in the window, named `file_name` there) to
/// [`received_dir`] as `<sha256 first 12 hex>-<clean name>` and returns that path; the
/// entry's `source.bundle` then names the copy. The same bytes land on the same path.
///
/// # Errors
/// [`BundleError::TooLarge`] over `setup.limits.archive_bytes`, [`BundleError::Io`].
pub fn keep_received(
    setup: &Setup<'_>,
    file_name: &str,
    bytes: &[u8],
) -> Result<PathBuf, BundleError> {
    if bytes.len() as u64 > setup.limits.archive_bytes {
        return Err(BundleError::TooLarge {
            what: "the bundle file".into(),
            size: bytes.len() as u64,
            limit: setup.limits.archive_bytes,
        });
    }
    let base = Path::new(file_name)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("bundle.mcpb");
    let clean: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    let hash = super::archive::hex(&Sha256::digest(bytes));
    let dir = received_dir(&setup.root);
    let path = dir.join(format!("{}-{}", &hash[..12], clean.trim_start_matches('.')));
    let io = |p: &Path, e: std::io::Error| BundleError::Io {
        path: p.display().to_string(),
        reason: e.to_string(),
    };
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| io(&dir, e))?;
    tmp.write_all(bytes).map_err(|e| io(&path, e))?;
    tmp.persist(&path).map_err(|e| io(&path, e.error))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_received_file_is_kept_beside_the_bundles_dir_under_a_clean_name() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("mcp-companion/bundles");
        let on_path = |_: &str| true;
        let version_of = |_: &str| None;
        let setup = Setup {
            context: super::super::entry::Context::here(root.clone()),
            root: root.clone(),
            on_path: &on_path,
            version_of: &version_of,
            limits: super::super::Limits::default(),
        };
        let p = keep_received(&setup, "../../ev il.mcpb", b"bytes").unwrap();
        assert_eq!(
            p.parent().unwrap(),
            d.path().join("mcp-companion/bundle-files")
        );
        let name = p.file_name().unwrap().to_str().unwrap();
        assert!(name.ends_with("-ev-il.mcpb"), "{name}");
        assert_eq!(std::fs::read(&p).unwrap(), b"bytes");
        assert_eq!(keep_received(&setup, "x/ev il.mcpb", b"bytes").unwrap(), p);
    }
}
